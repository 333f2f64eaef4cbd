package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/locusbin"
	"github.com/locus-dev/locus/internal/testutil/s3server"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// fleetHostWait is the --host-wait of the fleet under test: how long a step
// waits for the host of its clone before the repository moves. Short, so
// the move happens within the test; the default is 10 minutes.
const fleetHostWait = 5 * time.Second

// TestFleetSurvivesAKilledWorker runs what a cluster runs, as processes of
// the real binary: `locus server`, three `locus worker` (each its own data
// directory, so its own clone host) on one S3 store (versitygw), and
// `locus index --no-worker` over six repositories. While the fleet runs, the
// worker running a clone-bound step (ScrapeCommits or BuildGraph) is killed
// with SIGKILL, once a repository has finished. The fleet must finish with
// every repository ok; the repository whose step was lost must have moved
// to a live host after a schedule-to-start timeout on the dead one's queue
// (--host-wait); and each commits table must equal, row for row, a plain
// single-process `locus index` of the same repositories.
func TestFleetSurvivesAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the multi-process fleet test (it builds locus and runs five processes)")
	}
	ctx := testctx.New(t)
	cl := startCluster(ctx, t, nil)
	bin, dir, c, fleetBucket, workersByQueue := cl.bin, cl.dir, cl.c, cl.bucket, cl.workers

	// Six repositories of 30–55 commits over a few files, so that a
	// repository is still in flight when another has finished.
	fixtures, reposFile := writeFleet(t, dir, 6, func(i int) int { return 30 + 5*i })

	index := cl.run(ctx, t, "client", "index", "--repos-file", reposFile, "--window", "2",
		"--host-wait", fleetHostWait.String(), "--json")

	// The moment to kill: a repository has finished and a worker is
	// running a clone-bound step of another.
	lost, victim, killedAt := cl.killMidStep(ctx, t, index, "a clone-bound step", func() (inFlight, bool) {
		done := 0
		for name := range fixtures {
			if m, err := manifest.Read(ctx, fleetBucket, name); err == nil && m != nil {
				done++
			}
		}
		if done == 0 {
			return inFlight{}, false
		}
		return stepInFlight(ctx, t, c, "IndexRepo", "ScrapeCommits", "BuildGraph")
	})
	victimQueue := victim.hostQueue

	code := index.wait(ctx, t)
	if code != 0 {
		t.Fatalf("index exit %d after a worker was killed:\n%s", code, index.output())
	}
	var sum schema.FleetSummary
	if err := json.Unmarshal(index.stdout.Bytes(), &sum); err != nil {
		t.Fatalf("index --json: %v\n%s", err, index.output())
	}
	if sum.Done != len(fixtures) || sum.Failed != 0 {
		t.Fatalf("fleet summary: %d done, %d failed of %d, want all done:\n%s", sum.Done, sum.Failed, sum.Total, index.output())
	}

	// The lost step's repository moved: its host's queue timed out
	// (schedule-to-start), it was synced again, and what was published
	// names a live host.
	var lostIn schema.IndexRepoInput
	moved := hostMove(ctx, t, c, lost.workflowID, lost.runID, victimQueue, &lostIn)
	lostRepo := lostIn.Repo.Name
	checkMoved(t, lost.workflowID, victimQueue, moved, killedAt)

	// The same repositories indexed by one process, the default way.
	_, singleBucket := indexSingle(ctx, t, bin, dir, reposFile)
	for name, fx := range fixtures {
		m := checkIndexed(ctx, t, fleetBucket, name, fx)
		ref := checkIndexed(ctx, t, singleBucket, name, fx)
		if workersByQueue[m.HostQueue] == nil {
			t.Errorf("%s: published on host %q, not one of the workers'", name, m.HostQueue)
		}
		if name == lostRepo && m.HostQueue == victimQueue {
			t.Errorf("%s: its step was lost with %s, yet it is published on that dead host", name, victim.name)
		}
		got, want := readRows(ctx, t, fleetBucket, m), readRows(ctx, t, singleBucket, ref)
		seen := map[[2]string]bool{}
		for _, r := range got {
			k := [2]string{r.CommitID, r.Path}
			if seen[k] {
				t.Errorf("%s: row (%s, %s) stored twice", name, r.CommitID[:8], r.Path)
			}
			seen[k] = true
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d rows from the fleet, %d from one process", name, len(got), len(want))
			continue
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: row %d differs:\nfleet:  %+v\nsingle: %+v", name, i, got[i], want[i])
				break
			}
		}
	}
}

// cluster is what a cluster runs, as processes of the real binary:
// `locus server` and three `locus worker` (each its own data directory,
// so its own clone host) on one S3 store (versitygw).
type cluster struct {
	bin, dir string
	addr     string                // the server's frontend
	store    string                // the workers' --store
	workers  map[string]*locusProc // by host queue
	byIndex  []*locusProc          // in start order
	c        client.Client
	bucket   *blob.Bucket // the store
}

// startCluster starts a cluster; extra(i), when set, adds flags to
// worker i's command line.
func startCluster(ctx context.Context, t *testing.T, extra func(i int) []string) *cluster {
	t.Helper()
	cl := &cluster{bin: buildLocus(t), dir: t.TempDir(), workers: map[string]*locusProc{}}
	s3 := s3server.Start(t)
	for _, kv := range s3.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v) // read by this test's bucket and inherited by every process
	}
	cl.store = s3.URL(s3.Bucket, "fleet")

	// Port 0: the server picks free ports for its services and says where
	// its frontend listens.
	srv := startLocus(ctx, t, cl.bin, "server", "server", "--data-dir", filepath.Join(cl.dir, "server"), "--address", "127.0.0.1:0")
	_, addr, _ := strings.Cut(srv.waitFor(ctx, t, "Temporal server listening on "), "Temporal server listening on ")
	cl.addr, _, _ = strings.Cut(addr, " ")
	for i := range 3 {
		args := []string{"worker", "--temporal", cl.addr, "--store", cl.store,
			"--data-dir", filepath.Join(cl.dir, fmt.Sprintf("worker%d", i)), "--activities", "2", "--log-level", "warn"}
		if extra != nil {
			args = append(args, extra(i)...)
		}
		w := startLocus(ctx, t, cl.bin, fmt.Sprintf("worker%d", i), args...)
		line := w.waitFor(ctx, t, "queues locus-index and ")
		_, q, _ := strings.Cut(line, "queues locus-index and ")
		q, _, _ = strings.Cut(q, ";")
		w.hostQueue = q
		cl.workers[q] = w
		cl.byIndex = append(cl.byIndex, w)
	}
	if len(cl.workers) != 3 {
		t.Fatalf("three workers share %d host queues, want one each", len(cl.workers))
	}
	c, err := client.Dial(client.Options{HostPort: cl.addr, Logger: sdklog.NewStructuredLogger(testlog.New(t, slog.LevelWarn))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl.c = c
	if cl.bucket, err = blob.Open(ctx, cl.store); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.bucket.Close() })
	return cl
}

// killMidStep waits until find finds an activity in flight while run
// runs, then kills the worker running it with SIGKILL and says when; what
// names the step for the messages.
func (cl *cluster) killMidStep(ctx context.Context, t *testing.T, run *locusProc, what string, find func() (inFlight, bool)) (inFlight, *locusProc, time.Time) {
	t.Helper()
	for {
		if run.exited() {
			t.Fatalf("%s ended before a worker could be killed in %s; the repositories are too small for this machine\n%s", run.name, what, run.output())
		}
		if f, ok := find(); ok {
			_, q, _ := strings.Cut(f.identity, "@")
			victim := cl.workers[q]
			if victim == nil {
				t.Fatalf("%s of %s runs on worker %q, not one of this test's", f.activity, f.workflowID, f.identity)
			}
			victim.kill(t)
			t.Logf("killed %s (%s) while it ran %s of %s", victim.name, q, f.activity, f.workflowID)
			return f, victim, time.Now()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s in flight: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// run starts a client-only command (`locus CMD --no-worker`) against the
// cluster, with its own data directory.
func (cl *cluster) run(ctx context.Context, t *testing.T, name, cmd string, args ...string) *locusProc {
	t.Helper()
	args = append([]string{cmd, "--no-worker", "--temporal", cl.addr, "--store", cl.store,
		"--data-dir", filepath.Join(cl.dir, name), "--log-level", "warn"}, args...)
	return startLocus(ctx, t, cl.bin, name, args...)
}

// index indexes the repositories of reposFile on the cluster; every one
// must be indexed.
func (cl *cluster) index(ctx context.Context, t *testing.T, reposFile string) {
	t.Helper()
	p := cl.run(ctx, t, "index", "index", "--repos-file", reposFile, "--json")
	if code := p.wait(ctx, t); code != 0 {
		t.Fatalf("index exit %d:\n%s", code, p.output())
	}
}

// writeFleet makes n repositories fleet/r0…, repository i with commits(i)
// commits (growHistory), and the repos file that names them.
func writeFleet(t *testing.T, dir string, n int, commits func(i int) int) (map[schema.RepoName]*gitfixture.Repo, string) {
	t.Helper()
	var specs []string
	fixtures := map[schema.RepoName]*gitfixture.Repo{}
	for i := range n {
		name := schema.RepoName(fmt.Sprintf("fleet/r%d", i))
		r := gitfixture.NewAt(t, filepath.Join(dir, "src", fmt.Sprint(i)))
		growHistory(r, i, commits(i))
		fixtures[name] = r
		specs = append(specs, string(name)+"="+r.Dir)
	}
	reposFile := filepath.Join(dir, "repos.txt")
	if err := os.WriteFile(reposFile, []byte(strings.Join(specs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return fixtures, reposFile
}

// indexSingle indexes the repositories of reposFile with one process, the
// default way (embedded server, in-process worker, file store), in
// dir/single; it returns that data directory and its store.
func indexSingle(ctx context.Context, t *testing.T, bin, dir, reposFile string) (string, *blob.Bucket) {
	t.Helper()
	single := filepath.Join(dir, "single")
	one := startLocus(ctx, t, bin, "single", "index", "--data-dir", single, "--repos-file", reposFile, "--log-level", "warn")
	if code := one.wait(ctx, t); code != 0 {
		t.Fatalf("single-process index exit %d:\n%s", code, one.output())
	}
	b, err := blob.Open(ctx, "file://"+filepath.Join(single, "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return single, b
}

// checkMoved checks that workflow id, whose step was lost with the worker
// of deadQueue killed at killedAt, moved its repository (moved, from
// hostMove) within the bounded wait.
func checkMoved(t *testing.T, id, deadQueue string, moved, killedAt time.Time) {
	t.Helper()
	if moved.IsZero() {
		t.Errorf("%s: no schedule-to-start timeout on the dead host's queue %s; the repository did not move by the bounded wait", id, deadQueue)
		return
	}
	// The bound under test: the lost attempt's heartbeat timeout, then
	// --host-wait on the dead queue; the default wait alone is longer.
	took := moved.Sub(killedAt)
	t.Logf("%s moved %v after the kill (heartbeat timeout %v of the lost attempt, then --host-wait %v)",
		id, took.Round(time.Second), workflows.HeartbeatTimeout, fleetHostWait)
	if took >= workflows.DefaultHostWait {
		t.Errorf("%s moved %v after the kill, not within --host-wait %v of the lost attempt's timeout", id, took, fleetHostWait)
	}
}

// growHistory commits n changes to a few source files of repository i:
// each commit edits, adds or renames one function, so every commit has a
// changed function and the graph has a few dozen nodes.
func growHistory(r *gitfixture.Repo, i, n int) {
	files := []string{"pkg/core.go", "pkg/util.go", "app/main.py", "app/models.py"}
	bodies := map[string][]string{}
	for c := range n {
		f := files[c%len(files)]
		k := len(bodies[f])
		if c%3 == 2 && k > 0 {
			k = c % k // edit an existing function
		} else {
			bodies[f] = append(bodies[f], "")
		}
		if strings.HasSuffix(f, ".py") {
			bodies[f][k] = fmt.Sprintf("def f%d_%d(x):\n    return x * %d + %d\n", i, k, c, i)
		} else {
			bodies[f][k] = fmt.Sprintf("func F%d_%d(x int) int {\n\treturn x*%d + %d\n}\n", i, k, c, i)
		}
		head := ""
		if strings.HasSuffix(f, ".go") {
			head = "package " + filepath.Base(filepath.Dir(f)) + "\n\n"
		}
		r.Write(map[string]string{f: head + strings.Join(bodies[f], "\n")})
		r.Commit(fmt.Sprintf("change %d of repository %d in %s", c, i, f))
	}
}

// inFlight is an activity attempt a worker is running.
type inFlight struct {
	workflowID, runID, activity, identity string
}

// stepInFlight finds a workflow of type wfType one of whose activities
// named in acts a worker is running now.
func stepInFlight(ctx context.Context, t *testing.T, c client.Client, wfType string, acts ...string) (inFlight, bool) {
	t.Helper()
	resp, err := c.ListOpenWorkflow(ctx, &workflowservice.ListOpenWorkflowExecutionsRequest{Namespace: "default", MaximumPageSize: 100})
	if err != nil {
		t.Fatalf("list open workflows: %v", err)
	}
	for _, e := range resp.Executions {
		if e.GetType().GetName() != wfType {
			continue
		}
		wf := e.GetExecution()
		d, err := c.DescribeWorkflowExecution(ctx, wf.GetWorkflowId(), wf.GetRunId())
		if err != nil {
			continue // closed meanwhile
		}
		for _, a := range d.PendingActivities {
			name := a.GetActivityType().GetName()
			if a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED && slices.Contains(acts, name) {
				return inFlight{wf.GetWorkflowId(), wf.GetRunId(), name, a.LastWorkerIdentity}, true
			}
		}
	}
	return inFlight{}, false
}

// hostMove reads a workflow run's history (IndexRepo, MineRepoTriplets):
// its input, into in, and when it synced the repository again after a
// step on deadQueue timed out waiting to start (zero: it did not).
func hostMove(ctx context.Context, t *testing.T, c client.Client, id, runID, deadQueue string, in any) time.Time {
	t.Helper()
	scheduled := map[int64]string{} // ActivityTaskScheduled event id → task queue
	var timedOut bool
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), in); err != nil {
				t.Fatalf("input of %s: %v", id, err)
			}
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetTaskQueue().GetName()
			if timedOut && a.GetActivityType().GetName() == "Sync" {
				return ev.GetEventTime().AsTime()
			}
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil &&
			scheduled[a.GetScheduledEventId()] == deadQueue &&
			a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
			timedOut = true
		}
	}
	return time.Time{}
}

// locusProc is one locus process of a test.
type locusProc struct {
	name      string
	cmd       *exec.Cmd
	stdout    bytes.Buffer // read after exit only
	stderr    testlog.Buffer
	done      chan struct{}
	hostQueue string // workers: their clone host's queue
}

// startLocus starts bin with args; it is stopped (SIGINT, then SIGKILL)
// when the test ends.
func startLocus(ctx context.Context, t *testing.T, bin, name string, args ...string) *locusProc {
	t.Helper()
	p := &locusProc{name: name, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOCUS_") { // the flags say it all
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if p.exited() {
			return
		}
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second): // a stuck shutdown is not this test's subject
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s stderr (last 3000 bytes):\n%s", p.name, tail(p.stderr.String(), 3000))
		}
	})
	return p
}

func (p *locusProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitFor waits until a line of stderr contains s and returns that line.
func (p *locusProc) waitFor(ctx context.Context, t *testing.T, s string) string {
	t.Helper()
	for {
		out := p.stderr.String()
		if i := strings.Index(out, s); i >= 0 {
			start := strings.LastIndexByte(out[:i], '\n') + 1
			line, _, _ := strings.Cut(out[start:], "\n")
			return line
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before saying %q:\n%s", p.name, s, p.output())
		case <-ctx.Done():
			t.Fatalf("%s did not say %q: %v\n%s", p.name, s, ctx.Err(), p.output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *locusProc) wait(ctx context.Context, t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-ctx.Done():
		t.Fatalf("%s did not finish: %v\n%s", p.name, ctx.Err(), p.output())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *locusProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.done
}

func (p *locusProc) output() string {
	out := ""
	if p.exited() {
		out = "stdout:\n" + tail(p.stdout.String(), 3000) + "\n"
	}
	return out + "stderr:\n" + tail(p.stderr.String(), 3000)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// buildLocus builds cmd/locus the way a user gets it.
func buildLocus(t *testing.T) string {
	t.Helper()
	bin, err := locusbin.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
