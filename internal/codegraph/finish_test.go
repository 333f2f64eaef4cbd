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
