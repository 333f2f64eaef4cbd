package llm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
)

// ranked are a retriever's top candidates for issue, in its order.
var ranked = append([]llm.Candidate{center}, cands...)

func rankedIDs() []string {
	ids := make([]string, len(ranked))
	for i, c := range ranked {
		ids[i] = c.ID
	}
	return ids
}

func TestParseRanking(t *testing.T) {
	ids := []string{"a.py:f", "a.py:g", "b.py:h"}
	for _, tc := range []struct {
		name, text           string
		order, missing, drop []string
		wantErr              string
	}{
		{name: "full", text: `{"ranking": ["b.py:h", "a.py:f", "a.py:g"]}`, order: []string{"b.py:h", "a.py:f", "a.py:g"}},
		{name: "partial keeps the rest in retrieval order", text: `{"ranking": ["a.py:g"]}`,
			order: []string{"a.py:g", "a.py:f", "b.py:h"}, missing: []string{"a.py:f", "b.py:h"}},
		{name: "bare list in prose with repeats and strangers", text: "Sure:\n```json\n[\"b.py:h\", \"x.py:z\", \"b.py:h\"]\n```",
			order: []string{"b.py:h", "a.py:f", "a.py:g"}, missing: []string{"a.py:f", "a.py:g"}, drop: []string{"x.py:z"}},
		{name: "other key", text: `<think>hmm</think>{"order": ["a.py:f", "b.py:h", "a.py:g"]}`, order: []string{"a.py:f", "b.py:h", "a.py:g"}},
		{name: "empty", text: `{"ranking": []}`, wantErr: "the ranking is empty"},
		{name: "only strangers", text: `{"ranking": ["x.py:z"]}`, wantErr: "names none of the 3 candidates"},
		{name: "garbage", text: "the second one, probably", wantErr: "no JSON list of ids"},
		{name: "numbers", text: `{"ranking": [2, 1, 3]}`, wantErr: "is a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order, missing, drop, err := llm.ParseRanking(tc.text, ids)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(order, tc.order) || !reflect.DeepEqual(missing, tc.missing) || !reflect.DeepEqual(drop, tc.drop) {
				t.Errorf("order %v missing %v dropped %v, want %v %v %v", order, missing, drop, tc.order, tc.missing, tc.drop)
			}
		})
	}
}

func TestRerankBothProtocols(t *testing.T) {
	srv := llmtest.NewServer(t)
	want := []string{cands[1].ID, center.ID, cands[2].ID, cands[0].ID}
	for path, chat := range clients(t, srv, "", 0) {
		srv.EnqueuePath(path, llmtest.Ranking(want...))
		sel, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(sel.IDs, want) || sel.Missing != nil || sel.Repaired {
			t.Errorf("%s: %+v", path, sel)
		}
		if sel.Calls != 1 || sel.PromptTokens == 0 || sel.CompletionTokens == 0 || sel.Model != chat.Name() {
			t.Errorf("%s: accounting %+v", path, sel)
		}
	}
	// The prompt carries the issue and every candidate once, no center.
	for _, r := range srv.Requests() {
		p := llmtest.ParseSelectionPrompt(r.Prompt())
		if p.Center != "" || !reflect.DeepEqual(p.Candidates, rankedIDs()) || !strings.Contains(r.Prompt(), issue) || !strings.Contains(r.Prompt(), `{"ranking": [`) {
			t.Errorf("%s prompt parsed as %+v:\n%s", r.Path, p, r.Prompt())
		}
	}
}

func TestRerankGarbagePartialAndFailures(t *testing.T) {
	srv := llmtest.NewServer(t)
	chat := clients(t, srv, "", 0)[llmtest.PathOpenAI]
	t.Run("garbage then a ranking: repaired", func(t *testing.T) {
		srv.Enqueue(llmtest.Garbage(), llmtest.Ranking(rankedIDs()...))
		sel, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000)
		if err != nil {
			t.Fatal(err)
		}
		if !sel.Repaired || sel.Calls != 2 || !reflect.DeepEqual(sel.IDs, rankedIDs()) {
			t.Errorf("%+v", sel)
		}
		reqs := srv.Requests()
		if last := reqs[len(reqs)-1]; !strings.Contains(last.Prompt(), `{"ranking": [`) || !strings.Contains(last.Prompt(), "no JSON list of ids") {
			t.Errorf("repair prompt %q", last.Prompt())
		}
	})
	t.Run("partial answer", func(t *testing.T) {
		srv.Enqueue(llmtest.Ranking(cands[2].ID, "nope.py:x"))
		sel, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000)
		if err != nil {
			t.Fatal(err)
		}
		wantOrder := []string{cands[2].ID, center.ID, cands[0].ID, cands[1].ID}
		if !reflect.DeepEqual(sel.IDs, wantOrder) || !reflect.DeepEqual(sel.Missing, wantOrder[1:]) || !reflect.DeepEqual(sel.Dropped, []string{"nope.py:x"}) || sel.Repaired {
			t.Errorf("%+v", sel)
		}
	})
	t.Run("garbage twice: invalid output", func(t *testing.T) {
		srv.Enqueue(llmtest.Garbage(), llmtest.Ranking())
		sel, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000)
		if !errors.Is(err, llm.ErrInvalidOutput) || llm.IsRetryable(err) || !strings.Contains(err.Error(), "the ranking is empty") {
			t.Fatalf("err %v", err)
		}
		if sel.Calls != 2 {
			t.Errorf("%d calls", sel.Calls)
		}
	})
	t.Run("server errors stay retryable", func(t *testing.T) {
		srv.Enqueue(llmtest.RateLimited("3"))
		_, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000)
		if !llm.IsRetryable(err) || llm.RetryAfter(err).Seconds() != 3 || !strings.Contains(err.Error(), "rerank 4 candidates") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("one candidate needs no call", func(t *testing.T) {
		before := srv.Total()
		sel, err := llm.Rerank(t.Context(), chat, issue, ranked[:1], 4000)
		if err != nil || !reflect.DeepEqual(sel.IDs, []string{center.ID}) || sel.Calls != 0 || srv.Total() != before {
			t.Errorf("sel %+v err %v, %d calls", sel, err, srv.Total()-before)
		}
	})
}

func TestRerankCacheRejectsUnusableAnswers(t *testing.T) {
	srv := llmtest.NewServer(t)
	cache := &llm.MemoryCache{}
	chat := llm.WithCache(clients(t, srv, "", 0)[llmtest.PathOpenAI], cache)
	srv.Enqueue(llmtest.Ranking(), llmtest.Ranking(rankedIDs()...))
	if _, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000); err != nil {
		t.Fatal(err)
	}
	// Only the usable (repair) answer is stored: the empty ranking fails
	// the request's check, so the same rerank asks the server again.
	if cache.Len() != 1 {
		t.Fatalf("%d cached answers, want 1 (the empty ranking must not be stored)", cache.Len())
	}
	srv.Enqueue(llmtest.Ranking(rankedIDs()...))
	sel, err := llm.Rerank(t.Context(), chat, issue, ranked, 4000)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Calls != 1 || sel.CachedCalls != 0 || srv.Pending() != 0 {
		t.Errorf("second rerank: %+v, %d steps left", sel, srv.Pending())
	}
	srv.Enqueue()
	sel, err = llm.Rerank(t.Context(), chat, issue, ranked, 4000)
	if err != nil || sel.CachedCalls != 1 || sel.PromptTokens != 0 {
		t.Errorf("third rerank: %+v %v, want one cached call", sel, err)
	}
}

func TestRerankPromptFitsBudget(t *testing.T) {
	long := []llm.Candidate{
		{ID: "big.py:a", Code: strings.Repeat("x = 1\n", 4000)},
		{ID: "big.py:b", Code: "def b():\n    pass\n"},
	}
	req := llm.RerankPrompt(issue, long, 1000)
	if n := llm.EstimateTokens(req); n > 1000 {
		t.Errorf("prompt of %d tokens, budget 1000", n)
	}
	if !strings.Contains(req.Messages[0].Content, "def b():\n    pass\n") || !strings.Contains(req.Messages[0].Content, "(truncated)") {
		t.Errorf("short code must stay whole, long code cut:\n%s", req.Messages[0].Content[:300])
	}
}
