package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// ScheduledIndexInput is what a schedule starts on every run: a fleet whose
// repositories are given inline or read from a file at each run (so that
// the file can change between runs), and the fleet's options.
type ScheduledIndexInput struct {
	Schedule  string              `json:"schedule"`
	Repos     []schema.RepoSpec   `json:"repos,omitempty"`
	ReposFile string              `json:"repos_file,omitempty"`
	Options   schema.FleetOptions `json:"options"`
}

// ScheduledFleetID is the id of the IndexFleet a scheduled run starts: the
// run's own id (the schedule's id and the scheduled time) and "/fleet".
func ScheduledFleetID(runID string) string { return runID + "/fleet" }

// ScheduledIndex is one run of a schedule: it reads the repositories (from
// the file, when the schedule names one) and indexes them as an IndexFleet
// child. Each repository's IndexRepo keeps its fixed id, so a repository
// that another fleet is indexing is not indexed twice at once: that run
// reports it failed ("already running") and the next run takes it.
func ScheduledIndex(ctx workflow.Context, in ScheduledIndexInput) (FleetResult, error) {
	if (len(in.Repos) == 0) == (in.ReposFile == "") {
		return FleetResult{}, temporal.NewNonRetryableApplicationError("scheduled index: give repositories or a repos file, not both or neither", activities.ErrTypeBadInput, nil)
	}
	fleetID := ScheduledFleetID(workflow.GetInfo(ctx).WorkflowExecution.ID)
	fleet := schema.IndexFleetInput{Repos: in.Repos}
	if in.ReposFile != "" {
		actCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           IndexQueue,
			StartToCloseTimeout: 5 * time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
		})
		var store *activities.Store
		if err := workflow.ExecuteActivity(actCtx, store.ReadScheduleRepos, activities.ScheduleReposInput{File: in.ReposFile, FleetID: fleetID}).Get(ctx, &fleet); err != nil {
			return FleetResult{}, err
		}
	}
	fleet.Options = in.Options
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fleetID, TaskQueue: IndexQueue})
	var res FleetResult
	err := workflow.ExecuteChildWorkflow(cctx, IndexFleet, fleet).Get(ctx, &res)
	return res, err
}
