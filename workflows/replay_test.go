package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// replayed are the workflows whose recorded histories the replay test
// replays, by history file prefix. A new workflow goes here, and its
// histories are recorded by an e2e test run under `task update-golden`.
var replayed = map[string]any{
	"indexfleet-":       IndexFleet,
	"indexrepo-":        IndexRepo,
	"localize-":         Localize,
	"backlog-":          LocalizeBacklog,
	"triplets-":         BuildTriplets,
	"minerepotriplets-": MineRepoTriplets,
	"scheduledindex-":   ScheduledIndex,
	"rank-":             TrainRanker,
}

const recordHint = "record them with: task update-golden (go test ./internal/e2e -run 'TestIndexFleetEndToEnd|TestLocalize|TestBacklog|TestRerank|TestTriplets|TestSchedule|TestRankTrainWorkflow' -update)"

// TestReplayHistories replays histories recorded from a real run against the
// current workflow code: a change that would break workflows already running
// (a new, removed or reordered activity, child or timer) fails here. After a
// deliberate, versioned change, re-record them with `task update-golden`.
func TestReplayHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]int{}
	for _, f := range files {
		prefix := ""
		for p := range replayed {
			if strings.HasPrefix(filepath.Base(f), p) {
				prefix = p
			}
		}
		if prefix == "" {
			t.Errorf("%s: no workflow in replayed matches its name", f)
			continue
		}
		have[prefix]++
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			for _, wf := range replayed {
				r.RegisterWorkflow(wf)
			}
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			hist, err := client.HistoryFromJSON(fh, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.ReplayWorkflowHistoryWithOptions(testLogger(t), hist, worker.ReplayWorkflowHistoryOptions{OriginalExecution: originalExecution(hist)}); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
	for p := range replayed {
		if have[p] == 0 {
			t.Errorf("no %s*.json history in testdata/histories; %s", p, recordHint)
		}
	}
}

// originalExecution is the recorded run's id where a workflow names its
// children after it (ScheduledIndex: the fleet is "<its id>/fleet"), so that
// the replay names them the same; zero (the replayer's default) otherwise.
func originalExecution(h *historypb.History) workflow.Execution {
	for _, e := range h.GetEvents() {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			if id, ok := strings.CutSuffix(a.GetWorkflowId(), "/fleet"); ok {
				return workflow.Execution{ID: id}
			}
		}
	}
	return workflow.Execution{}
}
