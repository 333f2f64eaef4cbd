package commiteval

import (
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/sparse"
)

// history is a tiny hand-made repository:
//
//	c1 t=100  touches parser.c (id P) and util.c (id U)
//	c2 t=200  renames parser.c -> lexer.c (id P)
//	c3 t=300  touches lexer.c (P) and old.c (id O)
//	c4 t=400  deletes old.c
//	q  t=500  the query commit: adds new.c (id N), touches lexer.c
//	c6 t=600  a newer commit touching future.c (id F) and util.c
//
// The query state (q's parent) holds lexer.c, util.c and readme.md.
func history() []Commit {
	return []Commit{
		{ID: "c6", Time: 600, Message: "parser crash crash", Files: []FileChange{
			{Path: "future.c", FileID: "F", Status: "added"}, {Path: "util.c", FileID: "U", Status: "modified"}}},
		{ID: "c1", Time: 100, Message: "fix parser crash in the tokenizer code when reading utf8 input", Files: []FileChange{
			{Path: "util.c", FileID: "U", Status: "modified"}, {Path: "parser.c", FileID: "P", Status: "modified"}}},
		{ID: "c2", Time: 200, Message: "rename parser to lexer", Files: []FileChange{
			{Path: "lexer.c", FileID: "P", Status: "renamed"}}},
		{ID: "c3", Time: 300, Message: "parser crash", Files: []FileChange{
			{Path: "lexer.c", FileID: "P", Status: "modified"}, {Path: "old.c", FileID: "O", Status: "added"}}},
		{ID: "c4", Time: 400, Message: "remove old", Files: []FileChange{
			{Path: "old.c", FileID: "O", Status: "deleted"}}},
		{ID: "q", Time: 500, Message: "parser crash new file", Files: []FileChange{
			{Path: "new.c", FileID: "N", Status: "added"}, {Path: "lexer.c", FileID: "P", Status: "modified"}}},
	}
}

func state() State {
	return NewState([]string{"lexer.c", "util.c", "readme.md"},
		map[string]string{"P": "lexer.c", "U": "util.c", "R": "readme.md"})
}

func engines(t *testing.T) map[string]*Engine {
	t.Helper()
	out := map[string]*Engine{}
	for name, shared := range map[string]bool{"exact": false, "shared": true} {
		opt := DefaultOptions()
		opt.SharedIndex = shared
		e, err := New(history(), opt)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = e
	}
	return out
}

func paths(hs []FileHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Path)
	}
	return out
}

func commitIDs(hs []CommitHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// TestTimeFilter: commits at or after the query date are never used.
func TestTimeFilter(t *testing.T) {
	for name, e := range engines(t) {
		hs, err := e.Commits("parser crash", 500)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := commitIDs(hs), []string{"c3", "c1", "c2"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: commits = %v want %v", name, got, want)
		}
		files, err := e.Search(Query{Text: "parser crash", Time: 500, State: state()})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Commit == "c6" || f.Commit == "q" {
				t.Errorf("%s: file %s from commit %s, not older than the query", name, f.Path, f.Commit)
			}
		}
		// Strictly older: a cutoff equal to c3's time excludes c3.
		hs, _ = e.Commits("parser crash", 300)
		if got, want := commitIDs(hs), []string{"c1", "c2"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: commits before 300 = %v want %v", name, got, want)
		}
		// Nothing older than the first commit.
		if hs, err := e.Commits("parser", 100); err != nil || hs != nil {
			t.Errorf("%s: commits before 100 = %v, %v", name, hs, err)
		}
	}
}

// TestExactIndex: the default index holds only the older commits, so its
// scores equal those of a BM25 index built over them alone.
func TestExactIndex(t *testing.T) {
	e := engines(t)["exact"]
	b := sparse.NewBuilder(sparse.Config{K1: 0.9, B: 0.4})
	for _, c := range history() {
		if c.Time < 500 {
			if err := b.Add(c.ID, c.Message); err != nil {
				t.Fatal(err)
			}
		}
	}
	ix, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := ix.Search("parser crash", 100)
	got, err := e.Commits("parser crash", 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for i := range got {
		if got[i].ID != want[i].DocID || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
			t.Errorf("hit %d: got %+v want %+v", i, got[i], want[i])
		}
	}
	// The shared index also counts c6 and q in its statistics: same commits, other scores.
	sh, _ := engines(t)["shared"].Commits("parser crash", 500)
	if sh[0].Score == got[0].Score {
		t.Errorf("shared and exact scores should differ (statistics include future commits)")
	}
}

// TestMaxpOrderingAndRename: files come in the order of their best commit;
// a file touched by an old commit under its old name comes back under its
// current one; deleted files and the query commit's additions never appear.
func TestMaxpOrderingAndRename(t *testing.T) {
	for name, e := range engines(t) {
		got, err := e.Search(Query{Text: "parser crash", Time: 500, State: state()})
		if err != nil {
			t.Fatal(err)
		}
		hs, _ := e.Commits("parser crash", 500)
		score := map[string]float64{}
		for _, h := range hs {
			score[h.ID] = h.Score
		}
		// c3 (best) gives lexer.c (old.c deleted); c1 gives util.c (its parser.c
		// is lexer.c, already taken by c3 under maxp); c2 adds nothing new.
		want := []FileHit{
			{Path: "lexer.c", Score: score["c3"], Commit: "c3"},
			{Path: "util.c", Score: score["c1"], Commit: "c1"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v\nwant %+v", name, got, want)
		}
		if !(score["c3"] > score["c1"]) {
			t.Errorf("%s: c3 should outrank c1: %v", name, score)
		}

		// Only c1 matches: its parser.c is reported as lexer.c.
		got, _ = e.Search(Query{Text: "tokenizer utf8", Time: 500, State: state()})
		if p := paths(got); !reflect.DeepEqual(p, []string{"util.c", "lexer.c"}) {
			t.Errorf("%s: rename: got %v want [util.c lexer.c]", name, p)
		}

		// Only c3 and c4 mention old.c's content; it is deleted at the state.
		got, _ = e.Search(Query{Text: "remove old", Time: 500, State: state()})
		if len(got) != 0 {
			t.Errorf("%s: deleted file returned: %+v", name, got)
		}
	}
}

// TestQueryCommitAdditions: gold files that the query commit adds can't be
// retrieved, even if the state (wrongly) listed them, because the query
// commit is not older than itself; a later query sees them.
func TestQueryCommitAdditions(t *testing.T) {
	st := NewState([]string{"lexer.c", "util.c", "new.c"}, map[string]string{"P": "lexer.c", "U": "util.c", "N": "new.c"})
	for name, e := range engines(t) {
		got, _ := e.Search(Query{Text: "new file", Time: 500, State: st})
		for _, f := range got {
			if f.Path == "new.c" {
				t.Errorf("%s: new.c retrieved at its own commit: %+v", name, got)
			}
		}
		got, _ = e.Search(Query{Text: "new file", Time: 501, State: st})
		if p := paths(got); !reflect.DeepEqual(p, []string{"new.c", "lexer.c"}) {
			t.Errorf("%s: after q: got %v", name, p)
		}
	}
}

func TestPathFallback(t *testing.T) {
	e := engines(t)["exact"]
	// Without PathOf, changes are matched by their own path: parser.c is gone.
	st := NewState([]string{"lexer.c", "util.c"}, nil)
	got, _ := e.Search(Query{Text: "tokenizer utf8", Time: 500, State: st})
	if p := paths(got); !reflect.DeepEqual(p, []string{"util.c"}) {
		t.Errorf("nil PathOf: got %v", p)
	}
	// NewStateFromIDs builds the id map from a path -> id lookup.
	ids := map[string]string{"lexer.c": "P", "util.c": "U"}
	st = NewStateFromIDs([]string{"lexer.c", "util.c"}, func(p string) (string, bool) { id, ok := ids[p]; return id, ok })
	got, _ = e.Search(Query{Text: "tokenizer utf8", Time: 500, State: st})
	if p := paths(got); !reflect.DeepEqual(p, []string{"util.c", "lexer.c"}) {
		t.Errorf("from ids: got %v", p)
	}
}

func TestMaxFiles(t *testing.T) {
	opt := DefaultOptions()
	opt.MaxFiles = 1
	e, err := New(history(), opt)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := e.Search(Query{Text: "parser crash", Time: 500, State: state()})
	if p := paths(got); !reflect.DeepEqual(p, []string{"lexer.c"}) {
		t.Errorf("got %v", p)
	}
}

// TestSearchAll: results in input order, equal to one-by-one searches, for
// queries out of date order (forcing the incremental index to restart).
func TestSearchAll(t *testing.T) {
	qs := []Query{
		{Text: "parser crash", Time: 700, State: state()},
		{Text: "parser crash", Time: 250, State: state()},
		{Text: "tokenizer", Time: 500, State: state()},
		{Text: "parser crash", Time: 500, State: state()},
		{Text: "parser", Time: 50, State: state()},
	}
	for name, e := range engines(t) {
		all, err := e.SearchAll(qs)
		if err != nil {
			t.Fatal(err)
		}
		fresh := engines(t)[name]
		for i := len(qs) - 1; i >= 0; i-- { // reverse order: restarts the builder
			one, err := fresh.Search(qs[i])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(one, all[i]) {
				t.Errorf("%s: query %d: SearchAll %+v, Search %+v", name, i, all[i], one)
			}
		}
		if all[4] != nil {
			t.Errorf("%s: query before all history: %+v", name, all[4])
		}
		// At t=700 the newest commit c6 ranks first; util.c exists, future.c does not.
		if len(all[0]) == 0 || all[0][0].Commit != "c6" || all[0][0].Path != "util.c" {
			t.Errorf("%s: t=700: %+v", name, all[0])
		}
	}
}

func TestConcurrent(t *testing.T) {
	e := engines(t)["exact"]
	want := map[int64][]FileHit{}
	for _, tm := range []int64{150, 250, 350, 500, 700} {
		want[tm], _ = e.Search(Query{Text: "parser crash", Time: tm, State: state()})
	}
	var wg sync.WaitGroup
	for i := range 40 {
		tm := []int64{150, 250, 350, 500, 700}[i%5]
		wg.Go(func() {
			got, err := e.Search(Query{Text: "parser crash", Time: tm, State: state()})
			if err != nil || !reflect.DeepEqual(got, want[tm]) {
				t.Errorf("t=%d: got %+v, %v want %+v", tm, got, err, want[tm])
			}
		})
	}
	wg.Wait()
}

func TestNewErrors(t *testing.T) {
	if _, err := New([]Commit{{ID: "a"}, {ID: "a"}}, DefaultOptions()); err == nil {
		t.Error("duplicate ids accepted")
	}
	if _, err := New([]Commit{{ID: ""}}, DefaultOptions()); err == nil {
		t.Error("empty id accepted")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("zero BM25 config accepted")
	}
	e, err := New(nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Search(Query{Text: "x", Time: 1 << 40, State: state()}); err != nil || got != nil {
		t.Errorf("empty history: %v %v", got, err)
	}
}
