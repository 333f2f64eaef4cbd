package workers

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/workflows"
)

// slowHeartbeats delays every heartbeat call by d (or until its context
// ends), as a starved or busy Temporal server answers.
func slowHeartbeats(d time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/RecordActivityTaskHeartbeat") {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// TestHeartbeatOutlivesStalledWork: an activity whose work blocks longer
// than its heartbeat timeout without heartbeating itself, on a worker with
// this package's options whose server takes seconds to answer each
// heartbeat, completes in its first attempt: activities.Heartbeat beats
// from its own goroutine, and the SDK's throttle gives each slow send time
// to land. Timing is what this test checks; it runs for a heartbeat
// timeout and more.
func TestHeartbeatOutlivesStalledWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for longer than a heartbeat timeout")
	}
	ctx := context.Background()
	s, err := devserver.Start(ctx, devserver.Options{DataDir: t.TempDir(), Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	defer s.Stop()
	// Each heartbeat takes longer than the 2 s the SDK gave one under the
	// old throttle, well under today's.
	const slow = 4 * time.Second
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(slowHeartbeats(slow))}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const q = "locus-host-test-heartbeat"
	stall := workflows.HeartbeatTimeout + 2*activities.HeartbeatInterval
	work := func(ctx context.Context) (int32, error) {
		stop := activities.Heartbeat(ctx, nil)
		defer stop()
		select { // the work: no heartbeat of its own
		case <-time.After(stall):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return activity.GetInfo(ctx).Attempt, nil
	}
	wf := func(ctx workflow.Context) (int32, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: q, StartToCloseTimeout: time.Hour, HeartbeatTimeout: workflows.HeartbeatTimeout,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var attempt int32
		err := workflow.ExecuteActivity(ctx, "Stall").Get(ctx, &attempt)
		return attempt, err
	}
	w := worker.New(c, q, workerOptions(1, true, q))
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "StallWorkflow"})
	w.RegisterActivityWithOptions(work, activity.RegisterOptions{Name: "Stall"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "stall", TaskQueue: q}, "StallWorkflow")
	if err != nil {
		t.Fatal(err)
	}
	var attempt int32
	if err := run.Get(ctx, &attempt); err != nil {
		t.Fatalf("activity stalled for %v (heartbeat timeout %v, each heartbeat answered after %v) failed: %v",
			stall, workflows.HeartbeatTimeout, slow, err)
	}
	if attempt != 1 {
		t.Errorf("completed in attempt %d, want 1", attempt)
	}
}
