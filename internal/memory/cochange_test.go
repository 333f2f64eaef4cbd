package memory

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/spider"
)

func ids(s []spider.Scored) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.ID)
	}
	return out
}

// coHistory, times in days:
//
//	a(1) ── b(3) ── base(5) ── later(6) ─── m(9, merge of later and fix)
//	  └─ side(2) ── fix(4, on a branch) ─────┘
//
// Every commit changes p.py:parse with something else; only a and b are
// the base's ancestors strictly older than it.
func coHistory() []Commit {
	return []Commit{
		{ID: "a", Time: 1 * day, Message: "parse", Functions: []string{"p.py:parse", "p.py:lex"}},
		{ID: "b", Parents: []string{"a"}, Time: 3 * day, Message: "parse", Functions: []string{"p.py:parse", "p.py:lex", "q.py:emit"}},
		{ID: "side", Parents: []string{"a"}, Time: 2 * day, Message: "branch", Functions: []string{"p.py:parse", "side.py:s"}},
		{ID: "fix", Parents: []string{"side"}, Time: 4 * day, Message: "the fix", Functions: []string{"p.py:parse", "fix.py:gold"}},
		{ID: "base", Parents: []string{"b"}, Time: 5 * day, Message: "base", Functions: []string{"p.py:parse", "base.py:own"}},
		{ID: "later", Parents: []string{"base"}, Time: 6 * day, Message: "later", Functions: []string{"p.py:parse", "later.py:l"}},
		{ID: "m", Parents: []string{"later", "fix"}, Time: 9 * day, Message: "merge", Functions: []string{"p.py:parse", "fix.py:gold"}},
	}
}

// No leakage: at base, only a and b say what changes with parse; the
// base itself, later commits and the branch merged later say nothing.
func TestCoChangedDoesNotLeak(t *testing.T) {
	tb, err := New(coHistory())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		base string
		want []string
	}{
		{"base", []string{"p.py:lex", "q.py:emit"}}, // lex twice, emit once
		{"b", []string{"p.py:lex"}},                 // a only
		{"a", []string{}},                           // nothing is older
		{"m", []string{"fix.py:gold", "p.py:lex", "base.py:own", "later.py:l", "side.py:s", "q.py:emit"}},
	} {
		e, err := tb.Episodic(tc.base, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(e.CoChanged("p.py:parse", CoChangeOptions{Limit: 10}))
		if tc.base == "m" {
			// Every ancestor counts at the merge; order by weight is checked
			// in TestCoChangedWeights, here only the set.
			slices.Sort(got)
			slices.Sort(tc.want)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("co-changed with parse at %s: %v, want %v", tc.base, got, tc.want)
		}
	}
}

// More commits, more recent ones and smaller ones make stronger
// neighbours; commits above MaxFunctions are ignored; Limit cuts; ties go
// by id; a function never changed with another has none.
func TestCoChangedWeights(t *testing.T) {
	wide := []string{"w.py:f"}
	for i := range 20 {
		wide = append(wide, fmt.Sprintf("w.py:g%02d", i))
	}
	commits := []Commit{
		{ID: "c0", Time: 0, Message: "old", Functions: []string{"w.py:f", "w.py:old"}},
		{ID: "c1", Parents: []string{"c0"}, Time: 1000 * day, Message: "new", Functions: []string{"w.py:f", "w.py:new"}},
		{ID: "c2", Parents: []string{"c1"}, Time: 1001 * day, Message: "twice", Functions: []string{"w.py:f", "w.py:twice", "w.py:f"}},
		{ID: "c3", Parents: []string{"c2"}, Time: 1001 * day, Message: "twice", Functions: []string{"w.py:f", "w.py:twice"}},
		{ID: "c4", Parents: []string{"c3"}, Time: 1001 * day, Message: "three", Functions: []string{"w.py:f", "w.py:t1", "w.py:t2"}},
		{ID: "c5", Parents: []string{"c4"}, Time: 1001 * day, Message: "refactor", Functions: wide},
		{ID: "c6", Parents: []string{"c5"}, Time: 1001 * day, Message: "alone", Functions: []string{"w.py:alone"}},
		{ID: "head", Parents: []string{"c6"}, Time: 1002 * day, Message: "release", Functions: []string{"setup.py:v"}},
	}
	tb, err := New(commits)
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Episodic("head", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := e.CoChanged("w.py:f", CoChangeOptions{MaxFunctions: 20, Limit: 10})
	want := []string{"w.py:twice", "w.py:new", "w.py:t1", "w.py:t2", "w.py:old"}
	if !slices.Equal(ids(got), want) {
		t.Errorf("neighbours %v, want %v (the 21-function refactor ignored)", got, want)
	}
	// The defaults: the 3 best, from commits of at most 8 functions.
	if got := ids(e.CoChanged("w.py:f", CoChangeOptions{})); !slices.Equal(got, want[:DefaultCoChangeLimit]) {
		t.Errorf("defaults: %v, want %v", got, want[:DefaultCoChangeLimit])
	}
	// c2 lists f twice: it still votes once.
	if w := Vote(1, 1*day, 730, 3) + Vote(1, 1*day, 730, 2); got[0].Score != w {
		t.Errorf("twice scores %v, want %v", got[0].Score, w)
	}
	if got := ids(e.CoChanged("w.py:f", CoChangeOptions{Limit: 2})); !slices.Equal(got, want[:2]) {
		t.Errorf("limit 2: %v", got)
	}
	if got := e.CoChanged("w.py:f", CoChangeOptions{MaxFunctions: 21, Limit: 100}); len(got) != len(want)+20 {
		t.Errorf("with the refactor: %d neighbours, want %d", len(got), len(want)+20)
	}
	if got := e.CoChanged("w.py:f", CoChangeOptions{MaxFunctions: 2}); !slices.Equal(ids(got), []string{"w.py:twice", "w.py:new", "w.py:old"}) {
		t.Errorf("pairs only: %v", got)
	}
	for _, id := range []string{"w.py:alone", "nope.py:x"} {
		if got := e.CoChanged(id, CoChangeOptions{}); len(got) != 0 {
			t.Errorf("%s: neighbours %v, want none", id, got)
		}
	}
}

// The index is built once, whoever asks first.
func TestCoChangedConcurrent(t *testing.T) {
	tb, err := New(coHistory())
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Episodic("m", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := ids(e.CoChanged("p.py:lex", CoChangeOptions{}))
	e2, _ := tb.Episodic("m", Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := ids(e2.CoChanged("p.py:lex", CoChangeOptions{})); !slices.Equal(got, want) {
				t.Errorf("concurrent: %v, want %v", got, want)
			}
		})
	}
	wg.Wait()
}
