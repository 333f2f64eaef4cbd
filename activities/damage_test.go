package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// damage replaces the object at key with what f makes of its bytes.
func damage(t *testing.T, b *blob.Bucket, key string, f func([]byte) []byte) {
	t.Helper()
	data, err := b.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(context.Background(), key, f(data)); err != nil {
		t.Fatal(err)
	}
}

// TestIndexRescrapesDamagedParts: a truncated or garbage commits part is
// noticed by the next index, which scrapes the history again and replaces it,
// instead of reporting the repository as indexed.
func TestIndexRescrapesDamagedParts(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func([]byte) []byte
	}{
		{"truncated", func(d []byte) []byte { return d[:len(d)*2/3] }},
		{"garbage", func([]byte) []byte { return []byte("not parquet") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := repoAt(t, t.TempDir()+"/acme/widgets", 4, "w")
			b := blobtest.Bucket(t)
			ix := newIndexer(t, b)
			spec := "acme/widgets=" + r.Dir
			if _, _, err := ix.index(spec); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			m, err := manifestOf(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			damage(t, b, m.Parts[0].Key, tc.f)
			if err := commits.ReadAll(ctx, b, m, func(*schema.CommitFile) error { return nil }); !errors.Is(err, blob.ErrCorrupt) {
				t.Fatalf("reading the damaged part: %v, want blob.ErrCorrupt", err)
			}

			_, scraped, err := ix.index(spec)
			if err != nil {
				t.Fatal(err)
			}
			if !scraped.Replace || scraped.NewCommits != 4 {
				t.Errorf("second index scraped %+v, want the whole history (4 commits) replacing the damaged part", scraped)
			}
			m2, err := manifestOf(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			rows := int64(0)
			if err := commits.ReadAll(ctx, b, m2, func(*schema.CommitFile) error { rows++; return nil }); err != nil {
				t.Fatalf("after the re-scrape: %v", err)
			}
			if m2.Commits != 4 || rows != m.Rows || m2.Rows != m.Rows {
				t.Errorf("after the re-scrape: %d commits, %d rows read, %d in the manifest; want 4 and %d", m2.Commits, rows, m2.Rows, m.Rows)
			}
		})
	}
}

func manifestOf(ctx context.Context, b *blob.Bucket) (*schema.Manifest, error) {
	m, err := manifest.Read(ctx, b, "acme/widgets")
	if err == nil && (m == nil || len(m.Parts) == 0) {
		err = fmt.Errorf("manifest %+v: want published parts", m)
	}
	return m, err
}

// TestBuildGraphRebuildsDamagedGraph: a published graph whose nodes table is
// damaged is rebuilt by the next BuildGraph instead of being reused (and then
// failing every reader).
func TestBuildGraphRebuildsDamagedGraph(t *testing.T) {
	r := repoAt(t, t.TempDir()+"/acme/widgets", 2, "w")
	r.Write(map[string]string{"app.py": "def main():\n    return helper()\n\n\ndef helper():\n    return 1\n"})
	r.Commit("code")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	spec := "acme/widgets=" + r.Dir
	if _, _, err := ix.index(spec); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := schema.BuildGraphInput{Repo: "acme/widgets", Head: r.Head()}
	build := func() schema.GraphInfo {
		t.Helper()
		v, err := ix.env.ExecuteActivity(ix.git.BuildGraph, in)
		if err != nil {
			t.Fatal(err)
		}
		var info schema.GraphInfo
		if err := v.Get(&info); err != nil {
			t.Fatal(err)
		}
		return info
	}
	info := build()
	if _, err := ix.env.ExecuteActivity(ix.store.PublishManifest, PublishInput{Repo: schema.RepoSpec{Name: "acme/widgets", URL: r.Dir}, Head: r.Head(), Graph: &info}); err != nil {
		t.Fatal(err)
	}
	if again := build(); again.NodesSHA256 != info.NodesSHA256 {
		t.Fatalf("an intact published graph was not reused")
	}
	damage(t, b, info.NodesKey, func([]byte) []byte { return []byte("garbage") })
	if _, err := graphstore.Read(ctx, b, info); !errors.Is(err, blob.ErrCorrupt) {
		t.Fatalf("reading the damaged graph: %v, want blob.ErrCorrupt", err)
	}
	rebuilt := build()
	g, err := graphstore.Read(ctx, b, rebuilt)
	if err != nil {
		t.Fatalf("after the rebuild: %v", err)
	}
	if len(g.Nodes) != info.Nodes || rebuilt.NodesSHA256 != info.NodesSHA256 {
		t.Errorf("rebuilt graph: %d nodes (sha %s), want %d (sha %s)", len(g.Nodes), rebuilt.NodesSHA256, info.Nodes, info.NodesSHA256)
	}
}

func TestDamagedIsNonRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("graph table k: %w", blob.ErrCorrupt), true},
		{fmt.Errorf("graph table k: %w", blob.ErrNotFound), false},
		{errors.New("connection reset"), false},
	} {
		if got := nonRetryable(damaged(tc.err)); got != tc.want {
			t.Errorf("damaged(%v) non-retryable = %v, want %v", tc.err, got, tc.want)
		}
	}
}
