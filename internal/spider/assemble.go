package spider

import (
	"errors"
	"fmt"
	"strconv"
)

// Reason says why an item is in the output.
type Reason string

const (
	ReasonCenter    Reason = "center"    // one of the top C, always kept
	ReasonNeighbour Reason = "neighbour" // promoted by a center's selector
	ReasonSemantic  Reason = "semantic"  // the rest of S_K by rank
)

// Item is one output function and why it is there.
type Item struct {
	ID     string  `json:"id"`
	Score  float64 `json:"score"` // retrieval score from the ranking
	Rank   int     `json:"rank"`  // 1-based position in the ranking
	Reason Reason  `json:"reason"`
	// For neighbours: the center, the hops from it, and who selected it.
	Center   string `json:"center,omitempty"`
	Hops     int    `json:"hops,omitempty"`
	Selector string `json:"selector,omitempty"`
	// Ranking names the ranking Rank is a position in ("BM25", "dense",
	// "fused"); "" says only "rank".
	Ranking string `json:"ranking,omitempty"`
	// Sources, for a fused ranking, says where the rankings it fuses
	// placed the item ("BM25 #3, memory #1").
	Sources string `json:"sources,omitempty"`
	// Reranker, when an LLM reordered the result's first items, names it;
	// RerankedFrom is the item's 1-based position before.
	Reranker     string `json:"reranker,omitempty"`
	RerankedFrom int    `json:"reranked_from,omitempty"`
}

// Why is the human explanation of the item, as the CLI prints it.
func (it Item) Why() string {
	if it.Reranker != "" {
		return fmt.Sprintf("%s; reranked by %s from position %d", it.why(), it.Reranker, it.RerankedFrom)
	}
	return it.why()
}

func (it Item) why() string {
	rank := "rank " + strconv.Itoa(it.Rank)
	if it.Ranking != "" {
		rank = it.Ranking + " " + rank
	}
	if it.Sources != "" {
		rank += ": " + it.Sources
	}
	switch it.Reason {
	case ReasonCenter:
		return "center, " + rank
	case ReasonNeighbour:
		return fmt.Sprintf("neighbour of center %s (%d hops, %s), selected by %s", it.Center, it.Hops, rank, it.Selector)
	default:
		return rank
	}
}

// Selection is what one center's selector returned. The ids are a set: their
// order and repeats do not matter.
type Selection struct {
	IDs []string `json:"ids"`
	// Selector names who chose (an LLM model, or the heuristic), so every
	// promoted item can say so; required when IDs is not empty.
	Selector string `json:"selector"`
}

// Assembly is the output of step 5 and what was left out of it.
type Assembly struct {
	Items []Item `json:"items"`
	// Ignored are selected ids outside their center's candidate set, per center.
	Ignored map[string][]string `json:"ignored,omitempty"`
	// Dropped are selected neighbours that did not fit in the budget, in the
	// order they would have been placed.
	Dropped []string `json:"dropped,omitempty"`
}

// Assemble runs step 5 on the expansion's S_K, centers and budget.
func (e Expansion) Assemble(selected map[string]Selection) (Assembly, error) {
	return Assemble(e.TopK, e.Centers, selected, e.Params.K)
}

// Assemble builds the output: each center followed by its selected neighbours
// (in candidate order: hops, rank, id), then the rest of S_K = ranking[:k] by
// rank, skipping placed nodes, cut to k. A node selected by several centers
// goes under the first. Selected ids outside the center's candidates are
// ignored. The cut never removes a center: slots for the centers still to
// come are reserved, so excess neighbours are dropped instead, and selected
// neighbours displace the lowest-ranked non-centers. The result has
// min(k, |S_K ∪ neighbours|) items, no duplicates.
func Assemble(ranking []Scored, centers []Center, selected map[string]Selection, k int) (Assembly, error) {
	if k <= 0 {
		return Assembly{}, fmt.Errorf("assemble: budget k = %d, want > 0", k)
	}
	top := ranking[:min(k, len(ranking))]
	if err := checkRanking(top); err != nil {
		return Assembly{}, fmt.Errorf("assemble: %w", err)
	}
	pos := make(map[string]int, len(top))
	for i, s := range top {
		pos[s.ID] = i
	}
	isCenter := make(map[string]bool, len(centers))
	for _, c := range centers {
		if _, ok := pos[c.ID]; !ok {
			return Assembly{}, fmt.Errorf("assemble: center %q is not in the top %d of the ranking", c.ID, k)
		}
		if isCenter[c.ID] {
			return Assembly{}, fmt.Errorf("assemble: center %q appears twice", c.ID)
		}
		isCenter[c.ID] = true
	}
	var errs []error
	for id, sel := range selected {
		if !isCenter[id] {
			errs = append(errs, fmt.Errorf("selection for %q, which is not a center", id))
		} else if len(sel.IDs) > 0 && sel.Selector == "" {
			errs = append(errs, fmt.Errorf("selection for center %q names no selector", id))
		}
	}
	if len(errs) > 0 {
		return Assembly{}, fmt.Errorf("assemble: %w", errors.Join(errs...))
	}

	out := Assembly{Items: make([]Item, 0, len(top))}
	placed := make(map[string]bool, len(top))
	dropped := map[string]bool{}
	for ci, c := range centers {
		i := pos[c.ID]
		out.Items = append(out.Items, Item{ID: c.ID, Score: top[i].Score, Rank: i + 1, Reason: ReasonCenter})
		placed[c.ID] = true
		sel := selected[c.ID]
		if len(sel.IDs) == 0 {
			continue
		}
		want := make(map[string]bool, len(sel.IDs))
		for _, id := range sel.IDs {
			want[id] = true
		}
		reserve := len(centers) - ci - 1
		for _, cand := range c.Candidates {
			if !want[cand.ID] {
				continue
			}
			delete(want, cand.ID) // what remains is outside the candidates
			if placed[cand.ID] || isCenter[cand.ID] {
				continue // under an earlier center, or placed as a center
			}
			if len(out.Items)+reserve >= k {
				if !dropped[cand.ID] {
					dropped[cand.ID] = true
					out.Dropped = append(out.Dropped, cand.ID)
				}
				continue
			}
			out.Items = append(out.Items, Item{
				ID: cand.ID, Score: cand.Score, Rank: cand.Rank, Reason: ReasonNeighbour,
				Center: c.ID, Hops: cand.Hops, Selector: sel.Selector,
			})
			placed[cand.ID] = true
		}
		for _, id := range sel.IDs {
			if want[id] {
				if out.Ignored == nil {
					out.Ignored = map[string][]string{}
				}
				out.Ignored[c.ID] = append(out.Ignored[c.ID], id)
				delete(want, id) // report a repeated id once
			}
		}
	}
	for i, s := range top {
		if len(out.Items) >= k {
			break
		}
		if placed[s.ID] {
			continue
		}
		out.Items = append(out.Items, Item{ID: s.ID, Score: s.Score, Rank: i + 1, Reason: ReasonSemantic})
		placed[s.ID] = true
	}
	return out, nil
}
