package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// TestIndexSummaries indexes with function summaries against a fake LLM
// that is down (503) for its first calls: the Summarize activity retries
// and asks only for what the failed attempt had not stored, the fleet's
// result reports what was summarized, and a query finds a
// function by a word that only its summary holds. Indexing again asks
// nothing: summaries are stored by content hash.
func TestIndexSummaries(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	repo := backlogRepo(t)
	fake := llmtest.NewServer(t)
	var calls atomic.Int64
	fake.SetHandler(func(r llmtest.Request) llmtest.Step {
		if calls.Add(1) <= 2 {
			return llmtest.Unavailable("1")
		}
		if strings.Contains(r.Messages[0].Content, "## Function pkg/util.py:format_item\n") {
			return llmtest.Reply(`{"summary": "Renders an item as a human readable label."}`)
		}
		return llmtest.Reply(`{"summary": "Part of the widgets package."}`)
	})
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b,
		LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake-llm&timeout=2s"})
	name := schema.RepoName("acme/widgets")
	in := schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: repo.Dir}}, Options: schema.FleetOptions{Index: schema.IndexOptions{Summaries: true}}}
	_, res := runFleet(ctx, t, c, "fleet-summaries", in)
	if res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}
	sum := readSummary(ctx, t, b, res, "fleet-summaries")
	s := sum.Results[0].Summaries
	// The last attempt reports its own work: what the first stored before
	// the 503 stopped it is Stored. Every function was asked once, plus the
	// two calls that failed.
	if s == nil || s.Functions != 8 || s.Stored+s.Summarized != 8 || s.Failed != 0 || s.Error != "" || s.Model != "fake-llm" || calls.Load() != 10 {
		t.Fatalf("summaries %+v after %d calls", s, calls.Load())
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.IndexQueue}, workflows.Localize,
		workflows.LocalizeInput{Repo: name, Issue: "the human readable label is wrong",
			Params: search.Params{Method: search.MethodSR, Params: spider.Params{K: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	var out workflows.LocalizeResult
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Items) == 0 || out.Items[0].ID != "pkg/util.py:format_item" {
		t.Errorf("items %+v, want format_item first (its summary holds the words)", out.Items)
	}
	before := calls.Load()
	_, res = runFleet(ctx, t, c, "fleet-summaries-again", in)
	again := readSummary(ctx, t, b, res, "fleet-summaries-again").Results[0].Summaries
	if res.Done != 1 || again == nil || again.Stored != 8 || again.Summarized != 0 || calls.Load() != before {
		t.Errorf("re-index: %+v, %d new calls", again, calls.Load()-before)
	}
}
