package activities

import (
	"context"
	"errors"
	"fmt"

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
//
// Failures the workflow tolerates (a center keeps its place without
// neighbours) are marked benign, so the SDK logs each failed attempt at
// DEBUG rather than ERROR: the workflow's result carries one warning instead.
func (a *LLM) SelectNeighbors(ctx context.Context, in SelectInput) (SelectOutput, error) {
	sel, err := search.SelectCenter(ctx, a.Deps, in.Repo, in.Commit, in.Issue, in.Center, in.Candidates)
	out := SelectOutput{IDs: sel.IDs, Selector: sel.Model, Calls: sel.Calls, CachedCalls: sel.CachedCalls,
		PromptTokens: sel.PromptTokens, CompletionTokens: sel.CompletionTokens, LatencyMs: sel.Latency.Milliseconds()}
	if err == nil {
		return out, nil
	}
	fail := SelectFailure{URL: llm.Endpoint(a.Deps.Selector), Attempt: activity.GetInfo(ctx).Attempt}
	var le *llm.Error
	if errors.As(err, &le) && le.URL != "" {
		fail.URL = le.URL
	}
	activity.GetLogger(ctx).Debug("neighbour selection failed", "center", in.Center, "url", fail.URL, "attempt", fail.Attempt, "error", err)
	opts := temporal.ApplicationErrorOptions{Cause: err, Details: []any{fail}, Category: temporal.ApplicationErrorCategoryBenign}
	switch {
	case ctx.Err() != nil:
		// This attempt was cancelled (the worker is stopping, or timed out):
		// the call did not complete, so another attempt must make it.
		return out, fmt.Errorf("select neighbours of %s: attempt cancelled: %w", in.Center, ctx.Err())
	case errors.Is(err, search.ErrNotIndexed):
		opts.NonRetryable, opts.Category = true, temporal.ApplicationErrorCategoryUnspecified
		return out, temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeBadInput, opts)
	case errors.Is(err, llm.ErrInvalidOutput):
		return out, temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeInvalidOutput, opts)
	case llm.IsRetryable(err):
		opts.NextRetryDelay = llm.RetryAfter(err)
		return out, temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeLLMRetryable, opts)
	case le != nil:
		// The server refused the request itself (4xx): retrying cannot help.
		opts.NonRetryable = true
		return out, temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeBadInput, opts)
	default:
		// Store errors: retry; they are not the LLM's, so they log as errors.
		opts.Category = temporal.ApplicationErrorCategoryUnspecified
		return out, temporal.NewApplicationErrorWithOptions(err.Error(), "SelectFailed", opts)
	}
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
