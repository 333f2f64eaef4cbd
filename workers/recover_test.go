package workers

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
)

func TestDeadPeer(t *testing.T) {
	const q = "locus-host-vm-0123abcd"
	self := os.Getpid()
	only4242 := func(pid int) bool { return pid == 4242 }
	alive := func(pid int) bool { return pid != 999 }
	tests := []struct {
		name     string
		identity string
		alive    func(int) bool
		want     int
		ok       bool
	}{
		{"dead process of this host and data dir", "999@" + q, alive, 999, true},
		{"live process of this host and data dir", "4242@" + q, only4242, 0, false},
		{"this process", Identity(self, q), func(int) bool { return false }, 0, false},
		{"other data dir", "999@locus-host-vm-ffffffff", alive, 0, false},
		{"other host", "999@locus-host-other-0123abcd", alive, 0, false},
		{"SDK default identity", "999@vm@", alive, 0, false},
		{"not a pid", "x@" + q, alive, 0, false},
		{"negative pid", "-1@" + q, alive, 0, false},
		{"empty", "", alive, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pid, ok := deadPeer(tc.identity, q, self, tc.alive)
			if pid != tc.want || ok != tc.ok {
				t.Errorf("deadPeer(%q) = %d, %v; want %d, %v", tc.identity, pid, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Errorf("processAlive(own pid %d) = false", os.Getpid())
	}
	// Pids are below 2^22 on Linux and far below elsewhere.
	if processAlive(1 << 30) {
		t.Errorf("processAlive(1<<30) = true for a pid that cannot exist")
	}
}

// TestReleaseDeadAttempts: an attempt held by a worker whose process is gone
// is retried at once, not after its (here one hour) heartbeat timeout; one
// held by a live process is left alone.
func TestReleaseDeadAttempts(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	s, err := devserver.Start(ctx, devserver.Options{DataDir: t.TempDir(), Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	defer s.Stop()
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const q = "locus-host-test-00000000"
	const deadPID = 999999
	var started atomic.Int32
	hung := make(chan struct{}, 1)
	// The activity's first attempt hangs like one on a killed worker (it
	// heartbeats, so only its worker's death could end it); later ones succeed.
	work := func(ctx context.Context) (int32, error) {
		a := activity.GetInfo(ctx).Attempt
		started.Add(1)
		if a == 1 {
			hung <- struct{}{}
			for {
				select {
				case <-ctx.Done():
					return 0, ctx.Err()
				case <-time.After(200 * time.Millisecond):
					activity.RecordHeartbeat(ctx)
				}
			}
		}
		return a, nil
	}
	wf := func(ctx workflow.Context) (int32, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: q, StartToCloseTimeout: time.Hour, HeartbeatTimeout: time.Hour,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3},
		})
		var attempt int32
		err := workflow.ExecuteActivity(ctx, "Work").Get(ctx, &attempt)
		return attempt, err
	}
	// The worker claims to be process deadPID of this host and data dir.
	w := worker.New(c, q, worker.Options{Identity: Identity(deadPID, q)})
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "Hang"})
	w.RegisterActivityWithOptions(work, activity.RegisterOptions{Name: "Work"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "hang", TaskQueue: q}, "Hang")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung:
	case <-ctx.Done():
		t.Fatal("the first attempt never started")
	}

	// While deadPID runs, nothing is released; another data dir's pass
	// releases nothing either.
	for _, tc := range []struct {
		queue string
		alive func(int) bool
	}{{q, func(int) bool { return true }}, {"locus-host-test-ffffffff", func(int) bool { return false }}} {
		n, err := releaseDeadAttempts(ctx, c, s.Namespace(), tc.queue, tc.alive)
		if err != nil || n != 0 {
			t.Fatalf("releaseDeadAttempts(queue %s) = %d, %v; want 0, nil", tc.queue, n, err)
		}
	}
	n, err := releaseDeadAttempts(ctx, c, s.Namespace(), q, func(pid int) bool { return pid != deadPID })
	if err != nil || n != 1 {
		t.Fatalf("releaseDeadAttempts = %d, %v; want 1 attempt released", n, err)
	}
	var attempt int32
	if err := run.Get(ctx, &attempt); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	if attempt != 2 {
		t.Errorf("the workflow finished on attempt %d, want 2 (the released attempt retried)", attempt)
	}
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("timed out")
	}
}
