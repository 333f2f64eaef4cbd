// Package spider implements the retrieval algorithms (SR, DER, SpISR, SpIDER and rank fusion) as pure functions over scores and a code graph.
package spider

import (
	"cmp"
	"math"
	"slices"
)

// Scored is one document (a function node id) with its retrieval score.
type Scored struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// Compare orders by score descending, then id ascending, so equal scores never
// leave the order to the sort algorithm. NaN sorts after every number: a broken
// scorer then sinks its documents instead of making the order undefined.
func Compare(a, b Scored) int {
	an, bn := math.IsNaN(a.Score), math.IsNaN(b.Score)
	switch {
	case an && !bn:
		return 1
	case bn && !an:
		return -1
	case !an && a.Score != b.Score:
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.ID, b.ID)
}

// Sort puts s in rank order (see Compare).
func Sort(s []Scored) { slices.SortFunc(s, Compare) }

// Rank turns a score per id into a ranking (see Compare).
func Rank(scores map[string]float64) []Scored {
	out := make([]Scored, 0, len(scores))
	for id, sc := range scores {
		out = append(out, Scored{ID: id, Score: sc})
	}
	Sort(out)
	return out
}

// TopK returns the k best of s in rank order without modifying s. SR and DER
// are TopK over BM25 and cosine scores; a bounded heap keeps it O(n log k),
// which matters because n is every function of a repository and k is small.
func TopK(s []Scored, k int) []Scored {
	if k <= 0 {
		return []Scored{}
	}
	if k >= len(s) {
		out := slices.Clone(s)
		Sort(out)
		return out
	}
	// Max-heap by rank order: the root is the worst of the best k so far.
	h := make([]Scored, 0, k)
	for _, x := range s {
		if len(h) < k {
			h = append(h, x)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if Compare(h[i], h[p]) <= 0 {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if Compare(x, h[0]) >= 0 {
			continue
		}
		h[0] = x
		for i := 0; ; {
			l, r, w := 2*i+1, 2*i+2, i
			if l < k && Compare(h[l], h[w]) > 0 {
				w = l
			}
			if r < k && Compare(h[r], h[w]) > 0 {
				w = r
			}
			if w == i {
				break
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	Sort(h)
	return h
}
