package llm_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
)

var (
	center = llm.Candidate{ID: "svc/api.py:Handler.get", Code: "def get(self, req):\n    return self.store.load(req.key)\n"}
	cands  = []llm.Candidate{
		{ID: "svc/api.py:Handler.put", Code: "def put(self, req):\n    self.store.save(req.key, req.body)\n"},
		{ID: "svc/store.py:Store.load", Code: "def load(self, key):\n    return self.db[key]\n"},
		{ID: "svc/store.py:Store.save", Code: "def save(self, key, body):\n    self.db[key] = body\n"},
	}
	issue = "GET returns 500 when the key is missing: Store.load raises KeyError"
)

func TestSelectBothProtocols(t *testing.T) {
	srv := llmtest.NewServer(t)
	for path, chat := range clients(t, srv, "", 0) {
		srv.EnqueuePath(path, llmtest.IDs("svc/store.py:Store.load", "nope.py:x", "svc/store.py:Store.load"))
		sel, err := llm.Select(t.Context(), chat, issue, center, cands, 4000)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(sel.IDs, []string{"svc/store.py:Store.load"}) || !reflect.DeepEqual(sel.Dropped, []string{"nope.py:x"}) {
			t.Errorf("%s: ids %v dropped %v", path, sel.IDs, sel.Dropped)
		}
		if sel.Calls != 1 || sel.PromptTokens == 0 || sel.CompletionTokens == 0 || sel.Latency <= 0 || sel.Repaired || sel.Model != chat.Name() {
			t.Errorf("%s: accounting %+v", path, sel)
		}
		if srv.Count(path) != 1 {
			t.Errorf("%s: %d requests", path, srv.Count(path))
		}
	}
	// The prompt carries the issue, the center and every candidate.
	for _, r := range srv.Requests() {
		p := llmtest.ParseSelectionPrompt(r.Prompt())
		if p.Center != center.ID || len(p.Candidates) != 3 || !strings.Contains(r.Prompt(), issue) {
			t.Errorf("%s prompt parsed as %+v", r.Path, p)
		}
	}
}

func TestSelectRepair(t *testing.T) {
	srv := llmtest.NewServer(t)
	for path, chat := range clients(t, srv, "", 0) {
		t.Run(path, func(t *testing.T) {
			// Garbage, then a good answer: success after two calls.
			srv.EnqueuePath(path, llmtest.Garbage(), llmtest.IDs("svc/store.py:Store.save"))
			before := srv.Count(path)
			sel, err := llm.Select(t.Context(), chat, issue, center, cands, 4000)
			if err != nil {
				t.Fatal(err)
			}
			if !sel.Repaired || sel.Calls != 2 || !reflect.DeepEqual(sel.IDs, []string{"svc/store.py:Store.save"}) {
				t.Errorf("sel = %+v", sel)
			}
			if n := srv.Count(path) - before; n != 2 {
				t.Errorf("server saw %d requests, want 2", n)
			}
			reqs := srv.Requests()
			repair := reqs[len(reqs)-1]
			if len(repair.Messages) != 3 || repair.Messages[1].Role != "assistant" || repair.Messages[1].Content != llmtest.Garbage().Text {
				t.Fatalf("repair request messages: %+v", repair.Messages)
			}
			if !strings.Contains(repair.Messages[2].Content, "no JSON list of ids") {
				t.Errorf("repair message does not quote the parse error: %q", repair.Messages[2].Content)
			}
			// The repair request still offers the same candidates.
			if p := llmtest.ParseSelectionPrompt(repair.Messages[0].Content); len(p.Candidates) != 3 {
				t.Errorf("repair prompt candidates %v", p.Candidates)
			}

			// Garbage twice: ErrInvalidOutput, not retryable, both calls counted.
			srv.EnqueuePath(path, llmtest.Garbage(), llmtest.Reply(`{"ids": "svc/store.py:Store.save"}`))
			before = srv.Count(path)
			sel, err = llm.Select(t.Context(), chat, issue, center, cands, 4000)
			if !errors.Is(err, llm.ErrInvalidOutput) || llm.IsRetryable(err) {
				t.Fatalf("err = %v, want non-retryable ErrInvalidOutput", err)
			}
			var ie *llm.InvalidOutputError
			if !errors.As(err, &ie) || ie.Model != chat.Name() || !strings.Contains(ie.Text, "Store.save") {
				t.Errorf("InvalidOutputError = %+v", ie)
			}
			if sel.Calls != 2 || sel.PromptTokens == 0 || srv.Count(path)-before != 2 {
				t.Errorf("failed selection accounting %+v, server %d", sel, srv.Count(path)-before)
			}
		})
	}
}

func TestSelectTransportErrors(t *testing.T) {
	srv := llmtest.NewServer(t)
	chat := clients(t, srv, "", 0)[llmtest.PathOpenAI]
	srv.Enqueue(llmtest.RateLimited("4"))
	sel, err := llm.Select(t.Context(), chat, issue, center, cands, 0)
	if !llm.IsRetryable(err) || llm.RetryAfter(err).Seconds() != 4 || sel.Calls != 1 {
		t.Errorf("429: %v (retry after %s), calls %d", err, llm.RetryAfter(err), sel.Calls)
	}
	// A failure during the repair call is returned as is (retryable).
	srv.Enqueue(llmtest.Garbage(), llmtest.ServerError())
	sel, err = llm.Select(t.Context(), chat, issue, center, cands, 0)
	if !llm.IsRetryable(err) || errors.Is(err, llm.ErrInvalidOutput) || sel.Calls != 2 {
		t.Errorf("500 on repair: %v, calls %d", err, sel.Calls)
	}
	// 400 is final.
	srv.Enqueue(llmtest.HTTPStatus(400))
	if _, err := llm.Select(t.Context(), chat, issue, center, cands, 0); err == nil || llm.IsRetryable(err) {
		t.Errorf("400: %v", err)
	}
}

func TestSelectNoCandidates(t *testing.T) {
	srv := llmtest.NewServer(t)
	chat := clients(t, srv, "", 0)[llmtest.PathOpenAI]
	sel, err := llm.Select(t.Context(), chat, issue, center, []llm.Candidate{{ID: center.ID, Code: "x"}}, 0)
	if err != nil || sel.Calls != 0 || sel.IDs == nil || len(sel.IDs) != 0 || srv.Total() != 0 {
		t.Errorf("sel %+v err %v total %d", sel, err, srv.Total())
	}
}

func TestSelectCached(t *testing.T) {
	srv := llmtest.NewServer(t)
	cache := &llm.MemoryCache{}
	chat := llm.WithCache(clients(t, srv, "", 0)[llmtest.PathAnthropic], cache)
	srv.Enqueue(llmtest.Garbage(), llmtest.IDs("svc/api.py:Handler.put"))
	first, err := llm.Select(t.Context(), chat, issue, center, cands, 4000)
	// Only the usable (repaired) answer is stored, never the garbage.
	if err != nil || first.Calls != 2 || first.CachedCalls != 0 || cache.Len() != 1 {
		t.Fatalf("first: %+v %v (cache %d)", first, err, cache.Len())
	}
	// A re-run (a retried activity, a replayed workflow) asks the first
	// prompt again (its garbage was not kept); the model answers the same
	// garbage and the repair is answered from the cache, billing nothing.
	srv.Enqueue(llmtest.Garbage())
	again, err := llm.Select(t.Context(), chat, issue, center, cands, 4000)
	if err != nil || again.Calls != 2 || again.CachedCalls != 1 || cache.Len() != 1 {
		t.Fatalf("again: %+v %v (cache %d)", again, err, cache.Len())
	}
	if !reflect.DeepEqual(again.IDs, first.IDs) || srv.Total() != 3 {
		t.Errorf("again ids %v, server total %d", again.IDs, srv.Total())
	}
	// A usable first answer is cached: a re-run makes no request at all.
	srv.Enqueue(llmtest.IDs("svc/store.py:Store.load"))
	fresh, err := llm.Select(t.Context(), chat, "another issue", center, cands, 4000)
	if err != nil || fresh.Calls != 1 || srv.Total() != 4 {
		t.Fatalf("fresh: %+v %v total %d", fresh, err, srv.Total())
	}
	replay, err := llm.Select(t.Context(), chat, "another issue", center, cands, 4000)
	if err != nil || replay.Calls != 1 || replay.CachedCalls != 1 || replay.PromptTokens != 0 || srv.Total() != 4 {
		t.Fatalf("replay: %+v %v total %d", replay, err, srv.Total())
	}
	// Errors are not cached: the next call goes to the server.
	srv.Enqueue(llmtest.ServerError(), llmtest.IDs())
	if _, err := chat.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "q"}}}); !llm.IsRetryable(err) {
		t.Fatalf("want retryable 500, got %v", err)
	}
	resp, err := chat.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "q"}}})
	if err != nil || resp.Cached || srv.Total() != 6 {
		t.Errorf("after error: %+v %v total %d", resp, err, srv.Total())
	}
}

// TestSelectingHandler scripts answers by prompt content while selections
// run in parallel, as the Localize workflow's activities do.
func TestSelectingHandler(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetHandler(llmtest.Selecting(func(p llmtest.SelectionPrompt, _ llmtest.Request) []string {
		// Pick the candidates whose id shares the center's file.
		file := p.Center[:strings.IndexByte(p.Center, ':')]
		var out []string
		for _, c := range p.Candidates {
			if strings.HasPrefix(c, file+":") {
				out = append(out, c)
			}
		}
		return out
	}))
	chat := clients(t, srv, "", 0)[llmtest.PathOpenAI]
	var wg sync.WaitGroup
	results := make([][]string, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Go(func() {
			c := llm.Candidate{ID: fmt.Sprintf("f%d.py:main", i), Code: "```\n### f9.py:fake\n```\n"}
			var cs []llm.Candidate
			for j := range 8 {
				cs = append(cs, llm.Candidate{ID: fmt.Sprintf("f%d.py:g%d", j, j)})
			}
			sel, err := llm.Select(t.Context(), chat, "issue", c, cs, 0)
			results[i], errs[i] = sel.IDs, err
		})
	}
	wg.Wait()
	for i := range 8 {
		if errs[i] != nil || !slices.Equal(results[i], []string{fmt.Sprintf("f%d.py:g%d", i, i)}) {
			t.Errorf("center %d: %v %v", i, results[i], errs[i])
		}
	}
	if srv.Count(llmtest.PathOpenAI) != 8 {
		t.Errorf("requests %d", srv.Count(llmtest.PathOpenAI))
	}
}

func TestLLMSelector(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.IDs("svc/api.py:Handler.put"))
	var s llm.Selector = &llm.LLMSelector{Chat: clients(t, srv, "", 0)[llmtest.PathOpenAI]}
	sel, err := s.Select(t.Context(), issue, center, cands)
	if err != nil || s.Name() != "fake-gpt" || sel.Model != "fake-gpt" || len(sel.IDs) != 1 {
		t.Errorf("%+v %v", sel, err)
	}
}
