package e2e

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
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
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := cacheRepo(t)

	fake := llmtest.NewServer(t)
	// Every failure a real server shows, one per attempt, then garbage (which
	// the selector repairs within the attempt) and a good answer.
	fake.EnqueuePath("/v1/chat/completions", llmtest.RateLimited("1"), llmtest.ServerError(), llmtest.TruncatedBody(),
		llmtest.NonJSONBody(), llmtest.SlowReply(3*time.Second, `{"ids": []}`), llmtest.Garbage())
	// After the scripted failures, the fake picks evict (the repair request
	// quotes the error, not the candidates, so the answer is fixed).
	fake.SetHandler(func(llmtest.Request) llmtest.Step { return llmtest.IDs("pkg/cache.py:Cache.evict") })

	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	dataDir := t.TempDir()
	startWorkersWith(t, c, workers.Config{DataDir: dataDir, Bucket: b, LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake-selector&timeout=1s"})
	name := schema.RepoName("acme/cache")
	_, res := runFleet(ctx, t, c, "fleet-localize", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: r.Dir}}})
	if res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}

	var lastID string
	localize := func() workflows.LocalizeResult {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.IndexQueue}, workflows.Localize,
			workflows.LocalizeInput{Repo: name, Issue: "expire entries should get the key from the cache store",
				Params:   search.Params{Method: search.MethodSpIDER, Params: spider.Params{K: 3, C: 1}},
				LLMRetry: workflows.RetryOptions{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 8}})
		if err != nil {
			t.Fatal(err)
		}
		var out workflows.LocalizeResult
		if err := run.Get(ctx, &out); err != nil {
			t.Fatal(err)
		}
		lastID = run.GetID()
		return out
	}
	out := localize()
	if *update {
		writeHistory(ctx, t, c, "localize-llm-retried.json", lastID, "")
	}
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
	// 429 (retried after its Retry-After), 500, truncated, non-JSON, timeout:
	// five failed attempts; then garbage and the repaired answer.
	if got := fake.Total(); got != 7 {
		t.Errorf("the fake saw %d requests, want 7 (five failed attempts, garbage, repaired answer)", got)
	}
	// The garbage answer was not cached (only validated decisions are), so a
	// re-run asks the first prompt once more and gets the good answer; a
	// third run is answered from the cache alone.
	again := localize()
	if fake.Total() != 8 || len(again.Failed) != 0 {
		t.Errorf("a re-run made %d new calls (failed %v), want 1: the garbage answer must not be cached", fake.Total()-7, again.Failed)
	}
	third := localize()
	if *update {
		writeHistory(ctx, t, c, "localize-cached.json", lastID, "")
	}
	if fake.Total() != 8 || third.CachedCalls == 0 {
		t.Errorf("a third run made %d new calls (%d cached), want 0 new: decisions are cached by prompt hash", fake.Total()-8, third.CachedCalls)
	}
	if len(again.Items) != len(out.Items) || len(third.Items) != len(out.Items) {
		t.Errorf("re-runs gave %d and %d items, first run %d", len(again.Items), len(third.Items), len(out.Items))
	}
}

// TestLocalizeSurvivesWorkerLoss stops the workers while one center's
// selection is in flight and another's has completed, then starts new
// workers: the query finishes, and the completed selection is not asked again.
func TestLocalizeSurvivesWorkerLoss(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def evict(self, key):\n        self.store.pop(key)\n",
		"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items.clear()\n",
	})
	r.Commit("two classes")

	fake := llmtest.NewServer(t)
	var mu sync.Mutex
	asked := map[string]int{}
	release := make(chan struct{})
	inFlight := make(chan struct{}, 8)
	fake.SetHandler(func(req llmtest.Request) llmtest.Step {
		p := llmtest.ParseSelectionPrompt(req.Messages[len(req.Messages)-1].Content)
		mu.Lock()
		asked[p.Center]++
		first := asked[p.Center] == 1
		mu.Unlock()
		if strings.Contains(p.Center, "Queue") && first {
			inFlight <- struct{}{}
			<-release // held until the first workers are gone
		}
		return llmtest.IDs()
	})

	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	dataDir := t.TempDir()
	cfg := workers.Config{DataDir: dataDir, Bucket: b, LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake"}
	first, err := workers.Start(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	name := schema.RepoName("acme/two")
	if _, res := runFleet(ctx, t, c, "fleet-two", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: r.Dir}}}); res.Done != 1 {
		t.Fatalf("indexing: %+v", res)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.IndexQueue}, workflows.Localize,
		workflows.LocalizeInput{Repo: name, Issue: "cache get evict queue push drain items store",
			Params: search.Params{Method: search.MethodSpISR, Params: spider.Params{K: 4, C: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-inFlight:
	case <-ctx.Done():
		t.Fatal("the Queue selection never reached the LLM")
	}
	time.Sleep(300 * time.Millisecond) // let the other center's selection complete
	for _, w := range first {
		w.Stop()
	}
	close(release)
	second, err := workers.Start(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, w := range second {
			w.Stop()
		}
	})
	var out workflows.LocalizeResult
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) != 0 || len(out.Items) == 0 {
		t.Fatalf("result after the restart: %+v", out)
	}
	mu.Lock()
	defer mu.Unlock()
	for center, n := range asked {
		want := 1
		if strings.Contains(center, "Queue") {
			want = 2 // the interrupted call, then the retry on the new workers
		}
		if n != want {
			t.Errorf("center %s asked %d times, want %d", center, n, want)
		}
	}
	if len(asked) != 2 {
		t.Errorf("centers asked: %v, want two", asked)
	}
}

// levelCounter counts the records at or above ERROR that pass through it.
type levelCounter struct {
	slog.Handler
	errors *atomic.Int64
}

func (h levelCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.errors.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h levelCounter) WithAttrs(as []slog.Attr) slog.Handler {
	return levelCounter{h.Handler.WithAttrs(as), h.errors}
}

func (h levelCounter) WithGroup(name string) slog.Handler {
	return levelCounter{h.Handler.WithGroup(name), h.errors}
}

// TestLocalizeLLMUnavailable runs Localize against an LLM that answers only
// 500s, or only garbage: retries are bounded, each failed attempt is logged
// below ERROR, the result names the centers left without neighbours with one
// warning (the server's URL, the attempts, the last error), and once the
// server is healthy the next query asks it again (nothing bad was cached).
func TestLocalizeLLMUnavailable(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := cacheRepo(t)
	fake := llmtest.NewServer(t)
	srv := startServer(t, t.TempDir())
	var errorLogs atomic.Int64
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(levelCounter{testlog.New(t, slog.LevelDebug).Handler(), &errorLogs}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := blobtest.Bucket(t)
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b,
		LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake-selector&timeout=2s"})
	name := schema.RepoName("acme/cache")
	if _, res := runFleet(ctx, t, c, "fleet-llm-down", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: r.Dir}}}); res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}
	var lastID string
	localize := func() workflows.LocalizeResult {
		t.Helper()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.IndexQueue}, workflows.Localize,
			workflows.LocalizeInput{Repo: name, Issue: "expire entries should evict each key from the cache store",
				Params:   search.Params{Method: search.MethodSpIDER, Params: spider.Params{K: 3, C: 2}},
				LLMRetry: workflows.RetryOptions{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3}})
		if err != nil {
			t.Fatal(err)
		}
		var out workflows.LocalizeResult
		if err := run.Get(ctx, &out); err != nil {
			t.Fatalf("a dead selector must not fail the query: %v", err)
		}
		lastID = run.GetID()
		return out
	}
	endpoint := fake.URL + llmtest.PathOpenAI
	for _, tc := range []struct {
		name        string
		history     string // recorded with -update for the replay test
		step        llmtest.Step
		perAttempt  int // requests one attempt makes
		errContains string
	}{
		{name: "500", history: "localize-selector-unavailable.json", step: llmtest.ServerError(), perAttempt: 1, errContains: "HTTP 500"},
		{name: "garbage", step: llmtest.Garbage(), perAttempt: 2, errContains: "invalid model output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake.SetHandler(func(llmtest.Request) llmtest.Step { return tc.step })
			before, errsBefore := fake.Total(), errorLogs.Load()
			out := localize()
			if *update && tc.history != "" {
				writeHistory(ctx, t, c, tc.history, lastID, "")
			}
			t.Logf("warning: %s", out.Warning)
			if len(out.SelectorUnavailable) != 2 || len(out.Failed) != 2 || len(out.Items) == 0 {
				t.Fatalf("want both centers unavailable and items kept: %+v", out)
			}
			for _, u := range out.SelectorUnavailable {
				if u.Attempts != 3 || u.URL != endpoint || !strings.Contains(u.Error, tc.errContains) {
					t.Errorf("unavailable center %+v, want 3 attempts at %s with %q", u, endpoint, tc.errContains)
				}
			}
			for _, want := range []string{"LLM at " + endpoint + " unavailable after 3 attempts over ", tc.errContains,
				"results for centers " + out.SelectorUnavailable[0].Center + ", " + out.SelectorUnavailable[1].Center + " have no selected neighbours"} {
				if !strings.Contains(out.Warning, want) {
					t.Errorf("warning %q lacks %q", out.Warning, want)
				}
			}
			if got, want := fake.Total()-before, 2*3*tc.perAttempt; got != want {
				t.Errorf("the fake saw %d requests, want %d (2 centers × 3 attempts × %d)", got, want, tc.perAttempt)
			}
			if n := errorLogs.Load() - errsBefore; n != 0 {
				t.Errorf("%d ERROR log records for an expected, handled LLM outage; want 0", n)
			}
		})
	}
	// Healthy again: the next query asks the server and succeeds.
	fake.SetHandler(func(llmtest.Request) llmtest.Step { return llmtest.IDs("pkg/cache.py:Cache.evict") })
	before := fake.Total()
	out := localize()
	if len(out.SelectorUnavailable) != 0 || out.Warning != "" || fake.Total() == before {
		t.Errorf("after recovery: %d requests, result %+v", fake.Total()-before, out)
	}
}

// cacheRepo is a one-commit repository with a Cache class whose methods call
// each other, so SpIDER has centers with neighbours to select.
func cacheRepo(t *testing.T) *gitfixture.Repo {
	t.Helper()
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
	return r
}
