package search

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// indexFixture publishes the graph of a codegraph fixture project.
func indexFixture(t *testing.T) (*blob.Bucket, schema.RepoName, schema.GraphInfo) {
	t.Helper()
	ctx := context.Background()
	b, err := blob.OpenFile(t.TempDir(), fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := codegraph.DirFiles(filepath.Join("..", "codegraph", "testdata", "graph", "pyproj"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := codegraph.Build(ctx, files, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo := schema.RepoName("acme/pyproj")
	commit := "0123456789abcdef0123456789abcdef01234567"
	info, err := codegraph.Write(ctx, b, repo, commit, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
		t.Fatal(err)
	}
	return b, repo, info
}

func TestIndexAndLocalize(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	res, err := IndexRepo(ctx, d, repo, info)
	if err != nil {
		t.Fatal(err)
	}
	if res.Functions != 9 || res.Embedded != 9 || res.Model != "lexical-hash-512" {
		t.Fatalf("first index: %+v", res)
	}
	again, err := IndexRepo(ctx, d, repo, info)
	if err != nil || again.Embedded != 0 {
		t.Fatalf("re-index embedded %d functions (%v), want 0: the cache must answer", again.Embedded, err)
	}
	issue := "slugify does not clean the text: strip the dashes from the slug"
	for _, method := range []string{MethodSR, MethodDER, MethodSpISR, MethodSpIDER} {
		t.Run(method, func(t *testing.T) {
			r, err := Localize(ctx, d, repo, issue, Params{Method: method, Params: spider.Params{K: 4, C: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Items) == 0 || len(r.Items) > 4 {
				t.Fatalf("%d items, want 1..4", len(r.Items))
			}
			if r.Items[0].ID != "app/util/strings.py:slugify" {
				t.Errorf("top item %s, want slugify; all: %+v", r.Items[0].ID, r.Items)
			}
			seen := map[string]bool{}
			for _, it := range r.Items {
				if seen[it.ID] {
					t.Errorf("duplicate %s", it.ID)
				}
				seen[it.ID] = true
			}
			if (method == MethodSpISR || method == MethodSpIDER) && r.Selector != llm.HeuristicName {
				t.Errorf("selector %q, want the heuristic named as such", r.Selector)
			}
			if (method == MethodDER || method == MethodSpIDER) && r.Embedder != "lexical-hash-512" {
				t.Errorf("embedder %q", r.Embedder)
			}
		})
	}
	if _, err := Localize(ctx, d, "acme/none", issue, Params{}); err == nil {
		t.Error("an unindexed repository must be an error")
	}
}
