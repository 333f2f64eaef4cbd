package snapshot

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

const repo = schema.RepoName("acme/snap")

// fixture is a repository with two commits, its head indexed and published
// as IndexRepo would: old_only exists only at the first commit, new_only
// only at the head, and parse_config at both.
func fixture(t *testing.T) (*blob.Bucket, *gitfixture.Repo, string, string) {
	t.Helper()
	g := gitfixture.New(t)
	g.Write(map[string]string{"pkg/conf.py": "def parse_config(path):\n    return open(path).read()\n\n\ndef old_only(text):\n    \"\"\"Strip the legacy banner from the text.\"\"\"\n    return text.replace('banner', '')\n"})
	first := g.Commit("first")
	g.Write(map[string]string{"pkg/conf.py": "def parse_config(path):\n    return open(path).read()\n\n\ndef new_only(text):\n    return text.upper()\n"})
	head := g.Commit("second")
	b := blobtest.Bucket(t)
	indexHead(t, b, g)
	return b, g, first, head
}

func functionIDs(t *testing.T, b *blob.Bucket, info schema.GraphInfo) []string {
	t.Helper()
	g, err := graphstore.Read(context.Background(), b, info)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range g.Nodes {
		if n.Type == codegraph.TypeFunction {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

func TestEnsureSnapshot(t *testing.T) {
	ctx := context.Background()
	b, g, first, head := fixture(t)
	before, err := b.ReadAll(ctx, repo.ManifestKey())
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Bucket: b, GitDir: g.Dir + "/.git"}

	res, err := Ensure(ctx, c, repo, first[:7])
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if res.Reused || m.Commit != first || m.Graph.Commit != first {
		t.Fatalf("first Ensure: reused %v, commit %s; want a new snapshot of %s", res.Reused, m.Commit, first)
	}
	if ids := strings.Join(functionIDs(t, b, m.Graph), " "); ids != "pkg/conf.py:old_only pkg/conf.py:parse_config" {
		t.Errorf("snapshot functions %q, want the first commit's", ids)
	}
	// parse_config was embedded when the head was indexed: the shared cache answers.
	if res.Embedded != 1 || m.Search.Functions != 2 {
		t.Errorf("embedded %d of %d functions, want 1 of 2 (the unchanged one from the cache)", res.Embedded, m.Search.Functions)
	}
	for _, k := range []string{m.Graph.NodesKey, m.Graph.EdgesKey, m.Search.SparseKey} {
		if !strings.HasPrefix(k, repo.SnapshotPrefix(first)) {
			t.Errorf("snapshot object %s outside %s", k, repo.SnapshotPrefix(first))
		}
	}
	after, err := b.ReadAll(ctx, repo.ManifestKey())
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the repository's manifest changed (%v)", err)
	}

	// Ranked against the snapshot: old_only is found, new_only is not.
	for _, method := range []string{search.MethodSR, search.MethodSpIDER} {
		r, err := search.RetrieveAt(ctx, search.Deps{Bucket: b}, repo, first, "strip the legacy banner from the text", search.Params{Method: method})
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if r.Commit != first || len(r.TopK) == 0 || r.TopK[0].ID != "pkg/conf.py:old_only" {
			t.Errorf("%s at the snapshot: commit %s, top %+v; want old_only first", method, r.Commit, r.TopK)
		}
		for _, s := range r.TopK {
			if s.ID == "pkg/conf.py:new_only" {
				t.Errorf("%s at the snapshot ranked new_only, which only exists at the head", method)
			}
		}
	}
	code, err := search.Code(ctx, search.Deps{Bucket: b}, repo, first, []string{"pkg/conf.py:old_only"})
	if err != nil || !strings.Contains(code["pkg/conf.py:old_only"], "legacy banner") {
		t.Errorf("code at the snapshot: %v, %v", code, err)
	}
	// The head still ranks the head.
	r, err := search.Retrieve(ctx, search.Deps{Bucket: b}, repo, "upper", search.Params{Method: search.MethodSR})
	if err != nil || r.Commit != head {
		t.Errorf("head retrieval at %s (%v), want %s", r.Commit, err, head)
	}

	again, err := Ensure(ctx, c, repo, first)
	if err != nil || !again.Reused || again.Manifest.Commit != first {
		t.Fatalf("second Ensure: %+v, %v; want the stored snapshot reused", again, err)
	}

	// A damaged object is rebuilt, not served.
	if err := b.WriteAll(ctx, m.Graph.NodesKey, []byte("not parquet")); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := Ensure(ctx, c, repo, first)
	if err != nil || rebuilt.Reused {
		t.Fatalf("Ensure over a damaged snapshot: %+v, %v; want a rebuild", rebuilt, err)
	}
	if err := search.VerifySnapshot(ctx, b, rebuilt.Manifest); err != nil {
		t.Errorf("rebuilt snapshot does not verify: %v", err)
	}
	if err := b.WriteAll(ctx, repo.SnapshotManifestKey(first), []byte("{")); err != nil {
		t.Fatal(err)
	}
	if res, err := Ensure(ctx, c, repo, first); err != nil || res.Reused {
		t.Fatalf("Ensure over a damaged snapshot manifest: %+v, %v; want a rebuild", res, err)
	}
}

// A snapshot built with one embedder is rebuilt for another (its vectors
// cannot answer the other's queries), and switching back embeds nothing.
func TestEnsureSnapshotOtherEmbedder(t *testing.T) {
	ctx := context.Background()
	b, g, first, _ := fixture(t)
	lex := Config{Bucket: b, GitDir: g.Dir + "/.git"}
	if _, err := Ensure(ctx, lex, repo, first); err != nil {
		t.Fatal(err)
	}
	other := lex
	other.Deps.Embedder = &embed.Lexical{Dims: 64}
	res, err := Ensure(ctx, other, repo, first)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reused || res.Manifest.Search.Model != other.Deps.Embedder.Name() || res.Embedded != 2 {
		t.Fatalf("other embedder: reused %v, model %s, embedded %d; want a rebuild with %s embedding both functions",
			res.Reused, res.Manifest.Search.Model, res.Embedded, other.Deps.Embedder.Name())
	}
	back, err := Ensure(ctx, lex, repo, first)
	if err != nil {
		t.Fatal(err)
	}
	if back.Reused || back.Manifest.Search.Model != (&embed.Lexical{}).Name() || back.Embedded != 0 {
		t.Fatalf("back to the first embedder: reused %v, model %s, embedded %d; want a rebuild from the cache", back.Reused, back.Manifest.Search.Model, back.Embedded)
	}
	if again, err := Ensure(ctx, lex, repo, first); err != nil || !again.Reused {
		t.Fatalf("same embedder again: %+v, %v; want the stored snapshot", again, err)
	}
}

func TestEnsureSnapshotUnknownCommit(t *testing.T) {
	b, g, _, _ := fixture(t)
	for _, commit := range []string{"deadbee", "0000000000000000000000000000000000000000", "abc", "not-a-commit", "../../x"} {
		_, err := Ensure(context.Background(), Config{Bucket: b, GitDir: g.Dir + "/.git"}, repo, commit)
		if !errors.Is(err, ErrUnknownCommit) || !strings.Contains(err.Error(), commit) || !strings.Contains(err.Error(), string(repo)) {
			t.Errorf("Ensure(%q): %v; want ErrUnknownCommit naming the commit and %s", commit, err, repo)
		}
	}
	objs, err := b.List(context.Background(), repo.Prefix()+"snapshots/")
	if err != nil || len(objs) != 0 {
		t.Errorf("unknown commits left %d objects (%v)", len(objs), err)
	}
}

// Concurrent builds of one snapshot write the same keys atomically: both
// succeed and what is left verifies.
func TestEnsureSnapshotConcurrent(t *testing.T) {
	b, g, first, _ := fixture(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = Ensure(context.Background(), Config{Bucket: b, GitDir: g.Dir + "/.git"}, repo, first)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := search.ReadSnapshot(context.Background(), b, repo, first)
	if err != nil || m == nil {
		t.Fatalf("snapshot manifest: %v", err)
	}
	if err := search.VerifySnapshot(context.Background(), b, m); err != nil {
		t.Error(err)
	}
}
