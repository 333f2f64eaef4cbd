package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// TestLocalizeWithFlakyLLM indexes a repository, then runs the Localize
// workflow against a fake OpenAI-compatible server that first rate-limits
// (Retry-After), then answers garbage, then answers properly. The workflow
// must end with the right result, the fake must have seen exactly those
// calls, and a re-run must be answered from the decision cache.
func TestLocalizeWithFlakyLLM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := gitfixture.New(t)
	r.Write(map[string]string{"pkg/cache.py": `class Cache:
    def get(self, key):
        return self.store.get(key)

    def evict(self, key):
        self.store.pop(key)

    def expire_entries(self, now):
        for k in list(self.store):
            self.evict(k)
`})
	r.Commit("cache")

	fake := llmtest.NewServer(t)
	fake.EnqueuePath("/v1/chat/completions", llmtest.RateLimited("1"), llmtest.Garbage())
	// After the scripted failures, the fake picks evict (the repair request
	// quotes the error, not the candidates, so the answer is fixed).
	fake.SetHandler(func(llmtest.Request) llmtest.Step { return llmtest.IDs("pkg/cache.py:Cache.evict") })

	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := openBucket(t)
	dataDir := t.TempDir()
	ws, err := workers.Start(workers.Config{DataDir: dataDir, Bucket: b, LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake-selector"}, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, w := range ws {
			w.Stop()
		}
	})
	name := schema.RepoName("acme/cache")
	_, res := runFleet(ctx, t, c, "fleet-localize", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: r.Dir}}})
	if res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}

	localize := func() workflows.LocalizeResult {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.IndexQueue}, workflows.Localize,
			workflows.LocalizeInput{Repo: name, Issue: "expire entries should get the key from the cache store",
				Params: search.Params{Method: search.MethodSpIDER, Params: spider.Params{K: 3, C: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		var out workflows.LocalizeResult
		if err := run.Get(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := localize()
	if len(out.Failed) != 0 || out.Selector != "fake-selector" {
		t.Fatalf("result %+v", out)
	}
	var promoted bool
	for _, it := range out.Items {
		if it.Reason == spider.ReasonNeighbour && strings.HasSuffix(it.ID, "Cache.evict") && it.Selector == "fake-selector" {
			promoted = true
		}
	}
	if !promoted {
		t.Errorf("Cache.evict was not placed as a neighbour selected by the fake: %+v", out.Items)
	}
	// 429 (retried after its Retry-After), garbage, the repair request.
	if got := fake.Total(); got != 3 {
		t.Errorf("the fake saw %d requests, want 3 (429, garbage, repaired answer)", got)
	}
	again := localize()
	if fake.Total() != 3 || again.CachedCalls == 0 {
		t.Errorf("a re-run made %d new calls (%d cached), want 0 new: decisions are cached by prompt hash", fake.Total()-3, again.CachedCalls)
	}
	if len(again.Items) != len(out.Items) {
		t.Errorf("re-run gave %d items, first run %d", len(again.Items), len(out.Items))
	}
}
