package activities

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// TestSparseIndexDamage: the BM25 index's size and SHA-256 are recorded when
// it is written; a damaged one fails a query without retries (the error
// names the key) and the next index run writes it whole again.
func TestSparseIndexDamage(t *testing.T) {
	w := indexWidgets(t)
	ix, s, b, si := w.ix, w.s, w.b, w.si
	ctx := context.Background()
	indexSearch := w.indexSearch
	spec := w.spec
	if si.SparseBytes <= 0 || len(si.SparseSHA256) != 64 {
		t.Fatalf("search info %+v: want the BM25 index's size and SHA-256", si)
	}
	if _, err := sparse.LoadVerified(ctx, b, si.SparseKey, si.SparseBytes, si.SparseSHA256); err != nil {
		t.Fatalf("the index as recorded: %v", err)
	}
	retrieve := func() error {
		_, err := ix.env.ExecuteActivity(s.Retrieve, RetrieveInput{Repo: spec.Name, Issue: "parse config", Params: search.Params{Method: search.MethodSR}})
		return err
	}
	if err := retrieve(); err != nil {
		t.Fatalf("query on the intact index: %v", err)
	}

	damage(t, b, si.SparseKey, func(d []byte) []byte { return d[:len(d)-3] })
	if _, err := sparse.LoadVerified(ctx, b, si.SparseKey, si.SparseBytes, si.SparseSHA256); !errors.Is(err, blob.ErrCorrupt) {
		t.Fatalf("reading the damaged index: %v, want blob.ErrCorrupt", err)
	}
	err := retrieve()
	if err == nil || !nonRetryable(err) || !strings.Contains(err.Error(), si.SparseKey) {
		t.Fatalf("query on the damaged index: %v; want a non-retryable error naming %s", err, si.SparseKey)
	}

	again := indexSearch()
	if again.SparseSHA256 != si.SparseSHA256 || again.SparseBytes != si.SparseBytes {
		t.Errorf("rebuilt index %d bytes sha %s, want the original %d bytes sha %s", again.SparseBytes, again.SparseSHA256, si.SparseBytes, si.SparseSHA256)
	}
	if err := retrieve(); err != nil {
		t.Fatalf("query after the rebuild: %v", err)
	}
}

// widgets is a small Python repository indexed for search (graph, BM25,
// vectors) in a test store.
type widgets struct {
	ix          *indexer
	s           *Search
	b           *blob.Bucket
	spec        schema.RepoSpec
	si          schema.SearchInfo
	indexSearch func() schema.SearchInfo // indexes the graph for search again
}

func indexWidgets(t *testing.T) widgets {
	t.Helper()
	r := repoAt(t, t.TempDir()+"/acme/widgets", 1, "w")
	r.Write(map[string]string{"app.py": "def parse_config():\n    return load()\n\n\ndef load():\n    return 1\n"})
	r.Commit("code")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	s := &Search{Deps: search.Deps{Bucket: b}}
	ix.env.RegisterActivity(s)
	spec := schema.RepoSpec{Name: "acme/widgets", URL: r.Dir}
	if _, _, err := ix.index("acme/widgets=" + r.Dir); err != nil {
		t.Fatal(err)
	}
	w := widgets{ix: ix, s: s, b: b, spec: spec}
	w.indexSearch = func() schema.SearchInfo {
		t.Helper()
		v, err := ix.env.ExecuteActivity(ix.git.BuildGraph, schema.BuildGraphInput{Repo: spec.Name, Head: r.Head()})
		if err != nil {
			t.Fatal(err)
		}
		var graph schema.GraphInfo
		v.Get(&graph)
		if v, err = ix.env.ExecuteActivity(s.FinishIndex, schema.IndexSearchInput{Repo: spec.Name, Graph: graph}); err != nil {
			t.Fatal(err)
		}
		var si schema.SearchInfo
		v.Get(&si)
		if _, err := ix.env.ExecuteActivity(ix.store.PublishManifest, PublishInput{Repo: spec, Head: r.Head(), Graph: &graph, Search: &si}); err != nil {
			t.Fatal(err)
		}
		return si
	}
	w.si = w.indexSearch()
	return w
}
