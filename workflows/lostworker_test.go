package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// optsRecorder records the options of every activity a workflow
// schedules, by activity name.
type optsRecorder struct {
	interceptor.WorkerInterceptorBase
	got map[string]workflow.ActivityOptions
}

func (r *optsRecorder) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	in := &optsInbound{root: r}
	in.Next = next
	return in
}

type optsInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	root *optsRecorder
}

func (i *optsInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	out := &optsOutbound{root: i.root}
	out.Next = outbound
	return i.Next.Init(out)
}

type optsOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	root *optsRecorder
}

func (o *optsOutbound) ExecuteActivity(ctx workflow.Context, name string, args ...any) workflow.Future {
	o.root.got[name] = workflow.GetActivityOptions(ctx)
	return o.Next.ExecuteActivity(ctx, name, args...)
}

// TestIndexRepoHostWait: the steps bound to the clone's host wait
// IndexOptions.HostWait for it (DefaultHostWait when unset); steps on the
// shared queues have no such bound.
func TestIndexRepoHostWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait time.Duration
		want time.Duration
	}{
		{"default", 0, DefaultHostWait},
		{"set", 20 * time.Second, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newRepoEnv(t)
			rec := &optsRecorder{got: map[string]workflow.ActivityOptions{}}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
			env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(schema.SyncResult{Repo: acme.Name, HostQueue: testHostQueue, Head: testHead}, nil)
			env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(schema.ScrapeResult{Head: testHead, NewCommits: 1}, nil)
			env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(schema.GraphInfo{Commit: testHead}, nil)
			env.OnActivity(searchActs.PlanEmbed, mock.Anything, mock.Anything).Return(activities.PlanEmbedOutput{}, nil)
			env.OnActivity(searchActs.FinishIndex, mock.Anything, mock.Anything).Return(schema.SearchInfo{Commit: testHead}, nil)
			var published activities.PublishInput
			env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published))
			env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme, Options: schema.IndexOptions{HostWait: tc.wait}})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			for _, step := range []string{"ScrapeCommits", "BuildGraph"} {
				if got, ok := rec.got[step]; !ok || got.ScheduleToStartTimeout != tc.want {
					t.Errorf("%s waits %v for its host (scheduled: %v), want %v", step, got.ScheduleToStartTimeout, ok, tc.want)
				}
			}
			for _, step := range []string{"Sync", "PlanEmbed", "PublishManifest"} {
				if got := rec.got[step].ScheduleToStartTimeout; got != 0 {
					t.Errorf("%s on a shared queue has schedule-to-start %v, want none", step, got)
				}
			}
		})
	}
}

// The fleet's own activities have a heartbeat timeout: an attempt lost with
// its worker (kill -9) is retried on another after HeartbeatTimeout, not
// after its 5 min start-to-close.
func TestIndexFleetActivitiesHeartbeat(t *testing.T) {
	all := repos(3)
	const key = "runs/" + testFleetID + "/repos.json"
	r := newFleetRun(t, func(schema.RepoSpec) time.Duration { return time.Minute })
	rec := &optsRecorder{got: map[string]workflow.ActivityOptions{}}
	r.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
	r.env.OnActivity(store.LoadFleetRepos, mock.Anything, mock.Anything).Return(all, nil)
	if next, _ := r.execute(t, schema.IndexFleetInput{ReposKey: key, Total: len(all)}); next != nil {
		t.Fatalf("continued as new with %+v", next)
	}
	for _, name := range []string{"LoadFleetRepos", "WriteFleetResults", "WriteFleetSummary"} {
		if got, ok := rec.got[name]; !ok || got.HeartbeatTimeout != HeartbeatTimeout {
			t.Errorf("%s: heartbeat timeout %v (scheduled: %v), want %v", name, got.HeartbeatTimeout, ok, HeartbeatTimeout)
		}
	}
}

// A backlog's and a triplets run's activities on shared queues have a
// heartbeat timeout (an attempt lost with its worker is retried after
// HeartbeatTimeout, not after a start-to-close of minutes: 2 min a center
// for a selection), and their clone-bound steps wait HostWait for the
// clone's host (DefaultHostWait when unset).
func TestBacklogAndTripletsActivitiesHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait time.Duration
		want time.Duration
	}{
		{"default", 0, DefaultHostWait},
		{"set", 20 * time.Second, 20 * time.Second},
	} {
		t.Run("backlog/"+tc.name, func(t *testing.T) {
			issues := backlogIssues(3)
			issues[0].BaseCommit, issues[0].HostQueue = "aaaaaaa1", "host-a" // ranked at a snapshot
			r := newBacklogRun(t, issues)
			rec := &optsRecorder{got: map[string]workflow.ActivityOptions{}}
			r.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
			if next, res := r.execute(t, LocalizeBacklogInput{IssuesKey: schema.BacklogKey(testBacklogRun, "input.json"), Total: len(issues),
				Options: BacklogOptions{HostWait: tc.wait}}); next != nil || res.Done != len(issues) {
				t.Fatalf("continued as %+v, result %+v", next, res)
			}
			checkHeartbeats(t, rec, "LoadBacklogIssues", "RetrieveBatch", "SelectBatch", "WriteBacklogPart", "WriteBacklogSummary", "EnsureSnapshot")
			if got := rec.got["EnsureSnapshot"].ScheduleToStartTimeout; got != tc.want {
				t.Errorf("EnsureSnapshot waits %v for its host, want %v", got, tc.want)
			}
		})
		t.Run("triplets/"+tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Git{})
			env.RegisterActivity(&activities.Store{})
			rec := &optsRecorder{got: map[string]workflow.ActivityOptions{}}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
			env.OnActivity(store.PlanTriplets, mock.Anything, mock.Anything).Return(
				activities.TripletsPlan{Head: testHead, Commits: 2, Chunks: 2, HostQueue: "host-a", URL: "/src/widget"}, nil)
			env.OnActivity(git.MineTripletsChunk, mock.Anything, mock.Anything).Return(triplets.ChunkResult{}, nil)
			env.ExecuteWorkflow(MineRepoTriplets, TripletsRepoInput{Run: "r", Repo: "acme/widget", Options: TripletsOptions{HostWait: tc.wait}})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			checkHeartbeats(t, rec, "PlanTriplets", "MineTripletsChunk")
			if got := rec.got["MineTripletsChunk"].ScheduleToStartTimeout; got != tc.want {
				t.Errorf("MineTripletsChunk waits %v for its host, want %v", got, tc.want)
			}
		})
	}
}

// checkHeartbeats checks that each activity named was scheduled with
// HeartbeatTimeout.
func checkHeartbeats(t *testing.T, rec *optsRecorder, names ...string) {
	t.Helper()
	for _, name := range names {
		if got, ok := rec.got[name]; !ok || got.HeartbeatTimeout != HeartbeatTimeout {
			t.Errorf("%s: heartbeat timeout %v (scheduled: %v), want %v", name, got.HeartbeatTimeout, ok, HeartbeatTimeout)
		}
	}
}
