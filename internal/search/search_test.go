package search

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// indexFixture publishes the graph of a codegraph fixture project.
func indexFixture(t *testing.T) (*blob.Bucket, schema.RepoName, schema.GraphInfo) {
	t.Helper()
	ctx := context.Background()
	b := blobtest.Bucket(t)
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
	info, err := graphstore.Write(ctx, b, repo, commit, g)
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
			r, err := localize(ctx, d, repo, issue, Params{Method: method, Params: spider.Params{K: 4, C: 2}})
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
	if _, err := localize(ctx, d, "acme/none", issue, Params{}); err == nil {
		t.Error("an unindexed repository must be an error")
	}
}

func TestPlanEmbedBatches(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	keys, err := PlanEmbed(ctx, d, repo, info, 4)
	if err != nil || len(keys) != 3 {
		t.Fatalf("plan: %v %v, want 3 batches for 9 functions at 4 per batch", keys, err)
	}
	total := 0
	for _, k := range keys {
		n, err := EmbedBatch(ctx, d, repo, k)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		// A retried batch finds its vectors cached and embeds nothing.
		if again, err := EmbedBatch(ctx, d, repo, k); err != nil || again != 0 {
			t.Fatalf("re-running batch %s embedded %d (%v), want 0", k, again, err)
		}
	}
	if total != 9 {
		t.Fatalf("batches embedded %d, want 9", total)
	}
	res, err := FinishIndex(ctx, d, repo, info)
	if err != nil || res.Embedded != 0 || res.Functions != 9 {
		t.Fatalf("finish: %+v %v; want everything from the cache", res, err)
	}
	left, _ := b.List(ctx, repo.EmbedPendingPrefix("lexical-hash-512", info.Commit))
	if len(left) != 0 {
		t.Errorf("%d planned batches left behind", len(left))
	}
	if keys, _ := PlanEmbed(ctx, d, repo, info, 4); len(keys) != 0 {
		t.Errorf("a second plan found %d batches to embed, want none", len(keys))
	}
}

// TestRetrieveVerifiesSparseIndex swaps the published BM25 index for another
// valid one: the format's own checksum passes, so only the size and SHA-256
// recorded in the manifest can tell, and the query must refuse it.
func TestRetrieveVerifiesSparseIndex(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	res, err := IndexRepo(ctx, d, repo, info)
	if err != nil {
		t.Fatal(err)
	}
	size, sum, err := sparse.Digest(ctx, b, res.SparseKey)
	if err != nil {
		t.Fatal(err)
	}
	si := &schema.SearchInfo{Commit: info.Commit, Model: res.Model, Functions: res.Functions, SparseKey: res.SparseKey, SparseBytes: size, SparseSHA256: sum}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Search: si}); err != nil {
		t.Fatal(err)
	}
	p := Params{Method: MethodSR, Params: spider.Params{K: 4}}
	if _, err := localize(ctx, d, repo, "slugify the text", p); err != nil {
		t.Fatalf("intact index: %v", err)
	}
	bld := sparse.NewBuilder(sparse.DefaultConfig())
	if err := bld.Add("x.py:f", "slugify something else entirely"); err != nil {
		t.Fatal(err)
	}
	other, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Write(ctx, b, res.SparseKey, other); err != nil {
		t.Fatal(err)
	}
	_, err = localize(ctx, d, repo, "slugify the text", p)
	if !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), res.SparseKey) {
		t.Fatalf("swapped index: got %v, want blob.ErrCorrupt naming %s", err, res.SparseKey)
	}
}

// localize is a query in this process: Retrieve, SelectCenters and Finish,
// the steps the Localize workflow runs as activities.
func localize(ctx context.Context, d Deps, repo schema.RepoName, issue string, p Params) (*Result, error) {
	r, err := Retrieve(ctx, d, repo, issue, p)
	if err != nil {
		return nil, err
	}
	res := &Result{Repo: r.Repo, Commit: r.Commit, Method: r.Method, Embedder: r.Embedder}
	var selected map[string]spider.Selection
	if r.Expansion != nil {
		d.defaults()
		res.Selector = d.Selector.Name()
		s, err := SelectCenters(ctx, d, SelectRequest{Repo: repo, Commit: r.Commit, Issue: issue, Centers: CentersOf(r), Concurrency: 1})
		if err != nil {
			return nil, err
		}
		selected = s.Usage(res)
	}
	res.Items, err = Finish(r, selected)
	return res, err
}

// Test functions are left out of every method's ranking unless
// IncludeTests is set.
func TestRankingLeavesOutTests(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join("..", "codegraph", "testdata", "graph", "pyproj")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	test := "from app.util.strings import slugify\n\n\ndef test_slugify_strips_dashes():\n    assert slugify('a-b') == 'ab'  # slugify strip dashes slug\n"
	if err := os.MkdirAll(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "test_strings.py"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := codegraph.DirFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := codegraph.Build(ctx, files, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := blobtest.Bucket(t)
	repo := schema.RepoName("acme/pyproj")
	info, err := graphstore.Write(ctx, b, repo, "0123456789abcdef0123456789abcdef01234567", g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
		t.Fatal(err)
	}
	d := Deps{Bucket: b}
	if _, err := IndexRepo(ctx, d, repo, info); err != nil {
		t.Fatal(err)
	}
	const testID = "tests/test_strings.py:test_slugify_strips_dashes"
	issue := "slugify does not strip the dashes from the slug"
	for _, method := range []string{MethodSR, MethodDER, MethodSpISR, MethodSpIDER} {
		for _, include := range []bool{false, true} {
			r, err := localize(ctx, d, repo, issue, Params{Method: method, Params: spider.Params{K: 10, C: 2}, IncludeTests: include})
			if err != nil {
				t.Fatal(err)
			}
			has := false
			for _, it := range r.Items {
				has = has || it.ID == testID
			}
			if has != include {
				t.Errorf("%s, include tests %v: test function ranked %v; items %+v", method, include, has, r.Items)
			}
		}
	}
}

// The hybrid method fuses BM25 with episodic memory: a function that past
// commits with messages like the issue changed moves up, one changed only
// after the base commit does not, and a repository without memory still
// answers with a warning that says how to add it.
func TestHybridFusesMemory(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	ir, err := IndexRepo(ctx, d, repo, info)
	if err != nil {
		t.Fatal(err)
	}
	si := &schema.SearchInfo{Commit: info.Commit, Model: ir.Model, SparseKey: ir.SparseKey}
	issue := "renaming a user forgets to store the new display name"
	p := Params{Method: MethodHybrid, Params: spider.Params{K: 9, C: 1}, MemoryWeight: 1}
	noMem, err := Retrieve(ctx, d, repo, issue, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(noMem.Warning, "no repository memory") || !strings.Contains(noMem.Warning, "locus index") || len(noMem.TopK) == 0 {
		t.Fatalf("without memory: warning %q, %d ranked", noMem.Warning, len(noMem.TopK))
	}
	const day = 24 * 60 * 60 * 1000
	tb, err := memory.New([]memory.Commit{
		{ID: "p1", Time: 1 * day, Message: "store the display name when a user is renamed", Functions: []string{"app/models.py:Base.save"}},
		{ID: info.Commit, Parents: []string{"p1"}, Time: 2 * day, Message: "tidy", Functions: []string{"main.py:run"}},
		{ID: "later", Parents: []string{info.Commit}, Time: 3 * day, Message: "renaming a user forgets to store the new display name", Functions: []string{"app/util/strings.py:unused"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mi, err := memory.Write(ctx, b, repo.MemoryKey(info.Commit), tb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Search: si, Scrape: schema.ScrapeResult{Memory: &mi}}); err != nil {
		t.Fatal(err)
	}
	sr, err := localize(ctx, d, repo, issue, Params{Method: MethodSR, Params: spider.Params{K: 9}})
	if err != nil {
		t.Fatal(err)
	}
	hy, err := localize(ctx, d, repo, issue, p)
	if err != nil {
		t.Fatal(err)
	}
	rank := func(r *Result, id string) int {
		for i, it := range r.Items {
			if it.ID == id {
				return i + 1
			}
		}
		return len(r.Items) + 1
	}
	if r, err := Retrieve(ctx, d, repo, issue, p); err != nil || r.Warning != "" || hy.Method != MethodHybrid {
		t.Errorf("with memory: %v, warning %q, method %q", err, r.Warning, hy.Method)
	}
	if s, h := rank(sr, "app/models.py:Base.save"), rank(hy, "app/models.py:Base.save"); h != 1 || s == 1 {
		t.Errorf("Base.save at %d by BM25 and %d by hybrid; want memory to lift it to 1 (items %+v)", s, h, hy.Items)
	}
	if s, h := rank(sr, "app/util/strings.py:unused"), rank(hy, "app/util/strings.py:unused"); h < s {
		t.Errorf("unused, changed only after the base, moved from %d to %d", s, h)
	}
	// Queries at once share the cached memory and answer alike.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			again, err := localize(ctx, d, repo, issue, p)
			if err != nil || len(again.Items) != len(hy.Items) || again.Items[0].ID != hy.Items[0].ID {
				t.Errorf("a concurrent query: %v, %+v", err, again)
			}
		}()
	}
	wg.Wait()
}

// When no word of the issue is in the code or the history, hybrid ranks by
// the embedder and says so instead of answering nothing.
func TestHybridFallsBackToTheEmbedder(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	if _, err := IndexRepo(ctx, d, repo, info); err != nil {
		t.Fatal(err)
	}
	r, err := Retrieve(ctx, d, repo, "zzqx wibble", Params{Method: MethodHybrid, Params: spider.Params{K: 3, C: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.TopK) == 0 || r.Embedder == "" || !strings.Contains(r.Warning, "ranked by the embedder") {
		t.Errorf("retrieval %+v, want the embedder's ranking and a warning", r)
	}
}

// modelEmbedder stands for an embedding model: the lexical vectors under
// another name, which is all the fusion's default looks at.
type modelEmbedder struct{ embed.Lexical }

func (modelEmbedder) Name() string { return "fake-model-512" }

// The hybrid method fuses the embedder's ranking in by default with a
// model embedder, not with the lexical one, and as a query's DenseWeight
// says.
func TestHybridFusesDenseWithAModelEmbedder(t *testing.T) {
	ctx := context.Background()
	issue := "slugify does not clean the text"
	for _, tc := range []struct {
		name      string
		embedder  embed.Embedder
		weight    float64
		wantDense bool
	}{
		{"lexical default", &embed.Lexical{}, 0, false},
		{"lexical asked", &embed.Lexical{}, 0.5, true},
		{"model default", &modelEmbedder{}, 0, true},
		{"model off", &modelEmbedder{}, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, repo, info := indexFixture(t)
			d := Deps{Bucket: b, Embedder: tc.embedder}
			if _, err := IndexRepo(ctx, d, repo, info); err != nil {
				t.Fatal(err)
			}
			r, err := Retrieve(ctx, d, repo, issue, Params{Method: MethodHybrid, Params: spider.Params{K: 3, C: 1}, DenseWeight: tc.weight})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Embedder != ""; got != tc.wantDense || len(r.TopK) == 0 || r.TopK[0].ID != "app/util/strings.py:slugify" {
				t.Errorf("embedder %q (dense fused: %v, want %v), top %+v", r.Embedder, got, tc.wantDense, r.TopK)
			}
		})
	}
	if err := (Params{DenseWeight: math.NaN()}).Validate(); err == nil {
		t.Error("a NaN dense weight must be refused")
	}
}

// TestLocalizeUnsupportedLanguage: a repository mostly in a language without
// a graph is answered with a warning saying so; one with nothing parsed is
// an error saying so, not an empty list.
func TestLocalizeUnsupportedLanguage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		files map[string]string
		warn  string
		err   bool
	}{
		{"some python beside kotlin", map[string]string{
			"app/Main.kt": strings.Repeat("fun main() { println(\"slug\") }\n", 50), "tools/slug.py": "def slugify(s):\n    return s.strip('-')\n"},
			"graph: unsupported language kotlin, 97% of code; the graph covers python 3%", false},
		{"kotlin alone", map[string]string{"app/Main.kt": "fun main() { println(\"slug\") }\n"},
			"graph: unsupported language kotlin, 100% of code; the graph covers nothing else", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, c := range tc.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := blobtest.Bucket(t)
			files, err := codegraph.DirFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			g, err := codegraph.Build(ctx, files, codegraph.Options{})
			if err != nil {
				t.Fatal(err)
			}
			repo := schema.RepoName("acme/kt")
			info, err := graphstore.Write(ctx, b, repo, strings.Repeat("ab", 20), g)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(info.Warning, tc.warn) {
				t.Errorf("graph warning %q, want %q", info.Warning, tc.warn)
			}
			if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
				t.Fatal(err)
			}
			d := Deps{Bucket: b}
			if _, err := IndexRepo(ctx, d, repo, info); err != nil {
				t.Fatal(err)
			}
			r, err := Retrieve(ctx, d, repo, "slugify strips dashes", Params{Method: MethodSR, Params: spider.Params{K: 4}})
			if tc.err {
				if !errors.Is(err, ErrNoGraph) || !strings.Contains(err.Error(), tc.warn) || !strings.Contains(err.Error(), string(repo)) {
					t.Fatalf("err = %v, want ErrNoGraph naming %s and saying %q", err, repo, tc.warn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.Warning, tc.warn) || len(r.TopK) == 0 {
				t.Errorf("warning %q, %d ranked; want %q and the python function", r.Warning, len(r.TopK), tc.warn)
			}
		})
	}
}
