package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// maxHeartbeatTimeout bounds how long an attempt of a killed worker can hold
// up a rerun when no process of its host comes back to release it.
const maxHeartbeatTimeout = 30 * time.Second

// TestIndexRepoActivitiesHeartbeat: every activity of IndexRepo has a short
// heartbeat timeout, several heartbeat intervals long, so that an attempt
// whose worker died is retried within seconds and a live one is never
// mistaken for dead.
func TestIndexRepoActivitiesHeartbeat(t *testing.T) {
	env := newRepoEnv(t)
	var mu sync.Mutex
	seen := map[string]*activity.Info{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		seen[info.ActivityType.Name] = info
	})
	env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(schema.SyncResult{Repo: acme.Name, HostQueue: testHostQueue, Head: testHead}, nil)
	env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(schema.ScrapeResult{Head: testHead, NewCommits: 1}, nil)
	env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(schema.GraphInfo{Commit: testHead}, nil)
	env.OnActivity(searchActs.PlanEmbed, mock.Anything, mock.Anything).Return(activities.PlanEmbedOutput{Batches: []string{"b0"}}, nil)
	env.OnActivity(searchActs.EmbedBatch, mock.Anything, mock.Anything).Return(1, nil)
	env.OnActivity(searchActs.FinishIndex, mock.Anything, mock.Anything).Return(schema.SearchInfo{Commit: testHead}, nil)
	var published activities.PublishInput
	env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published))

	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	for _, name := range []string{"Sync", "ScrapeCommits", "BuildGraph", "PlanEmbed", "EmbedBatch", "FinishIndex", "PublishManifest"} {
		info := seen[name]
		if info == nil {
			t.Errorf("%s did not run", name)
			continue
		}
		if hb := info.HeartbeatTimeout; hb <= 0 || hb > maxHeartbeatTimeout {
			t.Errorf("%s: heartbeat timeout %v, want (0, %v]", name, hb, maxHeartbeatTimeout)
		} else if hb < 3*activities.HeartbeatInterval {
			t.Errorf("%s: heartbeat timeout %v is under three heartbeat intervals (%v)", name, hb, activities.HeartbeatInterval)
		}
	}
}
