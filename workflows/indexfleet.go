package workflows

import (
	"errors"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// Fleet defaults.
const (
	DefaultWindow             = 50
	DefaultContinueAsNewAfter = 500
	maxErrorLen               = 2000
)

// FleetResult is what IndexFleet returns: totals and where the summary is.
type FleetResult struct {
	Total      int    `json:"total"`
	Done       int    `json:"done"`
	Failed     int    `json:"failed"`
	SummaryKey string `json:"summary_key"`
}

// IndexFleet indexes many repositories with a bounded sliding window of
// IndexRepo children. After ContinueAsNewAfter children it drains the window,
// stores this run's results and continues as new, so the history stays small
// for any fleet size. A failed repository is recorded and never fails the fleet.
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
	info := workflow.GetInfo(ctx)
	fleetID := info.WorkflowExecution.ID
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

	var results []schema.RepoResult
	running := 0
	next := in.Next
	err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (schema.FleetProgress, error) {
		done, failed := in.Done, in.Failed
		for _, r := range results {
			if r.OK {
				done++
			} else {
				failed++
			}
		}
		return schema.FleetProgress{Total: total, Done: done, Failed: failed, Running: running,
			Pending: total - next}, nil
	})
	if err != nil {
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
			if err := f.Get(ctx, &r); err != nil {
				msg := errorText(err)
				var dup *temporal.ChildWorkflowExecutionAlreadyStartedError
				if errors.As(err, &dup) {
					// Another fleet (another schedule, say) holds it: never two
					// writers at once.
					msg = "already being indexed by another run (" + RepoWorkflowID(string(spec.Name)) + "): skipped; a later run takes it"
				}
				r = schema.RepoResult{Repo: spec.Name, URL: spec.URL, Error: msg}
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
	if len(results) > 0 {
		var key string
		err := workflow.ExecuteActivity(actCtx, store.WriteFleetResults, activities.FleetResultsInput{
			FleetID: fleetID, Seq: len(in.ResultKeys), Results: results,
		}).Get(ctx, &key)
		if err != nil {
			return FleetResult{}, err
		}
		in.ResultKeys = append(in.ResultKeys, key)
		for _, r := range results {
			if r.OK {
				in.Done++
			} else {
				in.Failed++
			}
		}
		results = nil // now counted in in.Done/in.Failed
	}
	if next < total {
		in.Next = next
		return FleetResult{}, workflow.NewContinueAsNewError(ctx, IndexFleet, in)
	}
	var summaryKey string
	err = workflow.ExecuteActivity(actCtx, store.WriteFleetSummary, activities.FleetSummaryInput{
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
