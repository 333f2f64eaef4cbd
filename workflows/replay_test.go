package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplayHistories replays histories recorded from a real run against the
// current workflow code: a change that would break workflows already running
// (a new, removed or reordered activity, child or timer) fails here. After a
// deliberate, versioned change, re-record them with
//
//	go test ./internal/e2e -run TestIndexFleetEndToEnd -update
func TestReplayHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no histories in testdata/histories; record them with: go test ./internal/e2e -run TestIndexFleetEndToEnd -update")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(IndexFleet)
			r.RegisterWorkflow(IndexRepo)
			if err := r.ReplayWorkflowHistoryFromJSONFile(testLogger(t), f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
