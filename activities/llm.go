package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/schema"
)

// Error types of LLM failures, for retry policies.
const (
	// ErrTypeLLMRetryable: 429, 5xx, timeouts; retried with the server's Retry-After.
	ErrTypeLLMRetryable = "LLMRetryable"
	// ErrTypeInvalidOutput: unusable answers after one repair; each counts as a failed attempt.
	ErrTypeInvalidOutput = "InvalidOutput"
)

// LLM runs neighbour selection. Its Deps.Selector should wrap its chat in the
// store-backed cache, so retries and replays are not billed twice.
type LLM struct {
	Deps search.Deps
}

// SelectInput is SelectNeighbors's argument: ids only, the code is read from the store.
type SelectInput struct {
	Repo       schema.RepoName `json:"repo"`
	Commit     string          `json:"commit"`
	Issue      string          `json:"issue"`
	Center     string          `json:"center"`
	Candidates []string        `json:"candidates"`
}

// SelectOutput is what one center's selection produced.
type SelectOutput struct {
	IDs              []string `json:"ids"`
	Selector         string   `json:"selector"`
	Calls            int      `json:"calls"`
	CachedCalls      int      `json:"cached_calls"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	LatencyMs        int64    `json:"latency_ms"`
}

// SelectFailure is attached as details to every error SelectNeighbors
// returns for a failed selection, so the workflow can tell the user which
// server failed and how often it was tried.
type SelectFailure struct {
	// URL is the LLM endpoint, "" for selectors without one.
	URL string `json:"url,omitempty"`
	// Attempt is this activity attempt, from 1.
	Attempt int32 `json:"attempt"`
}

// SelectNeighbors asks the selector which candidates of one center to promote.
// Localize histories recorded before SelectCenters schedule it, one per center.
//
// Failures the workflow tolerates (a center keeps its place without
// neighbours) are marked benign, so the SDK logs each failed attempt at
// DEBUG rather than ERROR: the workflow's result carries one warning instead.
func (a *LLM) SelectNeighbors(ctx context.Context, in SelectInput) (SelectOutput, error) {
	sel, err := search.SelectCenter(ctx, a.Deps, in.Repo, in.Commit, in.Issue, in.Center, in.Candidates)
	out := selectOutput(sel)
	if err == nil {
		return out, nil
	}
	fail := a.failure(ctx, err)
	activity.GetLogger(ctx).Debug("neighbour selection failed", "center", in.Center, "url", fail.URL, "attempt", fail.Attempt, "error", err)
	if ctx.Err() != nil {
		// This attempt was cancelled (the worker is stopping, or timed out):
		// the call did not complete, so another attempt must make it.
		return out, fmt.Errorf("select neighbours of %s: attempt cancelled: %w", in.Center, ctx.Err())
	}
	return out, selectError(err, fail)
}

func selectOutput(sel llm.Selection) SelectOutput {
	return SelectOutput{IDs: sel.IDs, Selector: sel.Model, Calls: sel.Calls, CachedCalls: sel.CachedCalls,
		PromptTokens: sel.PromptTokens, CompletionTokens: sel.CompletionTokens, LatencyMs: sel.Latency.Milliseconds()}
}

// failure names the server a selection error came from and this attempt.
func (a *LLM) failure(ctx context.Context, err error) SelectFailure {
	fail := SelectFailure{URL: llm.Endpoint(a.Deps.Selector), Attempt: activity.GetInfo(ctx).Attempt}
	var le *llm.Error
	if errors.As(err, &le) && le.URL != "" {
		fail.URL = le.URL
	}
	return fail
}

// selectError is the activity error for a failed selection, with fail as
// its details: retryable (after the server's Retry-After) for 429, 5xx,
// timeouts, unusable answers and store errors; not for 4xx or an index
// that is not there.
func selectError(err error, fail SelectFailure) error {
	opts := temporal.ApplicationErrorOptions{Cause: err, Details: []any{fail}, Category: temporal.ApplicationErrorCategoryBenign}
	var le *llm.Error
	switch {
	case errors.Is(err, search.ErrNotIndexed):
		opts.NonRetryable, opts.Category = true, temporal.ApplicationErrorCategoryUnspecified
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeBadInput, opts)
	case errors.Is(err, llm.ErrInvalidOutput):
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeInvalidOutput, opts)
	case llm.IsRetryable(err):
		opts.NextRetryDelay = llm.RetryAfter(err)
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeLLMRetryable, opts)
	case errors.As(err, &le):
		// The server refused the request itself (4xx): retrying cannot help.
		opts.NonRetryable = true
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeBadInput, opts)
	default:
		// Store errors: retry; they are not the LLM's, so they log as errors.
		opts.Category = temporal.ApplicationErrorCategoryUnspecified
		return temporal.NewApplicationErrorWithOptions(err.Error(), "SelectFailed", opts)
	}
}

// SelectCentersInput is SelectCenters's argument: one issue's centers, ids
// only (the code is read from the store).
type SelectCentersInput struct {
	Repo    schema.RepoName        `json:"repo"`
	Commit  string                 `json:"commit"`
	Issue   string                 `json:"issue"`
	Centers []search.CenterRequest `json:"centers"`
	// MaxTokens is the issue's selector token limit; 0: none (see
	// search.SelectRequest).
	MaxTokens int `json:"max_tokens,omitempty"`
}

// CenterResult is one center's settled selection.
type CenterResult struct {
	Center string `json:"center"`
	SelectOutput
	// Skipped: not asked, the issue's token limit was spent.
	Skipped bool `json:"skipped,omitempty"`
	// Error is why the selection failed for good (the server refused it);
	// "" on success. URL and Attempt say where and when.
	Error   string `json:"error,omitempty"`
	URL     string `json:"url,omitempty"`
	Attempt int32  `json:"attempt,omitempty"`
}

// SelectCentersOutput is every center's result, in the input's order.
type SelectCentersOutput struct {
	Centers []CenterResult `json:"centers"`
}

// SelectCentersProgress is what an attempt of SelectCenters that must be
// retried leaves for the next one (as heartbeat details) and for the
// workflow (in its error's details, after SelectFailure): the centers
// settled so far, so that a retry asks only the others and their usage is
// reported once.
type SelectCentersProgress struct {
	Done []CenterResult `json:"done"`
	// Failed are the centers still failing, with this attempt's error.
	Failed []CenterResult `json:"failed"`
}

// SelectCenters asks the selector about every center of one issue (one
// activity per issue instead of one per center: a Localize is then two
// activities whatever its centers). Centers are asked in parallel, or one
// after another with the issue's token limit, which leaves the centers
// after it is spent unasked (Skipped).
//
// A center the server refuses (4xx) is settled as failed. While some
// center's failure may pass (429, 5xx, timeouts, unusable answers, store
// errors), the attempt fails retryably after the largest Retry-After, with
// the settled centers as heartbeat details: the next attempt asks only the
// others, so nothing already answered is asked or billed twice even
// without the decision cache. When the retries are spent, the workflow
// reads the settled centers from the error's details.
func (a *LLM) SelectCenters(ctx context.Context, in SelectCentersInput) (SelectCentersOutput, error) {
	if activity.IsActivity(ctx) {
		// Decisions an earlier attempt of this activity paid for count for
		// this issue when the retry finds them in the decision cache.
		info := activity.GetInfo(ctx)
		ctx = llm.WithOwner(ctx, info.WorkflowExecution.ID+"/"+info.WorkflowExecution.RunID+"/"+info.ActivityID)
	}
	var prior SelectCentersProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prior); err != nil {
			prior = SelectCentersProgress{} // unreadable: ask again (the decision cache keeps it unbilled)
		}
	}
	done := make(map[string]search.CenterOutcome, len(prior.Done))
	settled := make(map[string]CenterResult, len(prior.Done))
	for _, c := range prior.Done {
		settled[c.Center] = c
		done[c.Center] = search.CenterOutcome{Center: c.Center, Skipped: c.Skipped, Selection: llm.Selection{
			IDs: c.IDs, Model: c.Selector, Calls: c.Calls, CachedCalls: c.CachedCalls, PromptTokens: c.PromptTokens,
			CompletionTokens: c.CompletionTokens, Latency: time.Duration(c.LatencyMs) * time.Millisecond}}
		if c.Error != "" {
			done[c.Center] = search.CenterOutcome{Center: c.Center, Selection: done[c.Center].Selection, Err: errors.New(c.Error)}
		}
	}
	sels, err := search.SelectCenters(ctx, a.Deps, search.SelectRequest{Repo: in.Repo, Commit: in.Commit, Issue: in.Issue,
		Centers: in.Centers, MaxTokens: in.MaxTokens, Done: done})
	if err != nil {
		fail := a.failure(ctx, err)
		if ctx.Err() != nil {
			return SelectCentersOutput{}, fmt.Errorf("select neighbours in %s: attempt cancelled: %w", in.Repo, ctx.Err())
		}
		return SelectCentersOutput{}, selectError(err, fail)
	}
	if ctx.Err() != nil {
		// This attempt was cancelled (the worker is stopping, or timed out):
		// calls cut short did not complete, so another attempt must make
		// them; what completed is in the decision cache.
		return SelectCentersOutput{}, fmt.Errorf("select neighbours in %s: attempt cancelled: %w", in.Repo, ctx.Err())
	}
	var out SelectCentersOutput
	var progress SelectCentersProgress
	var retry error
	var wait time.Duration
	for _, o := range sels.Outcomes {
		if c, ok := settled[o.Center]; ok {
			out.Centers = append(out.Centers, c)
			progress.Done = append(progress.Done, c)
			continue
		}
		c := CenterResult{Center: o.Center, SelectOutput: selectOutput(o.Selection), Skipped: o.Skipped}
		if o.Err == nil {
			out.Centers = append(out.Centers, c)
			progress.Done = append(progress.Done, c)
			continue
		}
		fail := a.failure(ctx, o.Err)
		c.Error, c.URL, c.Attempt = o.Err.Error(), fail.URL, fail.Attempt
		activity.GetLogger(ctx).Debug("neighbour selection failed", "center", o.Center, "url", fail.URL, "attempt", fail.Attempt, "error", o.Err)
		e := selectError(o.Err, fail)
		var app *temporal.ApplicationError
		if errors.As(e, &app) && app.NonRetryable() {
			out.Centers = append(out.Centers, c) // refused for good: settled
			progress.Done = append(progress.Done, c)
			continue
		}
		progress.Failed = append(progress.Failed, c)
		if retry == nil {
			retry = o.Err
		}
		wait = max(wait, llm.RetryAfter(o.Err))
	}
	if retry == nil {
		return out, nil
	}
	// The first heartbeat of an attempt is sent at once, not batched.
	activity.RecordHeartbeat(ctx, progress)
	fail := a.failure(ctx, retry)
	e := selectError(retry, fail)
	var app *temporal.ApplicationError
	if !errors.As(e, &app) {
		return SelectCentersOutput{}, e
	}
	return SelectCentersOutput{}, temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(), temporal.ApplicationErrorOptions{
		Cause: retry, Details: []any{fail, progress}, NextRetryDelay: wait, Category: app.Category()})
}

// RetrieveInput is Retrieve's argument.
type RetrieveInput struct {
	Repo   schema.RepoName `json:"repo"`
	Issue  string          `json:"issue"`
	Params search.Params   `json:"params"`
	// Snapshot, when set, is the full commit id of a snapshot built by
	// EnsureSnapshot to rank against instead of the indexed head.
	Snapshot string `json:"snapshot,omitempty"`
}

// Retrieve ranks and expands (steps 1–3 of SpIDER).
func (a *Search) Retrieve(ctx context.Context, in RetrieveInput) (search.Retrieval, error) {
	if err := in.Params.Validate(); err != nil {
		return search.Retrieval{}, badInput(fmt.Errorf("retrieve %s: %w", in.Repo, err))
	}
	r, err := search.RetrieveAt(ctx, a.Deps, in.Repo, in.Snapshot, in.Issue, in.Params)
	if err != nil {
		if errors.Is(err, search.ErrNotIndexed) || errors.Is(err, search.ErrBadQuery) {
			return search.Retrieval{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
		return search.Retrieval{}, damaged(err) // a damaged index is rebuilt by index, not by retrying
	}
	return *r, nil
}
