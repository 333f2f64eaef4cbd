package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/schema"
)

// executeDraining is how fleets ran before the window was kept across runs
// (GetVersion "fleet-window-across-runs" at DefaultVersion): children
// terminate with the run, so each run drains its window before continuing
// as new. New runs never take it; a fleet started before the change, still
// in flight on a user's embedded server after an upgrade, resumes on it by
// replay (histories indexfleet-*-draining.json).
func (f *fleetWorkflow) executeDraining() (FleetResult, error) {
	f.fleetID = workflow.GetInfo(f.ctx).WorkflowExecution.ID
	f.next = f.in.Next
	if err := f.setProgress(func() int { return f.running }); err != nil {
		return FleetResult{}, err
	}
	f.childCtx = workflow.WithChildOptions(f.ctx, workflow.ChildWorkflowOptions{
		TaskQueue:         IndexQueue,
		ParentClosePolicy: 0, // terminate children with the fleet
	})
	f.sel = workflow.NewSelector(f.ctx)
	for i := 0; i < len(f.batch); {
		for f.running < f.window && i < len(f.batch) {
			f.startDraining(f.batch[i])
			i++
			f.next++
		}
		f.sel.Select(f.ctx)
	}
	for f.running > 0 {
		f.sel.Select(f.ctx)
	}
	if err := f.storeResults(); err != nil {
		return FleetResult{}, err
	}
	if f.next < f.total {
		f.in.Next = f.next
		return FleetResult{}, workflow.NewContinueAsNewError(f.ctx, IndexFleet, f.in)
	}
	return f.finish()
}

// startDraining starts spec's IndexRepo child, which does not report by
// signal: its end is its result.
func (f *fleetWorkflow) startDraining(spec schema.RepoSpec) {
	cctx := workflow.WithWorkflowID(f.childCtx, RepoWorkflowID(string(spec.Name)))
	fut := workflow.ExecuteChildWorkflow(cctx, IndexRepo, schema.IndexRepoInput{Repo: spec, Options: f.in.Options.Index})
	f.running++
	f.sel.AddFuture(fut, func(fut workflow.Future) {
		f.running--
		var r schema.RepoResult
		if err := fut.Get(f.ctx, &r); isAlreadyStarted(err) {
			r = skippedResult(spec)
		} else if err != nil {
			r = schema.RepoResult{Repo: spec.Name, URL: spec.URL, Error: errorText(err)}
		}
		f.results = append(f.results, r)
	})
}
