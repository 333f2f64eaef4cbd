package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

func TestDiskFullIsNonRetryable(t *testing.T) {
	enospc := fmt.Errorf("blob write runs/f/results-00000.json: %w", &fs.PathError{Op: "write", Path: "/data/store/x.tmp", Err: syscall.ENOSPC})
	for _, c := range []struct {
		name     string
		err      error
		diskFull bool
		msg      string // what the error's message must hold
	}{
		{"ENOSPC of a store write", enospc, true, "write /data/store/x.tmp: no space left on device"},
		{"git's words, already a bad-input error", temporal.NewNonRetryableApplicationError("sync a/b: fetch: fatal: unable to write loose object file: No space left on device", ErrTypeBadInput, nil), true, "No space left on device"},
		{"an embedding server's full disk is its own", temporal.NewApplicationError("embed: 507: no space left on device", ErrTypeEmbedRetryable), false, ""},
		{"another failure", errors.New("connection refused"), false, ""},
	} {
		got := diskFull(c.err)
		var app *temporal.ApplicationError
		isDiskFull := errors.As(got, &app) && app.Type() == ErrTypeDiskFull
		if isDiskFull != c.diskFull {
			t.Errorf("%s: diskFull(%v) = %v, want DiskFull %v", c.name, c.err, got, c.diskFull)
			continue
		}
		if !c.diskFull {
			if got != c.err {
				t.Errorf("%s: diskFull changed the error to %v", c.name, got)
			}
			continue
		}
		if !app.NonRetryable() || !strings.Contains(app.Message(), c.msg) {
			t.Errorf("%s: %v (non-retryable %v), want a non-retryable error saying %q", c.name, app, app.NonRetryable(), c.msg)
		}
	}
	if diskFull(nil) != nil {
		t.Error("diskFull(nil) is not nil")
	}
}

// TestDiskFullInterceptor: an activity that runs out of space fails with
// a non-retryable DiskFull error whichever activity it is.
func TestDiskFullInterceptor(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&DiskFullInterceptor{}}})
	write := func(ctx context.Context) error {
		return fmt.Errorf("write part: %w", &fs.PathError{Op: "write", Path: "/data/store/p.parquet", Err: syscall.ENOSPC})
	}
	env.RegisterActivityWithOptions(write, activity.RegisterOptions{Name: "WritePart"})
	_, err := env.ExecuteActivity("WritePart")
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeDiskFull || !app.NonRetryable() || !strings.Contains(app.Message(), "/data/store/p.parquet") {
		t.Fatalf("err = %v, want a non-retryable %s error naming the file", err, ErrTypeDiskFull)
	}
}
