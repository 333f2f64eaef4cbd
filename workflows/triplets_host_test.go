package workflows

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// A repository whose clone's host is gone (its worker killed for good: no
// worker takes a chunk within the wait) is not failed: once the chunks in
// flight settle, it is cloned again on a live host from the manifest's URL
// and ref, and every chunk is mined there, each counted once.
func TestMineRepoTripletsHostGone(t *testing.T) {
	for _, tc := range []struct {
		name      string
		url       string // the plan's; "" (a manifest without it): no move
		wantErr   bool
		wantSyncs int
	}{
		{"moves to a live host", "/src/widget", false, 1},
		{"no source to clone from", "", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Git{})
			env.RegisterActivity(&activities.Store{})
			const chunks = 5
			env.OnActivity(store.PlanTriplets, mock.Anything, mock.Anything).Return(
				activities.TripletsPlan{Head: testHead, Commits: 50, Chunks: chunks, HostQueue: "host-gone", URL: tc.url, Ref: "main"}, nil)
			var mu sync.Mutex
			var syncs []schema.SyncInput
			env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in schema.SyncInput) (schema.SyncResult, error) {
					mu.Lock()
					defer mu.Unlock()
					if q := activity.GetInfo(ctx).TaskQueue; q != IndexQueue {
						t.Errorf("Sync on %q, want the shared queue", q)
					}
					syncs = append(syncs, in)
					return schema.SyncResult{Repo: in.Repo.Name, HostQueue: "host-live", Head: testHead}, nil
				})
			mined := map[int][]string{} // chunk → the hosts it ran on
			env.OnActivity(git.MineTripletsChunk, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in activities.TripletsChunkInput) (triplets.ChunkResult, error) {
					q := activity.GetInfo(ctx).TaskQueue
					mu.Lock()
					defer mu.Unlock()
					mined[in.Chunk] = append(mined[in.Chunk], q)
					if q == "host-gone" {
						return triplets.ChunkResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
					}
					return triplets.ChunkResult{Part: triplets.PartInfo{Key: fmt.Sprint("part-", in.Chunk), Records: 10}, Stats: triplets.Stats{Commits: 10}}, nil
				})
			env.ExecuteWorkflow(MineRepoTriplets, TripletsRepoInput{Run: "r", Repo: "acme/widget", Options: TripletsOptions{ChunkSize: 10}})
			var res activities.TripletsRepoResult
			err := env.GetWorkflowError()
			if tc.wantErr {
				if err == nil {
					t.Fatal("mined without a live host, want the repository failed")
				}
			} else {
				if err != nil {
					t.Fatalf("workflow error: %v", err)
				}
				if err := env.GetWorkflowResult(&res); err != nil {
					t.Fatal(err)
				}
				if res.Records != chunks*10 || res.Commits != chunks*10 || len(res.Parts) != chunks {
					t.Errorf("result: %d records, %d commits, %d parts; want every chunk once (%d, %d, %d)", res.Records, res.Commits, len(res.Parts), chunks*10, chunks*10, chunks)
				}
				for c := range chunks {
					if h := mined[c]; h[len(h)-1] != "host-live" || slices.Contains(h[1:], "host-gone") {
						t.Errorf("chunk %d ran on %v, want the gone host at most first, then the live one", c, h)
					}
				}
			}
			if len(syncs) != tc.wantSyncs {
				t.Fatalf("%d syncs, want %d", len(syncs), tc.wantSyncs)
			}
			for _, s := range syncs {
				if s.Repo != (schema.RepoSpec{Name: "acme/widget", URL: "/src/widget", Ref: "main"}) {
					t.Errorf("synced %+v, want the manifest's URL and ref", s.Repo)
				}
			}
		})
	}
}
