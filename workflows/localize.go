package workflows

import (
	"strings"
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
	// Commit, when set, must be (a prefix of at least 7 digits of) the commit
	// the published index is at.
	Commit string `json:"commit,omitempty"`
	// LLMRetry tunes the selection retries; zero values: 1 s initial
	// interval, doubling up to 1 min, 8 attempts.
	LLMRetry RetryOptions `json:"llm_retry,omitempty"`
}

// RetryOptions tune an activity retry policy.
type RetryOptions struct {
	InitialInterval time.Duration `json:"initial_interval,omitempty"`
	MaximumAttempts int32         `json:"maximum_attempts,omitempty"`
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
	if in.Commit != "" && (len(in.Commit) < 7 || !strings.HasPrefix(r.Commit, in.Commit)) {
		return LocalizeResult{}, temporal.NewNonRetryableApplicationError(
			"the index of "+string(in.Repo)+" is at "+r.Commit+", not "+in.Commit+": index that ref first (locus index "+string(in.Repo)+"=URL#REF)",
			activities.ErrTypeBadInput, nil)
	}
	out := LocalizeResult{Result: search.Result{Repo: r.Repo, Commit: r.Commit, Method: r.Method, Embedder: r.Embedder}}
	selected := map[string]spider.Selection{}
	if r.Expansion != nil {
		initial, attempts := in.LLMRetry.InitialInterval, in.LLMRetry.MaximumAttempts
		if initial <= 0 {
			initial = time.Second
		}
		if attempts <= 0 {
			attempts = 8
		}
		llmCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           LLMQueue,
			StartToCloseTimeout: 5 * time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: initial, BackoffCoefficient: 2, MaximumInterval: time.Minute,
				MaximumAttempts: attempts, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
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
