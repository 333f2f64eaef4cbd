package search

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/spider"
)

func TestApplyRerank(t *testing.T) {
	items := []spider.Item{
		{ID: "a.py:f", Rank: 1, Reason: spider.ReasonCenter, Ranking: "fused"},
		{ID: "a.py:g", Rank: 7, Reason: spider.ReasonNeighbour, Center: "a.py:f", Hops: 1, Selector: "m"},
		{ID: "b.py:h", Rank: 2, Reason: spider.ReasonSemantic},
		{ID: "c.py:i", Rank: 3, Reason: spider.ReasonSemantic},
	}
	if got := RerankIDs(items, 3); !reflect.DeepEqual(got, []string{"a.py:f", "a.py:g", "b.py:h"}) {
		t.Errorf("RerankIDs(3) = %v", got)
	}
	if got := RerankIDs(items, 10); len(got) != 4 {
		t.Errorf("RerankIDs(10) = %v, want all 4", got)
	}
	out, err := ApplyRerank(items, []string{"b.py:h", "a.py:f", "a.py:g"}, "m2")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range out {
		ids = append(ids, it.ID)
	}
	if !reflect.DeepEqual(ids, []string{"b.py:h", "a.py:f", "a.py:g", "c.py:i"}) {
		t.Fatalf("order %v", ids)
	}
	if out[0].Reranker != "m2" || out[0].RerankedFrom != 3 || out[1].RerankedFrom != 1 || out[3].Reranker != "" {
		t.Errorf("provenance %+v", out)
	}
	if items[0].Reranker != "" {
		t.Error("ApplyRerank changed its input")
	}
	if why := out[0].Why(); why != "rank 2; reranked by m2 from position 3" {
		t.Errorf("why %q", why)
	}
	if why := out[2].Why(); !strings.HasPrefix(why, "neighbour of center a.py:f (1 hops, rank 7), selected by m; reranked by m2 from position 2") {
		t.Errorf("why %q", why)
	}
	for _, bad := range [][]string{
		{"b.py:h", "a.py:f", "c.py:i"},                // c is not among the first 3
		{"b.py:h", "b.py:h", "a.py:f"},                // repeat
		{"a.py:f", "a.py:g", "b.py:h", "c.py:i", "d"}, // more ids than items
	} {
		if _, err := ApplyRerank(items, bad, "m2"); err == nil {
			t.Errorf("order %v: no error", bad)
		}
	}
}

func TestRerankWithoutReranker(t *testing.T) {
	_, err := Rerank(t.Context(), Deps{}, RerankRequest{Repo: "acme/x", IDs: []string{"a.py:f"}})
	if !errors.Is(err, ErrNoReranker) || !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "--llm") {
		t.Fatalf("err %v", err)
	}
}

func TestRerankInfoAdd(t *testing.T) {
	var res Result
	res.LLMCalls, res.PromptTokens = 2, 100
	info := &RerankInfo{N: 5}
	info.Add(llm.Selection{Model: "m", Calls: 2, CachedCalls: 1, PromptTokens: 40, CompletionTokens: 9, Missing: []string{"x"}, Repaired: true}, &res)
	if res.LLMCalls != 4 || res.PromptTokens != 140 || res.CompletionTokens != 9 {
		t.Errorf("totals %+v", res)
	}
	if info.Model != "m" || info.Calls != 2 || info.CachedCalls != 1 || !info.Repaired || len(info.Missing) != 1 {
		t.Errorf("info %+v", info)
	}
}
