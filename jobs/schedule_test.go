package jobs_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workers/workerstest"
	"github.com/locus-dev/locus/workflows"
)

// endedRun triggers schedule name and waits until it lists one more run
// than before and that run has ended; the server's schedule state is
// eventually consistent, so it polls.
func endedRun(ctx context.Context, t *testing.T, c client.Client, name string) jobs.ScheduleRun {
	t.Helper()
	v, err := jobs.DescribeSchedule(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	before := v.Actions
	if err := jobs.ActOnSchedule(ctx, c, name, jobs.ScheduleTrigger, ""); err != nil {
		t.Fatal(err)
	}
	for {
		v, err := jobs.DescribeSchedule(ctx, c, name)
		if err != nil {
			t.Fatal(err)
		}
		if last, ok := v.LastRun(); ok && v.Actions > before && last.Ended() {
			return last
		}
		select {
		case <-ctx.Done():
			t.Fatalf("schedule %s: no run ended: %+v", name, v)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestScheduledRunStates: describe says how each run ended. A run whose
// repos file holds a bad line is failed, with the file, the line and what
// is wrong; a run that indexes is completed, with its counts; the worker
// logs one line per run; with no worker polling, the schedule says so.
func TestScheduledRunStates(t *testing.T) {
	ctx := testctx.New(t)
	var logged testlog.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	r := gitfixture.New(t)
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
	r.Commit("add helper")
	file := filepath.Join(t.TempDir(), "fleet.txt")
	if err := os.WriteFile(file, []byte("acme/sched="+r.Dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := workerstest.Dial(t, workerstest.Server(t, t.TempDir()))
	const name = "hourly"
	if err := jobs.CreateSchedule(ctx, c, name, jobs.ScheduleSpec{Every: time.Hour}, workflows.ScheduledIndexInput{ReposFile: file}); err != nil {
		t.Fatal(err)
	}
	if n, err := jobs.QueueWorkers(ctx, c); err != nil || n != 0 {
		t.Fatalf("workers polling before any started: %d, %v", n, err)
	}
	workerstest.Workers(t, c, workers.Config{DataDir: t.TempDir(), Bucket: blobtest.Bucket(t)})

	// The file gains a bad line between runs.
	if err := os.WriteFile(file, []byte("acme/sched="+r.Dir+"\nacme/bad name=/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := endedRun(ctx, t, c, name)
	if failed.State != "failed" || !failed.Failed() || !strings.Contains(failed.Error, file+":2:") || !strings.Contains(failed.Error, `"acme/bad name=/x"`) {
		t.Fatalf("run of a repos file with a bad line: %+v, want failed naming %s:2 and the line", failed, file)
	}
	if strings.Contains(failed.Error, "workflow execution error") || strings.Contains(failed.Error, "(type:") {
		t.Errorf("the error repeats Temporal's chain: %q", failed.Error)
	}

	if err := os.WriteFile(file, []byte("acme/sched="+r.Dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := endedRun(ctx, t, c, name)
	if ok.State != "completed" || ok.Failed() || ok.Error != "" || ok.Repos != 1 || ok.FailedRepos != 0 {
		t.Fatalf("run of a good repos file: %+v, want completed with 1 repository", ok)
	}
	v, err := jobs.DescribeSchedule(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	if v.Workers == 0 {
		t.Errorf("describe counts no worker while one runs: %+v", v)
	}
	if len(v.Runs) != 2 || v.Runs[0].WorkflowID != failed.WorkflowID || v.Runs[0].State != "failed" {
		t.Errorf("describe lists %+v, want the failed run then the completed one", v.Runs)
	}

	// One line per run, naming the schedule and the run.
	log := logged.String()
	for _, want := range []struct{ msg, run string }{{"scheduled run failed", failed.WorkflowID}, {"scheduled run completed", ok.WorkflowID}} {
		var n int
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, want.msg) && strings.Contains(l, "run="+want.run) && strings.Contains(l, "schedule="+name) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lines %q for run %s, want 1:\n%s", n, want.msg, want.run, log)
		}
	}
	if !strings.Contains(log, "repositories=1 failed=0") || !strings.Contains(log, file+":2:") {
		t.Errorf("the worker's lines lack the counts or the bad line:\n%s", log)
	}
}
