package search

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// TestGraphDecodedOncePerQuery: Retrieve and every center's SelectCenter
// share one decoded graph (they used to decode nodes.parquet 1 + C times),
// also when the selections run concurrently; another store's graph under
// the same repository name is not mixed up with it.
func TestGraphDecodedOncePerQuery(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	if _, err := IndexRepo(ctx, d, repo, info); err != nil {
		t.Fatal(err)
	}
	graphs.reset()
	t.Cleanup(graphs.reset)
	issue := "slugify does not clean the text: strip the dashes from the slug"
	r, err := Retrieve(ctx, d, repo, issue, Params{Method: MethodSpISR, Params: spider.Params{K: 4, C: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	centers := 0
	for _, c := range r.Expansion.Centers {
		if len(c.Candidates) == 0 {
			continue
		}
		centers++
		ids := make([]string, len(c.Candidates))
		for i, cd := range c.Candidates {
			ids[i] = cd.ID
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := Code(ctx, d, repo, r.Commit, append([]string{c.ID}, ids...))
			if err != nil {
				t.Error(err)
				return
			}
			if code[c.ID] == "" || len(code) != len(ids)+1 {
				t.Errorf("code of %s and its %d candidates: got %d entries", c.ID, len(ids), len(code))
			}
		}()
	}
	wg.Wait()
	if centers == 0 {
		t.Fatal("no center with candidates: the test would prove nothing")
	}
	if graphs.loads != 1 {
		t.Errorf("graph decoded %d times for Retrieve and %d selections, want once", graphs.loads, centers)
	}

	// Same repository name and commit in another store, other code.
	other := blobtest.Bucket(t)
	g := &codegraph.Graph{Nodes: []codegraph.Node{
		{ID: "m.py", Type: codegraph.TypeFile, Path: "m.py"},
		{ID: "m.py:slugify", Type: codegraph.TypeFunction, Path: "m.py", Name: "slugify", Code: "def slugify(): return 'other store'"},
	}, Edges: []codegraph.Edge{{Src: "m.py", Dst: "m.py:slugify", Type: codegraph.EdgeContains}}}
	oinfo, err := graphstore.Write(ctx, other, repo, info.Commit, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, other, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &oinfo}); err != nil {
		t.Fatal(err)
	}
	code, err := Code(ctx, Deps{Bucket: other}, repo, info.Commit, []string{"m.py:slugify"})
	if err != nil || !strings.Contains(code["m.py:slugify"], "other store") {
		t.Errorf("other store's code %q (%v): the cache mixed up two stores", code, err)
	}
}

// benchGraph publishes a generated repository of files×classes×methods
// functions and indexes it.
func benchGraph(b *testing.B, files, classes, methods int) (Deps, schema.RepoName) {
	ctx := context.Background()
	bucket := blobtest.Bucket(b)
	var fs []codegraph.File
	for f := range files {
		var src strings.Builder
		for c := range classes {
			fmt.Fprintf(&src, "class Store%dKind%d:\n", f, c)
			for m := range methods {
				fmt.Fprintf(&src, "    def op%d_%d(self, key, value):\n        cache = self.cache%d\n        if key in cache:\n            return cache[key] + value * %d\n        return self.load%d(key)\n\n", c, m, m, f, m)
			}
		}
		data := []byte(src.String())
		fs = append(fs, codegraph.File{Path: fmt.Sprintf("pkg%d/mod%d.py", f%20, f), Regular: true, Read: func() ([]byte, error) { return data, nil }})
	}
	g, err := codegraph.Build(ctx, fs, codegraph.Options{})
	if err != nil {
		b.Fatal(err)
	}
	repo := schema.RepoName("bench/generated")
	info, err := graphstore.Write(ctx, bucket, repo, strings.Repeat("ab", 20), g)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, bucket, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
		b.Fatal(err)
	}
	d := Deps{Bucket: bucket}
	if _, err := IndexRepo(ctx, d, repo, info); err != nil {
		b.Fatal(err)
	}
	return d, repo
}

// BenchmarkLocalizeGraphCache measures one SpISR query (BM25, expansion,
// C=5 heuristic selections) on a generated graph of 6,000 functions with
// the graph decoded per step as before (1 + C decodes), decoded once per
// query (cold cache), and shared across queries (warm cache).
func BenchmarkLocalizeGraphCache(b *testing.B) {
	d, repo := benchGraph(b, 300, 2, 10)
	ctx := context.Background()
	p := Params{Method: MethodSpISR, Params: spider.Params{K: 20, C: 5}}
	issue := "op3_7 returns the wrong value when the key is in the cache: load7 is never called"
	for _, mode := range []string{"uncached", "cold", "warm"} {
		b.Run(mode, func(b *testing.B) {
			graphs.reset()
			graphs.off = mode == "uncached"
			defer func() { graphs.off = false; graphs.reset() }()
			for b.Loop() {
				if mode == "cold" {
					graphs.reset()
				}
				if _, err := localize(ctx, d, repo, issue, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
