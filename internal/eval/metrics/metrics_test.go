package metrics

import (
	"errors"
	"math"
	"testing"
)

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < eps }

// Ranked list a b c d e, gold {b, d, x}: b at rank 2, d at rank 4, x absent.
var (
	ranked = []string{"a", "b", "c", "d", "e"}
	gold3  = []string{"b", "d", "x"}
	gold2  = []string{"b", "d"}
)

func TestCutoffMetrics(t *testing.T) {
	l2, l3 := math.Log2(3), math.Log2(4)
	tests := []struct {
		name   string
		f      func([]string, []string, int) (float64, error)
		ranked []string
		gold   []string
		k      int
		want   float64
	}{
		// Recall@K = |gold ∩ top-K| / |gold|
		{"recall@1 none", RecallAt, ranked, gold3, 1, 0},          // {} / 3
		{"recall@2", RecallAt, ranked, gold3, 2, 1.0 / 3},         // {b} / 3
		{"recall@4", RecallAt, ranked, gold3, 4, 2.0 / 3},         // {b,d} / 3
		{"recall@10 > len", RecallAt, ranked, gold3, 10, 2.0 / 3}, // x never retrieved
		{"recall@4 all", RecallAt, ranked, gold2, 4, 1},           // {b,d} / 2
		{"recall empty list", RecallAt, nil, gold2, 5, 0},
		// Acc@K = 1 iff gold ⊆ top-K
		{"acc@3 d missing", AccAt, ranked, gold2, 3, 0},
		{"acc@4", AccAt, ranked, gold2, 4, 1},
		{"acc@100 x absent", AccAt, ranked, gold3, 100, 0},
		// P@K = hits / K
		{"p@1", PrecisionAt, ranked, gold3, 1, 0},
		{"p@2", PrecisionAt, ranked, gold3, 2, 0.5},   // 1/2
		{"p@4", PrecisionAt, ranked, gold3, 4, 0.5},   // 2/4
		{"p@10", PrecisionAt, ranked, gold3, 10, 0.2}, // 2/10: K stays the denominator
		// MRR@K: first hit at rank 2
		{"mrr@1", ReciprocalRankAt, ranked, gold3, 1, 0},
		{"mrr@2", ReciprocalRankAt, ranked, gold3, 2, 0.5},
		{"mrr@50", ReciprocalRankAt, ranked, gold3, 50, 0.5},
		// NDCG@4, gold {b,d,x}: DCG = 1/log2(3) + 1/log2(5);
		// IDCG over min(3,4)=3 = 1 + 1/log2(3) + 1/log2(4) = 2.130930
		// NDCG = (0.630930 + 0.430677) / 2.130930 = 0.498190
		{"ndcg@4", NDCGAt, ranked, gold3, 4, (1/l2 + 1/math.Log2(5)) / (1 + 1/l2 + 1/l3)},
		// NDCG@1: DCG = 0 (a not gold)
		{"ndcg@1", NDCGAt, ranked, gold3, 1, 0},
		// NDCG@2, gold {b,d}: DCG = 1/log2(3) = 0.630930; IDCG = 1 + 0.630930; = 0.386853
		{"ndcg@2", NDCGAt, ranked, gold2, 2, (1 / l2) / (1 + 1/l2)},
		// perfect ranking
		{"ndcg perfect", NDCGAt, []string{"b", "d", "a"}, gold2, 10, 1},
		// NDCG@1 with gold larger than K: ideal over min(2,1)=1 item; b first → 1
		{"ndcg@1 ideal cut", NDCGAt, []string{"b", "a"}, gold2, 1, 1},
		// duplicates: [b b a d] → deduped [b a d]
		{"dup p@2", PrecisionAt, []string{"b", "b", "a", "d"}, gold2, 2, 0.5}, // [b a]: 1/2, not 2/2
		{"dup recall@3", RecallAt, []string{"b", "b", "a", "d"}, gold2, 3, 1}, // d moves to rank 3
		{"dup gold", RecallAt, ranked, []string{"b", "b"}, 2, 1},              // gold {b}: 1/1
	}
	for _, tt := range tests {
		got, err := tt.f(tt.ranked, tt.gold, tt.k)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !near(got, tt.want) {
			t.Errorf("%s: got %.6f want %.6f", tt.name, got, tt.want)
		}
	}
	// Pin the hand-computed decimals, not just the formula.
	if got, _ := NDCGAt(ranked, gold3, 4); math.Abs(got-0.498190) > 1e-6 {
		t.Errorf("ndcg@4 = %.6f, want 0.498190", got)
	}
}

func TestUncutMetrics(t *testing.T) {
	tests := []struct {
		name   string
		f      func([]string, []string) (float64, error)
		ranked []string
		gold   []string
		want   float64
	}{
		{"rr rank 2", ReciprocalRank, ranked, gold3, 0.5},
		{"rr rank 1", ReciprocalRank, []string{"d"}, gold3, 1},
		{"rr none", ReciprocalRank, ranked, []string{"z"}, 0},
		{"rr empty list", ReciprocalRank, nil, gold3, 0},
		// AP, gold {b,d,x}: hits at 2 (P@2=1/2) and 4 (P@4=2/4); (0.5+0.5)/3 = 1/3
		{"ap absent gold", AveragePrecision, ranked, gold3, 1.0 / 3},
		// AP, gold {b,d}: (0.5+0.5)/2 = 0.5
		{"ap", AveragePrecision, ranked, gold2, 0.5},
		// AP, gold {a,c}: hits at 1 (1/1) and 3 (2/3); (1+2/3)/2 = 0.833333
		{"ap 2", AveragePrecision, ranked, []string{"a", "c"}, 5.0 / 6},
		// duplicates: [b b a d] → [b a d]; hits at 1 (1/1), 3 (2/3); (1+2/3)/2
		{"ap dup", AveragePrecision, []string{"b", "b", "a", "d"}, gold2, 5.0 / 6},
		{"ap none", AveragePrecision, ranked, []string{"z"}, 0},
	}
	for _, tt := range tests {
		got, err := tt.f(tt.ranked, tt.gold)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !near(got, tt.want) {
			t.Errorf("%s: got %.6f want %.6f", tt.name, got, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	for name, f := range map[string]func() error{
		"recall":  func() error { _, err := RecallAt(ranked, nil, 1); return err },
		"acc":     func() error { _, err := AccAt(ranked, []string{}, 1); return err },
		"p":       func() error { _, err := PrecisionAt(ranked, nil, 1); return err },
		"ndcg":    func() error { _, err := NDCGAt(ranked, nil, 1); return err },
		"rr":      func() error { _, err := ReciprocalRank(ranked, nil); return err },
		"rr@k":    func() error { _, err := ReciprocalRankAt(ranked, nil, 3); return err },
		"ap":      func() error { _, err := AveragePrecision(ranked, nil); return err },
		"compute": func() error { _, err := Compute(ranked, nil, []int{1}); return err },
	} {
		if err := f(); !errors.Is(err, ErrNoGold) {
			t.Errorf("%s with empty gold: err = %v, want ErrNoGold", name, err)
		}
	}
	if _, err := RecallAt(ranked, gold2, 0); !errors.Is(err, ErrBadK) {
		t.Errorf("K=0: err = %v, want ErrBadK", err)
	}
	if _, err := Compute(ranked, gold2, []int{5, -1}); !errors.Is(err, ErrBadK) {
		t.Errorf("Compute K=-1: err = %v, want ErrBadK", err)
	}
}

func TestComputeMatchesSingles(t *testing.T) {
	ks := []int{1, 2, 4, 10}
	got, err := Compute(ranked, gold3, ks)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5*len(ks)+2 {
		t.Errorf("Compute returned %d keys", len(got))
	}
	for _, k := range ks {
		for m, f := range map[string]func([]string, []string, int) (float64, error){
			Recall: RecallAt, Acc: AccAt, Precision: PrecisionAt, NDCG: NDCGAt, MRR: ReciprocalRankAt,
		} {
			want, _ := f(ranked, gold3, k)
			if v, ok := got[Key(m, k)]; !ok || !near(v, want) {
				t.Errorf("%s: got %v (present %v) want %v", Key(m, k), v, ok, want)
			}
		}
	}
	if !near(got[MRR], 0.5) || !near(got[MAP], 1.0/3) {
		t.Errorf("MRR=%v MAP=%v", got[MRR], got[MAP])
	}
}

func TestDedupe(t *testing.T) {
	in := []string{"a", "b", "a", "c", "b"}
	got := Dedupe(in)
	want := []string{"a", "b", "c"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	if in[2] != "a" || len(in) != 5 {
		t.Errorf("input modified: %v", in)
	}
	if d := Dedupe(nil); len(d) != 0 {
		t.Errorf("Dedupe(nil) = %v", d)
	}
}

func TestKey(t *testing.T) {
	if Key(Recall, 5) != "Recall@5" || Key(MRR, 0) != "MRR" || Key(MRR, 20) != "MRR@20" {
		t.Error("Key")
	}
}
