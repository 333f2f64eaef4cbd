// Package metrics computes ranking-quality metrics and bootstrap summaries for evaluation.
package metrics

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrNoGold is returned for an instance whose gold set is empty. Every metric
// divides by |gold| or is undefined without a relevant item, so such instances
// must be excluded (and counted) by the caller rather than scored as 0 or NaN.
var ErrNoGold = errors.New("metrics: empty gold set")

// ErrBadK is returned for a cutoff K < 1.
var ErrBadK = errors.New("metrics: cutoff K must be >= 1")

// Metric names used as keys by Compute and by reports.
const (
	Recall    = "Recall" // Recall@K
	Acc       = "Acc"    // Acc@K
	Precision = "P"      // P@K
	NDCG      = "NDCG"   // NDCG@K
	MRR       = "MRR"    // MRR over the whole list; "MRR@K" for the cut variant
	MAP       = "MAP"    // per instance this is AP; its mean over instances is MAP
)

// Key names a metric at a cutoff: Key("Recall", 5) = "Recall@5"; k <= 0 means no
// cutoff and gives the bare name ("MRR", "MAP").
func Key(metric string, k int) string {
	if k <= 0 {
		return metric
	}
	return metric + "@" + strconv.Itoa(k)
}

// Dedupe returns list with later repeats removed, keeping the first occurrence
// and the order. The input is not modified.
//
// All metrics below dedupe the ranked list first: a retriever that returns the
// same item twice must neither be credited twice nor have the repeat occupy a
// rank (so P@K cannot exceed the number of distinct relevant items).
func Dedupe(list []string) []string {
	seen := make(map[string]struct{}, len(list))
	out := make([]string, 0, len(list))
	for _, s := range list {
		if _, ok := seen[s]; ok {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// prepared holds the deduped ranked list and gold set; hits[i] reports whether
// ranked[i] (rank i+1) is relevant.
type prepared struct {
	hits  []bool
	nGold int
}

func prepare(ranked, gold []string) (prepared, error) {
	g := make(map[string]struct{}, len(gold))
	for _, s := range gold {
		g[s] = struct{}{}
	}
	if len(g) == 0 {
		return prepared{}, ErrNoGold
	}
	r := Dedupe(ranked)
	hits := make([]bool, len(r))
	for i, s := range r {
		_, hits[i] = g[s]
	}
	return prepared{hits: hits, nGold: len(g)}, nil
}

func checkK(k int) error {
	if k < 1 {
		return fmt.Errorf("%w (got %d)", ErrBadK, k)
	}
	return nil
}

// hitsAt counts relevant items among the first k (fewer if the list is shorter).
func (p prepared) hitsAt(k int) int {
	n := 0
	for i := 0; i < k && i < len(p.hits); i++ {
		if p.hits[i] {
			n++
		}
	}
	return n
}

// firstHit is the 1-based rank of the first relevant item, 0 if none.
func (p prepared) firstHit() int {
	for i, h := range p.hits {
		if h {
			return i + 1
		}
	}
	return 0
}

func (p prepared) recall(k int) float64 { return float64(p.hitsAt(k)) / float64(p.nGold) }

func (p prepared) acc(k int) float64 {
	if p.hitsAt(k) == p.nGold {
		return 1
	}
	return 0
}

func (p prepared) precision(k int) float64 { return float64(p.hitsAt(k)) / float64(k) }

func (p prepared) mrr(k int) float64 {
	r := p.firstHit()
	if r == 0 || (k > 0 && r > k) {
		return 0
	}
	return 1 / float64(r)
}

func (p prepared) ap() float64 {
	sum, n := 0.0, 0
	for i, h := range p.hits {
		if h {
			n++
			sum += float64(n) / float64(i+1)
		}
	}
	return sum / float64(p.nGold)
}

func (p prepared) ndcg(k int) float64 {
	dcg := 0.0
	for i := 0; i < k && i < len(p.hits); i++ {
		if p.hits[i] {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	idcg := 0.0
	for i := 0; i < min(p.nGold, k); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	return dcg / idcg
}

// RecallAt is Recall@K = |gold ∩ top-K| / |gold|. A K beyond the list length
// uses the whole list; gold items missing from the list count in the denominator.
func RecallAt(ranked, gold []string, k int) (float64, error) {
	if err := checkK(k); err != nil {
		return 0, err
	}
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.recall(k), nil
}

// AccAt is Acc@K = 1 if gold ⊆ top-K, else 0 (all gold items retrieved within K).
func AccAt(ranked, gold []string, k int) (float64, error) {
	if err := checkK(k); err != nil {
		return 0, err
	}
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.acc(k), nil
}

// PrecisionAt is P@K = |gold ∩ top-K| / K. The denominator stays K even when the
// list is shorter (as trec_eval does): returning fewer items is not rewarded.
func PrecisionAt(ranked, gold []string, k int) (float64, error) {
	if err := checkK(k); err != nil {
		return 0, err
	}
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.precision(k), nil
}

// ReciprocalRank is RR = 1/r where r is the 1-based rank of the first gold item
// in the list, 0 if no gold item is listed. Its mean over instances is MRR.
func ReciprocalRank(ranked, gold []string) (float64, error) {
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.mrr(0), nil
}

// ReciprocalRankAt is the cut variant RR@K = 1/r if r <= K, else 0 (MRR@K).
func ReciprocalRankAt(ranked, gold []string, k int) (float64, error) {
	if err := checkK(k); err != nil {
		return 0, err
	}
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.mrr(k), nil
}

// AveragePrecision is AP = (1/|gold|) · Σ_{i : item i relevant} P@i, over the
// whole list. Gold items absent from the list contribute 0 but still count in
// |gold|. Its mean over instances is MAP.
func AveragePrecision(ranked, gold []string) (float64, error) {
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.ap(), nil
}

// NDCGAt is NDCG@K with binary relevance:
//
//	DCG@K  = Σ_{i=1..min(K,n)} rel_i / log2(i+1)
//	IDCG@K = Σ_{i=1..min(|gold|,K)} 1 / log2(i+1)
//	NDCG@K = DCG@K / IDCG@K
func NDCGAt(ranked, gold []string, k int) (float64, error) {
	if err := checkK(k); err != nil {
		return 0, err
	}
	p, err := prepare(ranked, gold)
	if err != nil {
		return 0, err
	}
	return p.ndcg(k), nil
}

// Compute scores one instance on every metric in a single pass over the list,
// keyed by Key: "Recall@K", "Acc@K", "P@K", "NDCG@K", "MRR@K" for each k in ks,
// plus "MRR" and "MAP" (the instance's AP) without cutoff.
func Compute(ranked, gold []string, ks []int) (map[string]float64, error) {
	for _, k := range ks {
		if err := checkK(k); err != nil {
			return nil, err
		}
	}
	p, err := prepare(ranked, gold)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, 5*len(ks)+2)
	for _, k := range ks {
		out[Key(Recall, k)] = p.recall(k)
		out[Key(Acc, k)] = p.acc(k)
		out[Key(Precision, k)] = p.precision(k)
		out[Key(NDCG, k)] = p.ndcg(k)
		out[Key(MRR, k)] = p.mrr(k)
	}
	out[MRR] = p.mrr(0)
	out[MAP] = p.ap()
	return out, nil
}
