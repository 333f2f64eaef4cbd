package spider

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestRankTieBreak(t *testing.T) {
	got := Rank(map[string]float64{"b": 1, "a": 1, "c": 2, "n": math.NaN(), "m": math.NaN(), "z": -math.Inf(1)})
	want := []string{"c", "a", "b", "z", "m", "n"}
	if ids := idsOf(got); !slices.Equal(ids, want) {
		t.Fatalf("Rank order = %v, want %v", ids, want)
	}
}

func TestTopK(t *testing.T) {
	tests := []struct {
		name string
		in   []Scored
		k    int
		want []string
	}{
		{"empty", nil, 3, []string{}},
		{"k zero", []Scored{{"a", 1}}, 0, []string{}},
		{"k negative", []Scored{{"a", 1}}, -1, []string{}},
		{"fewer than k", []Scored{{"b", 1}, {"a", 2}}, 5, []string{"a", "b"}},
		{"ties by id", []Scored{{"d", 1}, {"c", 1}, {"b", 1}, {"a", 1}}, 2, []string{"a", "b"}},
		{"nan last", []Scored{{"a", math.NaN()}, {"b", -5}, {"c", 0}}, 2, []string{"c", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := slices.Clone(tc.in)
			got := TopK(tc.in, tc.k)
			if ids := idsOf(got); !slices.Equal(ids, tc.want) {
				t.Errorf("TopK = %v, want %v", ids, tc.want)
			}
			if !slices.Equal(orig, tc.in) && !hasNaN(orig) {
				t.Errorf("TopK modified its input")
			}
		})
	}
}

// TopK must agree with a full sort for every k, heavy ties included.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := r.IntN(60)
		in := make([]Scored, n)
		for i := range in {
			in[i] = Scored{ID: strconv.Itoa(r.IntN(1000)) + "-" + strconv.Itoa(i), Score: float64(r.IntN(5))}
		}
		full := slices.Clone(in)
		Sort(full)
		for k := 0; k <= n+1; k++ {
			got := TopK(in, k)
			if want := full[:min(k, n)]; !slices.Equal(got, want) {
				t.Fatalf("trial %d k=%d: TopK = %v, want %v", trial, k, got, want)
			}
		}
	}
}

func TestRRF(t *testing.T) {
	a := []Scored{{"a", 9}, {"b", 8}, {"c", 7}}
	b := []Scored{{"b", 0.9}, {"a", 0.8}, {"d", 0.7}}
	got, err := RRF([][]Scored{a, b}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Constants would be folded exactly; RRF works in float64.
	inv := func(x float64) float64 { return 1 / x }
	want := []Scored{
		{"a", inv(61) + inv(62)}, // ties b exactly; id decides
		{"b", inv(61) + inv(62)},
		{"c", inv(63)},
		{"d", inv(63)},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("RRF = %v, want %v", got, want)
	}

	got, err = RRF([][]Scored{{{"x", 1}, {"y", 0}}, {{"y", 1}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want = []Scored{{"y", inv(2) + inv(3)}, {"x", inv(2)}}
	if !slices.Equal(got, want) {
		t.Fatalf("RRF k=1 = %v, want %v", got, want)
	}

	// Ranks that are permutations of each other tie exactly whatever the
	// summation order would have been.
	r1 := []Scored{{"p", 0}, {"q", 0}, {"r", 0}}
	r2 := []Scored{{"r", 0}, {"p", 0}, {"q", 0}}
	r3 := []Scored{{"q", 0}, {"r", 0}, {"p", 0}}
	got, err = RRF([][]Scored{r1, r2, r3}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Score != got[1].Score || got[1].Score != got[2].Score || !slices.Equal(idsOf(got), []string{"p", "q", "r"}) {
		t.Fatalf("permuted ranks = %v, want an exact three-way tie in id order", got)
	}

	if got, err := RRF(nil, 0); err != nil || len(got) != 0 {
		t.Fatalf("RRF(nil) = %v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		in [][]Scored
		k  float64
	}{
		"duplicate": {[][]Scored{{{"a", 1}, {"a", 0}}}, 60},
		"empty id":  {[][]Scored{{{"", 1}}}, 60},
		"negative":  {nil, -1},
		"nan":       {nil, math.NaN()},
		"inf":       {nil, math.Inf(1)},
	} {
		if _, err := RRF(tc.in, tc.k); err == nil {
			t.Errorf("%s: RRF accepted bad input", name)
		}
	}
}

func idsOf(s []Scored) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.ID
	}
	return out
}

func hasNaN(s []Scored) bool {
	return slices.ContainsFunc(s, func(x Scored) bool { return math.IsNaN(x.Score) })
}

func TestFuse(t *testing.T) {
	code := []Scored{{"a", 10}, {"b", 9}, {"c", 2}}
	mem := []Scored{{"b", 4}, {"d", 2}}
	for _, tc := range []struct {
		name    string
		weights []float64
		want    []Scored
	}{
		// a: 1; b: 0.9 + 0.5×1; c: 0.2; d: 0.5×0.5.
		{"weighted", []float64{1, 0.5}, []Scored{{"b", 1.4}, {"a", 1}, {"d", 0.25}, {"c", 0.2}}},
		// A zero weight adds nothing, not even its ids.
		{"zero weight", []float64{1, 0}, []Scored{{"a", 1}, {"b", 0.9}, {"c", 0.2}}},
	} {
		got := Fuse([][]Scored{code, mem, nil}, append(tc.weights, 1))
		if len(got) != len(tc.want) {
			t.Fatalf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i].ID != tc.want[i].ID || math.Abs(got[i].Score-tc.want[i].Score) > 1e-12 {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}
