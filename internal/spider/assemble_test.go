package spider

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sel is a selection by the test's selector.
func sel(ids ...string) Selection { return Selection{IDs: ids, Selector: "test-model"} }

// checkInvariants holds for every assembly: within budget, as long as the
// budget or all there is, no duplicates, every center kept in order, every
// neighbour a selected candidate of its center, the rest by rank.
func checkInvariants(t *testing.T, ranking []Scored, centers []Center, selected map[string]Selection, k int, a Assembly) {
	t.Helper()
	top := ranking[:min(k, len(ranking))]
	if len(a.Items) > k {
		t.Fatalf("%d items, budget %d", len(a.Items), k)
	}
	if len(a.Items) < len(top) {
		t.Fatalf("%d items, want at least %d", len(a.Items), len(top))
	}
	seen := map[string]bool{}
	var gotCenters []string
	lastSemantic := 0
	for _, it := range a.Items {
		if seen[it.ID] {
			t.Fatalf("duplicate %s in %v", it.ID, a.Items)
		}
		seen[it.ID] = true
		switch it.Reason {
		case ReasonCenter:
			gotCenters = append(gotCenters, it.ID)
		case ReasonNeighbour:
			var c *Center
			for i := range centers {
				if centers[i].ID == it.Center {
					c = &centers[i]
				}
			}
			if c == nil || gotCenters[len(gotCenters)-1] != it.Center {
				t.Fatalf("neighbour %s not under its center %s", it.ID, it.Center)
			}
			if !slices.ContainsFunc(c.Candidates, func(x Candidate) bool { return x.ID == it.ID }) || !slices.Contains(selected[it.Center].IDs, it.ID) {
				t.Fatalf("neighbour %s not a selected candidate of %s", it.ID, it.Center)
			}
		case ReasonSemantic:
			if it.Rank <= lastSemantic {
				t.Fatalf("semantic items out of rank order: %v", a.Items)
			}
			lastSemantic = it.Rank
		}
	}
	var wantCenters []string
	for _, c := range centers {
		wantCenters = append(wantCenters, c.ID)
	}
	if !slices.Equal(gotCenters, wantCenters) {
		t.Fatalf("centers %v, want %v", gotCenters, wantCenters)
	}
}

func TestAssemble(t *testing.T) {
	gr := testGraph(t)
	r := ranked(m1, h, m2, n1, f, inner, g)
	type want struct {
		ids     []string
		reasons string // one letter per item: c(enter) n(eighbour) s(emantic)
		ignored map[string][]string
		dropped []string
	}
	tests := []struct {
		name     string
		p        Params
		selected map[string]Selection
		want     want
	}{
		{
			name: "no selection is the top K",
			p:    Params{K: 4, C: 2, Depth: 4},
			want: want{ids: []string{m1, h, m2, n1}, reasons: "ccss"},
		},
		{
			name:     "neighbour under its center displaces the lowest non-center",
			p:        Params{K: 4, C: 2, Depth: 4},
			selected: map[string]Selection{m1: sel(f)},
			want:     want{ids: []string{m1, f, h, m2}, reasons: "cncs"},
		},
		{
			name:     "selected member of S_K moves under its center, once",
			p:        Params{K: 4, C: 2, Depth: 4},
			selected: map[string]Selection{m1: sel(n1, n1)},
			want:     want{ids: []string{m1, n1, h, m2}, reasons: "cncs"},
		},
		{
			name:     "neighbours in candidate order, whatever the selector's order",
			p:        Params{K: 5, C: 2, Depth: 4},
			selected: map[string]Selection{m1: sel(inner, f, m2)},
			want:     want{ids: []string{m1, m2, f, inner, h}, reasons: "cnnnc"},
		},
		{
			name:     "ids outside the candidates are ignored",
			p:        Params{K: 4, C: 2, Depth: 4},
			selected: map[string]Selection{m1: sel(g, "nowhere.py:x", h, f, g), h: sel(m1, m2)},
			want: want{ids: []string{m1, f, h, m2}, reasons: "cncs",
				ignored: map[string][]string{m1: {g, "nowhere.py:x", h}, h: {m1, m2}}},
		},
		{
			name: "selected by two centers goes under the first",
			p:    Params{K: 7, C: 2, Depth: 6},
			// h reaches f at 6 hops; m1 reaches f at 3.
			selected: map[string]Selection{m1: sel(f), h: {IDs: []string{f, g}, Selector: "other"}},
			want:     want{ids: []string{m1, f, h, g, m2, n1, inner}, reasons: "cncnsss"},
		},
		{
			name:     "budget full: neighbours dropped, centers kept",
			p:        Params{K: 3, C: 2, Depth: 5},
			selected: map[string]Selection{m1: sel(m2, n1, f, g)},
			want:     want{ids: []string{m1, m2, h}, reasons: "cnc", dropped: []string{f, n1, g}},
		},
		{
			name:     "centers fill the budget",
			p:        Params{K: 2, C: 2, Depth: 6},
			selected: map[string]Selection{m1: sel(m2), h: sel(g)},
			want:     want{ids: []string{m1, h}, reasons: "cc", dropped: []string{m2, g}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp, err := Expand(gr, r, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			a, err := exp.Assemble(tc.selected)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, r, exp.Centers, tc.selected, tc.p.K, a)
			var ids []string
			var reasons strings.Builder
			for _, it := range a.Items {
				ids = append(ids, it.ID)
				reasons.WriteByte(it.Reason[0])
			}
			if !slices.Equal(ids, tc.want.ids) || reasons.String() != tc.want.reasons {
				t.Errorf("items %v %s, want %v %s", ids, reasons.String(), tc.want.ids, tc.want.reasons)
			}
			if fmt.Sprint(a.Ignored) != fmt.Sprint(tc.want.ignored) {
				t.Errorf("ignored %v, want %v", a.Ignored, tc.want.ignored)
			}
			if !slices.Equal(a.Dropped, tc.want.dropped) {
				t.Errorf("dropped %v, want %v", a.Dropped, tc.want.dropped)
			}
		})
	}
}

func TestAssembleItems(t *testing.T) {
	gr := testGraph(t)
	r := ranked(m1, h, m2, n1, f, inner, g)
	exp, err := Expand(gr, r, Params{K: 4, C: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := exp.Assemble(map[string]Selection{m1: {IDs: []string{f}, Selector: "heuristic (no LLM)"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{ID: m1, Score: 7, Rank: 1, Reason: ReasonCenter},
		{ID: f, Score: 3, Rank: 5, Reason: ReasonNeighbour, Center: m1, Hops: 3, Selector: "heuristic (no LLM)"},
		{ID: h, Score: 6, Rank: 2, Reason: ReasonSemantic},
		{ID: m2, Score: 5, Rank: 3, Reason: ReasonSemantic},
	}
	if !slices.Equal(a.Items, want) {
		t.Fatalf("items %+v\nwant %+v", a.Items, want)
	}
	whys := []string{
		"center, rank 1",
		"neighbour of center pkg/a.py:A.m1 (3 hops, rank 5), selected by heuristic (no LLM)",
		"rank 2",
	}
	for i, w := range whys {
		if got := a.Items[i].Why(); got != w {
			t.Errorf("Why = %q, want %q", got, w)
		}
	}
}

func TestAssembleFewerThanK(t *testing.T) {
	gr := testGraph(t)
	r := ranked(f, g, inner)
	exp, err := Expand(gr, r, Params{})
	if err != nil {
		t.Fatal(err)
	}
	// All three are centers (C=5 > 3 functions); none can select another.
	a, err := exp.Assemble(map[string]Selection{f: sel(g, inner)})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a.Items); got != 3 {
		t.Fatalf("%d items, want 3: %v", got, a.Items)
	}
	checkInvariants(t, r, exp.Centers, nil, 20, a)
	if a.Ignored[f] == nil {
		t.Errorf("centers selected as neighbours should be reported ignored: %+v", a)
	}
	if a, err := Assemble(nil, nil, nil, 20); err != nil || len(a.Items) != 0 {
		t.Errorf("empty: %+v %v", a, err)
	}
}

func TestAssembleErrors(t *testing.T) {
	r := ranked(m1, m2, f)
	c := []Center{{ID: m1, Rank: 1, Candidates: []Candidate{{ID: f, Rank: 3}}}}
	tests := []struct {
		name    string
		r       []Scored
		centers []Center
		sel     map[string]Selection
		k       int
		want    string
	}{
		{"zero budget", r, c, nil, 0, "budget"},
		{"selection for non-center", r, c, map[string]Selection{m2: sel(f)}, 3, "not a center"},
		{"no selector name", r, c, map[string]Selection{m1: {IDs: []string{f}}}, 3, "no selector"},
		{"center outside top k", r, []Center{{ID: f}}, nil, 2, "not in the top 2"},
		{"center twice", r, []Center{{ID: m1}, {ID: m1}}, nil, 3, "twice"},
		{"duplicate in ranking", []Scored{{m1, 2}, {m1, 1}}, c, nil, 3, "twice"},
	}
	for _, tc := range tests {
		if _, err := Assemble(tc.r, tc.centers, tc.sel, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// An empty selection needs no selector name.
	if _, err := Assemble(r, c, map[string]Selection{m1: {}}, 3); err != nil {
		t.Errorf("empty selection: %v", err)
	}
}

// Random trees, rankings, parameters and selections (in and out of the
// candidate sets): the invariants always hold and candidate hops match a
// plain map-based BFS.
func TestRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		nodes, edges, funcs := synthRepo(rng, 1+rng.IntN(3), 1+rng.IntN(4), 4)
		gr, err := NewGraph(nodes, edges)
		if err != nil {
			t.Fatal(err)
		}
		scores := make([]Scored, len(funcs))
		for i, id := range funcs {
			scores[i] = Scored{ID: id, Score: float64(rng.IntN(8))} // many ties
		}
		p := Params{K: 1 + rng.IntN(12), C: 1 + rng.IntN(6), Depth: 1 + rng.IntN(6), ExcludeTopK: rng.IntN(2) == 0}
		p.N = p.K + rng.IntN(30)
		ranking := TopK(scores, len(scores))
		exp, err := Expand(gr, ranking, p)
		if err != nil {
			t.Fatal(err)
		}
		ref := refHops(nodes, edges)
		for _, c := range exp.Centers {
			for _, x := range c.Candidates {
				if want := ref(c.ID, x.ID); want != x.Hops || x.Hops > p.Depth {
					t.Fatalf("trial %d: %s -> %s hops %d, reference %d", trial, c.ID, x.ID, x.Hops, want)
				}
			}
		}
		selected := map[string]Selection{}
		for _, c := range exp.Centers {
			var ids []string
			for _, x := range c.Candidates {
				if rng.IntN(2) == 0 {
					ids = append(ids, x.ID)
				}
			}
			ids = append(ids, funcs[rng.IntN(len(funcs))]) // maybe outside
			selected[c.ID] = sel(ids...)
		}
		a, err := exp.Assemble(selected)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ranking, exp.Centers, selected, p.K, a)
	}
}

// refHops is a straightforward BFS over a map adjacency, to check Expand.
func refHops(nodes []Node, edges []Edge) func(a, b string) int {
	adj := map[string][]string{}
	for _, e := range edges {
		if e.Type == EdgeContains {
			adj[e.Src] = append(adj[e.Src], e.Dst)
			adj[e.Dst] = append(adj[e.Dst], e.Src)
		}
	}
	return func(a, b string) int {
		dist := map[string]int{a: 0}
		q := []string{a}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			if u == b {
				return dist[u]
			}
			for _, v := range adj[u] {
				if _, ok := dist[v]; !ok {
					dist[v] = dist[u] + 1
					q = append(q, v)
				}
			}
		}
		return -1
	}
}
