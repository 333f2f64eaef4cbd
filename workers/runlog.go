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
	logged recentSet // run ids
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
	logged *recentSet
}

func (i *runLogInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	res, err := i.Next.ExecuteWorkflow(ctx, in)
	if workflow.IsReplaying(ctx) {
		return res, err
	}
	if again := i.logged.add(workflow.GetInfo(ctx).WorkflowExecution.RunID); again {
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

// recentRuns is how many run ids a runLog remembers: a run's last workflow
// task is executed again soon after, if at all, never hundreds of runs
// later.
const recentRuns = 1024

// recentSet remembers the last recentRuns ids added, so that a worker that
// runs for a year does not keep every run id it has seen.
type recentSet struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string // ring of the ids in ids, oldest at next
	next  int
}

// add adds id and reports whether it was already there.
func (s *recentSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids[id] {
		return true
	}
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	if len(s.order) < recentRuns {
		s.order = append(s.order, id)
	} else {
		delete(s.ids, s.order[s.next])
		s.order[s.next] = id
		s.next = (s.next + 1) % recentRuns
	}
	s.ids[id] = true
	return false
}
