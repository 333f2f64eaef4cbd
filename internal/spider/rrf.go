package spider

import (
	"fmt"
	"math"
	"slices"
)

// DefaultRRFK is the rank constant of reciprocal-rank fusion (Cormack et al., 2009).
const DefaultRRFK = 60

// RRF fuses rankings by reciprocal rank: score(d) = Σ 1/(k + rank_i(d)) over
// the rankings that contain d, rank 1-based by position. k = 0 means
// DefaultRRFK. Each input's order is taken as given, because fusion is about
// positions, not about the incomparable scores of different retrievers.
func RRF(rankings [][]Scored, k float64) ([]Scored, error) {
	if k == 0 {
		k = DefaultRRFK
	}
	if math.IsNaN(k) || math.IsInf(k, 0) || k < 0 {
		return nil, fmt.Errorf("rrf: constant k = %v, want a finite number >= 0", k)
	}
	ranks := map[string][]int{}
	var order []string
	for i, r := range rankings {
		seen := make(map[string]struct{}, len(r))
		for pos, s := range r {
			if s.ID == "" {
				return nil, fmt.Errorf("rrf: ranking %d position %d: empty id", i, pos+1)
			}
			if _, dup := seen[s.ID]; dup {
				return nil, fmt.Errorf("rrf: ranking %d: id %q appears twice", i, s.ID)
			}
			seen[s.ID] = struct{}{}
			if _, ok := ranks[s.ID]; !ok {
				order = append(order, s.ID)
			}
			ranks[s.ID] = append(ranks[s.ID], pos+1)
		}
	}
	out := make([]Scored, 0, len(order))
	for _, id := range order {
		// Summing in rank order makes the fused score a function of the
		// multiset of ranks alone, so documents whose ranks are permutations
		// of each other tie exactly and fall to the id tie-break.
		rs := ranks[id]
		slices.Sort(rs)
		var sum float64
		for _, r := range rs {
			sum += 1 / (k + float64(r))
		}
		out = append(out, Scored{ID: id, Score: sum})
	}
	Sort(out)
	return out, nil
}

// Fuse combines rankings by their scores, each divided by its ranking's
// best (so every ranking's best scores 1) and weighted: an id scores
// Σ weight × score / best over the rankings that hold it; best first, ties
// by id (see Compare). A ranking whose best score is not positive adds
// nothing. Unlike reciprocal-rank fusion it keeps each ranking's margins, so
// a small weight only reorders ids the others score about equally. weights
// must be as long as rankings.
func Fuse(rankings [][]Scored, weights []float64) []Scored {
	score := map[string]float64{}
	for i, r := range rankings {
		if len(r) == 0 || !(r[0].Score > 0) || weights[i] == 0 {
			continue
		}
		top := r[0].Score
		for _, s := range r {
			score[s.ID] += weights[i] * s.Score / top
		}
	}
	return Rank(score)
}
