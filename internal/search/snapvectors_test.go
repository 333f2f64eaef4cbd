package search

import (
	"context"
	"slices"
	"testing"

	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/schema"
)

// TestSnapshotVectorsFromAnother: a snapshot's vectors taken in part from
// another snapshot of the repository loaded before equal a load from the
// embedding cache alone, and only the documents the other lacks are looked
// up in the cache.
func TestSnapshotVectorsFromAnother(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    embed.Embedder
	}{{"lexical", nil}, {"model", &modelEmbedder{embed.Lexical{Dims: 512}}}} {
		t.Run(tc.name, func(t *testing.T) { snapshotVectorsFromAnother(t, tc.e) })
	}
}

func snapshotVectorsFromAnother(t *testing.T, e embed.Embedder) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	d := Deps{Bucket: b, Embedder: e}
	d.defaults()
	repo := schema.RepoName("acme/pyproj")
	info1 := publishGraph(t, b, repo, "1111111111111111111111111111111111111111", nil)
	if _, err := IndexSnapshot(ctx, d, repo, info1, nil); err != nil {
		t.Fatal(err)
	}
	info2 := publishGraph(t, b, repo, "2222222222222222222222222222222222222222", map[string][]byte{"app/util/strings.py": []byte(`import re


def slugify(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower())


def shout(text):
    return slugify(text).upper()
`)})
	if _, err := IndexSnapshot(ctx, d, repo, info2, nil); err != nil {
		t.Fatal(err)
	}
	load := func(info schema.GraphInfo) (*snapVectors, int64) {
		t.Helper()
		before := snapLookups.Load()
		sv, err := getSnapVectors(ctx, d, repo, info)
		if err != nil {
			t.Fatal(err)
		}
		return sv, snapLookups.Load() - before
	}

	snapVecs.reset()
	t.Cleanup(snapVecs.reset)
	alone, all := load(info2)
	snapVecs.reset()
	first, n1 := load(info1)
	derived, n2 := load(info2)
	if all != int64(len(alone.ids)) || n1 != int64(len(first.ids)) {
		t.Fatalf("a load without another looked up %d and %d documents, want all %d and %d", all, n1, len(alone.ids), len(first.ids))
	}
	changed := 0
	for _, h := range alone.hashes {
		if !slices.Contains(first.hashes, h) {
			changed++
		}
	}
	if changed == 0 || changed == len(alone.hashes) || n2 != int64(changed) {
		t.Fatalf("the second snapshot looked up %d documents; %d of its %d differ from the first's", n2, changed, len(alone.hashes))
	}
	if !slices.Equal(derived.ids, alone.ids) || !slices.Equal(derived.hashes, alone.hashes) || !slices.Equal(derived.unit, alone.unit) || derived.dim != alone.dim {
		t.Fatal("vectors taken from another snapshot differ from a load of the snapshot alone")
	}
	// Either way (computed by the lexical embedder, or read), they are the
	// vectors the snapshot's build stored in the cache.
	_, items, err := functionItems(ctx, d, repo, info2)
	if err != nil {
		t.Fatal(err)
	}
	cached, embedded, err := embed.EmbedCached(ctx, d.Embedder, &embed.Cache{Bucket: b, Repo: repo, Model: d.Embedder.Name()}, items)
	if err != nil || embedded != 0 {
		t.Fatalf("the cache lacks %d of the snapshot's vectors: %v", embedded, err)
	}
	for i, h := range alone.hashes {
		if !slices.Equal(vectors.Normalise(cached[h]), alone.unit[i*alone.dim:(i+1)*alone.dim]) {
			t.Fatalf("%s: the loaded vector is not the cached one", alone.ids[i])
		}
	}
}
