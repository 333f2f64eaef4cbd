package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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

	// Walk the chain of runs from the first and measure each history.
	runID := firstRunID
	runs, maxEvents, maxBytes := 0, 0, 0
	for runID != "" {
		it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events, bytes, next := 0, 0, ""
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
		runs++
		maxEvents, maxBytes = max(maxEvents, events), max(maxBytes, bytes)
		runID = next
	}
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
