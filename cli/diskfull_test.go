package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
)

// TestDiskWatch: once the embedded server logs that its disk is full, a
// command waiting on a workflow ends with an error that says so and names
// the server's directory, instead of waiting for progress that cannot be
// recorded.
func TestDiskWatch(t *testing.T) {
	g := &Globals{disk: newDiskWatch("/data/temporal")}
	log := slog.New(g.disk.handler(slog.NewTextHandler(io.Discard, nil))).With("component", "temporal")
	log.Error("Operation failed with internal error.", "error", "UpdateTaskQueue operation failed: connection reset")
	log.Info("database or disk is full (13)") // below warn: not the server's failure
	if g.disk.fired() {
		t.Fatal("the watch fired on records that do not say the disk is full")
	}
	waiting := make(chan struct{})
	got := make(chan error, 1)
	go func() {
		got <- g.untilDiskFull(context.Background(), func(ctx context.Context) error {
			close(waiting)
			<-ctx.Done() // a workflow that never ends
			return ctx.Err()
		})
	}()
	<-waiting
	log.Error("Operation failed with internal error.", "error", "UpdateTaskQueue operation failed. Failed to commit transaction. Error: database or disk is full (13)")
	err := <-got
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(ee.msg, "the disk holding /data/temporal is full") ||
		!strings.Contains(ee.msg, "database or disk is full (13)") {
		t.Fatalf("err = %v, want exit 1 saying the disk holding the server's directory is full", err)
	}
	// An error the wait returns afterwards is the same failure.
	if err := g.orDiskFull(errors.New("start fleet: context deadline exceeded")); !strings.Contains(err.Error(), "is full") {
		t.Errorf("orDiskFull = %v, want the disk-full error", err)
	}
}

func TestDiskFullFailure(t *testing.T) {
	full := temporal.NewNonRetryableApplicationError("write /data/store/x.tmp: no space left on device", activities.ErrTypeDiskFull, nil)
	err := diskFullFailure("fleet f", temporal.NewApplicationError("wrapped", "Other", full))
	if err != nil {
		t.Errorf("another type's failure: %v, want nil", err)
	}
	err = diskFullFailure("fleet f", full)
	if err == nil || !strings.Contains(err.Error(), "fleet f: the disk is full: write /data/store/x.tmp: no space left on device") {
		t.Errorf("err = %v, want it to say the disk is full and name the file", err)
	}
	if diskFullFailure("fleet f", errors.New("other")) != nil {
		t.Error("a failure of another kind was taken for a full disk")
	}
}
