package workers

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ErrTypeWorkerDied marks an activity attempt failed on behalf of a worker
// process that died while running it; it is retried like any other failure.
const ErrTypeWorkerDied = "WorkerDied"

// Identity names a worker process: its pid, this host, and the host queue
// (which includes the data directory). Release parses it back to tell
// attempts of dead processes of this host and data directory from others.
func Identity(pid int, hostQueue string) string {
	return strconv.Itoa(pid) + "@" + hostQueue
}

// deadPeer returns the pid of the process that identity names when that
// process ran on this host with this host queue, is not this process, and
// is no longer running.
func deadPeer(identity, hostQueue string, self int, alive func(int) bool) (int, bool) {
	pidStr, q, ok := strings.Cut(identity, "@")
	if !ok || q != hostQueue {
		return 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 || pid == self || alive(pid) {
		return 0, false
	}
	return pid, true
}

// releaseDeadAttempts fails, by id, the activity attempts of open workflows
// that a dead worker process of this host and data directory was
// running (kill -9, crash, power loss). Temporal would retry them only when
// their heartbeat timeout expires; failing them lets the retry start now, on
// the live worker. Attempts of live processes, of other hosts or data
// directories, and of identities this locus did not write are left alone.
// It returns how many attempts it released.
func releaseDeadAttempts(ctx context.Context, c client.Client, namespace, hostQueue string, alive func(int) bool) (int, error) {
	self := os.Getpid()
	released := 0
	var token []byte
	for {
		resp, err := c.ListOpenWorkflow(ctx, &workflowservice.ListOpenWorkflowExecutionsRequest{
			Namespace: namespace, MaximumPageSize: 200, NextPageToken: token,
		})
		if err != nil {
			return released, fmt.Errorf("list open workflows: %w", err)
		}
		for _, e := range resp.Executions {
			wf := e.GetExecution()
			d, err := c.DescribeWorkflowExecution(ctx, wf.GetWorkflowId(), wf.GetRunId())
			if err != nil {
				return released, fmt.Errorf("describe %s: %w", wf.GetWorkflowId(), err)
			}
			for _, a := range d.PendingActivities {
				if a.State != enumspb.PENDING_ACTIVITY_STATE_STARTED {
					continue
				}
				pid, ok := deadPeer(a.LastWorkerIdentity, hostQueue, self, alive)
				if !ok {
					continue
				}
				cause := temporal.NewApplicationError(fmt.Sprintf("worker process %d (%s) died while running %s attempt %d; retrying on a live worker",
					pid, a.LastWorkerIdentity, a.GetActivityType().GetName(), a.Attempt), ErrTypeWorkerDied)
				err := c.CompleteActivityByID(ctx, namespace, wf.GetWorkflowId(), wf.GetRunId(), a.ActivityId, nil, cause)
				if err != nil {
					// Completed or timed out meanwhile: nothing to release.
					slog.Debug("release dead worker's attempt", "workflow", wf.GetWorkflowId(), "activity", a.ActivityId, "error", err)
					continue
				}
				slog.Info("retrying an activity a dead worker was running", "workflow", wf.GetWorkflowId(),
					"activity", a.GetActivityType().GetName(), "attempt", a.Attempt, "dead_worker", a.LastWorkerIdentity)
				released++
			}
		}
		token = resp.NextPageToken
		if len(token) == 0 {
			return released, nil
		}
	}
}
