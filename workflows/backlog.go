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
	// MaxPartFunctions bounds the ranked functions one part holds (its
	// issues times K, BacklogPartSize), and so K: the part's results are
	// the input of its store step, and Temporal refuses a payload over 2 MB
	// (a ranked function is 200–400 bytes of JSON; sympy's eval at K = 50
	// put 1 MB in a part of 100 issues).
	MaxPartFunctions = 2500
	// PartFunctions is what BacklogPartSize aims a part at: Temporal warns
	// of a payload over 512 KB, and 2,500 functions were 0.53–0.62 MB in
	// sympy's eval at K = 50. K = 20 (the default) keeps parts of 100.
	PartFunctions = 2000
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
	// HostWait is how long a snapshot waits for the host that holds its
	// repository's clone before that host counts as gone and the
	// repository is cloned again on a live host (schema.IndexOptions.HostWait);
	// 0: DefaultHostWait.
	HostWait time.Duration `json:"host_wait,omitempty"`
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
// issue in a Localize child (GetVersion "backlog-batches") and replay so
// (backlog_children.go).
func LocalizeBacklog(ctx workflow.Context, in LocalizeBacklogInput) (BacklogResult, error) {
	if err := checkInput(ctx, func() error { return validateBacklogInput(in) }); err != nil {
		return BacklogResult{}, err
	}
	return newBacklogWorkflow(ctx, in).Execute()
}

// backlogWorkflow is one run of LocalizeBacklog: its share of the backlog,
// the window of issues in flight, the results not yet stored and the totals
// carried to the next run (in). Its methods run on the workflow's one
// goroutine, from Execute and from the selector's callbacks.
type backlogWorkflow struct {
	ctx      workflow.Context
	actCtx   workflow.Context // store activities on the index queue
	childCtx workflow.Context // Localize children (runs recorded before batches)
	sel      workflow.Selector

	in  LocalizeBacklogInput // the carried totals, counted as issues finish
	o   BacklogOptions
	run string

	batch, partSize, window int
	// batched is false for runs recorded before batches: one Localize
	// child per issue (backlog_children.go).
	batched bool

	first, end int // this run's issues: [first, end); end may shrink to bound the history
	next       int // the next issue to start
	running    int // issues started and not finished
	written    int // issues before this are in stored parts

	results  []*schema.BacklogIssueResult // by position in this run (issue - first)
	loaded   []schema.BacklogIssue        // the last batch loaded: issues [loadedTo-len(loaded), loadedTo)
	loadedTo int
	ready    []readyIssue // batched issues whose snapshot is settled, waiting for a batch

	snaps snapshotWindow
}

// readyIssue is an issue of the batched path ready to be retrieved:
// pos is its position in the run, snapshot the commit of its snapshot
// ("" for the indexed head).
type readyIssue struct {
	pos      int
	is       schema.BacklogIssue
	snapshot string
}

// snapshotWindow holds the run's EnsureSnapshot activities: one per
// distinct (repository, base commit), map lookups only, never iterated.
// At most SnapshotsPerHost of them are scheduled on one host at a time; the
// rest wait here, not in the host's queue, where a slow embedder would keep
// them past the schedule-to-start timeout that tells a gone host (every
// instance of a 37-snapshot eval with a 15-texts/s embedder waited more than
// 10 min there).
type snapshotWindow struct {
	// windowed is false for runs recorded before the per-host window
	// (GetVersion "snapshot-window"): every snapshot starts at once.
	windowed bool
	futures  map[string]workflow.Future   // by repository@commit
	onHost   map[string]int               // scheduled, by host queue
	waiting  map[string][]waitingSnapshot // by host queue, in order
}

// waitingSnapshot is a snapshot held back by the per-host window; set is
// the future its issues wait on.
type waitingSnapshot struct {
	is  schema.BacklogIssue
	set workflow.Settable
}

// selectAsk is an issue of a retrieved batch whose centers go to the
// selector.
type selectAsk struct {
	p       readyIssue
	r       *search.Retrieval
	centers []search.CenterRequest
}

// newBacklogWorkflow resolves the defaults of a run; it issues no command.
func newBacklogWorkflow(ctx workflow.Context, in LocalizeBacklogInput) *backlogWorkflow {
	o := in.Options
	b := &backlogWorkflow{ctx: ctx, o: o,
		batch:    cmp.Or(max(o.Batch, 0), DefaultBacklogBatch),
		partSize: cmp.Or(max(o.PartSize, 0), DefaultBacklogPartSize),
	}
	perRun := cmp.Or(max(o.ContinueAsNewAfter, 0), DefaultBacklogPerRun)
	perRun = (perRun + b.partSize - 1) / b.partSize * b.partSize
	if in.StartedAt.IsZero() {
		in.StartedAt = workflow.Now(ctx)
	}
	if in.Run == "" {
		in.Run = workflow.GetInfo(ctx).WorkflowExecution.ID
	}
	b.in, b.run = in, in.Run
	// The heartbeat timeout retries an attempt lost with its worker (kill
	// -9) on another after 30 s, rather than after the start-to-close.
	b.actCtx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	})
	b.first, b.end = in.Next, min(in.Next+perRun, in.Total)
	b.next, b.loadedTo, b.written = b.first, b.first, b.first
	b.results = make([]*schema.BacklogIssueResult, b.end-b.first)
	return b
}

// Execute runs the window until this run's issues are all stored, then
// continues as new or writes the summary.
func (b *backlogWorkflow) Execute() (BacklogResult, error) {
	if err := b.setUp(); err != nil {
		return BacklogResult{}, err
	}
	for b.next < b.end || b.running > 0 {
		b.boundHistory()
		if err := b.fillWindow(); err != nil {
			return BacklogResult{}, err
		}
		// Nothing more can start before something finishes: launch all
		// that is ready, in batches (the child path leaves ready empty).
		b.launchReady()
		if err := b.flush(); err != nil {
			return BacklogResult{}, err
		}
		if b.running > 0 {
			b.sel.Select(b.ctx)
		}
	}
	if err := b.flush(); err != nil {
		return BacklogResult{}, err
	}
	return b.continueAsNewOrComplete()
}

// setUp answers the progress query and settles what the run's versions
// decide: the engine, its default window and the snapshot window.
func (b *backlogWorkflow) setUp() error {
	if err := workflow.SetQueryHandler(b.ctx, ProgressQuery, b.progress); err != nil {
		return err
	}
	// Keep: a backlog started before batches (one Localize child per issue,
	// window 8 by default) may still be in flight on a user's embedded
	// server, whose state survives an upgrade, and resumes by replay.
	b.batched = workflow.GetVersion(b.ctx, "backlog-batches", workflow.DefaultVersion, 1) >= 1
	b.window = b.o.Window
	if b.window <= 0 {
		b.window = DefaultBacklogWindow
		if !b.batched {
			b.window = childBacklogWindow
		}
	}
	b.childCtx = workflow.WithChildOptions(b.ctx, workflow.ChildWorkflowOptions{
		TaskQueue:         IndexQueue,
		ParentClosePolicy: 0, // terminate children with the run
	})
	b.sel = workflow.NewSelector(b.ctx)
	b.snaps = snapshotWindow{
		// Keep: a run started before the per-host window may still be in
		// flight on a user's server (see "backlog-batches").
		windowed: workflow.GetVersion(b.ctx, "snapshot-window", workflow.DefaultVersion, 1) >= 1,
		futures:  map[string]workflow.Future{},
		onHost:   map[string]int{},
		waiting:  map[string][]waitingSnapshot{},
	}
	return nil
}

// progress answers ProgressQuery.
func (b *backlogWorkflow) progress() (schema.BacklogProgress, error) {
	in := &b.in
	return schema.BacklogProgress{Total: in.Total, Done: in.Done, Failed: in.Failed, Running: b.running,
		Pending: in.Total - b.next, TokensIn: in.TokensIn, TokensOut: in.TokensOut, BudgetExhausted: in.BudgetExhausted,
		Started: in.StartedAt}, nil
}

// boundHistory ends a batched run at the end of the part under way once
// its history passes HistoryBytes; the rest goes to the next run.
func (b *backlogWorkflow) boundHistory() {
	size := workflow.GetInfo(b.ctx).GetCurrentHistorySize()
	if b.batched && size > cmp.Or(b.o.HistoryBytes, DefaultBacklogHistory) && b.next > b.first && b.end > b.next {
		b.end = min(b.end, (b.next+b.partSize-1)/b.partSize*b.partSize)
	}
}

// fillWindow starts issues until the window is full or this run's issues
// are all started.
func (b *backlogWorkflow) fillWindow() error {
	for b.running < b.window && b.next < b.end {
		is, err := b.nextIssue()
		if err != nil {
			return err
		}
		if b.batched {
			b.startBatched(b.next-b.first, is)
		} else {
			b.startChild(b.next-b.first, is)
		}
		b.next++
	}
	return nil
}

// nextIssue is issue next, loaded with those after it when not yet.
func (b *backlogWorkflow) nextIssue() (schema.BacklogIssue, error) {
	if b.next == b.loadedTo {
		var batch []schema.BacklogIssue
		err := workflow.ExecuteActivity(b.actCtx, store.LoadBacklogIssues, activities.LoadBacklogInput{
			Key: b.in.IssuesKey, Offset: b.next, Limit: b.end - b.next, MaxBytes: maxLoadBytes,
		}).Get(b.ctx, &batch)
		if err != nil {
			return schema.BacklogIssue{}, err
		}
		if len(batch) == 0 {
			return schema.BacklogIssue{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("backlog %s: no issues at offset %d of %s (want %d)", b.run, b.next, b.in.IssuesKey, b.in.Total), activities.ErrTypeBadInput, nil)
		}
		b.loaded, b.loadedTo = batch, b.next+len(batch)
	}
	return b.loaded[len(b.loaded)-(b.loadedTo-b.next)], nil
}

// record counts a finished issue's result into the carried totals and keeps
// it until its part is written.
func (b *backlogWorkflow) record(pos int, r schema.BacklogIssueResult) {
	b.results[pos] = &r
	if r.Error != "" {
		b.in.Failed++
	} else {
		b.in.Done++
	}
	b.in.TokensIn += r.TokensIn
	b.in.TokensOut += r.TokensOut
}

// budgetSpent: the run's token budget is spent, so issues starting now are
// ranked without the selector.
func (b *backlogWorkflow) budgetSpent() bool {
	return b.o.MaxTokens > 0 && b.in.TokensIn+b.in.TokensOut >= b.o.MaxTokens
}

// flush writes every part whose issues have all finished, in order.
func (b *backlogWorkflow) flush() error {
	for b.written < b.end {
		stop := min(b.written+b.partSize, b.end)
		var part []schema.BacklogIssueResult
		for i := b.written; i < stop; i++ {
			if b.results[i-b.first] == nil {
				return nil
			}
			part = append(part, *b.results[i-b.first])
		}
		err := workflow.ExecuteActivity(b.actCtx, store.WriteBacklogPart, activities.BacklogPartInput{
			Run: b.run, Part: b.written / b.partSize, Results: part,
		}).Get(b.ctx, nil)
		if err != nil {
			return err
		}
		for i := b.written; i < stop; i++ {
			b.results[i-b.first] = nil // stored; keep the memory small
		}
		b.written = stop
		b.in.Parts = (b.written + b.partSize - 1) / b.partSize
	}
	return nil
}

// continueAsNewOrComplete hands the issues after this run's to a new run,
// or, when none are left, writes the backlog's summary.
func (b *backlogWorkflow) continueAsNewOrComplete() (BacklogResult, error) {
	in, o := b.in, b.o
	if b.end < in.Total {
		in.Next = b.end
		return BacklogResult{}, workflow.NewContinueAsNewError(b.ctx, LocalizeBacklog, in)
	}
	var summaryKey string
	err := workflow.ExecuteActivity(b.actCtx, store.WriteBacklogSummary, activities.BacklogSummaryInput{
		Run: b.run, Parts: in.Parts, Total: in.Total, ParseErrors: in.ParseErrors, MaxTokens: o.MaxTokens,
		PriceInPerM: o.PriceInPerM, PriceOutPerM: o.PriceOutPerM,
		StartedAt: in.StartedAt, FinishedAt: workflow.Now(b.ctx),
	}).Get(b.ctx, &summaryKey)
	if err != nil {
		return BacklogResult{}, err
	}
	return BacklogResult{Run: b.run, Total: in.Total, Done: in.Done, Failed: in.Failed, TokensIn: in.TokensIn,
		TokensOut: in.TokensOut, BudgetExhausted: in.BudgetExhausted, Parts: in.Parts, SummaryKey: summaryKey}, nil
}

// snapshotOf is the EnsureSnapshot of the issue's repository and base
// commit, started by the first issue that needs it.
func (b *backlogWorkflow) snapshotOf(is schema.BacklogIssue) workflow.Future {
	key := string(is.Repo) + "@" + strings.ToLower(is.BaseCommit)
	if f, ok := b.snaps.futures[key]; ok {
		return f
	}
	if !b.snaps.windowed {
		b.snaps.futures[key] = b.ensureSnapshot(is)
		return b.snaps.futures[key]
	}
	f, set := workflow.NewFuture(b.ctx)
	b.snaps.futures[key] = f
	w := waitingSnapshot{is, set}
	if b.snaps.onHost[is.HostQueue] < SnapshotsPerHost {
		b.startSnapshot(w)
	} else {
		b.snaps.waiting[is.HostQueue] = append(b.snaps.waiting[is.HostQueue], w)
	}
	return f
}

// startSnapshot schedules a windowed snapshot on its host; as it settles,
// the next one waiting for that host starts.
func (b *backlogWorkflow) startSnapshot(w waitingSnapshot) {
	host := w.is.HostQueue
	b.snaps.onHost[host]++
	b.sel.AddFuture(b.ensureSnapshot(w.is), func(done workflow.Future) {
		b.snaps.onHost[host]--
		w.set.Chain(done)
		if q := b.snaps.waiting[host]; len(q) > 0 {
			b.snaps.waiting[host] = q[1:]
			b.startSnapshot(q[0])
		}
	})
}

// ensureSnapshot builds the snapshot on the host with the clone. When that
// host is gone (no worker took the task within HostWait), the
// repository is cloned again on a live host and the snapshot built there,
// so that losing a worker fails no issue.
func (b *backlogWorkflow) ensureSnapshot(is schema.BacklogIssue) workflow.Future {
	in := schema.EnsureSnapshotInput{Repo: is.Repo, Commit: is.BaseCommit}
	// Keep: runs recorded before the fallback replay the bare activity.
	if workflow.GetVersion(b.ctx, "snapshot-host-fallback", workflow.DefaultVersion, 1) < 1 {
		return workflow.ExecuteActivity(onHost(b.ctx, is.HostQueue, b.o.HostWait, 2*time.Hour), snapActs.EnsureSnapshot, in)
	}
	f, set := workflow.NewFuture(b.ctx)
	workflow.Go(b.ctx, func(ctx workflow.Context) {
		var si schema.SnapshotInfo
		err := workflow.ExecuteActivity(onHost(ctx, is.HostQueue, b.o.HostWait, 2*time.Hour), snapActs.EnsureSnapshot, in).Get(ctx, &si)
		if hostGone(err) && is.CloneURL != "" {
			var host string
			if host, err = moveClone(syncOptions(ctx), schema.RepoSpec{Name: is.Repo, URL: is.CloneURL, Ref: is.CloneRef}, 0, is.HostQueue); err == nil {
				err = workflow.ExecuteActivity(onHost(ctx, host, b.o.HostWait, 2*time.Hour), snapActs.EnsureSnapshot, in).Get(ctx, &si)
			}
		}
		set.Set(si, err)
	})
	return f
}

// startBatched puts an issue in flight on the batched path: ready at once
// against the indexed head, or once its snapshot is built.
func (b *backlogWorkflow) startBatched(pos int, is schema.BacklogIssue) {
	b.running++
	if baseCommitError(is) == "" {
		b.ready = append(b.ready, readyIssue{pos, is, ""})
		return
	}
	if is.HostQueue == "" {
		b.finished(pos, issueError(is, noHostError(is)))
		return
	}
	b.sel.AddFuture(b.snapshotOf(is), func(f workflow.Future) {
		var si schema.SnapshotInfo
		if err := f.Get(b.ctx, &si); err != nil {
			b.finished(pos, issueError(is, errorText(err)))
			return
		}
		b.ready = append(b.ready, readyIssue{pos, is, si.Commit})
	})
}

// launchReady launches every ready issue, in batches of up to batch.
func (b *backlogWorkflow) launchReady() {
	for len(b.ready) > 0 {
		n := min(b.batch, len(b.ready))
		b.launchBatch(b.ready[:n:n])
		b.ready = b.ready[n:]
	}
}

// finished takes a batched issue out of the window with its result.
func (b *backlogWorkflow) finished(pos int, r schema.BacklogIssueResult) {
	b.running--
	b.record(pos, r)
}

// fail finishes a batched issue that failed with msg.
func (b *backlogWorkflow) fail(p readyIssue, msg string, exhausted bool) {
	r := issueError(p.is, msg)
	r.BudgetExhausted = exhausted
	b.finished(p.pos, r)
}

// launchBatch starts one RetrieveBatch activity for the batch.
func (b *backlogWorkflow) launchBatch(batch []readyIssue) {
	exhausted := b.budgetSpent()
	if exhausted {
		b.in.BudgetExhausted += len(batch)
	}
	rin := activities.RetrieveBatchInput{Issues: make([]activities.RetrieveInput, len(batch))}
	for i, p := range batch {
		rin.Issues[i] = activities.RetrieveInput{Repo: p.is.Repo, Issue: p.is.Text, Params: b.in.Params, Snapshot: p.snapshot}
	}
	batchStart := workflow.Now(b.ctx)
	rf := workflow.ExecuteActivity(workflow.WithActivityOptions(b.ctx, retrieveOptions(len(batch))), searchActs.RetrieveBatch, rin)
	b.sel.AddFuture(rf, func(f workflow.Future) { b.retrieved(batch, f, exhausted, batchStart) })
}

// retrieved takes a batch's retrievals: issues without centers (or with the
// budget spent) are answered at once, the others go to one SelectBatch.
func (b *backlogWorkflow) retrieved(batch []readyIssue, f workflow.Future, exhausted bool, batchStart time.Time) {
	var outs []activities.RetrieveOutcome
	err := f.Get(b.ctx, &outs)
	if err == nil && len(outs) != len(batch) {
		err = fmt.Errorf("retrieve batch: %d answers for %d issues", len(outs), len(batch))
	}
	if err != nil {
		for _, p := range batch {
			b.fail(p, errorText(err), exhausted)
		}
		return
	}
	var asks []selectAsk
	var sin activities.SelectBatchInput
	centers := 0
	for i, p := range batch {
		r := outs[i].Retrieval
		if r == nil {
			b.fail(p, cmp.Or(outs[i].Error, "retrieve: no answer"), exhausted)
			continue
		}
		if msg := commitMismatch(p.is.Repo, strings.ToLower(p.is.BaseCommit), r); msg != "" {
			b.fail(p, msg, exhausted)
			continue
		}
		cs := search.CentersOf(r)
		if exhausted || len(cs) == 0 {
			b.answer(p, r, nil, exhausted, batchStart, batchStart)
			continue
		}
		asks = append(asks, selectAsk{p, r, cs})
		sin.Issues = append(sin.Issues, activities.SelectCentersInput{Repo: p.is.Repo, Commit: r.Commit, Issue: p.is.Text,
			Centers: cs, MaxTokens: b.o.MaxIssueTokens})
		centers += len(cs)
	}
	if len(asks) == 0 {
		return
	}
	policy, perCenter := selectPolicy(b.in.LLMRetry)
	selStart := workflow.Now(b.ctx)
	sf := workflow.ExecuteActivity(workflow.WithActivityOptions(b.ctx, selectOptions(policy, perCenter, centers)), llmActs.SelectBatch, sin)
	b.sel.AddFuture(sf, func(f workflow.Future) { b.selected(asks, f, selStart, batchStart) })
}

// selected answers each issue of a SelectBatch with the centers it settled;
// a failed selection keeps those settled before it failed.
func (b *backlogWorkflow) selected(asks []selectAsk, f workflow.Future, selStart, batchStart time.Time) {
	var so activities.SelectBatchOutput
	err := f.Get(b.ctx, &so)
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
		b.answer(a.p, a.r, cs, false, selStart, batchStart)
	}
}

// answer ranks an issue from retrieval r and its settled centers cs, reranks
// it when asked, and finishes it.
func (b *backlogWorkflow) answer(p readyIssue, r *search.Retrieval, cs []activities.CenterResult, exhausted bool, selStart, batchStart time.Time) {
	out := newLocalizeResult(r)
	selected := map[string]spider.Selection{}
	addCenters(&out, selected, cs)
	now := workflow.Now(b.ctx)
	if err := assemble(&out, r, selected, now.Sub(selStart), now.Sub(batchStart)); err != nil {
		b.fail(p, err.Error(), exhausted)
		return
	}
	done := func() {
		res := issueResult(p.is, out, exhausted)
		if b.o.Details {
			if d, err := json.Marshal(out); err == nil {
				res.Detail = d
			}
		}
		b.finished(p.pos, res)
	}
	ask := rerankAsk{Repo: p.is.Repo, Issue: p.is.Text, N: b.in.Params.Rerank, MaxIssueTokens: b.o.MaxIssueTokens, Retry: b.in.LLMRetry}
	if exhausted || b.budgetSpent() {
		ask.Skip = "the run's token budget is spent"
	}
	f := startRerank(b.ctx, ask, &out)
	if f == nil {
		done()
		return
	}
	b.sel.AddFuture(f, func(f workflow.Future) {
		finishRerank(b.ctx, f, &out)
		out.Latency = workflow.Now(b.ctx).Sub(batchStart)
		done()
	})
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
	r := schema.BacklogIssueResult{IssueID: is.ID, Repo: string(is.Repo), BaseCommit: is.BaseCommit, Commit: lr.Commit,
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

// BacklogPartSize is the issues per part for runs returning k functions
// an issue: DefaultBacklogPartSize, fewer where k × that passes
// PartFunctions, at least one; k ≤ 0 (the method's default) counts as 20.
func BacklogPartSize(k int) int {
	if k <= 0 {
		k = 20
	}
	return max(1, min(DefaultBacklogPartSize, PartFunctions/k))
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
	if o.HostWait < 0 {
		errs = append(errs, fmt.Errorf("host-wait %v: want a positive duration (0: default %v)", o.HostWait, DefaultHostWait))
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
	if err := search.CheckMethod(in.Params.Method); err != nil {
		errs = append(errs, err)
	}
	if err := in.Params.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("localize backlog: %s", joinErrs(errs))
	}
	return nil
}
