package e2e

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// rerankFake answers selection prompts with no neighbours and rerank
// prompts by mode: "reverse" orders the candidates backwards, "partial"
// names only the last one, "garbage" answers prose.
type rerankFake struct {
	mu      sync.Mutex
	mode    string
	reranks int // rerank requests seen (repairs included)
}

func (f *rerankFake) set(mode string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode, f.reranks = mode, 0
}

func (f *rerankFake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reranks
}

func (f *rerankFake) handle(req llmtest.Request) llmtest.Step {
	if !strings.Contains(req.Messages[0].Content, `{"ranking": [`) {
		return llmtest.IDs()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reranks++
	ids := llmtest.ParseSelectionPrompt(req.Messages[0].Content).Candidates
	switch f.mode {
	case "partial":
		return llmtest.Ranking(ids[len(ids)-1])
	case "garbage":
		return llmtest.Garbage()
	}
	slices.Reverse(ids)
	return llmtest.Ranking(ids...)
}

func itemIDs(items []spider.Item) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// TestRerank runs the LLM rerank through the Localize and LocalizeBacklog
// workflows against a fake OpenAI-compatible server: the first N items take
// the model's order and say so, a partial answer keeps the rest in their
// order, garbage fails after bounded retries with the order kept, a
// warning and every paid call counted, and a spent token budget skips it.
func TestRerank(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	repo := backlogRepo(t)
	fake := llmtest.NewServer(t)
	rf := &rerankFake{}
	fake.SetHandler(rf.handle)
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b,
		LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake-llm&timeout=2s"})
	name := schema.RepoName("acme/widgets")
	if _, res := runFleet(ctx, t, c, "fleet-rerank", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: repo.Dir}}}); res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}
	const issue = "the cache should evict the key when entries expire, and the queue drain must clear items"
	var lastID string
	localize := func(rerank int) workflows.LocalizeResult {
		t.Helper()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.IndexQueue}, workflows.Localize,
			workflows.LocalizeInput{Repo: name, Issue: issue,
				Params:   search.Params{Method: search.MethodHybrid, Params: spider.Params{K: 6, C: 2}, Rerank: rerank},
				LLMRetry: workflows.RetryOptions{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 2}})
		if err != nil {
			t.Fatal(err)
		}
		var out workflows.LocalizeResult
		if err := run.Get(ctx, &out); err != nil {
			t.Fatalf("a rerank must not fail the query: %v", err)
		}
		lastID = run.GetID()
		return out
	}
	base := localize(0)
	if base.Rerank != nil || len(base.Items) < 5 {
		t.Fatalf("without rerank: %+v", base)
	}
	want := itemIDs(base.Items)

	t.Run("reverse", func(t *testing.T) {
		rf.set("reverse")
		out := localize(4)
		if *update {
			writeHistory(ctx, t, c, "localize-reranked.json", lastID, "")
		}
		got := itemIDs(out.Items)
		wantOrder := append([]string{want[3], want[2], want[1], want[0]}, want[4:]...)
		if !reflect.DeepEqual(got, wantOrder) {
			t.Fatalf("order %v, want %v", got, wantOrder)
		}
		for i, it := range out.Items[:4] {
			if it.Reranker != "fake-llm" || it.RerankedFrom != 4-i || !strings.Contains(it.Why(), "reranked by fake-llm") {
				t.Errorf("item %d: %+v", i, it)
			}
		}
		if out.Items[4].Reranker != "" {
			t.Errorf("item 5 was not reranked: %+v", out.Items[4])
		}
		r := out.Rerank
		if r == nil || r.N != 4 || r.Calls != 1 || r.PromptTokens == 0 || r.Error != "" || r.Skipped != "" || rf.count() != 1 {
			t.Fatalf("rerank info %+v, %d rerank requests", r, rf.count())
		}
		if out.PromptTokens < r.PromptTokens || out.LLMCalls < r.Calls || out.Warning != "" {
			t.Errorf("totals %d tokens %d calls must include the rerank's; warning %q", out.PromptTokens, out.LLMCalls, out.Warning)
		}
		// The same query again is answered from the decision cache.
		again := localize(4)
		if rf.count() != 1 || again.Rerank.CachedCalls != 1 || !reflect.DeepEqual(itemIDs(again.Items), wantOrder) {
			t.Errorf("re-run: %d rerank requests, info %+v", rf.count(), again.Rerank)
		}
	})
	t.Run("partial", func(t *testing.T) {
		rf.set("partial")
		out := localize(3)
		wantOrder := append([]string{want[2], want[0], want[1]}, want[3:]...)
		if got := itemIDs(out.Items); !reflect.DeepEqual(got, wantOrder) {
			t.Fatalf("order %v, want %v", got, wantOrder)
		}
		if !reflect.DeepEqual(out.Rerank.Missing, []string{want[0], want[1]}) {
			t.Errorf("missing %v", out.Rerank.Missing)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		rf.set("garbage")
		out := localize(5)
		if *update {
			writeHistory(ctx, t, c, "localize-rerank-failed.json", lastID, "")
		}
		if got := itemIDs(out.Items); !reflect.DeepEqual(got, want) {
			t.Fatalf("a failed rerank changed the order: %v, want %v", got, want)
		}
		for _, it := range out.Items {
			if it.Reranker != "" {
				t.Errorf("%s says it was reranked", it.ID)
			}
		}
		r := out.Rerank
		// Two attempts, each an answer and its repair: four paid calls.
		if r == nil || rf.count() != 4 || r.Calls != 4 || r.PromptTokens == 0 || !strings.Contains(r.Error, "invalid model output") {
			t.Fatalf("rerank info %+v, %d rerank requests", r, rf.count())
		}
		for _, w := range []string{"LLM reranker at " + fake.URL + llmtest.PathOpenAI + " failed after 2 attempts", "the first 5 items keep their order"} {
			if !strings.Contains(out.Warning, w) {
				t.Errorf("warning %q lacks %q", out.Warning, w)
			}
		}
	})
	t.Run("backlog budget", func(t *testing.T) {
		rf.set("reverse")
		const id = "backlog-rerank"
		// Texts not asked before: a decision from the cache costs nothing.
		issues := []schema.BacklogIssue{{ID: "one", Repo: name, Text: issue + " soon"}, {ID: "two", Repo: name, Text: issue + " quickly"}}
		data, err := json.Marshal(issues)
		if err != nil {
			t.Fatal(err)
		}
		in := workflows.LocalizeBacklogInput{Run: id, IssuesKey: schema.BacklogKey(id, "input.json"), Total: len(issues),
			Params:  search.Params{Method: search.MethodHybrid, Params: spider.Params{K: 6, C: 2}, Rerank: 4},
			Options: workflows.BacklogOptions{Window: 1, Batch: 1, MaxTokens: 1, Details: true}}
		if err := b.WriteAll(ctx, in.IssuesKey, data); err != nil {
			t.Fatal(err)
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue}, workflows.LocalizeBacklog, in)
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.BacklogResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		if res.Done != 2 || res.TokensIn == 0 {
			t.Fatalf("backlog %+v", res)
		}
		var outs []workflows.LocalizeResult
		for _, id := range []string{"one", "two"} {
			lr, err := jobs.IssueResult(ctx, c, b, res, id)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, lr)
		}
		// The first issue is reranked (the budget is spent by it); the
		// second is ranked without any LLM step.
		if r := outs[0].Rerank; r == nil || r.Calls != 1 || r.Skipped != "" || outs[0].Items[0].Reranker != "fake-llm" {
			t.Errorf("first issue: rerank %+v", r)
		}
		if r := outs[1].Rerank; r == nil || r.Calls != 0 || !strings.Contains(r.Skipped, "token budget is spent") || outs[1].Items[0].Reranker != "" {
			t.Errorf("second issue: rerank %+v", r)
		}
	})
}
