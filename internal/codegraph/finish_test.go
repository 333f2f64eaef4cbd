package codegraph

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// mergeRuns merges any number of sorted runs, of any lengths, empty ones
// and repeated values included, into the sorted whole.
func TestMergeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		lens []int
	}{
		{"one run", []int{7}},
		{"two runs", []int{5, 9}},
		{"three runs, the odd one out", []int{4, 1, 6}},
		{"five runs, empty ones", []int{0, 3, 0, 8, 2}},
		{"eight runs", []int{3, 3, 3, 3, 3, 3, 3, 4}},
		{"nothing", []int{0, 0}},
	} {
		var s []int32
		bounds := []int{0}
		for _, n := range tc.lens {
			run := make([]int32, n)
			for i := range run {
				run[i] = rng.Int32N(10) // repeats
			}
			slices.Sort(run)
			s = append(s, run...)
			bounds = append(bounds, len(s))
		}
		want := slices.Sorted(slices.Values(s))
		got := mergeRuns(slices.Clone(s), bounds, cmp.Compare[int32])
		if !slices.Equal(got, want) {
			t.Errorf("%s: mergeRuns(%v, %v) = %v, want %v", tc.name, s, bounds, got, want)
		}
	}
}

// An edge's key orders edges as (source rank, type name, target rank) do,
// and splits back into its parts, up to the largest ranks an int32 holds.
func TestEdgeKey(t *testing.T) {
	if len(edgeTypes) > 4 {
		t.Fatalf("%d edge types: an edge key holds a type in two bits", len(edgeTypes))
	}
	if !slices.IsSorted(edgeTypes[:]) {
		t.Fatalf("edgeTypes %v are not in the order of their names: finish would order edges by another", edgeTypes)
	}
	type edge struct {
		src int32
		typ uint8
		dst int32
	}
	const top = 1<<31 - 1
	edges := []edge{{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 3, top}, {1, 0, 0}, {top, 3, top}, {top, 0, 0}, {5, 2, 7}, {5, 2, 6}, {5, 1, top}}
	for _, e := range edges {
		if s, ty, d := splitEdgeKey(edgeKey(e.src, e.typ, e.dst)); s != e.src || ty != e.typ || d != e.dst {
			t.Errorf("splitEdgeKey(edgeKey(%v)) = %d, %d, %d", e, s, ty, d)
		}
	}
	byParts := func(x, y edge) int {
		return cmp.Or(cmp.Compare(x.src, y.src), cmp.Compare(edgeTypes[x.typ], edgeTypes[y.typ]), cmp.Compare(x.dst, y.dst))
	}
	for _, x := range edges {
		for _, y := range edges {
			if got, want := cmp.Compare(edgeKey(x.src, x.typ, x.dst), edgeKey(y.src, y.typ, y.dst)), byParts(x, y); got != want {
				t.Errorf("keys of %v and %v compare %d, the edges %d", x, y, got, want)
			}
		}
	}
}
