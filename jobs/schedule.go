package jobs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/workflows"
)

// SchedulePrefix starts the id of every schedule locus creates, so that
// listing shows only its own.
const SchedulePrefix = "locus-index-"

// ScheduleSpec is when a schedule runs and what it does about runs it
// missed or that are still going.
type ScheduleSpec struct {
	// Every runs at this interval; Cron at the times of a cron expression
	// (UTC). One of the two.
	Every time.Duration
	Cron  string
	// CatchupWindow is how late a missed run may still start (the server
	// was down, say); 0: the server's default (one year).
	CatchupWindow time.Duration
	// Paused creates the schedule paused, with Note saying why.
	Paused bool
	Note   string
}

// ErrNoSchedule: no schedule of that name.
var ErrNoSchedule = errors.New("no such schedule")

var scheduleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// CheckScheduleName validates a schedule's name.
func CheckScheduleName(name string) error {
	if !scheduleName.MatchString(name) {
		return fmt.Errorf("schedule name %q: want 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// Memo keys of a schedule: what it indexes, for list and describe.
const (
	memoReposFile = "repos_file"
	memoRepos     = "repos"
	memoSpec      = "spec" // as given: the server turns cron into calendars
)

// CreateSchedule creates schedule name: a ScheduledIndex of in at the
// times spec says. A run still going when the next is due makes that one
// skip (never two at once); missed runs within the catch-up window start
// late, one at a time.
func CreateSchedule(ctx context.Context, c client.Client, name string, spec ScheduleSpec, in workflows.ScheduledIndexInput) error {
	if err := CheckScheduleName(name); err != nil {
		return err
	}
	if (spec.Every > 0) == (spec.Cron != "") {
		return errors.New("schedule: give --every or --cron, one of the two")
	}
	if spec.Every < 0 || spec.Every > 0 && spec.Every < time.Second {
		return fmt.Errorf("schedule: --every %s: want at least 1s", spec.Every)
	}
	in.Schedule = name
	memo := map[string]any{}
	if in.ReposFile != "" {
		memo[memoReposFile] = in.ReposFile
	} else {
		names := make([]string, len(in.Repos))
		for i, r := range in.Repos {
			names[i] = string(r.Name)
		}
		memo[memoRepos] = names
	}
	var ss client.ScheduleSpec
	if spec.Every > 0 {
		ss.Intervals = []client.ScheduleIntervalSpec{{Every: spec.Every}}
		memo[memoSpec] = "every " + spec.Every.String()
	} else {
		ss.CronExpressions = []string{spec.Cron}
		memo[memoSpec] = "cron " + spec.Cron
	}
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   SchedulePrefix + name,
		Spec: ss,
		Action: &client.ScheduleWorkflowAction{
			ID: SchedulePrefix + name, Workflow: workflows.ScheduledIndex, Args: []any{in}, TaskQueue: workflows.IndexQueue,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: spec.CatchupWindow,
		Paused:        spec.Paused,
		Note:          spec.Note,
		Memo:          memo,
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("schedule %s exists already (delete it first, or pick another name)", name)
	}
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", name, err)
	}
	return nil
}

// ScheduleView is what list and describe show of a schedule.
type ScheduleView struct {
	Name      string      `json:"name"`
	Spec      string      `json:"spec"`
	Paused    bool        `json:"paused"`
	Note      string      `json:"note,omitempty"`
	ReposFile string      `json:"repos_file,omitempty"`
	Repos     []string    `json:"repos,omitempty"`
	Next      []time.Time `json:"next,omitempty"`
	// Runs are the latest runs, oldest first: when each was due, when it
	// started, and its workflow id.
	Runs []ScheduleRun `json:"runs,omitempty"`
	// Running are the ids of runs still going.
	Running []string `json:"running,omitempty"`
	// Actions counts runs started; SkippedOverlap those skipped because
	// one was still going; MissedCatchup those too late to start.
	Actions        int       `json:"actions"`
	SkippedOverlap int       `json:"skipped_overlap"`
	MissedCatchup  int       `json:"missed_catchup"`
	CreatedAt      time.Time `json:"created_at"`
	// Workers is how many workers poll the task queue the runs go to
	// (locus-index); with none, nothing runs the schedule.
	Workers int `json:"workers"`
}

// ScheduleRun is one run a schedule started.
type ScheduleRun struct {
	Due        time.Time `json:"due"`
	Started    time.Time `json:"started"`
	WorkflowID string    `json:"workflow_id"`
	RunID      string    `json:"run_id,omitempty"`
	// State is the run's workflow status: running, completed, failed,
	// canceled, terminated or timed out; "waiting for a worker" for a run
	// no worker has picked up yet; "unknown" when the server no longer
	// holds the run (past the namespace's retention).
	State string `json:"state"`
	// Error says why a run that did not complete ended: for a repos file
	// with a bad line, the file, the line and what is wrong with it.
	Error string `json:"error,omitempty"`
	// Repos is how many repositories a completed run indexed, FailedRepos
	// how many of those failed (each with its error in its last run).
	Repos       int `json:"repos,omitempty"`
	FailedRepos int `json:"failed_repos,omitempty"`
}

// States of a run that are not a workflow status.
const (
	// RunUnknown is the state of a run the server no longer holds.
	RunUnknown = "unknown"
	// RunWaiting is the state of a run no worker has picked up yet.
	RunWaiting = "waiting for a worker"
)

// Ended reports whether the run is over (or no longer known).
func (r ScheduleRun) Ended() bool { return r.State != "running" && r.State != RunWaiting }

// Failed reports whether the run ended without completing.
func (r ScheduleRun) Failed() bool {
	return r.Ended() && r.State != "completed" && r.State != RunUnknown
}

// runStates names the workflow statuses a scheduled run can end in.
var runStates = map[enumspb.WorkflowExecutionStatus]string{
	enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:          "running",
	enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:        "completed",
	enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:           "failed",
	enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:         "canceled",
	enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:       "terminated",
	enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW: "continued as new",
	enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:        "timed out",
}

// runOutcome fills in r's state, and its error or its counts once it ended.
func runOutcome(ctx context.Context, c client.Client, r *ScheduleRun) error {
	d, err := c.DescribeWorkflowExecution(ctx, r.WorkflowID, r.RunID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		r.State = RunUnknown
		return nil
	}
	if err != nil {
		return fmt.Errorf("describe scheduled run %s: %w", r.WorkflowID, err)
	}
	status := d.GetWorkflowExecutionInfo().GetStatus()
	r.State = runStates[status]
	if r.State == "" {
		r.State = strings.ToLower(status.String())
	}
	if r.State == "running" {
		// Started and scheduled its first task, which no worker took.
		pending := d.GetPendingWorkflowTask()
		if d.GetWorkflowExecutionInfo().GetHistoryLength() <= 2 && pending != nil && pending.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED {
			r.State = RunWaiting
		}
		return nil
	}
	var res workflows.FleetResult
	err = c.GetWorkflow(ctx, r.WorkflowID, r.RunID).Get(ctx, &res)
	switch {
	case err == nil:
		r.Repos, r.FailedRepos = res.Total, res.Failed
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		r.Error = FailureMessage(err)
	}
	return nil
}

// FailureMessage is err as one readable line: where a Temporal workflow,
// child or activity error wraps a failure, the message of the innermost
// failure (the SDK's wrappers repeat ids, types and the cause chain).
func FailureMessage(err error) string {
	for {
		var next error
		switch e := err.(type) {
		case *temporal.WorkflowExecutionError:
			next = e.Unwrap()
		case *temporal.ChildWorkflowExecutionError:
			next = e.Unwrap()
		case *temporal.ActivityError:
			next = e.Unwrap()
		case *temporal.ApplicationError:
			if e.Message() != "" {
				return e.Message()
			}
			next = e.Unwrap()
		case *temporal.TimeoutError:
			msg := "timed out (" + e.TimeoutType().String() + ")"
			if c := e.Unwrap(); c != nil {
				msg += ": " + FailureMessage(c)
			}
			return msg
		case *temporal.CanceledError:
			return "canceled"
		case *temporal.TerminatedError:
			return "terminated"
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// QueueWorkers is how many workers poll the task queue scheduled runs go
// to (the server remembers pollers for a few minutes): with none, a run a
// schedule starts waits until a worker comes.
func QueueWorkers(ctx context.Context, c client.Client) (int, error) {
	d, err := c.DescribeTaskQueue(ctx, workflows.IndexQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return 0, fmt.Errorf("describe task queue %s: %w", workflows.IndexQueue, err)
	}
	return len(d.GetPollers()), nil
}

// DescribeSchedule describes schedule name.
func DescribeSchedule(ctx context.Context, c client.Client, name string) (ScheduleView, error) {
	_, d, err := describe(ctx, c, name)
	if err != nil {
		return ScheduleView{}, err
	}
	v := ScheduleView{Name: name, Next: d.Info.NextActionTimes, Actions: d.Info.NumActions,
		SkippedOverlap: d.Info.NumActionsSkippedOverlap, MissedCatchup: d.Info.NumActionsMissedCatchupWindow, CreatedAt: d.Info.CreatedAt}
	var given string
	v.ReposFile, v.Repos, given = fromMemo(d.Memo)
	if v.Spec = given; v.Spec == "" && d.Schedule.Spec != nil {
		v.Spec = specText(d.Schedule.Spec)
	}
	if d.Schedule.State != nil {
		v.Paused, v.Note = d.Schedule.State.Paused, d.Schedule.State.Note
	}
	for _, a := range d.Info.RecentActions {
		r := ScheduleRun{Due: a.ScheduleTime, Started: a.ActualTime, State: RunUnknown}
		if a.StartWorkflowResult != nil {
			r.WorkflowID, r.RunID = a.StartWorkflowResult.WorkflowID, a.StartWorkflowResult.FirstExecutionRunID
			if err := runOutcome(ctx, c, &r); err != nil {
				return ScheduleView{}, fmt.Errorf("schedule %s: %w", name, err)
			}
		}
		v.Runs = append(v.Runs, r)
	}
	for _, w := range d.Info.RunningWorkflows {
		v.Running = append(v.Running, w.WorkflowID)
	}
	if v.Workers, err = QueueWorkers(ctx, c); err != nil {
		return ScheduleView{}, fmt.Errorf("schedule %s: %w", name, err)
	}
	return v, nil
}

// LastRun is the schedule's latest run; ok is false when it has none.
func (v ScheduleView) LastRun() (ScheduleRun, bool) {
	if len(v.Runs) == 0 {
		return ScheduleRun{}, false
	}
	return v.Runs[len(v.Runs)-1], true
}

// describe returns the handle and description of schedule name;
// ErrNoSchedule when there is none.
func describe(ctx context.Context, c client.Client, name string) (client.ScheduleHandle, *client.ScheduleDescription, error) {
	h := c.ScheduleClient().GetHandle(ctx, SchedulePrefix+name)
	d, err := h.Describe(ctx)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil, fmt.Errorf("schedule %s: %w", name, ErrNoSchedule)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("describe schedule %s: %w", name, err)
	}
	return h, d, nil
}

// ListSchedules describes every schedule locus created, by name. The
// server's listing is eventually consistent: a schedule created a moment
// ago may be missing.
func ListSchedules(ctx context.Context, c client.Client) ([]ScheduleView, error) {
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 100})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	var out []ScheduleView
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		name, ok := strings.CutPrefix(e.ID, SchedulePrefix)
		if !ok {
			continue
		}
		v, err := DescribeSchedule(ctx, c, name)
		if errors.Is(err, ErrNoSchedule) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ScheduleAction is what PauseSchedule and the others do.
type ScheduleAction string

// Actions on a schedule.
const (
	SchedulePause   ScheduleAction = "pause"
	ScheduleUnpause ScheduleAction = "unpause"
	ScheduleTrigger ScheduleAction = "trigger"
	ScheduleDelete  ScheduleAction = "delete"
)

// ActOnSchedule pauses (with note), unpauses, triggers (a run now, skipped
// if one is still going) or deletes schedule name. Deleting leaves runs
// already started to finish.
func ActOnSchedule(ctx context.Context, c client.Client, name string, a ScheduleAction, note string) error {
	h, _, err := describe(ctx, c, name)
	if err != nil {
		return err
	}
	switch a {
	case SchedulePause:
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: note})
	case ScheduleUnpause:
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: note})
	case ScheduleTrigger:
		err = h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP})
	case ScheduleDelete:
		err = h.Delete(ctx)
	default:
		return fmt.Errorf("schedule %s: unknown action %q", name, a)
	}
	if err != nil {
		return fmt.Errorf("%s schedule %s: %w", a, name, err)
	}
	return nil
}

// BackfillOverlaps are the overlap policies a backfill takes, by the name
// the command line uses.
var BackfillOverlaps = map[string]enumspb.ScheduleOverlapPolicy{
	"skip":       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer-one": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer-all": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	"allow-all":  enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// BackfillSchedule has schedule name take now the runs its spec gives in
// (start, end], paused or not. overlap decides what happens to a run due
// while another is going: a re-index catches up on everything in one run, so
// "buffer-one" (the default: one run now, one after it if one was going) is
// enough; "allow-all" runs them at once, and a repository another run holds
// is reported skipped, never indexed twice at once.
func BackfillSchedule(ctx context.Context, c client.Client, name string, start, end time.Time, overlap string) error {
	if overlap == "" {
		overlap = "buffer-one"
	}
	policy, ok := BackfillOverlaps[overlap]
	if !ok {
		return fmt.Errorf("backfill schedule %s: unknown overlap %q (want skip, buffer-one, buffer-all or allow-all)", name, overlap)
	}
	if !end.After(start) {
		return fmt.Errorf("backfill schedule %s: the end %s is not after the start %s", name, end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	h, _, err := describe(ctx, c, name)
	if err != nil {
		return err
	}
	err = h.Backfill(ctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{{Start: start, End: end, Overlap: policy}}})
	if err != nil {
		return fmt.Errorf("backfill schedule %s: %w", name, err)
	}
	return nil
}

// specText is a schedule's spec as a person reads it.
func specText(s *client.ScheduleSpec) string {
	var parts []string
	for _, i := range s.Intervals {
		parts = append(parts, "every "+i.Every.String())
	}
	for _, c := range s.CronExpressions {
		parts = append(parts, "cron "+c)
	}
	if len(parts) == 0 && len(s.Calendars) > 0 {
		parts = append(parts, fmt.Sprintf("%d calendar specs", len(s.Calendars)))
	}
	return strings.Join(parts, ", ")
}

// fromMemo reads what a schedule indexes, and its spec as given, from its
// memo.
func fromMemo(m *commonpb.Memo) (file string, repos []string, spec string) {
	if m == nil {
		return "", nil, ""
	}
	dc := converter.GetDefaultDataConverter()
	if p, ok := m.Fields[memoReposFile]; ok {
		_ = dc.FromPayload(p, &file)
	}
	if p, ok := m.Fields[memoRepos]; ok {
		_ = dc.FromPayload(p, &repos)
	}
	if p, ok := m.Fields[memoSpec]; ok {
		_ = dc.FromPayload(p, &spec)
	}
	return file, repos, spec
}
