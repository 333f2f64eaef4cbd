package workflows

import (
	"cmp"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// Fleet defaults.
const (
	DefaultWindow             = 50
	DefaultContinueAsNewAfter = 500
	// ProbeAfter is how long a fleet waits on children adopted from its
	// previous run before checking that they still run.
	ProbeAfter  = 15 * time.Minute
	maxErrorLen = 2000
)

// FleetResult is what IndexFleet returns: totals and where the summary is.
type FleetResult struct {
	Total      int    `json:"total"`
	Done       int    `json:"done"`
	Failed     int    `json:"failed"`
	SummaryKey string `json:"summary_key"`
}

// IndexFleet indexes many repositories with a bounded sliding window of
// IndexRepo children. After starting ContinueAsNewAfter children it stores
// this run's results and continues as new with the children still running
// (see fleetWorkflow), so the history stays small for any fleet size and
// the window stays full. A failed repository is recorded and never fails
// the fleet.
func IndexFleet(ctx workflow.Context, in schema.IndexFleetInput) (FleetResult, error) {
	if err := checkInput(ctx, func() error { return validateFleetInput(in) }); err != nil {
		return FleetResult{}, err
	}
	f := newFleetWorkflow(ctx, in)
	if err := f.loadBatch(); err != nil {
		return FleetResult{}, err
	}
	// Keep: a fleet started before the window was kept across runs may
	// still be in flight on a user's embedded server, whose state survives
	// an upgrade, and resumes by replay (indexfleet_draining.go).
	if workflow.GetVersion(ctx, "fleet-window-across-runs", workflow.DefaultVersion, 1) >= 1 {
		return f.Execute()
	}
	return f.executeDraining()
}

// fleetWorkflow is one run of IndexFleet: its share of the fleet (batch),
// the children in flight, this run's results not yet stored and the totals
// carried to the next run (in). Its methods run on the workflow's one
// goroutine, from Execute and from the selector's callbacks.
//
// The window is kept full across continue-as-new: children are abandoned,
// not terminated, when the run continues as new, and report their result to
// the fleet by signal (RepoDoneSignal, to the fleet's workflow id, so the
// run then current gets it); the next run adopts them (in.Running) and
// fills only the free slots. A child that ends without reporting
// (terminated by hand) is found by starting it again after ProbeAfter: a
// start refused as already running means it still runs; otherwise it
// indexes the repository again.
type fleetWorkflow struct {
	ctx      workflow.Context
	actCtx   workflow.Context // store activities on the index queue
	childCtx workflow.Context
	sel      workflow.Selector
	signals  workflow.ReceiveChannel // RepoDoneSignal

	in            schema.IndexFleetInput // the carried totals and result keys
	fleetID       string
	window        int
	perRun, total int
	batch         []schema.RepoSpec // this run's share: repositories [in.Next, in.Next+len(batch))
	next          int               // the next repository of the fleet to start
	results       []schema.RepoResult

	pending  map[schema.RepoName]bool // started, not yet reported
	inFlight []schema.RepoSpec        // pending, in start order
	adopted  map[schema.RepoName]bool // started by an earlier run, not probed since
	children []fleetChild             // started by this run
	probing  bool                     // a probe timer is set

	running int // children in flight on the draining path
}

// fleetChild is an IndexRepo child this run started; probe: started to
// find out whether an adopted child still runs.
type fleetChild struct {
	spec    schema.RepoSpec
	probe   bool
	started workflow.Future
}

// newFleetWorkflow resolves the defaults of a run; it issues no command.
func newFleetWorkflow(ctx workflow.Context, in schema.IndexFleetInput) *fleetWorkflow {
	f := &fleetWorkflow{ctx: ctx,
		window: cmp.Or(max(in.Options.Window, 0), DefaultWindow),
		perRun: cmp.Or(max(in.Options.ContinueAsNewAfter, 0), DefaultContinueAsNewAfter),
	}
	if in.StartedAt.IsZero() {
		in.StartedAt = workflow.Now(ctx)
	}
	f.in = in
	// The heartbeat timeout retries an attempt lost with its worker (kill
	// -9) on another after 30 s, rather than after the start-to-close.
	f.actCtx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})
	return f
}

// loadBatch sets this run's slice of the fleet: inline for small fleets,
// loaded from the store for large ones so that no payload or history grows
// with the fleet.
func (f *fleetWorkflow) loadBatch() error {
	in := &f.in
	f.total = len(in.Repos)
	if in.ReposKey == "" {
		f.batch = in.Repos[min(in.Next, f.total):min(in.Next+f.perRun, f.total)]
		return nil
	}
	f.total = in.Total
	if n := min(f.perRun, f.total-in.Next); n > 0 {
		return workflow.ExecuteActivity(f.actCtx, store.LoadFleetRepos, activities.LoadReposInput{
			Key: in.ReposKey, Offset: in.Next, Limit: n,
		}).Get(f.ctx, &f.batch)
	}
	return nil
}

// Execute starts this run's batch with the window full, then stores the
// results that came in and continues as new with the children still
// running, or, at the fleet's end, writes its summary.
func (f *fleetWorkflow) Execute() (FleetResult, error) {
	f.fleetID = workflow.GetInfo(f.ctx).WorkflowExecution.ID
	f.pending, f.adopted = map[schema.RepoName]bool{}, map[schema.RepoName]bool{}
	for _, spec := range f.in.Running {
		f.pending[spec.Name], f.adopted[spec.Name] = true, true
		f.inFlight = append(f.inFlight, spec)
	}
	f.next = f.in.Next
	if err := f.setProgress(func() int { return len(f.pending) }); err != nil {
		return FleetResult{}, err
	}
	f.childCtx = workflow.WithChildOptions(f.ctx, workflow.ChildWorkflowOptions{
		TaskQueue: IndexQueue,
		// Children outlive a continue-as-new; the next run adopts them.
		ParentClosePolicy: enums.PARENT_CLOSE_POLICY_ABANDON,
	})
	f.sel = workflow.NewSelector(f.ctx)
	f.signals = workflow.GetSignalChannel(f.ctx, RepoDoneSignal)
	f.sel.AddReceive(f.signals, func(c workflow.ReceiveChannel, _ bool) {
		var r schema.RepoResult
		c.Receive(f.ctx, &r)
		f.record(r)
	})
	f.runWindow()
	f.settleStarts()
	if err := f.storeReports(); err != nil {
		return FleetResult{}, err
	}
	return f.continueAsNewOrComplete()
}

// runWindow starts the batch, keeping at most window children pending,
// until the batch is started and either more of the fleet is left for the
// next run or every child has reported.
func (f *fleetWorkflow) runWindow() {
	for i := 0; len(f.pending) > 0 || i < len(f.batch); {
		for len(f.pending) < f.window && i < len(f.batch) {
			f.start(f.batch[i], false)
			i++
			f.next++
		}
		if i == len(f.batch) && f.next < f.total {
			break // this run's share is started: continue as new with the window full
		}
		f.probeAdopted()
		f.sel.Select(f.ctx)
	}
}

// record takes a child's result, once: a second report (by signal and by
// the child's end, or a probe's duplicate) is dropped.
func (f *fleetWorkflow) record(r schema.RepoResult) {
	if !f.pending[r.Repo] {
		return
	}
	delete(f.pending, r.Repo)
	f.inFlight = slices.DeleteFunc(f.inFlight, func(s schema.RepoSpec) bool { return s.Name == r.Repo })
	f.results = append(f.results, r)
}

// start starts spec's IndexRepo child, reporting to this fleet.
func (f *fleetWorkflow) start(spec schema.RepoSpec, probe bool) {
	cctx := workflow.WithWorkflowID(f.childCtx, RepoWorkflowID(string(spec.Name)))
	fut := workflow.ExecuteChildWorkflow(cctx, IndexRepo, schema.IndexRepoInput{Repo: spec, Options: f.in.Options.Index, ReportTo: f.fleetID})
	if !probe {
		f.pending[spec.Name] = true
		f.inFlight = append(f.inFlight, spec)
	}
	f.children = append(f.children, fleetChild{spec, probe, fut.GetChildWorkflowExecution()})
	f.sel.AddFuture(fut, func(fut workflow.Future) { f.childDone(spec, probe, fut) })
}

// childDone records a child's end: its result, its failure, or a start
// refused because the repository is being indexed already.
func (f *fleetWorkflow) childDone(spec schema.RepoSpec, probe bool, fut workflow.Future) {
	var r schema.RepoResult
	err := fut.Get(f.ctx, &r)
	switch {
	case isAlreadyStarted(err) && probe:
		f.adopted[spec.Name] = true // still runs: probed again later
		return
	case isAlreadyStarted(err):
		r = skippedResult(spec)
	case err != nil:
		r = schema.RepoResult{Repo: spec.Name, URL: spec.URL, Error: errorText(err)}
	}
	f.record(r)
}

// probeAdopted sets a ProbeAfter timer while adopted children are in
// flight; when it fires, each is started again to see whether it still runs.
func (f *fleetWorkflow) probeAdopted() {
	if f.probing || !slices.ContainsFunc(f.inFlight, func(s schema.RepoSpec) bool { return f.adopted[s.Name] }) {
		return
	}
	f.probing = true
	f.sel.AddFuture(workflow.NewTimer(f.ctx, ProbeAfter), func(workflow.Future) {
		f.probing = false
		for _, spec := range slices.Clone(f.inFlight) {
			if f.adopted[spec.Name] {
				delete(f.adopted, spec.Name) // a child the probe starts is this run's
				f.start(spec, true)
			}
		}
	})
}

// settleStarts waits until every child of this run has started: a child
// must have started before the run continues as new, or its start is lost;
// one refused (another fleet holds the repository) is recorded as skipped
// here, since its end would come to no run.
func (f *fleetWorkflow) settleStarts() {
	for _, c := range f.children {
		if err := c.started.Get(f.ctx, nil); isAlreadyStarted(err) && !c.probe {
			f.record(skippedResult(c.spec))
		}
	}
}

// storeReports stores the results that came in, with the reports that
// arrive until the run ends: the run ends only right after a drain that
// found none, with nothing blocking in between.
func (f *fleetWorkflow) storeReports() error {
	for {
		for {
			var r schema.RepoResult
			if !f.signals.ReceiveAsync(&r) {
				break
			}
			f.record(r)
		}
		if len(f.results) == 0 {
			return nil
		}
		if err := f.storeResults(); err != nil {
			return err
		}
	}
}

// continueAsNewOrComplete hands the rest of the fleet and the children in
// flight to a new run, or, at the fleet's end, writes its summary.
func (f *fleetWorkflow) continueAsNewOrComplete() (FleetResult, error) {
	if f.next < f.total || len(f.pending) > 0 {
		f.in.Next, f.in.Running = f.next, f.inFlight
		return FleetResult{}, workflow.NewContinueAsNewError(f.ctx, IndexFleet, f.in)
	}
	return f.finish()
}

// isAlreadyStarted: the child's workflow id runs already.
func isAlreadyStarted(err error) bool {
	var dup *temporal.ChildWorkflowExecutionAlreadyStartedError
	return errors.As(err, &dup)
}

// skippedResult is a repository another run (another schedule's fleet, say)
// is indexing: never two writers at once.
func skippedResult(spec schema.RepoSpec) schema.RepoResult {
	return schema.RepoResult{Repo: spec.Name, URL: spec.URL,
		Error: "already being indexed by another run (" + RepoWorkflowID(string(spec.Name)) + "): skipped; a later run takes it"}
}

// setProgress answers the progress query from the carried totals and this
// run's results.
func (f *fleetWorkflow) setProgress(running func() int) error {
	return workflow.SetQueryHandler(f.ctx, ProgressQuery, func() (schema.FleetProgress, error) {
		done, failed := f.in.Done, f.in.Failed
		for _, r := range f.results {
			if r.OK {
				done++
			} else {
				failed++
			}
		}
		return schema.FleetProgress{Total: f.total, Done: done, Failed: failed, Running: running(),
			Pending: f.total - f.next}, nil
	})
}

// storeResults writes this run's results as the fleet's next result part
// and moves them into the carried totals.
func (f *fleetWorkflow) storeResults() error {
	if len(f.results) == 0 {
		return nil
	}
	var key string
	err := workflow.ExecuteActivity(f.actCtx, store.WriteFleetResults, activities.FleetResultsInput{
		FleetID: f.fleetID, Seq: len(f.in.ResultKeys), Results: f.results,
	}).Get(f.ctx, &key)
	if err != nil {
		return err
	}
	f.in.ResultKeys = append(f.in.ResultKeys, key)
	for _, r := range f.results {
		if r.OK {
			f.in.Done++
		} else {
			f.in.Failed++
		}
	}
	f.results = nil // now counted in in.Done/in.Failed
	return nil
}

// finish writes the fleet's summary.
func (f *fleetWorkflow) finish() (FleetResult, error) {
	var summaryKey string
	err := workflow.ExecuteActivity(f.actCtx, store.WriteFleetSummary, activities.FleetSummaryInput{
		FleetID: f.fleetID, ResultKeys: f.in.ResultKeys, StartedAt: f.in.StartedAt, FinishedAt: workflow.Now(f.ctx),
		Total: f.total,
	}).Get(f.ctx, &summaryKey)
	if err != nil {
		return FleetResult{}, err
	}
	return FleetResult{Total: f.total, Done: f.in.Done, Failed: f.in.Failed, SummaryKey: summaryKey}, nil
}

// errorText is what the failing step reported, capped: the child and activity
// wrappers are peeled off, and of an application error only its message is
// kept, since its causes are the wrapped errors that message already spells out
// (their innermost is a sentinel such as "permanent" that says little alone).
func errorText(err error) string {
	for {
		var next error
		switch e := err.(type) {
		case *temporal.ChildWorkflowExecutionError:
			next = e.Unwrap()
		case *temporal.ActivityError:
			next = e.Unwrap()
		}
		if next == nil {
			break
		}
		err = next
	}
	msg := err.Error()
	if ae, ok := err.(*temporal.ApplicationError); ok && ae.Message() != "" {
		msg = ae.Message()
	}
	if len(msg) > maxErrorLen {
		cut := maxErrorLen
		for cut > 0 && !utf8.RuneStart(msg[cut]) { // never split a character
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
