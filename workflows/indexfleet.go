package workflows

import (
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
// (see runFleet), so the history stays small for any fleet size and the
// window stays full. A failed repository is recorded and never fails the
// fleet.
func IndexFleet(ctx workflow.Context, in schema.IndexFleetInput) (FleetResult, error) {
	if err := checkInput(ctx, func() error { return validateFleetInput(in) }); err != nil {
		return FleetResult{}, err
	}
	window := in.Options.Window
	if window <= 0 {
		window = DefaultWindow
	}
	perRun := in.Options.ContinueAsNewAfter
	if perRun <= 0 {
		perRun = DefaultContinueAsNewAfter
	}
	if in.StartedAt.IsZero() {
		in.StartedAt = workflow.Now(ctx)
	}
	actCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})

	// This run's slice of the fleet: inline for small fleets, loaded from the
	// store for large ones so that no payload or history grows with the fleet.
	total := len(in.Repos)
	var batch []schema.RepoSpec
	if in.ReposKey != "" {
		total = in.Total
		if n := min(perRun, total-in.Next); n > 0 {
			err := workflow.ExecuteActivity(actCtx, store.LoadFleetRepos, activities.LoadReposInput{
				Key: in.ReposKey, Offset: in.Next, Limit: n,
			}).Get(ctx, &batch)
			if err != nil {
				return FleetResult{}, err
			}
		}
	} else {
		batch = in.Repos[min(in.Next, total):min(in.Next+perRun, total)]
	}

	if workflow.GetVersion(ctx, "fleet-window-across-runs", workflow.DefaultVersion, 1) >= 1 {
		return runFleet(ctx, in, batch, total, window, actCtx)
	}
	return runFleetDraining(ctx, in, batch, total, window, actCtx)
}

// runFleet runs this run's batch with the window kept full across
// continue-as-new: children are abandoned, not terminated, when the run
// continues as new, and report their result to the fleet by signal
// (RepoDoneSignal, to the fleet's workflow id, so the run then current gets
// it); the next run adopts them (in.Running) and fills only the free slots.
// A child that ends without reporting (terminated by hand) is found by
// starting it again after ProbeAfter: a start refused as already running
// means it still runs; otherwise it indexes the repository again.
func runFleet(ctx workflow.Context, in schema.IndexFleetInput, batch []schema.RepoSpec, total, window int, actCtx workflow.Context) (FleetResult, error) {
	fleetID := workflow.GetInfo(ctx).WorkflowExecution.ID
	var results []schema.RepoResult
	pending := map[schema.RepoName]bool{} // started, not yet reported
	var inFlight []schema.RepoSpec        // pending, in start order
	adopted := map[schema.RepoName]bool{} // started by an earlier run
	for _, spec := range in.Running {
		pending[spec.Name], adopted[spec.Name] = true, true
		inFlight = append(inFlight, spec)
	}
	next := in.Next
	if err := setFleetProgress(ctx, &in, &results, total, func() int { return len(pending) }, &next); err != nil {
		return FleetResult{}, err
	}
	record := func(r schema.RepoResult) {
		if !pending[r.Repo] {
			return // reported twice (by signal and by the child's end), or a probe's duplicate
		}
		delete(pending, r.Repo)
		inFlight = slices.DeleteFunc(inFlight, func(s schema.RepoSpec) bool { return s.Name == r.Repo })
		results = append(results, r)
	}
	childCtx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		TaskQueue: IndexQueue,
		// Children outlive a continue-as-new; the next run adopts them.
		ParentClosePolicy: enums.PARENT_CLOSE_POLICY_ABANDON,
	})
	sel := workflow.NewSelector(ctx)
	signals := workflow.GetSignalChannel(ctx, RepoDoneSignal)
	sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
		var r schema.RepoResult
		c.Receive(ctx, &r)
		record(r)
	})
	type child struct {
		spec    schema.RepoSpec
		probe   bool
		started workflow.Future
	}
	var children []child // started by this run
	start := func(spec schema.RepoSpec, probe bool) {
		cctx := workflow.WithWorkflowID(childCtx, RepoWorkflowID(string(spec.Name)))
		fut := workflow.ExecuteChildWorkflow(cctx, IndexRepo, schema.IndexRepoInput{Repo: spec, Options: in.Options.Index, ReportTo: fleetID})
		if !probe {
			pending[spec.Name] = true
			inFlight = append(inFlight, spec)
		}
		children = append(children, child{spec, probe, fut.GetChildWorkflowExecution()})
		sel.AddFuture(fut, func(f workflow.Future) {
			var r schema.RepoResult
			err := f.Get(ctx, &r)
			switch {
			case isAlreadyStarted(err) && probe:
				adopted[spec.Name] = true // still runs: probed again later
				return
			case isAlreadyStarted(err):
				r = skippedResult(spec)
			case err != nil:
				r = schema.RepoResult{Repo: spec.Name, URL: spec.URL, Error: errorText(err)}
			}
			record(r)
		})
	}
	probing := false
	for i := 0; len(pending) > 0 || i < len(batch); {
		for len(pending) < window && i < len(batch) {
			start(batch[i], false)
			i++
			next++
		}
		if i == len(batch) && next < total {
			break // this run's share is started: continue as new with the window full
		}
		if !probing && slices.ContainsFunc(inFlight, func(s schema.RepoSpec) bool { return adopted[s.Name] }) {
			probing = true
			sel.AddFuture(workflow.NewTimer(ctx, ProbeAfter), func(workflow.Future) {
				probing = false
				for _, spec := range slices.Clone(inFlight) {
					if adopted[spec.Name] {
						delete(adopted, spec.Name) // a child the probe starts is this run's
						start(spec, true)
					}
				}
			})
		}
		sel.Select(ctx)
	}
	// A child must have started before the run continues as new, or its
	// start is lost; one refused (another fleet holds the repository) is
	// recorded as skipped here, since its end would come to no run.
	for _, c := range children {
		if err := c.started.Get(ctx, nil); isAlreadyStarted(err) && !c.probe {
			record(skippedResult(c.spec))
		}
	}
	// Reports that arrive until the run ends are counted here, not lost: the
	// run ends only right after a drain that found none, with nothing
	// blocking in between.
	for {
		for {
			var r schema.RepoResult
			if !signals.ReceiveAsync(&r) {
				break
			}
			record(r)
		}
		if len(results) == 0 {
			break
		}
		if err := storeFleetResults(ctx, actCtx, fleetID, &in, &results); err != nil {
			return FleetResult{}, err
		}
	}
	if next < total || len(pending) > 0 {
		in.Next, in.Running = next, inFlight
		return FleetResult{}, workflow.NewContinueAsNewError(ctx, IndexFleet, in)
	}
	return finishFleet(ctx, actCtx, fleetID, in, total)
}

// runFleetDraining is how fleets ran before runFleet: children terminate
// with the run, so each run drains its window before continuing as new.
// Kept for runs recorded before the change.
func runFleetDraining(ctx workflow.Context, in schema.IndexFleetInput, batch []schema.RepoSpec, total, window int, actCtx workflow.Context) (FleetResult, error) {
	fleetID := workflow.GetInfo(ctx).WorkflowExecution.ID
	var results []schema.RepoResult
	running := 0
	next := in.Next
	if err := setFleetProgress(ctx, &in, &results, total, func() int { return running }, &next); err != nil {
		return FleetResult{}, err
	}
	childCtx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		TaskQueue:         IndexQueue,
		ParentClosePolicy: 0, // terminate children with the fleet
	})
	sel := workflow.NewSelector(ctx)
	start := func(spec schema.RepoSpec) {
		cctx := workflow.WithWorkflowID(childCtx, RepoWorkflowID(string(spec.Name)))
		fut := workflow.ExecuteChildWorkflow(cctx, IndexRepo, schema.IndexRepoInput{Repo: spec, Options: in.Options.Index})
		running++
		sel.AddFuture(fut, func(f workflow.Future) {
			running--
			var r schema.RepoResult
			if err := f.Get(ctx, &r); isAlreadyStarted(err) {
				r = skippedResult(spec)
			} else if err != nil {
				r = schema.RepoResult{Repo: spec.Name, URL: spec.URL, Error: errorText(err)}
			}
			results = append(results, r)
		})
	}
	for i := 0; i < len(batch); {
		for running < window && i < len(batch) {
			start(batch[i])
			i++
			next++
		}
		sel.Select(ctx)
	}
	for running > 0 {
		sel.Select(ctx)
	}
	if err := storeFleetResults(ctx, actCtx, fleetID, &in, &results); err != nil {
		return FleetResult{}, err
	}
	if next < total {
		in.Next = next
		return FleetResult{}, workflow.NewContinueAsNewError(ctx, IndexFleet, in)
	}
	return finishFleet(ctx, actCtx, fleetID, in, total)
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

// setFleetProgress answers the progress query from the carried totals and
// this run's results.
func setFleetProgress(ctx workflow.Context, in *schema.IndexFleetInput, results *[]schema.RepoResult, total int, running func() int, next *int) error {
	return workflow.SetQueryHandler(ctx, ProgressQuery, func() (schema.FleetProgress, error) {
		done, failed := in.Done, in.Failed
		for _, r := range *results {
			if r.OK {
				done++
			} else {
				failed++
			}
		}
		return schema.FleetProgress{Total: total, Done: done, Failed: failed, Running: running(),
			Pending: total - *next}, nil
	})
}

// storeFleetResults writes this run's results as the fleet's next result
// part and moves them into the carried totals.
func storeFleetResults(ctx, actCtx workflow.Context, fleetID string, in *schema.IndexFleetInput, results *[]schema.RepoResult) error {
	if len(*results) == 0 {
		return nil
	}
	var key string
	err := workflow.ExecuteActivity(actCtx, store.WriteFleetResults, activities.FleetResultsInput{
		FleetID: fleetID, Seq: len(in.ResultKeys), Results: *results,
	}).Get(ctx, &key)
	if err != nil {
		return err
	}
	in.ResultKeys = append(in.ResultKeys, key)
	for _, r := range *results {
		if r.OK {
			in.Done++
		} else {
			in.Failed++
		}
	}
	*results = nil // now counted in in.Done/in.Failed
	return nil
}

// finishFleet writes the fleet's summary.
func finishFleet(ctx, actCtx workflow.Context, fleetID string, in schema.IndexFleetInput, total int) (FleetResult, error) {
	var summaryKey string
	err := workflow.ExecuteActivity(actCtx, store.WriteFleetSummary, activities.FleetSummaryInput{
		FleetID: fleetID, ResultKeys: in.ResultKeys, StartedAt: in.StartedAt, FinishedAt: workflow.Now(ctx),
		Total: total,
	}).Get(ctx, &summaryKey)
	if err != nil {
		return FleetResult{}, err
	}
	return FleetResult{Total: total, Done: in.Done, Failed: in.Failed, SummaryKey: summaryKey}, nil
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
