package search

import (
	"reflect"
	"testing"

	"github.com/locus-dev/locus/internal/spider"
)

// SourceRanks names each id's 1-based place in each fused ranking that
// holds it, and Finish carries it into the item's why.
func TestSourceRanks(t *testing.T) {
	sc := func(ids ...string) []spider.Scored {
		out := make([]spider.Scored, len(ids))
		for i, id := range ids {
			out[i] = spider.Scored{ID: id, Score: float64(len(ids) - i)}
		}
		return out
	}
	h := HybridRankings{Code: sc("a.py:f", "a.py:g", "b.py:h"), Memory: sc("b.py:h", "a.py:f"), Hotspots: sc("a.py:g")}
	got := h.SourceRanks([]string{"a.py:f", "a.py:g", "b.py:h", "c.py:none"})
	want := map[string]string{"a.py:f": "BM25 #1, memory #2", "a.py:g": "BM25 #2, hotspots #1", "b.py:h": "BM25 #3, memory #1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SourceRanks = %v, want %v", got, want)
	}
	r := &Retrieval{Method: MethodHybrid, TopK: sc("b.py:h", "a.py:f"), Sources: got}
	items, err := Finish(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if why := items[0].Why(); why != "fused rank 1: BM25 #3, memory #1" {
		t.Errorf("why = %q", why)
	}
}
