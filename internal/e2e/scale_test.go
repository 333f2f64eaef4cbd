package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/cputime"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// TestFleetHistoryStaysSmall runs IndexFleet over a stored list of many
// repositories on the real embedded server, with an IndexRepo that returns at
// once, and measures each run's history: with continue-as-new the size of one
// run depends on ContinueAsNewAfter, not on the fleet, so a 10,000-repository
// fleet stays far below Temporal's 51,200-event / 50 MB limits.
// LOCUS_SCALE_REPOS sets the fleet size (default 600; CI keeps it quick).
func TestFleetHistoryStaysSmall(t *testing.T) {
	n := 600
	if v := os.Getenv("LOCUS_SCALE_REPOS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	const perRun = 200
	if testing.Short() {
		t.Skip("-short: skipping the fleet scale test (set LOCUS_SCALE_REPOS and drop -short to run it)")
	}
	// 5 minutes for the default fleet, plus 50 ms per repository beyond it.
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)

	w := worker.New(c, workflows.IndexQueue, worker.Options{})
	w.RegisterWorkflow(workflows.IndexFleet)
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, in schema.IndexRepoInput) (schema.RepoResult, error) {
		res := schema.RepoResult{Repo: in.Repo.Name, URL: in.Repo.URL, OK: true}
		workflows.Report(ctx, in, res, nil)
		return res, nil
	}, workflow.RegisterOptions{Name: "IndexRepo"})
	w.RegisterActivity(&activities.Store{Bucket: b})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	specs := make([]schema.RepoSpec, n)
	for i := range specs {
		name := fmt.Sprintf("fleet/r%05d", i)
		specs[i] = schema.RepoSpec{Name: schema.RepoName(name), URL: "https://git.example.com/" + name + ".git"}
	}
	data, _ := json.Marshal(specs)
	const id = "scale-fleet"
	key := schema.RunPrefix(id) + "repos.json"
	if err := b.WriteAll(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue}, workflows.IndexFleet,
		schema.IndexFleetInput{ReposKey: key, Total: n, Options: schema.FleetOptions{Window: 50, ContinueAsNewAfter: perRun}})
	if err != nil {
		t.Fatal(err)
	}
	firstRunID := run.GetRunID() // Get follows the chain and moves the run id on
	var res workflows.FleetResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(begin)
	if res.Done != n || res.Failed != 0 {
		t.Fatalf("result %+v, want %d done", res, n)
	}

	runs, maxEvents, maxBytes := chainHistory(ctx, t, c, id, firstRunID)
	if want := (n + perRun - 1) / perRun; runs != want {
		t.Errorf("%d runs, want %d", runs, want)
	}
	perChild := float64(maxEvents) / perRun
	t.Logf("%d repositories in %v: %d runs, largest history %d events / %d KiB (%.1f events per child)",
		n, elapsed.Round(time.Millisecond), runs, maxEvents, maxBytes/1024, perChild)
	// At the default of 500 children per run, one run's history must stay an
	// order of magnitude below the 51,200-event limit, whatever the fleet size.
	if projected := perChild * workflows.DefaultContinueAsNewAfter; projected > 5120 {
		t.Errorf("projected %0.f events per run at the default ContinueAsNewAfter, want ≤ 5,120", projected)
	}
	if maxBytes > 5<<20 {
		t.Errorf("largest history %d bytes, want ≤ 5 MiB", maxBytes)
	}
}

// chainHistory walks the chain of runs of workflow id from firstRunID and
// returns how many runs it has and the largest history of one, in events and
// bytes.
func chainHistory(ctx context.Context, t *testing.T, c client.Client, id, firstRunID string) (runs, maxEvents, maxBytes int) {
	t.Helper()
	for runID := firstRunID; runID != ""; runs++ {
		events, bytes, next := history(ctx, t, c, id, runID)
		maxEvents, maxBytes = max(maxEvents, events), max(maxBytes, bytes)
		runID = next
	}
	return runs, maxEvents, maxBytes
}

// history measures one run's history and returns the run it continued as.
func history(ctx context.Context, t *testing.T, c client.Client, id, runID string) (events, bytes int, next string) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		bytes += proto.Size(ev)
		if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
			next = a.GetNewExecutionRunId()
		}
	}
	return events, bytes, next
}

// simFleet stands in for the index's activities, by name, so that the real
// IndexFleet and IndexRepo workflows run a fleet's orchestration at scale
// without git or models: each repository has a head, and Sync finds it up to
// date when the last publish was of that head.
type simFleet struct {
	mu        sync.Mutex
	heads     map[schema.RepoName]string
	published map[schema.RepoName]string
}

func (f *simFleet) register(w worker.Worker, host worker.Worker, emb worker.Worker) {
	w.RegisterActivityWithOptions(func(_ context.Context, in schema.SyncInput) (schema.SyncResult, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		head := f.heads[in.Repo.Name]
		return schema.SyncResult{Repo: in.Repo.Name, HostQueue: "sim-host", Head: head, UpToDate: f.published[in.Repo.Name] == head, Rows: 1}, nil
	}, activity.RegisterOptions{Name: "Sync"})
	host.RegisterActivityWithOptions(func(_ context.Context, in schema.ScrapeInput) (schema.ScrapeResult, error) {
		return schema.ScrapeResult{Head: in.Head, NewCommits: 1, Rows: 1}, nil
	}, activity.RegisterOptions{Name: "ScrapeCommits"})
	host.RegisterActivityWithOptions(func(_ context.Context, in schema.BuildGraphInput) (schema.GraphInfo, error) {
		return schema.GraphInfo{Commit: in.Head, Parsed: 1}, nil
	}, activity.RegisterOptions{Name: "BuildGraph"})
	emb.RegisterActivityWithOptions(func(context.Context, schema.IndexSearchInput) (activities.PlanEmbedOutput, error) {
		return activities.PlanEmbedOutput{}, nil
	}, activity.RegisterOptions{Name: "PlanEmbed"})
	emb.RegisterActivityWithOptions(func(_ context.Context, in schema.IndexSearchInput) (schema.SearchInfo, error) {
		return schema.SearchInfo{Commit: in.Graph.Commit, Upserted: 1}, nil
	}, activity.RegisterOptions{Name: "FinishIndex"})
	w.RegisterActivityWithOptions(func(_ context.Context, in activities.PublishInput) (schema.Manifest, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.published[in.Repo.Name] = in.Head
		return schema.Manifest{Repo: in.Repo.Name, Head: in.Head, Commits: 1, Rows: 1}, nil
	}, activity.RegisterOptions{Name: "PublishManifest"})
}

// TestScheduledPassAtScale indexes a fleet with the real IndexFleet and
// IndexRepo workflows over simulated activities, then runs the pass a
// schedule would after 10% of the repositories got one new commit, and
// reports each pass's time, orchestration time per repository and the
// history sizes against Temporal's limits (docs/scale.md).
// LOCUS_SCALE_REPOS sets the fleet size (default 200).
func TestScheduledPassAtScale(t *testing.T) {
	n := 200
	if v := os.Getenv("LOCUS_SCALE_REPOS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if testing.Short() {
		t.Skip("-short: skipping the scheduled-pass scale test")
	}
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	sim := &simFleet{heads: map[schema.RepoName]string{}, published: map[schema.RepoName]string{}}
	w := worker.New(c, workflows.IndexQueue, worker.Options{})
	host := worker.New(c, "sim-host", worker.Options{})
	emb := worker.New(c, workflows.EmbedQueue, worker.Options{})
	w.RegisterWorkflow(workflows.IndexFleet)
	w.RegisterWorkflow(workflows.IndexRepo)
	st := &activities.Store{Bucket: b}
	w.RegisterActivity(st.WriteFleetResults)
	w.RegisterActivity(st.WriteFleetSummary)
	w.RegisterActivity(st.LoadFleetRepos)
	sim.register(w, host, emb)
	for _, x := range []worker.Worker{w, host, emb} {
		if err := x.Start(); err != nil {
			t.Fatal(err)
		}
		defer x.Stop()
	}
	specs := make([]schema.RepoSpec, n)
	for i := range specs {
		name := schema.RepoName(fmt.Sprintf("fleet/r%05d", i))
		specs[i] = schema.RepoSpec{Name: name, URL: "https://git.example.com/" + string(name) + ".git"}
		sim.heads[name] = fmt.Sprintf("%040x", i)
	}
	data, _ := json.Marshal(specs)
	key := schema.RunPrefix("sim") + "repos.json"
	if err := b.WriteAll(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	// Each pass's wall time (reported) and this process's CPU time (the
	// server, the workers and the simulated repositories all run here):
	// the scheduled pass must cost less CPU than the full one, which holds
	// however busy the machine is, as wall time does not.
	var cpu time.Duration
	pass := func(id string) (time.Duration, workflows.FleetResult, string) {
		begin, beginCPU := time.Now(), cputime.Process()
		defer func() { cpu = cputime.Process() - beginCPU }()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue}, workflows.IndexFleet,
			schema.IndexFleetInput{ReposKey: key, Total: n})
		if err != nil {
			t.Fatal(err)
		}
		first := run.GetRunID()
		var res workflows.FleetResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		if res.Done != n || res.Failed != 0 {
			t.Fatalf("%s: %+v, want %d done", id, res, n)
		}
		return time.Since(begin), res, first
	}
	fullTime, _, fullRun := pass("sim-full")
	fullCPU := cpu
	changed := 0
	for i, s := range specs {
		if i%10 == 0 {
			sim.heads[s.Name] = fmt.Sprintf("%040x", n+i)
			changed++
		}
	}
	incTime, _, incRun := pass("sim-incremental")
	incCPU := cpu
	fr, fe, fb := chainHistory(ctx, t, c, "sim-full", fullRun)
	ir, ie, ib := chainHistory(ctx, t, c, "sim-incremental", incRun)
	indexed, _, _ := history(ctx, t, c, workflows.RepoWorkflowID(string(specs[0].Name)), "")
	upToDate, _, _ := history(ctx, t, c, workflows.RepoWorkflowID(string(specs[1].Name)), "")
	t.Logf("%d repositories: full pass %v (%.1f ms/repo), fleet %d runs, largest history %d events / %d KiB",
		n, fullTime.Round(time.Millisecond), float64(fullTime.Milliseconds())/float64(n), fr, fe, fb/1024)
	t.Logf("scheduled pass, %d changed: %v (%.1f ms/repo), fleet %d runs, largest history %d events / %d KiB; IndexRepo history %d events re-indexed, %d up to date",
		changed, incTime.Round(time.Millisecond), float64(incTime.Milliseconds())/float64(n), ir, ie, ib/1024, indexed, upToDate)
	if upToDate >= indexed/2 {
		t.Errorf("an up-to-date repository's run has %d events, a re-indexed one %d: want it to stop after Sync", upToDate, indexed)
	}
	t.Logf("CPU: full pass %v, scheduled pass %v", fullCPU.Round(time.Millisecond), incCPU.Round(time.Millisecond))
	if incCPU >= fullCPU {
		t.Errorf("the scheduled pass cost as much CPU (%v) as the full one (%v)", incCPU, fullCPU)
	}
	if max(fe, ie)*workflows.DefaultContinueAsNewAfter/max(1, min(n, workflows.DefaultContinueAsNewAfter)) > 51200/5 {
		t.Errorf("fleet history %d events for %d repositories: projected beyond a fifth of the 51,200-event limit", max(fe, ie), n)
	}
}
