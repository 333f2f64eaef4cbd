package triplets

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// mineRepo is a small Python project whose history has one real fix, a
// fix that also touches tests, a formatting commit and a bot commit.
func mineRepo(t *testing.T) (*gitfixture.Repo, []Commit) {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"pkg/cache.py":        "class Cache:\n    def get(self, key):\n        return self.store[key]\n\n    def put(self, key, value):\n        self.store[key] = value\n\n    def evict(self, key):\n        del self.store[key]\n",
		"pkg/queue.py":        "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items.clear()\n",
		"pkg/keys.py":         "def parse_key(text):\n    return text.strip()\n\ndef key_of(entry):\n    return entry.key\n\ndef cache_key(entry):\n    return entry.key\n",
		"tests/test_cache.py": "def test_get():\n    assert Cache().get('k') is None\n",
	})
	c1 := r.Commit("initial")
	r.Write(map[string]string{"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def put(self, key, value):\n        self.store[key] = value\n\n    def evict(self, key):\n        del self.store[key]\n"})
	c2 := r.Commit("Cache get returns None for a missing key instead of raising KeyError (#12)\n\nSigned-off-by: A <a@x>")
	r.Write(map[string]string{"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items = []\n"})
	c3 := r.CommitAs("dependabot[bot]", "bot@example.com", []byte("Drain the queue items"))
	r.Write(map[string]string{"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def put(self, key, value):\n        self.store[key] = value\n\n    def evict(self, key):\n        self.store.pop(key, None)\n"})
	c4 := r.Commit("Evicting a missing key from the cache store must not raise")
	commits := []Commit{
		{Change: Change{Commit: c2, Message: "Cache get returns None for a missing key instead of raising KeyError (#12)\n\nSigned-off-by: A <a@x>",
			Files: []FileChange{{Path: "pkg/cache.py", Diff: []byte("-        return self.store[key]\n+        return self.store.get(key)\n"), Functions: []string{"pkg/cache.py:Cache.get"}}}},
			Parent: c1, Time: 2},
		{Change: Change{Commit: c3, Message: "Drain the queue items", AuthorName: "dependabot[bot]",
			Files: []FileChange{{Path: "pkg/queue.py", Diff: []byte("-x\n+y\n"), Functions: []string{"pkg/queue.py:Queue.drain"}}}}, Parent: c2, Time: 3},
		{Change: Change{Commit: c4, Message: "Evicting a missing key from the cache store must not raise",
			Files: []FileChange{{Path: "pkg/cache.py", Diff: []byte("-        del self.store[key]\n+        self.store.pop(key, None)\n"), Functions: []string{"pkg/cache.py:Cache.evict"}}}},
			Parent: c3, Time: 4},
	}
	return r, commits
}

func TestMine(t *testing.T) {
	r, commits := mineRepo(t)
	m := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{Negatives: 3}}
	var recs []Record
	st, err := m.Mine(context.Background(), commits, func(rec Record) error { recs = append(recs, rec); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Commits != 3 || st.Records != 2 || st.Skipped[SkipBot] != 1 || st.Failed != 0 {
		t.Fatalf("stats %+v", st)
	}
	fix := recs[0]
	if fix.Query != "Cache get returns None for a missing key instead of raising KeyError" || fix.Parent != commits[0].Parent || fix.Source != "commit" {
		t.Errorf("record %+v", fix)
	}
	// The positive's code is the parent's, before the fix.
	if len(fix.Positives) != 1 || fix.Positives[0].ID != "pkg/cache.py:Cache.get" || !strings.Contains(fix.Positives[0].Code, "self.store[key]") {
		t.Fatalf("positives %+v", fix.Positives)
	}
	if len(fix.PositiveRanks) != 1 || fix.PositiveRanks[0] < 1 {
		t.Errorf("positive ranks %v: the fix's own words should rank it", fix.PositiveRanks)
	}
	if len(fix.Negatives) == 0 || len(fix.Negatives) > 3 {
		t.Fatalf("negatives %+v", fix.Negatives)
	}
	for i, n := range fix.Negatives {
		if n.ID == "pkg/cache.py:Cache.get" || strings.HasPrefix(n.ID, "tests/") || n.Source != "bm25" || n.Rank < 1 || i > 0 && n.Rank <= fix.Negatives[i-1].Rank {
			t.Errorf("negative %d: %+v", i, n)
		}
	}
	// The second record: evict's code at its parent; its negatives come
	// only from files that are the same at its parent as at the anchor
	// (the first commit's parent): cache.py and queue.py changed since.
	ev := recs[1]
	if len(ev.Positives) != 1 || !strings.Contains(ev.Positives[0].Code, "del self.store[key]") {
		t.Fatalf("evict positives %+v", ev.Positives)
	}
	for _, n := range ev.Negatives {
		if strings.HasPrefix(n.ID, "pkg/cache.py:") || strings.HasPrefix(n.ID, "pkg/queue.py:") {
			t.Errorf("negative %s comes from a file that changed between the anchor and the parent", n.ID)
		}
	}
}

func TestMineFilters(t *testing.T) {
	r, commits := mineRepo(t)
	ctx := context.Background()
	count := func(m *Miner) (Stats, []Record) {
		var recs []Record
		st, err := m.Mine(ctx, commits, func(rec Record) error { recs = append(recs, rec); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return st, recs
	}
	// The benchmark exclusion: the fix's commit is named, everything from it on goes.
	ex := Repo{named: map[string]bool{strings.ToLower(commits[0].Commit): true}, Cut: 2}
	if st, recs := count(&Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Exclude: ex}); len(recs) != 0 || st.Excluded != 3 {
		t.Errorf("excluded: %+v, %d records", st, len(recs))
	}
	// The consistency filter with an impossible rank keeps nothing.
	if st, _ := count(&Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{MinRank: 1, MaxRank: 1, KeepRank: 1, Negatives: 1}}); st.Records+st.Skipped[SkipInconsistent]+st.Skipped[SkipNoNegatives] != 2 {
		t.Errorf("keep-rank 1: %+v", st)
	}
	// Co-change: with a window, functions changed next to a positive are
	// not its negatives.
	negs := func(recs []Record) map[string]bool {
		out := map[string]bool{}
		for _, n := range recs[0].Negatives {
			out[n.ID] = true
		}
		return out
	}
	_, recs := count(&Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{Negatives: 10}})
	if !negs(recs)["pkg/cache.py:Cache.evict"] {
		t.Fatalf("evict is not a negative of the get fix to begin with: %+v", recs[0].Negatives)
	}
	co := append([]Commit{}, commits...)
	co[2].Files = []FileChange{{Path: "pkg/cache.py", Diff: co[2].Files[0].Diff, Functions: []string{"pkg/cache.py:Cache.evict", "pkg/cache.py:Cache.get"}}}
	commits = co
	if _, recs = count(&Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{Negatives: 10}}); negs(recs)["pkg/cache.py:Cache.evict"] {
		t.Errorf("evict, changed together with get two commits later, is its negative")
	}
	if _, recs = count(&Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{Negatives: 10, CoChangeWindow: 1}}); !negs(recs)["pkg/cache.py:Cache.evict"] {
		t.Errorf("a window of 1 commit must not reach the co-change two commits away")
	}

	// A missing parent is a counted failure naming the commit; the rest carry on.
	bad := append([]Commit{}, commits...)
	bad[2].Parent = strings.Repeat("0", 40)
	st, recs := func() (Stats, []Record) {
		var recs []Record
		st, err := (&Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git")}).Mine(ctx, bad, func(rec Record) error { recs = append(recs, rec); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return st, recs
	}()
	if st.Failed != 1 || len(recs) != 1 || !strings.Contains(st.FailedExamples[0], bad[2].Commit) {
		t.Errorf("missing parent: %+v, %d records", st, len(recs))
	}
}

// When the anchor's state has drifted from a commit's parent so far that no
// negative survives, the parent itself is indexed and the commit mined again.
func TestMineReanchors(t *testing.T) {
	r, commits := mineRepo(t)
	m := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{MaxRank: 3, Negatives: 3, AnchorEvery: 1000}}
	var recs []Record
	st, err := m.Mine(context.Background(), commits, func(rec Record) error { recs = append(recs, rec); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ev := recs[len(recs)-1]
	if st.Anchors != 2 || !strings.HasSuffix(ev.Positives[0].ID, "Cache.evict") || len(ev.Negatives) == 0 {
		t.Fatalf("stats %+v, evict record %+v", st, ev)
	}
	for _, n := range ev.Negatives {
		if strings.HasPrefix(n.ID, "pkg/cache.py:") && !strings.Contains(n.Code, "self.store") {
			t.Errorf("negative %+v", n)
		}
	}
}

func TestMineInstances(t *testing.T) {
	r, commits := mineRepo(t)
	base, fixed := commits[0].Parent, commits[0].Commit
	patch := r.Git("diff", base, fixed)
	m := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{Negatives: 3}}
	in := []dataset.SWEInstance{
		{InstanceID: "acme__widgets-1", Repo: "Acme/Widgets", BaseCommit: base, ProblemStatement: "  Cache.get raises KeyError for a missing key\n", Patch: patch},
		{InstanceID: "other__lib-2", Repo: "other/lib", BaseCommit: base, ProblemStatement: "x", Patch: patch},
		{InstanceID: "acme__widgets-3", Repo: "acme/widgets", BaseCommit: strings.Repeat("1", 40), ProblemStatement: "y", Patch: patch},
	}
	var recs []Record
	st, err := m.MineInstances(context.Background(), in, func(rec Record) error { recs = append(recs, rec); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 1 || st.Skipped[SkipOtherRepo] != 1 || st.Failed != 1 || !strings.Contains(st.FailedExamples[0], "acme__widgets-3") {
		t.Fatalf("stats %+v", st)
	}
	rec := recs[0]
	if rec.QueryID != "acme__widgets-1" || rec.Source != "instance" || rec.Query != "Cache.get raises KeyError for a missing key" || rec.Parent != base || rec.Time == 0 {
		t.Errorf("record %+v", rec)
	}
	if len(rec.Positives) != 1 || rec.Positives[0].ID != "pkg/cache.py:Cache.get" || !strings.Contains(rec.Positives[0].Code, "self.store[key]") || len(rec.Negatives) == 0 {
		t.Errorf("positives %+v negatives %+v", rec.Positives, rec.Negatives)
	}
}

func TestIssueTextsAsQueries(t *testing.T) {
	gh := writeFile(t, "issues.json", `[{"number": 12, "title": "KeyError on a missing key", "body": "Cache.get raises instead of returning None."},
		{"number": 13, "title": "A pull request", "body": "x", "pull_request": {"url": "u"}}]`)
	texts, skipped, err := LoadIssues(gh, "acme/widgets")
	if err != nil || skipped != 0 || len(texts) != 1 || texts["acme/widgets#12"] == "" {
		t.Fatalf("texts %v, skipped %d, %v", texts, skipped, err)
	}
	// A directory spelt like the repository is not read as it: the
	// record's repository is a name.
	t.Chdir(t.TempDir())
	other := gitfixture.NewAt(t, filepath.Join("acme", "widgets"))
	other.Write(map[string]string{"x.py": "def x():\n    pass\n"})
	other.Commit("other")
	other.Git("remote", "add", "origin", "https://example.com/other/project.git")
	if texts, _, err := LoadIssues(gh, "acme/widgets"); err != nil || texts["acme/widgets#12"] == "" {
		t.Fatalf("with a directory acme/widgets of another origin: texts %v, %v", texts, err)
	}
	if _, _, err := LoadIssues(filepath.Join(t.TempDir(), "none.json"), ""); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("unreadable file: %v", err)
	}
	r, commits := mineRepo(t)
	m := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Issues: texts}
	var recs []Record
	if _, err := m.Mine(context.Background(), commits, func(rec Record) error { recs = append(recs, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	if recs[0].Source != "issue" || recs[0].Query != "KeyError on a missing key\n\nCache.get raises instead of returning None." {
		t.Errorf("the commit referencing #12: %q (%s)", recs[0].Query, recs[0].Source)
	}
	if recs[1].Source != "commit" {
		t.Errorf("a commit referencing nothing: source %s", recs[1].Source)
	}
}

func TestGraphNegatives(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"pkg/a.py": "def helper(x):\n    return x + 1\n\ndef main(x):\n    return helper(x) * 2\n\ndef other(y):\n    return y\n"})
	base := r.Commit("initial")
	r.Write(map[string]string{"pkg/a.py": "def helper(x):\n    return x + 2\n\ndef main(x):\n    return helper(x) * 2\n\ndef other(y):\n    return y\n"})
	fix := r.Commit("helper adds two")
	commits := []Commit{{Change: Change{Commit: fix, Message: "helper adds two", Files: []FileChange{{Path: "pkg/a.py", Diff: []byte("-    return x + 1\n+    return x + 2\n"), Functions: []string{"pkg/a.py:helper"}}}}, Parent: base, Time: 2}}
	for _, tc := range []struct {
		from []string
		want map[string]string // negative → source
	}{
		{[]string{SourceGraph}, map[string]string{"pkg/a.py:main": SourceGraph}},
		{[]string{SourceBM25}, map[string]string{"pkg/a.py:main": SourceBM25}},
		// main is a BM25 hit too: taken once, from the graph.
		{[]string{SourceGraph, SourceBM25}, map[string]string{"pkg/a.py:main": SourceGraph}},
	} {
		m := &Miner{Repo: "acme/a", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{HardFrom: tc.from, Negatives: 6, MaxRank: 10}}
		var recs []Record
		if _, err := m.Mine(context.Background(), commits, func(rec Record) error { recs = append(recs, rec); return nil }); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		if len(recs) == 1 {
			for _, n := range recs[0].Negatives {
				got[n.ID] = n.Source
			}
		}
		if len(got) != len(tc.want) || len(recs) == 1 && len(recs[0].Negatives) != len(got) {
			t.Errorf("hard from %v: negatives %+v, want %v", tc.from, recs, tc.want)
		}
		for id, src := range tc.want {
			if got[id] != src {
				t.Errorf("hard from %v: negatives %v, want %s from %s", tc.from, got, id, src)
			}
		}
	}
	if err := (Options{HardFrom: []string{"sparse"}}).Validate(); err == nil || !strings.Contains(err.Error(), "want some of bm25,dense,graph") {
		t.Errorf("sparse: %v", err)
	}
	if err := (Options{HardFrom: []string{"bm25", "dense", "graph"}}).Validate(); err != nil {
		t.Error(err)
	}
}

// counting is an embedder that counts the texts it embeds.
type counting struct {
	embed.Lexical
	texts atomic.Int64
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Lexical.Embed(ctx, texts)
}

// failing is an embedder whose every call fails with err.
type failing struct{ err error }

func (failing) Name() string                                           { return "down" }
func (failing) Dim() int                                               { return 64 }
func (f failing) Embed(context.Context, []string) ([][]float32, error) { return nil, f.err }

func TestDenseNegatives(t *testing.T) {
	r, commits := mineRepo(t)
	b := blobtest.Bucket(t)
	e := &counting{Lexical: embed.Lexical{Dims: 64}}
	dense := &Dense{Embedder: e, Cache: &embed.Cache{Bucket: b, Repo: "acme/widgets", Model: e.Name()}}
	mine := func(from ...string) []Record {
		t.Helper()
		m := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Dense: dense, Options: Options{HardFrom: from, Negatives: 4}}
		var recs []Record
		st, err := m.Mine(context.Background(), commits, func(rec Record) error { recs = append(recs, rec); return nil })
		if err != nil || st.Failed != 0 || len(recs) != 2 {
			t.Fatalf("hard from %v: %d records, %+v, %v", from, len(recs), st, err)
		}
		return recs
	}
	// Dense alone: every negative the embedder's, in its rank order.
	for _, rec := range mine(SourceDense) {
		if len(rec.Negatives) == 0 {
			t.Fatalf("%s: no dense negatives", rec.QueryID)
		}
		for i, n := range rec.Negatives {
			if n.Source != SourceDense || n.Rank < 1 || n.Score <= 0 || n.ID == rec.Positives[0].ID || i > 0 && n.Rank <= rec.Negatives[i-1].Rank {
				t.Errorf("%s: negative %d %+v", rec.QueryID, i, n)
			}
		}
	}
	first := e.texts.Load()
	if dense.Embeds != int(first) || first <= 2 {
		t.Errorf("Embeds %d, the embedder saw %d texts", dense.Embeds, first)
	}
	if err := dense.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// With BM25, the two in turn, each function once; a new miner's
	// functions' vectors come from the cache the first stored: only the
	// queries are embedded.
	dense = &Dense{Embedder: e, Cache: dense.Cache}
	for _, rec := range mine(SourceBM25, SourceDense) {
		seen := map[string]bool{}
		var srcs []string
		for _, n := range rec.Negatives {
			if seen[n.ID] {
				t.Errorf("%s: %s twice", rec.QueryID, n.ID)
			}
			seen[n.ID] = true
			srcs = append(srcs, n.Source)
		}
		if len(srcs) < 2 || srcs[0] != SourceBM25 || srcs[1] != SourceDense {
			t.Errorf("%s: sources %v, want bm25 and dense in turn", rec.QueryID, srcs)
		}
	}
	if again := e.texts.Load() - first; again != 2 {
		t.Errorf("the second run embedded %d texts, want the 2 queries (functions from the cache)", again)
	}
	// An embedder that is down fails the chunk (to be retried whole)
	// rather than counting its commits as failed.
	// Whether the functions' vectors are cached (only the query fails) or
	// not (the anchor fails).
	for _, cache := range []*embed.Cache{dense.Cache, {Bucket: b, Repo: "acme/widgets", Model: "down"}} {
		down := &Dense{Embedder: failing{&embed.Error{URL: "http://gpu-1", Status: 503, Retryable: true, Msg: "busy"}}, Cache: cache}
		dm := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Dense: down, Options: Options{HardFrom: []string{SourceDense}}}
		if st, err := dm.Mine(context.Background(), commits, func(Record) error { return nil }); !embed.IsRetryable(err) || st.Failed != 0 {
			t.Errorf("embedder down, cache %s: %+v, %v", cache.Model, st, err)
		}
	}
	// Without an embedder, dense negatives are refused before any work.
	m := &Miner{Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{HardFrom: []string{SourceDense}}}
	if _, err := m.Mine(context.Background(), commits, func(Record) error { return nil }); !errors.Is(err, ErrNoEmbedder) || !strings.Contains(err.Error(), "acme/widgets") {
		t.Errorf("no embedder: %v", err)
	}
}

func TestIssueRepo(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"pallets/flask", "pallets/flask"},
		{" Redis/Redis ", "redis/redis"},
		{"https://github.com/pallets/flask", "pallets/flask"},
		{"git@github.com:pallets/flask.git", "pallets/flask"},
		{"", ""},
		{"flask", "flask"}, // a one-part name, as a directory indexed without an origin is named
		{"../x", ""},
		{"a/b/c", ""},
		{"https://example.com/a/b?access_token=t", ""},
	} {
		got, err := issueRepo(tc.in)
		if string(got) != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("issueRepo(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// An instance whose patch edits only a C++ header: its gold is the
// function as the base's graph names it, the header parsed as C++ because
// the repository's sources are C++, not as C (how the header alone would
// be read).
func TestMineInstanceHeaderLanguage(t *testing.T) {
	r := gitfixture.New(t)
	hdr := "namespace fmt {\nclass color {\n public:\n  int bg(int c) {\n    return c + 1;\n  }\n};\n}\n"
	r.Write(map[string]string{
		"include/fmt/color.h": hdr,
		"src/a.cc":            "#include \"fmt/color.h\"\nint use_a() { return fmt::color().bg(1); }\n",
		"src/b.cc":            "int use_b() { return 2; }\n",
	})
	base := r.Commit("layout")
	r.Write(map[string]string{"include/fmt/color.h": strings.Replace(hdr, "c + 1", "c + 2", 1)})
	fixed := r.Commit("fix bg")
	m := &Miner{Repo: "fmtlib/fmt", GitDir: filepath.Join(r.Dir, ".git"), Options: Options{Negatives: 1}}
	var recs []Record
	in := []dataset.SWEInstance{{InstanceID: "fmtlib__fmt-1", Repo: "fmtlib/fmt", BaseCommit: base, ProblemStatement: "color bg is off by one", Patch: r.Git("diff", base, fixed)}}
	st, err := m.MineInstances(context.Background(), in, func(rec Record) error { recs = append(recs, rec); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || len(recs[0].Positives) != 1 {
		t.Fatalf("records %+v, stats %+v", recs, st)
	}
	// The same change mined as a commit: its positive, named as the
	// commits table names it, is found in the header at the parent.
	crecs := []Record{}
	cst, err := m.Mine(context.Background(), []Commit{{Change: Change{Commit: fixed, Message: "Fix the color bg offset used by use_a",
		Files: []FileChange{{Path: "include/fmt/color.h", Diff: []byte("-    return c + 1;\n+    return c + 2;\n"), Functions: []string{"include/fmt/color.h:fmt.color.bg"}}}},
		Parent: base, Time: 2}}, func(rec Record) error { crecs = append(crecs, rec); return nil })
	if err != nil || len(crecs) != 1 || len(crecs[0].Positives) != 1 || crecs[0].Positives[0].ID != "include/fmt/color.h:fmt.color.bg" {
		t.Errorf("the commit: records %+v, stats %+v, %v", crecs, cst, err)
	}
	g, err := codegraph.BuildCommit(context.Background(), filepath.Join(r.Dir, ".git"), "", mustHash(t, base), codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].Positives[0].ID
	found := false
	for _, n := range g.Nodes {
		found = found || n.ID == id && n.Type == codegraph.TypeFunction
	}
	if !found || !strings.Contains(id, "color.bg") {
		t.Errorf("positive %q is not a function of the base's graph (C++ header)", id)
	}
}

func mustHash(t *testing.T, s string) gitrepo.Hash {
	t.Helper()
	h, ok := gitrepo.ParseHash(s)
	if !ok {
		t.Fatalf("%q is not a commit id", s)
	}
	return h
}
