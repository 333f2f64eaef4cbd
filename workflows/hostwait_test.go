package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// waitRecorder records the schedule-to-start timeout of every activity a
// workflow schedules, by activity name.
type waitRecorder struct {
	interceptor.WorkerInterceptorBase
	got map[string]time.Duration
}

func (r *waitRecorder) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	in := &waitInbound{root: r}
	in.Next = next
	return in
}

type waitInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	root *waitRecorder
}

func (i *waitInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	out := &waitOutbound{root: i.root}
	out.Next = outbound
	return i.Next.Init(out)
}

type waitOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	root *waitRecorder
}

func (o *waitOutbound) ExecuteActivity(ctx workflow.Context, name string, args ...any) workflow.Future {
	o.root.got[name] = workflow.GetActivityOptions(ctx).ScheduleToStartTimeout
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
			rec := &waitRecorder{got: map[string]time.Duration{}}
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
				if got, ok := rec.got[step]; !ok || got != tc.want {
					t.Errorf("%s waits %v for its host (scheduled: %v), want %v", step, got, ok, tc.want)
				}
			}
			for _, step := range []string{"Sync", "PlanEmbed", "PublishManifest"} {
				if got := rec.got[step]; got != 0 {
					t.Errorf("%s on a shared queue has schedule-to-start %v, want none", step, got)
				}
			}
		})
	}
}
