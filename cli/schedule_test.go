package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workers/workerstest"
)

// waitRuns waits until schedule name has started n runs and the latest has
// ended (the server's schedule state is eventually consistent).
func waitRuns(ctx context.Context, t *testing.T, c client.Client, name string, n int) jobs.ScheduleRun {
	t.Helper()
	for {
		v, err := jobs.DescribeSchedule(ctx, c, name)
		if err != nil {
			t.Fatal(err)
		}
		if last, ok := v.LastRun(); ok && v.Actions >= n && last.Ended() {
			return last
		}
		select {
		case <-ctx.Done():
			t.Fatalf("schedule %s: %d runs ended before the deadline, want %d: %+v", name, v.Actions, n, v)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestScheduleSaysWhatHappened: with no worker polling, create and trigger
// say that nothing will run the schedule; once a worker runs it, a run
// whose repos file holds a bad line is shown failed, with the line, by
// describe (text and --json), list and status.
func TestScheduleSaysWhatHappened(t *testing.T) {
	ctx := testctx.New(t)
	data := t.TempDir()
	r := gitfixture.New(t)
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
	r.Commit("add helper")
	file := filepath.Join(t.TempDir(), "fleet.txt")
	if err := os.WriteFile(file, []byte("acme/sched="+r.Dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := workerstest.Server(t, t.TempDir())
	c := workerstest.Dial(t, srv)
	addr := srv.Address()
	const noWorker = "no worker polls task queue locus-index"

	code, out, errOut := runCLI(t, "schedule", "create", "hourly", "--data-dir", data, "--temporal", addr, "--every", "1h", "--repos-file", file)
	if code != 0 || !strings.Contains(out, "schedule hourly created") || !strings.Contains(errOut, noWorker) {
		t.Fatalf("create with no worker: exit %d\n%s\n%s\nwant created and a warning %q", code, out, errOut, noWorker)
	}
	// Flags before the NAME are flags, and the NAME is still found.
	code, out, errOut = runCLI(t, "schedule", "trigger", "--temporal", addr, "--data-dir", data, "hourly")
	if code != 0 || !strings.Contains(out, "a run is requested") || strings.Contains(out, "trigger done") || !strings.Contains(errOut, noWorker) {
		t.Fatalf("trigger with no worker: exit %d\n%s\n%s\nwant requested and a warning %q", code, out, errOut, noWorker)
	}

	// The run is started, and describe says it waits for a worker.
	for {
		v, err := jobs.DescribeSchedule(ctx, c, "hourly")
		if err != nil {
			t.Fatal(err)
		}
		if last, ok := v.LastRun(); ok {
			if last.State != jobs.RunWaiting || last.Ended() || v.Workers != 0 {
				t.Fatalf("a run no worker picked up: %+v (%d workers)", last, v.Workers)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the triggered run never started: %+v", v)
		case <-time.After(100 * time.Millisecond):
		}
	}
	code, out, errOut = runCLI(t, "schedule", "describe", "hourly", "--data-dir", data, "--temporal", addr)
	if code != 0 || !strings.Contains(out, "waiting for a worker") || !strings.Contains(errOut, noWorker) {
		t.Fatalf("describe with no worker: exit %d\n%s\n%s", code, out, errOut)
	}

	b, err := blob.OpenFile(filepath.Join(data, "store"), fileblob.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	workerstest.Workers(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b})
	if first := waitRuns(ctx, t, c, "hourly", 1); first.State != "completed" {
		t.Fatalf("the triggered run, once a worker came: %+v", first)
	}
	if err := os.WriteFile(file, []byte("acme/sched="+r.Dir+"\nacme/bad name=/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "schedule", "trigger", "hourly", "--data-dir", data, "--temporal", addr)
	if code != 0 || strings.Contains(errOut, noWorker) {
		t.Fatalf("trigger with a worker: exit %d, stderr %q", code, errOut)
	}
	failed := waitRuns(ctx, t, c, "hourly", 2)
	line := file + `:2: repository spec "acme/bad name=/x"`

	code, out, _ = runCLI(t, "schedule", "describe", "hourly", "--data-dir", data, "--temporal", addr)
	if code != 0 || !strings.Contains(out, failed.WorkflowID+"  failed") || !strings.Contains(out, "error: schedule repos file: "+line) ||
		!strings.Contains(out, "completed, 1 repository") || strings.Contains(out, "finished") {
		t.Errorf("describe: exit %d\n%s\nwant the failed run with %q and the completed one", code, out, line)
	}
	code, out, _ = runCLI(t, "schedule", "describe", "hourly", "--json", "--data-dir", data, "--temporal", addr)
	var v jobs.ScheduleView
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || len(v.Runs) != 2 || v.Runs[1].State != "failed" ||
		!strings.Contains(v.Runs[1].Error, line) || v.Runs[0].State != "completed" || v.Workers == 0 {
		t.Errorf("describe --json: exit %d, %v\n%s", code, err, out)
	}
	want := "schedule hourly: last run " + failed.WorkflowID + " failed: schedule repos file: " + line
	for { // the listing is eventually consistent
		code, out, _ = runCLI(t, "schedule", "list", "--data-dir", data, "--temporal", addr)
		if strings.Contains(out, "hourly") || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 0 || !strings.Contains(out, "LAST RUN STATE") || !strings.Contains(out, want) {
		t.Errorf("list: exit %d\n%s\nwant %q", code, out, want)
	}
	code, out, _ = runCLI(t, "status", "--data-dir", data, "--temporal", addr)
	if code != 0 || !strings.Contains(out, "acme/sched") || !strings.Contains(out, want) {
		t.Errorf("status: exit %d\n%s\nwant %q", code, out, want)
	}
}
