package spider

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// overlayOf lays the pairs over a graph as undirected extra edges.
func overlayOf(cost int, pairs ...[2]string) Overlay {
	adj := map[string][]string{}
	for _, p := range pairs {
		adj[p[0]] = append(adj[p[0]], p[1])
		adj[p[1]] = append(adj[p[1]], p[0])
	}
	return Overlay{Neighbours: func(id string) []string { return adj[id] }, Cost: cost}
}

// TestOverlayHops: an overlay edge is a shortcut at its cost, on the
// unit-cost graph as on a weighted one; the cheapest path wins whichever
// edges it takes, overlay edges chain with graph edges both ways, and
// depth bounds the cost.
func TestOverlayHops(t *testing.T) {
	gr := testGraph(t)
	all := []string{m1, m2, n1, f, inner, g, h}
	for _, tc := range []struct {
		name     string
		o        Overlay
		from, to string
		hops     int // 0: out of reach within depth 4
	}{
		{"shortcut", overlayOf(3, [2]string{m1, h}), m1, h, 3},                   // contains: 7
		{"either end", overlayOf(3, [2]string{m1, h}), h, m1, 3},                 // listed for both ends
		{"graph path cheaper", overlayOf(3, [2]string{m1, m2}), m1, m2, 2},       // A.m1 ─ A ─ A.m2
		{"then a function", overlayOf(2, [2]string{m1, "other/c.py"}), m1, h, 3}, // the file at 2, its function at 3
		{"after contains", overlayOf(2, [2]string{m2, h}), m1, h, 4},             // A.m1 ─ A ─ A.m2 (2), then 2
		{"beyond depth", overlayOf(5, [2]string{m1, h}), m1, h, 0},
		{"unknown ids skipped", overlayOf(1, [2]string{m1, "nope"}, [2]string{m1, m1}), m1, m2, 2},
	} {
		r := ranked(append([]string{tc.from}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == tc.from })...)...)
		exp, err := ExpandWith(gr, r, Params{K: 7, C: 1, Depth: 4}, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := hopsOf(exp.Centers[0])[tc.to]
		switch {
		case tc.hops == 0 && ok:
			t.Errorf("%s: %s -> %s found at %d, out of reach", tc.name, tc.from, tc.to, got)
		case tc.hops > 0 && (!ok || got != tc.hops):
			t.Errorf("%s: %s -> %s hops = %d (found %v), want %d", tc.name, tc.from, tc.to, got, ok, tc.hops)
		}
	}
	// Without an overlay, ExpandWith is Expand.
	r := ranked(all...)
	a, err1 := Expand(gr, r, Params{K: 7, C: 3})
	b, err2 := ExpandWith(gr, r, Params{K: 7, C: 3}, Overlay{})
	if err1 != nil || err2 != nil || !slices.EqualFunc(a.Centers, b.Centers, func(x, y Center) bool { return slices.Equal(x.Candidates, y.Candidates) }) {
		t.Errorf("no overlay: %v %v, %+v vs %+v", err1, err2, a.Centers, b.Centers)
	}
}

// TestOverlayPoolAndCenters: overlay neighbours obey the same rules as the
// graph's: only functions of the pool, never a center.
func TestOverlayPoolAndCenters(t *testing.T) {
	gr := testGraph(t)
	o := overlayOf(1, [2]string{m1, h}, [2]string{m1, g}, [2]string{m1, n1})
	exp, err := ExpandWith(gr, ranked(m1, n1, g, m2), Params{K: 2, N: 3, C: 2, Depth: 1}, o)
	if err != nil {
		t.Fatal(err)
	}
	// h is outside S_N, n1 a center; g is reached.
	if got := candIDs(exp.Centers[0]); !slices.Equal(got, []string{g}) {
		t.Errorf("candidates of m1: %v, want [g]", got)
	}
	if got := candIDs(exp.Centers[1]); !slices.Equal(got, []string{}) {
		t.Errorf("candidates of n1: %v, want none (m1 is a center)", got)
	}
}

func TestOverlayCostErrors(t *testing.T) {
	gr := testGraph(t)
	for _, c := range []int{0, -1, 256} {
		if _, err := ExpandWith(gr, ranked(m1, m2), Params{}, overlayOf(c, [2]string{m1, h})); err == nil {
			t.Errorf("overlay cost %d accepted", c)
		}
	}
	// Without neighbours the cost is not looked at.
	if _, err := ExpandWith(gr, ranked(m1, m2), Params{}, Overlay{}); err != nil {
		t.Error(err)
	}
}

// TestOverlayMatchesRebuiltGraph: on random graphs, laying edges over the
// graph finds exactly what a graph built with them as one more walked kind
// at the same cost finds, unit-cost and weighted base graphs alike, with
// concurrent calls sharing the graph.
func TestOverlayMatchesRebuiltGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 60 {
		n := 2 + rng.IntN(60)
		nodes := make([]Node, n)
		for i := range nodes {
			typ := "x"
			if rng.IntN(3) > 0 {
				typ = TypeFunction
			}
			nodes[i] = Node{strconv.Itoa(i), typ}
		}
		var edges []Edge
		for range rng.IntN(2 * n) {
			edges = append(edges, Edge{strconv.Itoa(rng.IntN(n)), strconv.Itoa(rng.IntN(n)), EdgeContains})
		}
		var pairs [][2]string
		for range rng.IntN(n) {
			pairs = append(pairs, [2]string{strconv.Itoa(rng.IntN(n)), strconv.Itoa(rng.IntN(n))})
		}
		cost, contains := 1+rng.IntN(4), 1+rng.IntN(2)
		base, err := NewGraphCosts(nodes, edges, EdgeCosts{EdgeContains: contains})
		if err != nil {
			t.Fatal(err)
		}
		all := slices.Clone(edges)
		for _, p := range pairs {
			all = append(all, Edge{p[0], p[1], "cochange"})
		}
		rebuilt, err := NewGraphCosts(nodes, all, EdgeCosts{EdgeContains: contains, "cochange": cost})
		if err != nil {
			t.Fatal(err)
		}
		var r []Scored
		for _, i := range rng.Perm(n) {
			if nodes[i].Type == TypeFunction {
				r = append(r, Scored{ID: nodes[i].ID, Score: float64(n - len(r))})
			}
		}
		p := Params{K: len(r), C: 3, Depth: 1 + rng.IntN(8)}
		want, err := Expand(rebuilt, r, p)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				got, err := ExpandWith(base, r, p, overlayOf(cost, pairs...))
				if err != nil {
					t.Error(err)
					return
				}
				for i := range want.Centers {
					if !slices.Equal(got.Centers[i].Candidates, want.Centers[i].Candidates) {
						t.Errorf("trial %d center %d: overlay %+v, rebuilt %+v", trial, i, got.Centers[i].Candidates, want.Centers[i].Candidates)
					}
				}
			})
		}
		wg.Wait()
	}
}
