package workflows

import (
	"cmp"
	"encoding/json"
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

// Backlog defaults.
const (
	DefaultBacklogWindow   = 32
	DefaultBacklogBatch    = 8
	DefaultBacklogPerRun   = 500
	DefaultBacklogPartSize = 100
	DefaultBacklogHistory  = 4 << 20
	// SnapshotsPerHost: EnsureSnapshot activities one backlog run keeps
	// scheduled on one host at a time.
	SnapshotsPerHost = 4
	// childBacklogWindow is the default window of runs recorded before
	// batches (one Localize child per issue).
	childBacklogWindow = 8
	// maxLoadBytes bounds the issue text one LoadBacklogIssues answer
	// carries (Temporal refuses payloads over 2 MB).
	maxLoadBytes = 1 << 20
)

// BacklogOptions tune a LocalizeBacklog run.
type BacklogOptions struct {
	// Window is the most issues in flight; default 32.
	Window int `json:"window,omitempty"`
	// Batch is the most issues one RetrieveBatch and one SelectBatch
	// activity rank together; default 8. (Runs recorded before batches ran
	// one Localize child per issue and ignore it.)
	Batch int `json:"batch,omitempty"`
	// Details keeps every issue's whole answer (LocalizeResult as JSON,
	// with the per-center detail the parts leave out) beside each part,
	// for jobs.IssueResult; `locus localize` sets it.
	Details bool `json:"details,omitempty"`
	// ContinueAsNewAfter is how many issues one run starts before it
	// continues as new; default 500, rounded up to a multiple of PartSize
	// so that a result part never spans two runs.
	ContinueAsNewAfter int `json:"continue_as_new_after,omitempty"`
	// HistoryBytes bounds a batched run's history: once it passes this
	// many bytes, the run starts no issue beyond the current part and then
	// continues as new (a batch's retrievals pass through the history:
	// about 30 KB per issue at K=20). Default 4 MB, well under Temporal's
	// 50 MB limit.
	HistoryBytes int `json:"history_bytes,omitempty"`
	// PartSize is the issues per result part: part n holds the results of
	// issues [n·PartSize, (n+1)·PartSize) in input order, so a re-run
	// writes the same parts under the same keys. Default 100.
	PartSize int `json:"part_size,omitempty"`
	// MaxTokens is the run's selector token budget (prompt + completion);
	// once the finished issues have spent it, issues that start later are
	// ranked without the selector and marked BudgetExhausted. 0: no budget.
	// Issues in flight when it is reached still finish, so a run may
	// overshoot by up to Window issues' worth.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxIssueTokens is each issue's own selector token limit (see
	// LocalizeInput.MaxIssueTokens); 0: none.
	MaxIssueTokens int `json:"max_issue_tokens,omitempty"`
	// PriceInPerM and PriceOutPerM are the selector's USD prices per
	// million prompt and completion tokens, for the summary's cost
	// estimate; 0: unknown (no estimate).
	PriceInPerM  float64 `json:"price_in_per_m,omitempty"`
	PriceOutPerM float64 `json:"price_out_per_m,omitempty"`
}

// LocalizeBacklogInput is LocalizeBacklog's argument. The issues are stored
// (a JSON array of schema.BacklogIssue at IssuesKey, Total entries); Next and
// the carried totals let a continued run pick up where the last one stopped.
type LocalizeBacklogInput struct {
	// Run names the children (<run>/<issue id>) and the store prefix
	// (backlogs/<run>/); default the workflow id. Carried in the input so
	// that a replay under another workflow id makes the same commands.
	Run       string         `json:"run,omitempty"`
	IssuesKey string         `json:"issues_key"`
	Total     int            `json:"total"`
	Params    search.Params  `json:"params"`
	Options   BacklogOptions `json:"options"`
	LLMRetry  RetryOptions   `json:"llm_retry,omitempty"`
	// ParseErrors is how many input lines or rows could not be read; they
	// are counted in the summary.
	ParseErrors int `json:"parse_errors,omitempty"`

	Next            int       `json:"next,omitempty"`
	Done            int       `json:"done,omitempty"`
	Failed          int       `json:"failed,omitempty"`
	TokensIn        int       `json:"tokens_in,omitempty"`
	TokensOut       int       `json:"tokens_out,omitempty"`
	BudgetExhausted int       `json:"budget_exhausted,omitempty"`
	Parts           int       `json:"parts,omitempty"`
	StartedAt       time.Time `json:"started_at,omitempty"`
}

// BacklogResult is what LocalizeBacklog returns.
type BacklogResult struct {
	// Run names the store prefix (backlogs/<run>/) and the children
	// (<run>/<issue id>).
	Run             string `json:"run"`
	Total           int    `json:"total"`
	Done            int    `json:"done"`
	Failed          int    `json:"failed"`
	TokensIn        int    `json:"tokens_in"`
	TokensOut       int    `json:"tokens_out"`
	BudgetExhausted int    `json:"budget_exhausted"`
	// Parts is the number of result parts, keys backlog.PartKey(Run, 0…Parts-1).
	Parts      int    `json:"parts"`
	SummaryKey string `json:"summary_key"`
}

// snapActs is the snapshot activity struct's method values.
var snapActs *activities.Snapshot

// BacklogChildID is the workflow id of an issue's Localize child.
func BacklogChildID(run, issueID string) string { return run + "/" + issueID }

// LocalizeBacklog ranks a backlog of issues with a bounded sliding window
// of issues in flight, in batches: one RetrieveBatch activity (index queue)
// and one SelectBatch activity (LLM queue) per batch of up to Batch issues,
// the ranking assembled here as Localize assembles it. Results are stored
// in parts of PartSize issues as each part's issues finish; after
// ContinueAsNewAfter issues, or once the history passes HistoryBytes, it
// drains the window at a part boundary and continues as new, so the history
// stays small for any backlog. A failed issue is a per-issue error in the
// results and never fails the run. Runs recorded before batches ranked each
// issue in a Localize child (GetVersion "backlog-batches") and replay so.
func LocalizeBacklog(ctx workflow.Context, in LocalizeBacklogInput) (BacklogResult, error) {
	if err := checkInput(ctx, func() error { return validateBacklogInput(in) }); err != nil {
		return BacklogResult{}, err
	}
	o := in.Options
	batch := o.Batch
	if batch <= 0 {
		batch = DefaultBacklogBatch
	}
	partSize := o.PartSize
	if partSize <= 0 {
		partSize = DefaultBacklogPartSize
	}
	perRun := o.ContinueAsNewAfter
	if perRun <= 0 {
		perRun = DefaultBacklogPerRun
	}
	perRun = (perRun + partSize - 1) / partSize * partSize
	if in.StartedAt.IsZero() {
		in.StartedAt = workflow.Now(ctx)
	}
	run := in.Run
	if run == "" {
		run = workflow.GetInfo(ctx).WorkflowExecution.ID
		in.Run = run
	}
	actCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	})

	first, end := in.Next, min(in.Next+perRun, in.Total)
	results := make([]*schema.BacklogIssueResult, end-first) // by position in this run
	var loaded []schema.BacklogIssue                         // the last batch loaded: issues [loadedTo-len(loaded), loadedTo)
	loadedTo := first
	next := first
	running := 0
	written := first // issues before this are in written parts

	err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (schema.BacklogProgress, error) {
		return schema.BacklogProgress{Total: in.Total, Done: in.Done, Failed: in.Failed, Running: running,
			Pending: in.Total - next, TokensIn: in.TokensIn, TokensOut: in.TokensOut, BudgetExhausted: in.BudgetExhausted,
			Started: in.StartedAt}, nil
	})
	if err != nil {
		return BacklogResult{}, err
	}
	// Runs recorded before batches ranked each issue in a Localize child,
	// with a window of 8 by default.
	batched := workflow.GetVersion(ctx, "backlog-batches", workflow.DefaultVersion, 1) >= 1
	window := o.Window
	if window <= 0 {
		window = DefaultBacklogWindow
		if !batched {
			window = childBacklogWindow
		}
	}

	record := func(pos int, r schema.BacklogIssueResult) {
		results[pos] = &r
		if r.Error != "" {
			in.Failed++
		} else {
			in.Done++
		}
		in.TokensIn += r.TokensIn
		in.TokensOut += r.TokensOut
	}
	// flush writes every part whose issues have all finished, in order.
	flush := func() error {
		for written < end {
			stop := min(written+partSize, end)
			var part []schema.BacklogIssueResult
			for i := written; i < stop; i++ {
				if results[i-first] == nil {
					return nil
				}
				part = append(part, *results[i-first])
			}
			err := workflow.ExecuteActivity(actCtx, store.WriteBacklogPart, activities.BacklogPartInput{
				Run: run, Part: written / partSize, Results: part,
			}).Get(ctx, nil)
			if err != nil {
				return err
			}
			for i := written; i < stop; i++ {
				results[i-first] = nil // stored; keep the memory small
			}
			written = stop
			in.Parts = (written + partSize - 1) / partSize
		}
		return nil
	}

	childCtx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		TaskQueue:         IndexQueue,
		ParentClosePolicy: 0, // terminate children with the run
	})
	sel := workflow.NewSelector(ctx)
	// One EnsureSnapshot per distinct (repository, base commit) of this run;
	// map lookups only, never iterated.
	snaps := map[string]workflow.Future{}
	// At most SnapshotsPerHost snapshots are scheduled on one host at a
	// time; the rest wait here, not in the host's queue, where a slow
	// embedder would keep them past the schedule-to-start timeout that
	// tells a gone host (every instance of a 37-snapshot eval with a
	// 15-texts/s embedder waited more than 10 min there).
	windowed := workflow.GetVersion(ctx, "snapshot-window", workflow.DefaultVersion, 1) >= 1
	snapsOnHost := map[string]int{}       // by host queue
	snapsWaiting := map[string][]func(){} // by host queue, in order
	ensure := func(is schema.BacklogIssue) workflow.Future {
		return workflow.ExecuteActivity(onHost(ctx, is.HostQueue, 2*time.Hour), snapActs.EnsureSnapshot, schema.EnsureSnapshotInput{Repo: is.Repo, Commit: is.BaseCommit})
	}
	// snapshotOf is the EnsureSnapshot of the issue's repository and base
	// commit, started by the first issue that needs it.
	snapshotOf := func(is schema.BacklogIssue) workflow.Future {
		key := string(is.Repo) + "@" + strings.ToLower(is.BaseCommit)
		if f, ok := snaps[key]; ok {
			return f
		}
		if !windowed {
			snaps[key] = ensure(is)
			return snaps[key]
		}
		f, set := workflow.NewFuture(ctx)
		snaps[key] = f
		host := is.HostQueue
		startOne := func() {
			snapsOnHost[host]++
			sel.AddFuture(ensure(is), func(done workflow.Future) {
				snapsOnHost[host]--
				set.Chain(done)
				if q := snapsWaiting[host]; len(q) > 0 {
					snapsWaiting[host] = q[1:]
					q[0]()
				}
			})
		}
		if snapsOnHost[host] < SnapshotsPerHost {
			startOne()
		} else {
			snapsWaiting[host] = append(snapsWaiting[host], startOne)
		}
		return f
	}
	// budgetSpent: the run's token budget is spent, so issues starting now
	// are ranked without the selector.
	budgetSpent := func() bool { return o.MaxTokens > 0 && in.TokensIn+in.TokensOut >= o.MaxTokens }
	var launch func(pos int, is schema.BacklogIssue, snapshot string)
	start := func(pos int, is schema.BacklogIssue) {
		if msg := baseCommitError(is); msg != "" {
			// Histories recorded before snapshots keep the per-issue error.
			if workflow.GetVersion(ctx, "backlog-snapshots", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
				record(pos, issueError(is, msg))
				return
			}
			if is.HostQueue == "" {
				record(pos, issueError(is, noHostError(is)))
				return
			}
			f := snapshotOf(is)
			running++
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				var si schema.SnapshotInfo
				if err := f.Get(ctx, &si); err != nil {
					record(pos, issueError(is, errorText(err)))
					return
				}
				launch(pos, is, si.Commit)
			})
			return
		}
		launch(pos, is, "")
	}
	launch = func(pos int, is schema.BacklogIssue, snapshot string) {
		exhausted := budgetSpent()
		if exhausted {
			in.BudgetExhausted++
		}
		cctx := workflow.WithWorkflowID(childCtx, BacklogChildID(run, is.ID))
		fut := workflow.ExecuteChildWorkflow(cctx, Localize, LocalizeInput{Repo: is.Repo, Issue: is.Text, Params: in.Params,
			Commit: strings.ToLower(is.BaseCommit), Snapshot: snapshot, LLMRetry: in.LLMRetry, NoSelector: exhausted, MaxIssueTokens: o.MaxIssueTokens})
		running++
		sel.AddFuture(fut, func(f workflow.Future) {
			running--
			var lr LocalizeResult
			if err := f.Get(ctx, &lr); err != nil {
				r := issueError(is, errorText(err))
				r.BudgetExhausted = exhausted
				record(pos, r)
				return
			}
			record(pos, issueResult(is, lr, exhausted))
		})
	}
	// nextIssue is issue next, loaded with those after it when not yet.
	nextIssue := func() (schema.BacklogIssue, error) {
		if next == loadedTo {
			var batch []schema.BacklogIssue
			err := workflow.ExecuteActivity(actCtx, store.LoadBacklogIssues, activities.LoadBacklogInput{
				Key: in.IssuesKey, Offset: next, Limit: end - next, MaxBytes: maxLoadBytes,
			}).Get(ctx, &batch)
			if err != nil {
				return schema.BacklogIssue{}, err
			}
			if len(batch) == 0 {
				return schema.BacklogIssue{}, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("backlog %s: no issues at offset %d of %s (want %d)", run, next, in.IssuesKey, in.Total), activities.ErrTypeBadInput, nil)
			}
			loaded, loadedTo = batch, next+len(batch)
		}
		return loaded[len(loaded)-(loadedTo-next)], nil
	}
	// The batched path: issues wait in ready (their snapshot built) until
	// launched in batches; running counts the issues in flight.
	type readyIssue struct {
		pos      int
		is       schema.BacklogIssue
		snapshot string
	}
	var ready []readyIssue
	finished := func(pos int, r schema.BacklogIssueResult) {
		running--
		record(pos, r)
	}
	// fail records a batched issue that failed with msg.
	fail := func(p readyIssue, msg string, exhausted bool) {
		r := issueError(p.is, msg)
		r.BudgetExhausted = exhausted
		finished(p.pos, r)
	}
	startBatched := func(pos int, is schema.BacklogIssue) {
		running++
		if baseCommitError(is) == "" {
			ready = append(ready, readyIssue{pos, is, ""})
			return
		}
		if is.HostQueue == "" {
			finished(pos, issueError(is, noHostError(is)))
			return
		}
		sel.AddFuture(snapshotOf(is), func(f workflow.Future) {
			var si schema.SnapshotInfo
			if err := f.Get(ctx, &si); err != nil {
				finished(pos, issueError(is, errorText(err)))
				return
			}
			ready = append(ready, readyIssue{pos, is, si.Commit})
		})
	}
	// answer records an issue ranked from retrieval r and its settled
	// centers cs.
	answer := func(p readyIssue, r *search.Retrieval, cs []activities.CenterResult, exhausted bool, selStart, batchStart time.Time) {
		out := newLocalizeResult(r)
		selected := map[string]spider.Selection{}
		addCenters(&out, selected, cs)
		now := workflow.Now(ctx)
		if err := assemble(&out, r, selected, now.Sub(selStart), now.Sub(batchStart)); err != nil {
			fail(p, err.Error(), exhausted)
			return
		}
		done := func() {
			res := issueResult(p.is, out, exhausted)
			if o.Details {
				if d, err := json.Marshal(out); err == nil {
					res.Detail = d
				}
			}
			finished(p.pos, res)
		}
		ask := rerankAsk{Repo: p.is.Repo, Issue: p.is.Text, N: in.Params.Rerank, MaxIssueTokens: o.MaxIssueTokens, Retry: in.LLMRetry}
		if exhausted || budgetSpent() {
			ask.Skip = "the run's token budget is spent"
		}
		f := startRerank(ctx, ask, &out)
		if f == nil {
			done()
			return
		}
		sel.AddFuture(f, func(f workflow.Future) {
			finishRerank(ctx, f, &out)
			out.Latency = workflow.Now(ctx).Sub(batchStart)
			done()
		})
	}
	launchBatch := func(b []readyIssue) {
		exhausted := budgetSpent()
		if exhausted {
			in.BudgetExhausted += len(b)
		}
		rin := activities.RetrieveBatchInput{Issues: make([]activities.RetrieveInput, len(b))}
		for i, p := range b {
			rin.Issues[i] = activities.RetrieveInput{Repo: p.is.Repo, Issue: p.is.Text, Params: in.Params, Snapshot: p.snapshot}
		}
		batchStart := workflow.Now(ctx)
		rf := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, retrieveOptions(len(b))), searchActs.RetrieveBatch, rin)
		sel.AddFuture(rf, func(f workflow.Future) {
			var outs []activities.RetrieveOutcome
			err := f.Get(ctx, &outs)
			if err == nil && len(outs) != len(b) {
				err = fmt.Errorf("retrieve batch: %d answers for %d issues", len(outs), len(b))
			}
			if err != nil {
				for _, p := range b {
					fail(p, errorText(err), exhausted)
				}
				return
			}
			type ask struct {
				p       readyIssue
				r       *search.Retrieval
				centers []search.CenterRequest
			}
			var asks []ask
			var sin activities.SelectBatchInput
			centers := 0
			for i, p := range b {
				r := outs[i].Retrieval
				if r == nil {
					fail(p, cmp.Or(outs[i].Error, "retrieve: no answer"), exhausted)
					continue
				}
				if msg := commitMismatch(p.is.Repo, strings.ToLower(p.is.BaseCommit), r); msg != "" {
					fail(p, msg, exhausted)
					continue
				}
				cs := search.CentersOf(r)
				if exhausted || len(cs) == 0 {
					answer(p, r, nil, exhausted, batchStart, batchStart)
					continue
				}
				asks = append(asks, ask{p, r, cs})
				sin.Issues = append(sin.Issues, activities.SelectCentersInput{Repo: p.is.Repo, Commit: r.Commit, Issue: p.is.Text,
					Centers: cs, MaxTokens: o.MaxIssueTokens})
				centers += len(cs)
			}
			if len(asks) == 0 {
				return
			}
			policy, perCenter := selectPolicy(in.LLMRetry)
			selStart := workflow.Now(ctx)
			sf := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, selectOptions(policy, perCenter, centers)), llmActs.SelectBatch, sin)
			sel.AddFuture(sf, func(f workflow.Future) {
				var so activities.SelectBatchOutput
				err := f.Get(ctx, &so)
				if err == nil && len(so.Issues) != len(asks) {
					err = fmt.Errorf("select batch: %d answers for %d issues", len(so.Issues), len(asks))
				}
				var progress activities.SelectBatchProgress
				timedOut := false
				if err != nil {
					progress, timedOut = progressOf(err, func(p activities.SelectBatchProgress) bool { return len(p.Issues) > 0 })
					if len(progress.Issues) != len(asks) {
						progress.Issues = make([]activities.SelectCentersProgress, len(asks))
					}
				}
				for i, a := range asks {
					var cs []activities.CenterResult
					if err != nil {
						cs = settledCenters(a.centers, err, progress.Issues[i], timedOut)
					} else {
						cs = so.Issues[i].Centers
					}
					answer(a.p, a.r, cs, false, selStart, batchStart)
				}
			})
		})
	}

	historyBytes := cmp.Or(o.HistoryBytes, DefaultBacklogHistory)
	for next < end || running > 0 {
		if size := workflow.GetInfo(ctx).GetCurrentHistorySize(); batched && size > historyBytes && next > first && end > next {
			// Finish the part under way, then continue as new.
			end = min(end, (next+partSize-1)/partSize*partSize)
		}
		for running < window && next < end {
			is, err := nextIssue()
			if err != nil {
				return BacklogResult{}, err
			}
			if batched {
				startBatched(next-first, is)
			} else {
				start(next-first, is)
			}
			next++
		}
		// Nothing more can start before something finishes: launch all
		// that is ready, in batches (the child path leaves ready empty).
		for len(ready) > 0 {
			n := min(batch, len(ready))
			launchBatch(ready[:n:n])
			ready = ready[n:]
		}
		if err := flush(); err != nil {
			return BacklogResult{}, err
		}
		if running > 0 {
			sel.Select(ctx)
		}
	}
	if err := flush(); err != nil {
		return BacklogResult{}, err
	}
	if end < in.Total {
		in.Next = end
		return BacklogResult{}, workflow.NewContinueAsNewError(ctx, LocalizeBacklog, in)
	}
	var summaryKey string
	err = workflow.ExecuteActivity(actCtx, store.WriteBacklogSummary, activities.BacklogSummaryInput{
		Run: run, Parts: in.Parts, Total: in.Total, ParseErrors: in.ParseErrors, MaxTokens: o.MaxTokens,
		PriceInPerM: o.PriceInPerM, PriceOutPerM: o.PriceOutPerM,
		StartedAt: in.StartedAt, FinishedAt: workflow.Now(ctx),
	}).Get(ctx, &summaryKey)
	if err != nil {
		return BacklogResult{}, err
	}
	return BacklogResult{Run: run, Total: in.Total, Done: in.Done, Failed: in.Failed, TokensIn: in.TokensIn,
		TokensOut: in.TokensOut, BudgetExhausted: in.BudgetExhausted, Parts: in.Parts, SummaryKey: summaryKey}, nil
}

// noHostError is the per-issue error of an issue whose snapshot has no host
// to be built on.
func noHostError(is schema.BacklogIssue) string {
	return fmt.Sprintf("base_commit %s of %s: no host with a clone of %s to build its snapshot on", is.BaseCommit, is.Repo, is.Repo)
}

// baseCommitError is "" when the issue can be ranked against the indexed
// head; otherwise its base commit needs a snapshot, and the message is the
// per-issue error that runs recorded before snapshots were built.
func baseCommitError(is schema.BacklogIssue) string {
	if is.BaseCommit == "" || is.Head == "" { // no base, or not indexed: Localize says so
		return ""
	}
	if len(is.BaseCommit) >= 7 && strings.HasPrefix(is.Head, strings.ToLower(is.BaseCommit)) {
		return ""
	}
	return fmt.Sprintf("base_commit %s is not the indexed head %s; snapshots are not built yet", is.BaseCommit, is.Head)
}

func issueError(is schema.BacklogIssue, msg string) schema.BacklogIssueResult {
	return schema.BacklogIssueResult{IssueID: is.ID, Repo: string(is.Repo), BaseCommit: is.BaseCommit,
		Truncated: is.Truncated, Source: is.Source, Notes: is.Notes, Error: msg}
}

// issueResult is one issue's row from its Localize result.
func issueResult(is schema.BacklogIssue, lr LocalizeResult, exhausted bool) schema.BacklogIssueResult {
	r := schema.BacklogIssueResult{IssueID: is.ID, Repo: string(is.Repo), BaseCommit: is.BaseCommit,
		Method: lr.Method, Selector: lr.Selector, TokensIn: lr.PromptTokens, TokensOut: lr.CompletionTokens,
		Cached:              lr.CachedCalls > 0 && lr.CachedCalls >= lr.LLMCalls,
		SelectorUnavailable: len(lr.SelectorUnavailable) > 0, BudgetExhausted: exhausted, IssueBudgetSkipped: len(lr.BudgetSkipped),
		Truncated: is.Truncated, Source: is.Source, Notes: is.Notes}
	seen := map[string]bool{}
	for _, it := range lr.Items {
		file, _, _ := strings.Cut(it.ID, ":")
		r.Items = append(r.Items, schema.BacklogRanked{Rank: len(r.Items) + 1, FunctionID: it.ID, File: file,
			Score: it.Score, Method: lr.Method, Why: it.Why()})
		if !seen[file] {
			seen[file] = true
			r.Files = append(r.Files, file)
		}
	}
	return r
}

// validateBacklogInput checks what LocalizeBacklog is given.
func validateBacklogInput(in LocalizeBacklogInput) error {
	var errs []error
	o := in.Options
	if o.Window < 0 || o.Window > MaxWindow {
		errs = append(errs, fmt.Errorf("window %d: want 1 to %d (0: default %d)", o.Window, MaxWindow, DefaultBacklogWindow))
	}
	if o.Batch < 0 || o.Batch > MaxWindow {
		errs = append(errs, fmt.Errorf("batch %d: want 1 to %d (0: default %d)", o.Batch, MaxWindow, DefaultBacklogBatch))
	}
	if o.ContinueAsNewAfter < 0 || o.ContinueAsNewAfter > MaxContinueAsNewAfter {
		errs = append(errs, fmt.Errorf("continue-as-new-after %d: want 1 to %d (0: default %d)", o.ContinueAsNewAfter, MaxContinueAsNewAfter, DefaultBacklogPerRun))
	}
	if o.PartSize < 0 || o.PartSize > MaxContinueAsNewAfter {
		errs = append(errs, fmt.Errorf("part size %d: want 1 to %d (0: default %d)", o.PartSize, MaxContinueAsNewAfter, DefaultBacklogPartSize))
	}
	if o.HistoryBytes < 0 {
		errs = append(errs, fmt.Errorf("history bytes %d: want at least 1 (0: default %d)", o.HistoryBytes, DefaultBacklogHistory))
	}
	if o.PriceInPerM < 0 || o.PriceOutPerM < 0 {
		errs = append(errs, fmt.Errorf("prices %g, %g per million tokens: want 0 or more", o.PriceInPerM, o.PriceOutPerM))
	}
	if o.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("max tokens %d: want at least 1 (0: no budget)", o.MaxTokens))
	}
	if o.MaxIssueTokens < 0 {
		errs = append(errs, fmt.Errorf("max issue tokens %d: want at least 1 (0: no limit)", o.MaxIssueTokens))
	}
	if in.IssuesKey == "" && in.Total > 0 {
		errs = append(errs, errors.New("no issues key"))
	}
	if in.Total < 0 || in.Next < 0 || in.Next > in.Total || in.Done < 0 || in.Failed < 0 || in.Parts < 0 {
		errs = append(errs, fmt.Errorf("bad counts (total %d, next %d, done %d, failed %d, parts %d)", in.Total, in.Next, in.Done, in.Failed, in.Parts))
	}
	switch in.Params.Method {
	case "", search.MethodSR, search.MethodDER, search.MethodSpISR, search.MethodSpIDER, search.MethodHybrid:
	default:
		errs = append(errs, fmt.Errorf("method %q: want sr, der, spisr, spider or hybrid", in.Params.Method))
	}
	if err := in.Params.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("localize backlog: %s", joinErrs(errs))
	}
	return nil
}
