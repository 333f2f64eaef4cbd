package spider

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The hand-made repository of DESIGN.md's hop counts:
//
//	/ ── pkg ── pkg/a.py ── A ── A.m1, A.m2
//	     │          │       B ── B.n1
//	     │          │       f ── f.inner
//	     │       pkg/b.py ── g
//	     └─ other ── other/c.py ── h
const (
	m1    = "pkg/a.py:A.m1"
	m2    = "pkg/a.py:A.m2"
	n1    = "pkg/a.py:B.n1"
	f     = "pkg/a.py:f"
	inner = "pkg/a.py:f.inner"
	g     = "pkg/b.py:g"
	h     = "other/c.py:h"
)

func testGraph(t testing.TB) *Graph {
	t.Helper()
	nodes := []Node{
		{"/", "directory"}, {"pkg", "directory"}, {"other", "directory"},
		{"pkg/a.py", "file"}, {"pkg/b.py", "file"}, {"other/c.py", "file"},
		{"pkg/a.py:A", "class"}, {"pkg/a.py:B", "class"},
		{m1, TypeFunction}, {m2, TypeFunction}, {n1, TypeFunction},
		{f, TypeFunction}, {inner, TypeFunction}, {g, TypeFunction}, {h, TypeFunction},
	}
	c := func(src, dst string) Edge { return Edge{src, dst, EdgeContains} }
	edges := []Edge{
		c("/", "pkg"), c("/", "other"),
		c("pkg", "pkg/a.py"), c("pkg", "pkg/b.py"), c("other", "other/c.py"),
		c("pkg/a.py", "pkg/a.py:A"), c("pkg/a.py", "pkg/a.py:B"), c("pkg/a.py", f),
		c("pkg/a.py:A", m1), c("pkg/a.py:A", m2), c("pkg/a.py:B", n1), c(f, inner),
		c("pkg/b.py", g), c("other/c.py", h),
		// Only contains edges count: these would be shortcuts.
		{f, h, "invokes"}, {m1, g, "imports"}, {"pkg/a.py:B", "pkg/a.py:A", "inherits"},
	}
	gr, err := NewGraph(nodes, edges)
	if err != nil {
		t.Fatal(err)
	}
	return gr
}

// ranked gives ids descending scores in the order given.
func ranked(ids ...string) []Scored {
	out := make([]Scored, len(ids))
	for i, id := range ids {
		out[i] = Scored{ID: id, Score: float64(len(ids) - i)}
	}
	return out
}

func hopsOf(c Center) map[string]int {
	m := map[string]int{}
	for _, x := range c.Candidates {
		m[x.ID] = x.Hops
	}
	return m
}

func TestHopCounts(t *testing.T) {
	gr := testGraph(t)
	all := []string{m1, m2, n1, f, inner, g, h}
	tests := []struct {
		name     string
		from, to string
		hops     int
	}{
		{"two methods of one class", m1, m2, 2},
		{"method and top-level function of its file", m1, f, 3},
		{"methods of two classes in one file", m1, n1, 4},
		{"top-level functions of two files in one directory", f, g, 4},
		{"nested function", f, inner, 1},
		{"method to function in a sibling file", m1, g, 5},
		{"across top-level directories", f, h, 6},
		{"method across top-level directories", m1, h, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, dir := range [][2]string{{tc.from, tc.to}, {tc.to, tc.from}} {
				r := ranked(append([]string{dir[0]}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == dir[0] })...)...)
				exp, err := Expand(gr, r, Params{K: 7, C: 1, Depth: 10})
				if err != nil {
					t.Fatal(err)
				}
				if got, ok := hopsOf(exp.Centers[0])[dir[1]]; !ok || got != tc.hops {
					t.Errorf("%s -> %s: hops = %d (found %v), want %d", dir[0], dir[1], got, ok, tc.hops)
				}
			}
		})
	}
}

func TestDepthLimit(t *testing.T) {
	gr := testGraph(t)
	r := ranked(m1, m2, n1, f, inner, g, h)
	want := map[int][]string{
		1: {},
		2: {m2},
		3: {m2, f},
		4: {m2, f, n1, inner},
		5: {m2, f, n1, inner, g},
		7: {m2, f, n1, inner, g, h},
	}
	for d, ids := range want {
		exp, err := Expand(gr, r, Params{K: 7, C: 1, Depth: d})
		if err != nil {
			t.Fatal(err)
		}
		if got := candIDs(exp.Centers[0]); !slices.Equal(got, ids) {
			t.Errorf("depth %d: candidates %v, want %v", d, got, ids)
		}
	}
}

func TestPoolFilter(t *testing.T) {
	gr := testGraph(t)
	// A class id in the ranking is never a candidate: only functions are.
	r := ranked(f, "pkg/a.py:A", m1, inner, g, n1, m2, h)
	exp, err := Expand(gr, r, Params{K: 2, N: 5, C: 1, Depth: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Reached within 4 hops: inner, m1, m2, n1, g; S_N = f, A, m1, inner, g.
	if got, want := candIDs(exp.Centers[0]), []string{inner, m1, g}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if exp.Pool != 5 || len(exp.TopK) != 2 {
		t.Errorf("pool %d top %d, want 5 and 2", exp.Pool, len(exp.TopK))
	}
	c := exp.Centers[0].Candidates
	if c[1].InTopK || c[1].Rank != 3 || c[1].Score != r[2].Score || c[0].Hops != 1 || c[2].Hops != 4 {
		t.Errorf("candidate ranks and flags wrong: %+v", c)
	}
}

func TestCentersExcludedAndOrder(t *testing.T) {
	gr := testGraph(t)
	// m2 and f are centers too, so no center lists them; n1 and inner are
	// both 4 hops from m1, and rank decides between them.
	r := ranked(m1, m2, f, n1, inner, g, h)
	exp, err := Expand(gr, r, Params{K: 7, C: 3, Depth: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{n1, inner},
		{n1, inner},
		{inner, n1, g}, // 1, 3, 4 hops
	}
	for i, c := range exp.Centers {
		if c.Rank != i+1 || c.ID != r[i].ID || !c.InGraph {
			t.Errorf("center %d = %+v", i, c)
		}
		if got := candIDs(c); !slices.Equal(got, want[i]) {
			t.Errorf("center %s: candidates %v, want %v", c.ID, got, want[i])
		}
	}
	// Equal hops and equal scores: rank (position) decides, not id.
	r = []Scored{{m1, 3}, {n1, 1}, {inner, 1}}
	exp, err = Expand(gr, r, Params{K: 3, C: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := candIDs(exp.Centers[0]); !slices.Equal(got, []string{n1, inner}) {
		t.Errorf("tied candidates %v, want ranking order", got)
	}
}

func TestExcludeTopK(t *testing.T) {
	gr := testGraph(t)
	r := ranked(m1, m2, n1, f, inner, g, h)
	exp, err := Expand(gr, r, Params{K: 3, C: 1, Depth: 5, ExcludeTopK: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := candIDs(exp.Centers[0]), []string{f, inner, g}; !slices.Equal(got, want) {
		t.Errorf("ExcludeTopK candidates %v, want %v", got, want)
	}
	exp, err = Expand(gr, r, Params{K: 3, C: 1, Depth: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := candIDs(exp.Centers[0]), []string{m2, f, n1, inner, g}; !slices.Equal(got, want) {
		t.Errorf("default candidates %v, want %v (S_K members included)", got, want)
	}
	if c := exp.Centers[0].Candidates; !c[0].InTopK || c[1].InTopK {
		t.Errorf("InTopK flags wrong: %+v", c)
	}
}

func TestExpandSmallAndStale(t *testing.T) {
	gr := testGraph(t)
	// Fewer functions than K and C; one id the graph lacks.
	r := ranked("gone.py:x", f)
	exp, err := Expand(gr, r, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if exp.Params != DefaultParams() || exp.Pool != 2 || len(exp.TopK) != 2 || len(exp.Centers) != 2 {
		t.Fatalf("expansion %+v", exp)
	}
	if exp.Centers[0].InGraph || len(exp.Centers[0].Candidates) != 0 || !exp.Centers[1].InGraph {
		t.Errorf("stale center handled wrong: %+v", exp.Centers)
	}
	if exp, err := Expand(gr, nil, Params{}); err != nil || len(exp.Centers) != 0 || len(exp.TopK) != 0 {
		t.Errorf("empty ranking: %+v, %v", exp, err)
	}
}

func TestExpandErrors(t *testing.T) {
	gr := testGraph(t)
	tests := []struct {
		name string
		g    *Graph
		r    []Scored
		p    Params
		want string
	}{
		{"nil graph", nil, ranked(f), Params{}, "nil graph"},
		{"negative K", gr, ranked(f), Params{K: -1}, "budget K"},
		{"N below K", gr, ranked(f), Params{K: 30, N: 10}, "smaller than budget"},
		{"negative C", gr, ranked(f), Params{C: -2}, "centers C"},
		{"negative depth", gr, ranked(f), Params{Depth: -1}, "depth"},
		{"unsorted", gr, []Scored{{f, 1}, {g, 2}}, Params{}, "not sorted"},
		{"duplicate", gr, []Scored{{f, 2}, {f, 1}}, Params{}, "twice"},
		{"nan", gr, []Scored{{f, math.NaN()}}, Params{}, "NaN"},
		{"empty id", gr, []Scored{{"", 1}}, Params{}, "empty id"},
	}
	for _, tc := range tests {
		if _, err := Expand(tc.g, tc.r, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	// Problems past the pool do not matter: they are not part of S_N.
	r := append(ranked(f, g), Scored{f, 9})
	if _, err := Expand(gr, r, Params{K: 1, N: 2}); err != nil {
		t.Errorf("tail beyond N rejected: %v", err)
	}
}

func TestParams(t *testing.T) {
	if got := (Params{}).WithDefaults(); got != (Params{K: 20, N: 500, C: 5, Depth: 4}) {
		t.Errorf("defaults %+v", got)
	}
	if got := (Params{K: 800}).WithDefaults(); got.N != 800 {
		t.Errorf("N with large K = %d, want 800", got.N)
	}
	if err := (Params{K: 1, N: 1, C: 9, Depth: 1}).Validate(); err != nil {
		t.Errorf("C above K rejected: %v", err)
	}
}

func TestNewGraphErrors(t *testing.T) {
	tests := []struct {
		name  string
		nodes []Node
		edges []Edge
		want  string
	}{
		{"duplicate node", []Node{{"a", "file"}, {"a", "file"}}, nil, "twice"},
		{"empty id", []Node{{"", "file"}}, nil, "empty id"},
		{"unknown src", []Node{{"a", "file"}}, []Edge{{"x", "a", EdgeContains}}, "unknown source"},
		{"unknown dst", []Node{{"a", "file"}}, []Edge{{"a", "x", EdgeContains}}, "unknown destination"},
	}
	for _, tc := range tests {
		if _, err := NewGraph(tc.nodes, tc.edges); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// Other edge types may name nodes outside the table (external imports).
	gr, err := NewGraph([]Node{{"a", TypeFunction}}, []Edge{{"a", "numpy", "imports"}, {"a", "a", EdgeContains}})
	if err != nil || gr.Len() != 1 || !gr.Has("a") || !gr.IsFunction("a") || gr.IsFunction("numpy") {
		t.Errorf("graph %v, %v", gr, err)
	}
}

// Stamps that wrap must not leave stale marks behind.
func TestStampWrap(t *testing.T) {
	gr := testGraph(t)
	r := ranked(m1, m2, n1, f, inner, g, h)
	want, err := Expand(gr, r, Params{K: 7, C: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Marks left from long ago (1, which the stamps reach again after the
	// wrap) and from just before it; the first BFS gets the last stamp, the
	// next ones wrap, and so does the call stamp.
	s := gr.getScratch()
	for i := range s.seen {
		s.seen[i], s.pool[i], s.center[i] = uint32(1+i%2*(math.MaxUint32-2)), 1, 1
	}
	s.call, s.bfs = math.MaxUint32, math.MaxUint32-1
	gr.bufs.Put(s)
	got, err := Expand(gr, r, Params{K: 7, C: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Centers {
		if !slices.Equal(got.Centers[i].Candidates, want.Centers[i].Candidates) {
			t.Errorf("center %d after wrap: %v, want %v", i, got.Centers[i].Candidates, want.Centers[i].Candidates)
		}
	}
}

func TestExpandConcurrent(t *testing.T) {
	gr := testGraph(t)
	rs := [][]Scored{ranked(m1, m2, n1, f, inner, g, h), ranked(h, g, f, inner, n1, m2, m1)}
	var wants []Expansion
	for _, r := range rs {
		e, err := Expand(gr, r, Params{K: 4, C: 2, Depth: 6})
		if err != nil {
			t.Fatal(err)
		}
		wants = append(wants, e)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := (w + i) % 2
				e, err := Expand(gr, rs[k], Params{K: 4, C: 2, Depth: 6})
				if err != nil {
					t.Error(err)
					return
				}
				for c := range e.Centers {
					if !slices.Equal(e.Centers[c].Candidates, wants[k].Centers[c].Candidates) {
						t.Errorf("concurrent result differs")
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func candIDs(c Center) []string {
	out := []string{}
	for _, x := range c.Candidates {
		out = append(out, x.ID)
	}
	return out
}

// TestEdgeCosts: with invokes and inherits walked at their costs, a call
// is a shortcut of cost 3 and an inheritance of cost 2, each path's cost
// the cheapest one; imports, not listed, stay unwalked.
func TestEdgeCosts(t *testing.T) {
	base := testGraph(t)
	nodes := make([]Node, base.Len())
	for i, id := range base.ids {
		typ := "x"
		if base.fn[i] {
			typ = TypeFunction
		}
		nodes[i] = Node{id, typ}
	}
	var edges []Edge
	for u := range base.ids {
		for _, v := range base.adj[base.off[u]:base.off[u+1]] {
			if int32(u) < v {
				edges = append(edges, Edge{base.ids[u], base.ids[v], EdgeContains})
			}
		}
	}
	edges = append(edges, Edge{f, h, "invokes"}, Edge{m1, g, "imports"}, Edge{"pkg/a.py:B", "pkg/a.py:A", "inherits"})
	gr, err := NewGraphCosts(nodes, edges, EdgeCosts{EdgeContains: 1, "invokes": 3, "inherits": 2})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{m1, m2, n1, f, inner, g, h}
	for _, tc := range []struct {
		from, to string
		hops     int
	}{
		{f, h, 3},     // the call (contains: 6)
		{inner, h, 4}, // nested, then the call
		{m1, n1, 4},   // A.m1 ─ A ─inherits─ B ─ B.n1 costs 1+2+1, as the file path does
		{m1, h, 6},    // to f (3), then the call
		{m1, g, 5},    // imports is not walked
		{m1, m2, 2},
	} {
		r := ranked(append([]string{tc.from}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == tc.from })...)...)
		exp, err := Expand(gr, r, Params{K: 7, C: 1, Depth: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := hopsOf(exp.Centers[0])[tc.to]; !ok || got != tc.hops {
			t.Errorf("%s -> %s: hops = %d (found %v), want %d", tc.from, tc.to, got, ok, tc.hops)
		}
		// Depth bounds the cost: one less and it is out of reach.
		exp, _ = Expand(gr, r, Params{K: 7, C: 1, Depth: tc.hops - 1})
		if _, ok := hopsOf(exp.Centers[0])[tc.to]; ok {
			t.Errorf("%s -> %s found within depth %d, its cost is %d", tc.from, tc.to, tc.hops-1, tc.hops)
		}
	}
	for _, bad := range []EdgeCosts{{EdgeContains: 0}, {"invokes": 256}} {
		if _, err := NewGraphCosts(nodes, edges, bad); err == nil {
			t.Errorf("costs %v accepted", bad)
		}
	}
}

// TestWeightedWalkMatchesBFS: on random graphs, costs of 2 everywhere and
// twice the depth find exactly what the unit-cost BFS finds, at twice the hops.
func TestWeightedWalkMatchesBFS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 50 {
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
		for range rng.IntN(3 * n) {
			edges = append(edges, Edge{strconv.Itoa(rng.IntN(n)), strconv.Itoa(rng.IntN(n)), EdgeContains})
		}
		unit, err := NewGraph(nodes, edges)
		if err != nil {
			t.Fatal(err)
		}
		double, err := NewGraphCosts(nodes, edges, EdgeCosts{EdgeContains: 2})
		if err != nil {
			t.Fatal(err)
		}
		var r []Scored
		for _, i := range rng.Perm(n) {
			if nodes[i].Type == TypeFunction {
				r = append(r, Scored{ID: nodes[i].ID, Score: float64(n - len(r))})
			}
		}
		depth := 1 + rng.IntN(5)
		a, err1 := Expand(unit, r, Params{K: len(r), C: 3, Depth: depth})
		b, err2 := Expand(double, r, Params{K: len(r), C: 3, Depth: 2 * depth})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for i := range a.Centers {
			ca, cb := a.Centers[i].Candidates, b.Centers[i].Candidates
			if len(ca) != len(cb) {
				t.Fatalf("trial %d center %d: %d candidates unit, %d weighted", trial, i, len(ca), len(cb))
			}
			for j := range ca {
				if ca[j].ID != cb[j].ID || 2*ca[j].Hops != cb[j].Hops {
					t.Fatalf("trial %d center %d: unit %+v, weighted %+v", trial, i, ca[j], cb[j])
				}
			}
		}
	}
}
