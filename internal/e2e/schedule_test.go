package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// scheduledRuns waits until schedule name has started n runs, and returns
// the fleet summaries of its runs from..n (counted from 1, in the order
// they started), each once finished. Schedule state on a Temporal server is
// eventually consistent: it polls. A schedule lists only its latest runs
// (Temporal keeps ten), so runs are counted by the actions it took.
func scheduledRuns(ctx context.Context, t *testing.T, c client.Client, b *blob.Bucket, name string, from, n int) []schema.FleetSummary {
	t.Helper()
	for {
		v, err := jobs.DescribeSchedule(ctx, c, name)
		if err != nil {
			t.Fatal(err)
		}
		older := v.Actions - len(v.Runs) // runs started before the listed ones
		if v.Actions >= n {
			if from-1 < older {
				t.Fatalf("schedule %s: run %d is no longer listed (%d started, the latest %d listed)", name, from, v.Actions, len(v.Runs))
			}
			var out []schema.FleetSummary
			for _, r := range v.Runs[from-1-older : n-older] {
				var res workflows.FleetResult
				if err := c.GetWorkflow(ctx, r.WorkflowID, "").Get(ctx, &res); err != nil {
					t.Fatalf("scheduled run %s: %v", r.WorkflowID, err)
				}
				sum, err := jobs.FleetSummary(ctx, b, res)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, sum)
			}
			return out
		}
		select {
		case <-ctx.Done():
			t.Fatalf("schedule %s: %d runs started before the deadline, want %d: %+v", name, v.Actions, n, v)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestScheduleReindexes runs a schedule every 2 seconds on the embedded
// server over a repos file: the first run indexes the repository, the next
// finds nothing new; a commit between runs is picked up; a repository the
// file later lists that does not exist fails alone; pause, trigger,
// unpause and delete do what they say.
func TestScheduleReindexes(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n", "util.py": "def clamp(n):\n    return max(0, n)\n"})
	r.Commit("add helper")
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b})
	dir := t.TempDir()
	file := filepath.Join(dir, "fleet.txt")
	if err := os.WriteFile(file, []byte("# the fleet\nacme/sched="+r.Dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const name = "every-2s"
	if err := jobs.CreateSchedule(ctx, c, name, jobs.ScheduleSpec{Every: 2 * time.Second}, workflows.ScheduledIndexInput{ReposFile: file}); err != nil {
		t.Fatal(err)
	}
	if err := jobs.CreateSchedule(ctx, c, name, jobs.ScheduleSpec{Every: time.Hour}, workflows.ScheduledIndexInput{ReposFile: file}); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("a second schedule of the same name: %v", err)
	}
	runs := scheduledRuns(ctx, t, c, b, name, 1, 2)
	if *update {
		v, err := jobs.DescribeSchedule(ctx, c, name)
		if err != nil {
			t.Fatal(err)
		}
		writeHistory(ctx, t, c, "scheduledindex-completed.json", v.Runs[0].WorkflowID, "")
	}
	for i, want := range []int{1, 0} {
		rs := runs[i].Results
		// The second run finds the index whole and of the same head: it
		// stops after syncing.
		if len(rs) != 1 || !rs[0].OK || rs[0].NewCommits != want || rs[0].UpToDate != (want == 0) || rs[0].Rows == 0 {
			t.Fatalf("run %d: %+v, want acme/sched with %d new commits", i+1, rs, want)
		}
	}
	// The listing finds it, eventually.
	for found := false; !found; {
		vs, err := jobs.ListSchedules(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			found = found || v.Name == name && v.ReposFile == file && v.Spec == "every 2s" && len(v.Next) > 0
		}
		if !found {
			select {
			case <-ctx.Done():
				t.Fatalf("schedule %s never listed: %+v", name, vs)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	// Paused, it starts nothing more; a trigger still starts one, which
	// picks up a new commit and a repository the file now lists that does
	// not exist, failed alone.
	if err := jobs.ActOnSchedule(ctx, c, name, jobs.SchedulePause, "maintenance"); err != nil {
		t.Fatal(err)
	}
	v, err := jobs.DescribeSchedule(ctx, c, name)
	if err != nil || !v.Paused || v.Note != "maintenance" {
		t.Fatalf("paused: %+v, %v", v, err)
	}
	for len(v.Running) > 0 { // a run started before the pause finishes
		time.Sleep(100 * time.Millisecond)
		if v, err = jobs.DescribeSchedule(ctx, c, name); err != nil {
			t.Fatal(err)
		}
	}
	before := v.Actions
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 3\n"})
	r.Commit("triple it")
	missing := filepath.Join(dir, "gone")
	if err := os.WriteFile(file, []byte("acme/sched="+r.Dir+"\nacme/gone="+missing+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // more than the interval: nothing runs
	if v, err = jobs.DescribeSchedule(ctx, c, name); err != nil || v.Actions != before {
		t.Fatalf("paused schedule ran: %d runs, %d before; %v", v.Actions, before, err)
	}
	if err := jobs.ActOnSchedule(ctx, c, name, jobs.ScheduleTrigger, ""); err != nil {
		t.Fatal(err)
	}
	runs = scheduledRuns(ctx, t, c, b, name, before+1, before+1)
	last := runs[len(runs)-1]
	byRepo := map[schema.RepoName]schema.RepoResult{}
	for _, rr := range last.Results {
		byRepo[rr.Repo] = rr
	}
	if got := byRepo["acme/sched"]; !got.OK || got.NewCommits != 1 {
		t.Errorf("triggered run, acme/sched: %+v", got)
	}
	if got := byRepo["acme/gone"]; got.OK || !strings.Contains(got.Error, missing) {
		t.Errorf("triggered run, the missing repository: %+v", got)
	}
	// The graph of the new commit parsed only the file it changed.
	m, err := manifest.Read(ctx, b, "acme/sched")
	if err != nil || m.Graph == nil || m.Graph.Parsed != 1 || m.Graph.Reused != 1 || m.Graph.ExtractsKey == "" {
		t.Fatalf("graph after one changed file: %+v, %v", m.Graph, err)
	}
	// Kept extractions that are damaged are not used: the next build
	// parses every file, and succeeds.
	if err := b.WriteAll(ctx, m.Graph.ExtractsKey, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 4\n"})
	r.Commit("quadruple it")
	if err := jobs.ActOnSchedule(ctx, c, name, jobs.ScheduleTrigger, ""); err != nil {
		t.Fatal(err)
	}
	runs = scheduledRuns(ctx, t, c, b, name, before+2, before+2)
	if rs := runs[len(runs)-1].Results; len(rs) != 2 {
		t.Fatalf("run after the damage: %+v", rs)
	}
	if m, err = manifest.Read(ctx, b, "acme/sched"); err != nil || m.Graph.Parsed != 2 || m.Graph.Reused != 0 {
		t.Errorf("graph after damaged extractions: %+v, %v", m.Graph, err)
	}
	// A backfill of the time it was paused takes runs now, paused or not;
	// with the default buffer-one, several due times make one run now and
	// at most one after it, each finding nothing new.
	pausedAt := time.Now().Add(-7 * time.Second)
	if err := jobs.BackfillSchedule(ctx, c, name, pausedAt, pausedAt.Add(6*time.Second), ""); err != nil {
		t.Fatal(err)
	}
	runs = scheduledRuns(ctx, t, c, b, name, before+3, before+3)
	for _, run := range runs {
		byRepo := map[schema.RepoName]schema.RepoResult{}
		for _, rr := range run.Results {
			byRepo[rr.Repo] = rr
		}
		if got := byRepo["acme/sched"]; !got.OK || got.NewCommits != 0 || byRepo["acme/gone"].OK {
			t.Errorf("backfilled run: %+v", run.Results)
		}
	}
	time.Sleep(3 * time.Second)
	if v, err = jobs.DescribeSchedule(ctx, c, name); err != nil || v.Actions > before+4 {
		t.Errorf("a backfill of 3 due times with buffer-one: %d runs after %d; %v", v.Actions, before+2, err)
	}
	if err := jobs.BackfillSchedule(ctx, c, "never", pausedAt, pausedAt.Add(time.Second), ""); !errors.Is(err, jobs.ErrNoSchedule) {
		t.Errorf("backfilling a schedule that does not exist: %v", err)
	}
	if err := jobs.ActOnSchedule(ctx, c, name, jobs.ScheduleUnpause, ""); err != nil {
		t.Fatal(err)
	}
	if v, err = jobs.DescribeSchedule(ctx, c, name); err != nil || v.Paused {
		t.Errorf("unpaused: %+v, %v", v, err)
	}
	if err := jobs.ActOnSchedule(ctx, c, name, jobs.ScheduleDelete, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.DescribeSchedule(ctx, c, name); !errors.Is(err, jobs.ErrNoSchedule) {
		t.Errorf("deleted schedule described: %v", err)
	}
	if err := jobs.ActOnSchedule(ctx, c, "never", jobs.SchedulePause, ""); !errors.Is(err, jobs.ErrNoSchedule) || !strings.Contains(err.Error(), "never") {
		t.Errorf("pausing a schedule that does not exist: %v", err)
	}
}

// gate is an embedder that holds every call until released.
type gate struct {
	embed.Lexical
	arrived chan struct{}
	release chan struct{}
}

func (g *gate) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case g.arrived <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Lexical.Embed(ctx, texts)
}

// Two schedules over one repository never index it at once: while the
// first's run holds it, the second's run reports it skipped and writes
// nothing; the first finishes.
func TestSchedulesShareARepository(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
	r.Commit("add helper")
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	g := &gate{arrived: make(chan struct{}, 1), release: make(chan struct{})}
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b, Search: search.Deps{Embedder: g}})
	in := workflows.ScheduledIndexInput{Repos: []schema.RepoSpec{{Name: "acme/shared", URL: r.Dir}}}
	for _, name := range []string{"first", "second"} {
		if err := jobs.CreateSchedule(ctx, c, name, jobs.ScheduleSpec{Every: time.Hour, Paused: true}, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := jobs.ActOnSchedule(ctx, c, "first", jobs.ScheduleTrigger, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.arrived: // the first run holds the repository, embedding
	case <-ctx.Done():
		t.Fatal("the first run never reached its embedder")
	}
	if err := jobs.ActOnSchedule(ctx, c, "second", jobs.ScheduleTrigger, ""); err != nil {
		t.Fatal(err)
	}
	second := scheduledRuns(ctx, t, c, b, "second", 1, 1)[0]
	close(g.release)
	first := scheduledRuns(ctx, t, c, b, "first", 1, 1)[0]
	if rs := first.Results; len(rs) != 1 || !rs[0].OK || rs[0].NewCommits != 1 {
		t.Errorf("first: %+v", rs)
	}
	if rs := second.Results; len(rs) != 1 || rs[0].OK || !strings.Contains(rs[0].Error, "already being indexed") {
		t.Errorf("second: %+v, want acme/shared skipped as already being indexed", rs)
	}
}
