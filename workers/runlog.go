package workers

import (
	"log/slog"
	"sync"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/workflows"
)

// scheduledIndexType is the workflow type of a schedule's runs.
const scheduledIndexType = "ScheduledIndex"

// runLog is a worker interceptor that logs one line when a scheduled run
// (ScheduledIndex) ends on this worker: its schedule, its id, and how many
// repositories it indexed and failed, or why it failed. The line goes to
// the process's slog logger at info (error for a failed run), once: never
// while a workflow's history is replayed, and not again when the server
// has the run's last workflow task executed a second time.
type runLog struct {
	interceptor.WorkerInterceptorBase
	logged sync.Map // run id → true
}

func (w *runLog) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	if workflow.GetInfo(ctx).WorkflowType.Name != scheduledIndexType {
		return next
	}
	i := &runLogInbound{logged: &w.logged}
	i.Next = next
	return i
}

type runLogInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	logged *sync.Map
}

func (i *runLogInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	res, err := i.Next.ExecuteWorkflow(ctx, in)
	if workflow.IsReplaying(ctx) {
		return res, err
	}
	if _, again := i.logged.LoadOrStore(workflow.GetInfo(ctx).WorkflowExecution.RunID, true); again {
		return res, err
	}
	schedule := ""
	if len(in.Args) > 0 {
		if si, ok := in.Args[0].(workflows.ScheduledIndexInput); ok {
			schedule = si.Schedule
		}
	}
	attrs := []any{"schedule", schedule, "run", workflow.GetInfo(ctx).WorkflowExecution.ID}
	if err != nil {
		slog.Error("scheduled run failed", append(attrs, "error", jobs.FailureMessage(err))...)
		return res, err
	}
	if fr, ok := res.(workflows.FleetResult); ok {
		attrs = append(attrs, "repositories", fr.Total, "failed", fr.Failed)
	}
	slog.Info("scheduled run completed", attrs...)
	return res, err
}
