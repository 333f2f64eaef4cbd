package search

import (
	"fmt"
	"math"

	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
)

// coChangeOverlay lays over the code graph, for the hybrid method's
// expansion, an edge from each function to the functions that memory's
// commits (before the query's base) changed together with it
// (memory.Episodic.CoChanged, its defaults), at p.CoChangeCost; no edges
// without memory or when the cost is 0. Off by default: on swe-dev no cost
// or bound tried beat the hybrid method without them (recall at 20 the
// same at best, one instance won and one lost).
func coChangeOverlay(ep *memory.Episodic, p Params) (spider.Overlay, error) {
	if p.CoChangeCost < 0 || p.CoChangeCost > math.MaxUint8 {
		return spider.Overlay{}, fmt.Errorf("co-change cost %d: want 0 (none) to %d: %w", p.CoChangeCost, math.MaxUint8, ErrBadQuery)
	}
	if ep == nil || p.CoChangeCost == 0 {
		return spider.Overlay{}, nil
	}
	return spider.Overlay{Cost: p.CoChangeCost, Neighbours: func(id string) []string {
		co := ep.CoChanged(id, memory.CoChangeOptions{})
		out := make([]string, len(co))
		for i, s := range co {
			out[i] = s.ID
		}
		return out
	}}, nil
}
