package workflows

import (
	"errors"
	"fmt"
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
	// Snapshot, when set, is the full id of a commit whose snapshot
	// (built by EnsureSnapshot) is ranked instead of the indexed head.
	Snapshot string `json:"snapshot,omitempty"`
	// LLMRetry tunes the selection retries; zero values: 1 s initial
	// interval, doubling up to 10 s, 5 attempts, at most 2 min per center
	// (the issue's one selection activity gets 2 min times its centers).
	LLMRetry RetryOptions `json:"llm_retry,omitempty"`
	// NoSelector skips neighbour selection and the rerank (no LLM step):
	// the centers keep their places without neighbours. LocalizeBacklog
	// sets it once its token budget is spent.
	NoSelector bool `json:"no_selector,omitempty"`
	// MaxIssueTokens is this issue's selector token limit (prompt +
	// completion); 0: none. With a limit the centers are asked one after
	// another, and those left when it is spent keep their places without
	// neighbours, listed in the result's BudgetSkipped.
	MaxIssueTokens int `json:"max_issue_tokens,omitempty"`
}

// RetryOptions tune an activity retry policy.
type RetryOptions struct {
	InitialInterval time.Duration `json:"initial_interval,omitempty"`
	MaximumAttempts int32         `json:"maximum_attempts,omitempty"`
	MaximumInterval time.Duration `json:"maximum_interval,omitempty"`
	// Total bounds all attempts together, waits included (the activity's
	// schedule-to-close timeout), so a dead server costs a known time.
	Total time.Duration `json:"total,omitempty"`
}

// Selection retry defaults: a server down for good costs at most about
// 1+2+4+8 s of waiting plus the calls themselves, bounded by 2 min.
const (
	defaultLLMInitialInterval = time.Second
	defaultLLMMaximumInterval = 10 * time.Second
	defaultLLMMaximumAttempts = 5
	defaultLLMTotal           = 2 * time.Minute
)

// LocalizeResult is the ranked list and what the query cost.
type LocalizeResult struct {
	search.Result
	// CachedCalls were answered from the decision cache (not billed again).
	CachedCalls int `json:"cached_calls"`
	// SelectorUnavailable lists, in rank order, the centers whose neighbour
	// selection failed after its retries: they keep their place in Items
	// but have no selected neighbours.
	SelectorUnavailable []UnavailableCenter `json:"selector_unavailable,omitempty"`
	// Warning says in one line what the ranking lacks: a repository
	// without memory (hybrid), and what SelectorUnavailable means for the
	// result; empty when nothing is missing.
	Warning string `json:"warning,omitempty"`
}

// UnavailableCenter is a center whose selector could not answer.
type UnavailableCenter struct {
	Center string `json:"center"`
	// URL is the LLM endpoint that failed, "" when unknown.
	URL string `json:"url,omitempty"`
	// Attempts made, 0 when unknown (the total time ran out mid-call).
	Attempts int32 `json:"attempts"`
	// Error is the last attempt's error.
	Error string `json:"error"`
}

// Localize retrieves, expands, asks the selector about each center in
// parallel on the LLM queue (retrying 429/5xx/timeouts with backoff and the
// server's Retry-After; a center whose selection keeps failing keeps its
// place without neighbours), and assembles the result.
func Localize(ctx workflow.Context, in LocalizeInput) (LocalizeResult, error) {
	if err := checkInput(ctx, func() error { return validateLocalizeInput(in) }); err != nil {
		return LocalizeResult{}, err
	}
	start := workflow.Now(ctx)
	retrCtx := workflow.WithActivityOptions(ctx, retrieveOptions(1))
	rin := activities.RetrieveInput{Repo: in.Repo, Issue: in.Issue, Params: in.Params}
	if in.Snapshot != "" {
		// Histories recorded before snapshots never set it.
		if workflow.GetVersion(ctx, "localize-snapshot", workflow.DefaultVersion, 1) >= 1 {
			rin.Snapshot = in.Snapshot
		}
	}
	// Retrieve stays a regular activity: as a local activity (tried, see
	// docs/benchmarks.md) it made a backlog slower, not faster.
	var r search.Retrieval
	if err := workflow.ExecuteActivity(retrCtx, searchActs.Retrieve, rin).Get(ctx, &r); err != nil {
		return LocalizeResult{}, err
	}
	if msg := commitMismatch(in.Repo, in.Commit, &r); msg != "" {
		return LocalizeResult{}, temporal.NewNonRetryableApplicationError(msg, activities.ErrTypeBadInput, nil)
	}
	out := newLocalizeResult(&r)
	selected := map[string]spider.Selection{}
	var selStart time.Time
	if r.Expansion != nil && !in.NoSelector {
		policy, perCenter := selectPolicy(in.LLMRetry)
		selStart = workflow.Now(ctx)
		// Histories recorded before SelectCenters made one SelectNeighbors
		// activity per center.
		if workflow.GetVersion(ctx, "localize-select-centers", workflow.DefaultVersion, 1) >= 1 {
			selectCenters(ctx, in, &r, policy, perCenter, &out, selected)
		} else {
			selectPerCenter(ctx, in, &r, policy, perCenter, &out, selected)
		}
	}
	now := workflow.Now(ctx)
	if err := assemble(&out, &r, selected, now.Sub(selStart), now.Sub(start)); err != nil {
		return LocalizeResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrTypeBadInput, err)
	}
	ask := rerankAsk{Repo: in.Repo, Issue: in.Issue, N: in.Params.Rerank, MaxIssueTokens: in.MaxIssueTokens, Retry: in.LLMRetry}
	if in.NoSelector {
		ask.Skip = "the query asked for no LLM step"
	}
	if f := startRerank(ctx, ask, &out); f != nil {
		finishRerank(ctx, f, &out)
		out.Latency = workflow.Now(ctx).Sub(start)
	}
	return out, nil
}

// retrieveOptions are the activity options of a Retrieve, or of a
// RetrieveBatch of n issues. Both heartbeat: an attempt whose worker died
// is retried after HeartbeatTimeout, not its start-to-close timeout
// (40 minutes for a batch of 8).
func retrieveOptions(n int) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute * time.Duration(n),
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	}
}

// selectPolicy is the retry policy of neighbour selection and the time
// allowed per center, from ro with its defaults filled in.
func selectPolicy(ro RetryOptions) (*temporal.RetryPolicy, time.Duration) {
	if ro.InitialInterval <= 0 {
		ro.InitialInterval = defaultLLMInitialInterval
	}
	if ro.MaximumInterval <= 0 {
		ro.MaximumInterval = max(defaultLLMMaximumInterval, ro.InitialInterval)
	}
	if ro.MaximumAttempts <= 0 {
		ro.MaximumAttempts = defaultLLMMaximumAttempts
	}
	if ro.Total <= 0 {
		ro.Total = defaultLLMTotal
	}
	return &temporal.RetryPolicy{InitialInterval: ro.InitialInterval, BackoffCoefficient: 2, MaximumInterval: ro.MaximumInterval,
		MaximumAttempts: ro.MaximumAttempts, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}}, ro.Total
}

// selectOptions are the activity options of a selection of centers
// centers (or a rerank) on the LLM queue: perCenter for each, waits
// included. The activities heartbeat: an attempt whose worker died is
// retried after HeartbeatTimeout, not after the whole allowance.
func selectOptions(policy *temporal.RetryPolicy, perCenter time.Duration, centers int) workflow.ActivityOptions {
	total := perCenter * time.Duration(centers)
	return workflow.ActivityOptions{
		TaskQueue:              LLMQueue,
		StartToCloseTimeout:    total,
		ScheduleToCloseTimeout: total,
		HeartbeatTimeout:       HeartbeatTimeout,
		RetryPolicy:            policy,
	}
}

// commitMismatch is "" when commit (a prefix of at least 7 digits, or "")
// names the commit r ranked, else the error that says it does not.
func commitMismatch(repo schema.RepoName, commit string, r *search.Retrieval) string {
	if commit == "" || len(commit) >= 7 && strings.HasPrefix(r.Commit, commit) {
		return ""
	}
	return "the index of " + string(repo) + " is at " + r.Commit + ", not " + commit + ": index that ref first (locus index " + string(repo) + "=URL#REF)"
}

// newLocalizeResult is the result of a query that retrieved r, before
// selection.
func newLocalizeResult(r *search.Retrieval) LocalizeResult {
	return LocalizeResult{Result: search.Result{Repo: r.Repo, Commit: r.Commit, Method: r.Method, Embedder: r.Embedder}, Warning: r.Warning}
}

// assemble ends a query: the warning about centers whose selector was
// unavailable (selection took selElapsed), the ranked items and the
// latency.
func assemble(out *LocalizeResult, r *search.Retrieval, selected map[string]spider.Selection, selElapsed, latency time.Duration) error {
	if len(out.SelectorUnavailable) > 0 {
		out.Warning = strings.TrimPrefix(out.Warning+"; "+selectorWarning(out.SelectorUnavailable, selElapsed), "; ")
	}
	items, err := search.Finish(r, selected)
	if err != nil {
		return err
	}
	out.Items = items
	out.Latency = latency
	return nil
}

// selectCenters asks about all centers of the issue with one SelectCenters
// activity on the LLM queue, and adds what it answered to out and selected.
// When the activity fails for good, the centers it had settled keep their
// answers (from its error's details) and the others are unavailable.
func selectCenters(ctx workflow.Context, in LocalizeInput, r *search.Retrieval, policy *temporal.RetryPolicy, perCenter time.Duration,
	out *LocalizeResult, selected map[string]spider.Selection) {
	centers := search.CentersOf(r)
	if len(centers) == 0 {
		return
	}
	llmCtx := workflow.WithActivityOptions(ctx, selectOptions(policy, perCenter, len(centers)))
	var so activities.SelectCentersOutput
	err := workflow.ExecuteActivity(llmCtx, llmActs.SelectCenters, activities.SelectCentersInput{
		Repo: in.Repo, Commit: r.Commit, Issue: in.Issue, Centers: centers, MaxTokens: in.MaxIssueTokens}).Get(ctx, &so)
	if err != nil {
		p, timedOut := progressOf(err, func(p activities.SelectCentersProgress) bool { return len(p.Done) > 0 })
		so.Centers = settledCenters(centers, err, p, timedOut)
	}
	addCenters(out, selected, so.Centers)
}

// addCenters adds the settled selections of an issue's centers (in rank
// order) to its result and to selected.
func addCenters(out *LocalizeResult, selected map[string]spider.Selection, cs []activities.CenterResult) {
	for _, c := range cs { // in rank order: deterministic
		out.LLMCalls += c.Calls
		out.CachedCalls += c.CachedCalls
		out.PromptTokens += c.PromptTokens
		out.CompletionTokens += c.CompletionTokens
		out.SelectLatency += time.Duration(c.LatencyMs) * time.Millisecond
		switch {
		case c.Skipped:
			out.BudgetSkipped = append(out.BudgetSkipped, c.Center)
		case c.Error != "":
			out.Failed = append(out.Failed, c.Center)
			out.SelectorUnavailable = append(out.SelectorUnavailable, UnavailableCenter{Center: c.Center, URL: c.URL, Attempts: c.Attempt, Error: c.Error})
		default:
			if out.Selector == "" {
				out.Selector = c.Selector
			}
			selected[c.Center] = spider.Selection{IDs: c.IDs, Selector: c.Selector}
		}
	}
}

// progressOf reads the settled centers a selection activity that failed
// with err left: from the error's details (after the SelectFailure), and
// when those settle nothing (settled false) and an attempt timed out
// (timedOut), from its last heartbeat. The zero P when they cannot be read.
func progressOf[P any](err error, settled func(P) bool) (p P, timedOut bool) {
	var zero P
	var f activities.SelectFailure
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() && app.Details(&f, &p) != nil {
		p = zero
	}
	var te *temporal.TimeoutError
	if settled(p) || !errors.As(err, &te) {
		return p, false
	}
	if te.HasLastHeartbeatDetails() && te.LastHeartbeatDetails(&p) != nil {
		p = zero
	}
	return p, true
}

// settledCenters is every center's result after its selection failed
// with err: the centers its last attempt reported settled in p, and the
// others failed with their last error (or err's; err's when the attempt
// timed out).
func settledCenters(centers []search.CenterRequest, err error, p activities.SelectCentersProgress, timedOut bool) []activities.CenterResult {
	byCenter := map[string]activities.CenterResult{}
	for _, c := range p.Done {
		byCenter[c.Center] = c
	}
	failed := map[string]activities.CenterResult{}
	for _, c := range p.Failed {
		failed[c.Center] = c
	}
	out := make([]activities.CenterResult, len(centers))
	for i, c := range centers {
		if r, ok := byCenter[c.Center]; ok {
			out[i] = r
			continue
		}
		u := unavailable(c.Center, err)
		r := activities.CenterResult{Center: c.Center, Error: u.Error, URL: u.URL, Attempt: u.Attempts}
		if fc, ok := failed[c.Center]; ok && !timedOut {
			r.SelectOutput, r.Error = fc.SelectOutput, fc.Error
			if fc.URL != "" {
				r.URL = fc.URL
			}
		}
		out[i] = r
	}
	return out
}

// selectPerCenter is how histories recorded before SelectCenters selected:
// one SelectNeighbors activity per center, in parallel.
func selectPerCenter(ctx workflow.Context, in LocalizeInput, r *search.Retrieval, policy *temporal.RetryPolicy, total time.Duration,
	out *LocalizeResult, selected map[string]spider.Selection) {
	llmCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              LLMQueue,
		StartToCloseTimeout:    min(5*time.Minute, total),
		ScheduleToCloseTimeout: total,
		RetryPolicy:            policy,
	})
	type pending struct {
		center string
		fut    workflow.Future
	}
	var futs []pending
	for _, c := range search.CentersOf(r) {
		futs = append(futs, pending{c.Center, workflow.ExecuteActivity(llmCtx, llmActs.SelectNeighbors, activities.SelectInput{
			Repo: in.Repo, Commit: r.Commit, Issue: in.Issue, Center: c.Center, Candidates: c.Candidates})})
	}
	for _, p := range futs { // centers in rank order: deterministic
		var so activities.SelectOutput
		if err := p.fut.Get(ctx, &so); err != nil {
			out.Failed = append(out.Failed, p.center)
			out.SelectorUnavailable = append(out.SelectorUnavailable, unavailable(p.center, err))
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

// unavailable describes a center's failed selection from the activity's
// final error and the details SelectNeighbors attached to it.
func unavailable(center string, err error) UnavailableCenter {
	u := UnavailableCenter{Center: center, Error: err.Error()}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		u.Error = app.Message()
		var f activities.SelectFailure
		if app.HasDetails() && app.Details(&f) == nil {
			u.URL, u.Attempts = f.URL, f.Attempt
		}
		return u
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		u.Error = "gave up: " + te.Error()
		if errors.As(te, &app) && app.HasDetails() {
			var f activities.SelectFailure
			if app.Details(&f) == nil {
				u.URL, u.Attempts = f.URL, f.Attempt
			}
		}
	}
	return u
}

// selectorWarning is the one line a user sees when selections failed:
//
//	LLM at URL unavailable after N attempts over T s: ERR; results for centers X, Y have no selected neighbours
func selectorWarning(us []UnavailableCenter, elapsed time.Duration) string {
	first := us[0]
	var attempts int32
	centers := make([]string, len(us))
	for i, u := range us {
		attempts = max(attempts, u.Attempts)
		centers[i] = u.Center
	}
	who := "the neighbour selector"
	if first.URL != "" {
		who = "LLM at " + first.URL
	}
	tries := "its retries"
	if attempts == 1 {
		tries = "1 attempt"
	} else if attempts > 1 {
		tries = fmt.Sprintf("%d attempts", attempts)
	}
	noun := "centers"
	if len(us) == 1 {
		noun = "center"
	}
	return fmt.Sprintf("%s unavailable after %s over %.1f s: %s; results for %s %s have no selected neighbours",
		who, tries, elapsed.Seconds(), first.Error, noun, strings.Join(centers, ", "))
}
