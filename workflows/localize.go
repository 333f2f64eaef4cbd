package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// LLMQueue carries neighbour selection; its workers are rate-limited to what
// the LLM servers accept.
const LLMQueue = "locus-llm"

// llmActs is the LLM activity struct's method values.
var llmActs *activities.LLM

// LocalizeInput is the Localize workflow's argument.
type LocalizeInput struct {
	Repo   schema.RepoName `json:"repo"`
	Issue  string          `json:"issue"`
	Params search.Params   `json:"params"`
}

// LocalizeResult is the ranked list and what the query cost.
type LocalizeResult struct {
	search.Result
	// CachedCalls were answered from the decision cache (not billed again).
	CachedCalls int `json:"cached_calls"`
}

// Localize retrieves, expands, asks the selector about each center in
// parallel on the LLM queue (retrying 429/5xx/timeouts with backoff and the
// server's Retry-After; a center whose selection keeps failing keeps its
// place without neighbours), and assembles the result.
func Localize(ctx workflow.Context, in LocalizeInput) (LocalizeResult, error) {
	start := workflow.Now(ctx)
	retrCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	})
	var r search.Retrieval
	if err := workflow.ExecuteActivity(retrCtx, searchActs.Retrieve, activities.RetrieveInput{Repo: in.Repo, Issue: in.Issue, Params: in.Params}).Get(ctx, &r); err != nil {
		return LocalizeResult{}, err
	}
	out := LocalizeResult{Result: search.Result{Repo: r.Repo, Commit: r.Commit, Method: r.Method, Embedder: r.Embedder}}
	selected := map[string]spider.Selection{}
	if r.Expansion != nil {
		llmCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           LLMQueue,
			StartToCloseTimeout: 5 * time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
				MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
		})
		type pending struct {
			center string
			fut    workflow.Future
		}
		var futs []pending
		for _, c := range r.Expansion.Centers {
			if len(c.Candidates) == 0 {
				continue
			}
			ids := make([]string, len(c.Candidates))
			for i, cd := range c.Candidates {
				ids[i] = cd.ID
			}
			futs = append(futs, pending{c.ID, workflow.ExecuteActivity(llmCtx, llmActs.SelectNeighbors, activities.SelectInput{
				Repo: in.Repo, Commit: r.Commit, Issue: in.Issue, Center: c.ID, Candidates: ids})})
		}
		for _, p := range futs { // centers in rank order: deterministic
			var so activities.SelectOutput
			if err := p.fut.Get(ctx, &so); err != nil {
				out.Failed = append(out.Failed, p.center)
				continue
			}
			if out.Selector == "" {
				out.Selector = so.Selector
			}
			out.LLMCalls += so.Calls
			out.CachedCalls += so.CachedCalls
			out.PromptTokens += so.PromptTokens
			out.CompletionTokens += so.CompletionTokens
			out.SelectLatency += time.Duration(so.LatencyMs) * time.Millisecond
			selected[p.center] = spider.Selection{IDs: so.IDs, Selector: so.Selector}
		}
	}
	items, err := search.Finish(&r, selected)
	if err != nil {
		return LocalizeResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrTypeBadInput, err)
	}
	out.Items = items
	out.Latency = workflow.Now(ctx).Sub(start)
	return out, nil
}
