package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
)

func TestLocalizeSelectsPerCenterInParallel(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	ranking := []spider.Scored{{ID: "a.py:f", Score: 0.9}, {ID: "b.py:g", Score: 0.8}, {ID: "a.py:h", Score: 0.7}, {ID: "b.py:i", Score: 0.6}}
	exp := &spider.Expansion{Params: spider.Params{K: 3, N: 500, C: 2, Depth: 4}.WithDefaults(), TopK: ranking[:3], Pool: 4,
		Centers: []spider.Center{
			{ID: "a.py:f", Score: 0.9, Rank: 1, InGraph: true, Candidates: []spider.Candidate{{ID: "a.py:h", Score: 0.7, Rank: 3, Hops: 2, InTopK: true}}},
			{ID: "b.py:g", Score: 0.8, Rank: 2, InGraph: true, Candidates: []spider.Candidate{{ID: "b.py:i", Score: 0.6, Rank: 4, Hops: 2}}},
		}}
	exp.Params.K = 3
	env.OnActivity(searchActs.Retrieve, mock.Anything, mock.Anything).Return(
		search.Retrieval{Repo: "acme/x", Commit: "c0ffee0", Method: search.MethodSpIDER, TopK: ranking[:3], Expansion: exp}, nil).Once()
	// Every call waits until all of them are in flight: if the workflow ran
	// the selections one after another, the first would never see the second.
	barrier := newBarrier(len(exp.Centers))
	env.OnActivity(llmActs.SelectNeighbors, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SelectInput) (activities.SelectOutput, error) {
			if !barrier.wait(2 * time.Second) {
				t.Errorf("SelectNeighbors(%s) waited 2 s for the other centers' calls: the selections do not run in parallel", in.Center)
			}
			if q := activity.GetInfo(ctx).TaskQueue; q != LLMQueue {
				t.Errorf("SelectNeighbors on %q, want %q", q, LLMQueue)
			}
			if in.Center == "b.py:g" {
				return activities.SelectOutput{}, temporal.NewNonRetryableApplicationError("refused", activities.ErrTypeBadInput, nil)
			}
			return activities.SelectOutput{IDs: []string{"a.py:h"}, Selector: "m", Calls: 1, PromptTokens: 10, CompletionTokens: 2}, nil
		}).Times(2)

	env.SetTestTimeout(20 * time.Second) // room for the barrier to time out and say why
	env.ExecuteWorkflow(Localize, LocalizeInput{Repo: "acme/x", Issue: "bug"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out LocalizeResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, it := range out.Items {
		ids = append(ids, it.ID+":"+string(it.Reason))
	}
	want := []string{"a.py:f:center", "a.py:h:neighbour", "b.py:g:center"}
	if len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Errorf("items %v, want %v", ids, want)
	}
	if len(out.Failed) != 1 || out.Failed[0] != "b.py:g" || out.LLMCalls != 1 || out.PromptTokens != 10 || out.Selector != "m" {
		t.Errorf("result %+v", out)
	}
	if len(out.SelectorUnavailable) != 1 || out.SelectorUnavailable[0].Center != "b.py:g" || !strings.Contains(out.SelectorUnavailable[0].Error, "refused") ||
		!strings.Contains(out.Warning, "results for center b.py:g have no selected neighbours") {
		t.Errorf("selector unavailable %+v, warning %q", out.SelectorUnavailable, out.Warning)
	}
}

// barrier opens when n callers are waiting.
type barrier struct {
	mu   sync.Mutex
	n    int
	open chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

// wait reports whether all n callers arrived within d.
func (b *barrier) wait(d time.Duration) bool {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return true
	case <-time.After(d):
		return false
	}
}

func TestLocalizeRefusesAnotherCommit(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	env.OnActivity(searchActs.Retrieve, mock.Anything, mock.Anything).Return(
		search.Retrieval{Repo: "acme/x", Commit: "c0ffee0123", Method: search.MethodSR}, nil).Once()
	env.ExecuteWorkflow(Localize, LocalizeInput{Repo: "acme/x", Issue: "bug", Commit: "deadbeef"})
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("a query at another commit than the index's must fail")
	}
}

// A Localize with Snapshot retrieves from that snapshot, and the selections
// read code at its commit.
func TestLocalizeAtSnapshot(t *testing.T) {
	const snap = "aaaaaaa1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	ranking := []spider.Scored{{ID: "a.py:old", Score: 0.9}, {ID: "a.py:h", Score: 0.7}}
	exp := &spider.Expansion{Params: spider.Params{K: 2, C: 1}.WithDefaults(), TopK: ranking, Pool: 2,
		Centers: []spider.Center{{ID: "a.py:old", Score: 0.9, Rank: 1, InGraph: true, Candidates: []spider.Candidate{{ID: "a.py:h", Score: 0.7, Rank: 2, Hops: 2, InTopK: true}}}}}
	exp.Params.K = 2
	env.OnActivity(searchActs.Retrieve, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RetrieveInput) (search.Retrieval, error) {
			if in.Snapshot != snap {
				t.Errorf("Retrieve with snapshot %q, want %q", in.Snapshot, snap)
			}
			return search.Retrieval{Repo: "acme/x", Commit: snap, Method: search.MethodSpIDER, TopK: ranking, Expansion: exp}, nil
		}).Once()
	env.OnActivity(llmActs.SelectNeighbors, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SelectInput) (activities.SelectOutput, error) {
			if in.Commit != snap {
				t.Errorf("SelectNeighbors at %q, want the snapshot %q", in.Commit, snap)
			}
			return activities.SelectOutput{IDs: []string{"a.py:h"}, Selector: "m"}, nil
		}).Once()
	env.ExecuteWorkflow(Localize, LocalizeInput{Repo: "acme/x", Issue: "bug", Commit: "aaaaaaa1", Snapshot: snap})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out LocalizeResult
	if err := env.GetWorkflowResult(&out); err != nil || out.Commit != snap || len(out.Items) != 2 || out.Items[0].ID != "a.py:old" {
		t.Fatalf("result %+v (%v), want a.py:old first at %s", out, err, snap)
	}
}
