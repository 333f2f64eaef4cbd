package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
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
	case errors.Is(err, search.ErrNotIndexed), errors.Is(err, search.ErrBadQuery), errors.Is(err, search.ErrNoGraph):
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
// reads the settled centers from the error's details. It heartbeats while
// it runs: an attempt lost with its worker is retried after
// HeartbeatTimeout, and the retry counts the calls the lost attempt had
// answered, found in the decision cache, as this step's (llm.WithOwner).
func (a *LLM) SelectCenters(ctx context.Context, in SelectCentersInput) (SelectCentersOutput, error) {
	ctx = a.owned(ctx, "")
	var prior SelectCentersProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prior); err != nil {
			prior = SelectCentersProgress{} // unreadable: ask again (the decision cache keeps it unbilled)
		}
	}
	setDetails, stop := heartbeatFrom(ctx, prior)
	defer stop()
	t := a.selectIssue(ctx, in, prior)
	if t.err != nil {
		return SelectCentersOutput{}, t.err
	}
	if t.retry == nil {
		return t.out, nil
	}
	setDetails(t.progress)
	return SelectCentersOutput{}, a.retryError(ctx, t.retry, t.wait, t.progress)
}

// owned is ctx naming this activity attempt's step (plus suffix) as the
// owner of the LLM calls made through it: decisions an earlier attempt of
// this activity paid for then count for the issue when a retry finds them
// in the decision cache.
func (a *LLM) owned(ctx context.Context, suffix string) context.Context {
	if !activity.IsActivity(ctx) {
		return ctx
	}
	info := activity.GetInfo(ctx)
	return llm.WithOwner(ctx, info.WorkflowExecution.ID+"/"+info.WorkflowExecution.RunID+"/"+info.ActivityID+suffix)
}

// retryError is the error an attempt that left centers failing returns:
// the first failure's (retryable unless selectError says it is not), after
// the largest Retry-After, with the settled centers (progress, a
// SelectCentersProgress or a SelectBatchProgress; for Rerank, the usage so
// far) in its details after the SelectFailure.
func (a *LLM) retryError(ctx context.Context, retry error, wait time.Duration, progress any) error {
	fail := a.failure(ctx, retry)
	e := selectError(retry, fail)
	var app *temporal.ApplicationError
	if !errors.As(e, &app) {
		return e
	}
	return temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(), temporal.ApplicationErrorOptions{
		Cause: retry, Details: []any{fail, progress}, NextRetryDelay: wait, Category: app.Category(), NonRetryable: app.NonRetryable()})
}

// issueTry is one issue's selection in one attempt: its output when every
// center is settled, else the progress to retry from and the first
// retryable error (retry) with the largest Retry-After (wait); err is an
// error that fails the attempt as it is (cancelled, or a selection that
// could not start).
type issueTry struct {
	out      SelectCentersOutput
	progress SelectCentersProgress
	retry    error
	wait     time.Duration
	err      error
	cause    error // err before selectError made it an activity error
}

// selectIssue asks about the centers of one issue that prior has not
// settled (see SelectCenters).
func (a *LLM) selectIssue(ctx context.Context, in SelectCentersInput, prior SelectCentersProgress) issueTry {
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
			return issueTry{err: fmt.Errorf("select neighbours in %s: attempt cancelled: %w", in.Repo, ctx.Err())}
		}
		return issueTry{err: selectError(err, fail), cause: err}
	}
	if ctx.Err() != nil {
		// This attempt was cancelled (the worker is stopping, or timed out):
		// calls cut short did not complete, so another attempt must make
		// them; what completed is in the decision cache.
		return issueTry{err: fmt.Errorf("select neighbours in %s: attempt cancelled: %w", in.Repo, ctx.Err())}
	}
	var t issueTry
	for _, o := range sels.Outcomes {
		if c, ok := settled[o.Center]; ok {
			t.out.Centers = append(t.out.Centers, c)
			t.progress.Done = append(t.progress.Done, c)
			continue
		}
		c := CenterResult{Center: o.Center, SelectOutput: selectOutput(o.Selection), Skipped: o.Skipped}
		if o.Err == nil {
			t.out.Centers = append(t.out.Centers, c)
			t.progress.Done = append(t.progress.Done, c)
			continue
		}
		fail := a.failure(ctx, o.Err)
		c.Error, c.URL, c.Attempt = o.Err.Error(), fail.URL, fail.Attempt
		activity.GetLogger(ctx).Debug("neighbour selection failed", "center", o.Center, "url", fail.URL, "attempt", fail.Attempt, "error", o.Err)
		e := selectError(o.Err, fail)
		var app *temporal.ApplicationError
		if errors.As(e, &app) && app.NonRetryable() {
			t.out.Centers = append(t.out.Centers, c) // refused for good: settled
			t.progress.Done = append(t.progress.Done, c)
			continue
		}
		t.progress.Failed = append(t.progress.Failed, c)
		if t.retry == nil {
			t.retry = o.Err
		}
		t.wait = max(t.wait, llm.RetryAfter(o.Err))
	}
	if t.retry != nil {
		t.out = SelectCentersOutput{}
	}
	return t
}

// SelectBatchInput is SelectBatch's argument: the issues of one backlog
// batch, each with its centers.
type SelectBatchInput struct {
	Issues []SelectCentersInput `json:"issues"`
}

// SelectBatchOutput is every issue's SelectCentersOutput, in the input's order.
type SelectBatchOutput struct {
	Issues []SelectCentersOutput `json:"issues"`
}

// SelectBatchProgress is SelectCentersProgress for every issue of a batch,
// in the input's order.
type SelectBatchProgress struct {
	Issues []SelectCentersProgress `json:"issues"`
}

// SelectBatch is SelectCenters for the issues of a backlog batch, asked
// in parallel (llm.Limit on the worker's selector bounds the calls): one
// activity for a batch instead of one per issue. Retries work as in
// SelectCenters, per issue: an attempt that leaves some center failing
// retryably fails after the largest Retry-After with every issue's settled
// centers as heartbeat details and error details (SelectBatchProgress),
// and the next attempt asks only the centers still open. An issue whose
// selection fails as a whole (a store error, say) has its centers failed
// with that error: settled when it is not retryable, retried otherwise.
// It heartbeats as SelectCenters does.
func (a *LLM) SelectBatch(ctx context.Context, in SelectBatchInput) (SelectBatchOutput, error) {
	var prior SelectBatchProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prior); err != nil || len(prior.Issues) != len(in.Issues) {
			prior = SelectBatchProgress{} // unreadable: ask again (the decision cache keeps it unbilled)
		}
	}
	setDetails, stop := heartbeatFrom(ctx, prior)
	defer stop()
	tries := make([]issueTry, len(in.Issues))
	var wg sync.WaitGroup
	for i, is := range in.Issues {
		var p SelectCentersProgress
		if prior.Issues != nil {
			p = prior.Issues[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tries[i] = a.selectIssue(a.owned(ctx, "/"+strconv.Itoa(i)), is, p)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return SelectBatchOutput{}, fmt.Errorf("select neighbours of %d issues: attempt cancelled: %w", len(in.Issues), ctx.Err())
	}
	out := SelectBatchOutput{Issues: make([]SelectCentersOutput, len(in.Issues))}
	progress := SelectBatchProgress{Issues: make([]SelectCentersProgress, len(in.Issues))}
	var retry error
	var wait time.Duration
	for i, t := range tries {
		if t.err != nil {
			t = wholeIssueFailed(in.Issues[i], t, a.failure(ctx, t.cause))
		}
		out.Issues[i], progress.Issues[i] = t.out, t.progress
		if t.retry != nil && retry == nil {
			retry = t.retry
		}
		wait = max(wait, t.wait)
	}
	if retry == nil {
		return out, nil
	}
	setDetails(progress)
	return SelectBatchOutput{}, a.retryError(ctx, retry, wait, progress)
}

// wholeIssueFailed is the try of an issue whose selection failed as a
// whole (t.err, from t.cause): every center failed with it, settled unless
// it is retryable.
func wholeIssueFailed(in SelectCentersInput, t issueTry, fail SelectFailure) issueTry {
	var app *temporal.ApplicationError
	permanent := errors.As(t.err, &app) && app.NonRetryable()
	var out issueTry
	for _, c := range in.Centers {
		r := CenterResult{Center: c.Center, Error: t.cause.Error(), URL: fail.URL, Attempt: fail.Attempt}
		if permanent {
			out.out.Centers = append(out.out.Centers, r)
			out.progress.Done = append(out.progress.Done, r)
		} else {
			out.progress.Failed = append(out.progress.Failed, r)
		}
	}
	if !permanent {
		out.retry = t.cause
	}
	return out
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

// Retrieve ranks and expands (steps 1–3 of SpIDER), heartbeating.
func (a *Search) Retrieve(ctx context.Context, in RetrieveInput) (search.Retrieval, error) {
	stop := Heartbeat(ctx, nil)
	defer stop()
	return a.retrieve(ctx, in)
}

// retrieve is Retrieve without the heartbeat, for RetrieveBatch.
func (a *Search) retrieve(ctx context.Context, in RetrieveInput) (search.Retrieval, error) {
	if err := in.Params.Validate(); err != nil {
		return search.Retrieval{}, badInput(fmt.Errorf("retrieve %s: %w", in.Repo, err))
	}
	r, err := search.RetrieveAt(ctx, a.Deps, in.Repo, in.Snapshot, in.Issue, in.Params)
	if err != nil {
		if errors.Is(err, search.ErrNotIndexed) || errors.Is(err, search.ErrBadQuery) || errors.Is(err, search.ErrNoGraph) {
			return search.Retrieval{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
		return search.Retrieval{}, damaged(err) // a damaged index is rebuilt by index, not by retrying
	}
	return *r, nil
}

// RetrieveBatchInput is RetrieveBatch's argument: the issues of one
// backlog batch.
type RetrieveBatchInput struct {
	Issues []RetrieveInput `json:"issues"`
}

// RetrieveOutcome is one issue's Retrieve answer in a batch: the retrieval,
// or why it cannot be made (Error, an error retrying cannot help).
type RetrieveOutcome struct {
	Retrieval *search.Retrieval `json:"retrieval,omitempty"`
	Error     string            `json:"error,omitempty"`
}

// RetrieveBatch is Retrieve for the issues of a backlog batch, one after
// another: one activity for a batch instead of one per issue. An issue
// Retrieve refuses for good (bad input, not indexed, a damaged index) gets
// its error in its outcome and the others go on; any other error fails the
// attempt, to be retried as a whole.
func (a *Search) RetrieveBatch(ctx context.Context, in RetrieveBatchInput) ([]RetrieveOutcome, error) {
	out := make([]RetrieveOutcome, len(in.Issues))
	var done atomic.Int64
	stop := Heartbeat(ctx, func() any { return done.Load() })
	defer stop()
	for i, is := range in.Issues {
		r, err := a.retrieve(ctx, is)
		var app *temporal.ApplicationError
		switch {
		case err == nil:
			out[i].Retrieval = &r
		case ctx.Err() != nil:
			return nil, fmt.Errorf("retrieve %d issues: attempt cancelled: %w", len(in.Issues), ctx.Err())
		case errors.As(err, &app) && app.NonRetryable():
			out[i].Error = app.Message()
		default:
			return nil, err
		}
		done.Store(int64(i + 1))
	}
	return out, nil
}

// Rerank asks the reranker to order one result's first items (the LLM
// rerank a query asked for with search.Params.Rerank). An unusable answer,
// 429, 5xx or a timeout fails the attempt retryably (after the server's
// Retry-After); a 4xx, a worker without an LLM or ids that are not
// functions of the commit fail for good. The usage of failed attempts
// carries to the next attempt as heartbeat details, and to the workflow in
// the final error's details after the SelectFailure, so that every call a
// rerank paid for is reported once.
func (a *LLM) Rerank(ctx context.Context, in search.RerankRequest) (llm.Selection, error) {
	ctx = a.owned(ctx, "")
	var prior llm.Selection
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prior); err != nil {
			prior = llm.Selection{}
		}
	}
	setDetails, stop := heartbeatFrom(ctx, prior)
	defer stop()
	sel, err := search.Rerank(ctx, a.Deps, in)
	sel.Calls += prior.Calls
	sel.CachedCalls += prior.CachedCalls
	sel.PromptTokens += prior.PromptTokens
	sel.CompletionTokens += prior.CompletionTokens
	sel.Latency += prior.Latency
	if err == nil {
		return sel, nil
	}
	if ctx.Err() != nil {
		return llm.Selection{}, fmt.Errorf("rerank in %s: attempt cancelled: %w", in.Repo, ctx.Err())
	}
	activity.GetLogger(ctx).Debug("rerank failed", "repo", in.Repo, "attempt", activity.GetInfo(ctx).Attempt, "error", err)
	usage := llm.Selection{Model: sel.Model, Calls: sel.Calls, CachedCalls: sel.CachedCalls, PromptTokens: sel.PromptTokens,
		CompletionTokens: sel.CompletionTokens, Latency: sel.Latency}
	setDetails(usage)
	return llm.Selection{}, a.retryError(ctx, err, llm.RetryAfter(err), usage)
}

// SummarizeInput is Summarize's argument.
type SummarizeInput struct {
	Repo  schema.RepoName  `json:"repo"`
	Graph schema.GraphInfo `json:"graph"`
}

// Summarize has the summarizer write a summary of every function of the
// graph whose code has none stored (search.SummarizeFunctions), heartbeating
// "done/total functions". The summaries are stored as they come, so a
// retry (after 429, 5xx, a timeout or a lost worker) asks only for the
// rest; a worker without an LLM fails for good.
func (a *LLM) Summarize(ctx context.Context, in SummarizeInput) (schema.SummarizeResult, error) {
	ctx = a.owned(ctx, "")
	var done, total atomic.Int64
	stop := Heartbeat(ctx, func() any { return fmt.Sprintf("%d/%d functions", done.Load(), total.Load()) })
	defer stop()
	res, err := search.SummarizeFunctions(ctx, a.Deps, in.Repo, in.Graph, func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) })
	if err == nil {
		return *res, nil
	}
	if ctx.Err() != nil {
		return schema.SummarizeResult{}, fmt.Errorf("summarize %s: attempt cancelled: %w", in.Repo, ctx.Err())
	}
	var usage schema.SummarizeResult
	if res != nil {
		usage = *res
	}
	return schema.SummarizeResult{}, a.retryError(ctx, err, llm.RetryAfter(err), usage)
}
