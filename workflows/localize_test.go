package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
)

// twoCenters is a retrieval with two centers of one candidate each.
func twoCenters() search.Retrieval {
	ranking := []spider.Scored{{ID: "a.py:f", Score: 0.9}, {ID: "b.py:g", Score: 0.8}, {ID: "a.py:h", Score: 0.7}, {ID: "b.py:i", Score: 0.6}}
	exp := &spider.Expansion{Params: spider.Params{K: 3, N: 500, C: 2, Depth: 4}.WithDefaults(), TopK: ranking[:3], Pool: 4,
		Centers: []spider.Center{
			{ID: "a.py:f", Score: 0.9, Rank: 1, InGraph: true, Candidates: []spider.Candidate{{ID: "a.py:h", Score: 0.7, Rank: 3, Hops: 2, InTopK: true}}},
			{ID: "b.py:g", Score: 0.8, Rank: 2, InGraph: true, Candidates: []spider.Candidate{{ID: "b.py:i", Score: 0.6, Rank: 4, Hops: 2}}},
		}}
	exp.Params.K = 3
	return search.Retrieval{Repo: "acme/x", Commit: "c0ffee0", Method: search.MethodSpIDER, TopK: ranking[:3], Expansion: exp}
}

// One SelectCenters activity on the LLM queue asks about every center; a
// center it reports refused keeps its place without neighbours.
func TestLocalizeSelectsAllCentersInOneActivity(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	env.OnActivity(searchActs.Retrieve, mock.Anything, mock.Anything).Return(twoCenters(), nil).Once()
	env.OnActivity(llmActs.SelectCenters, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SelectCentersInput) (activities.SelectCentersOutput, error) {
			if q := activity.GetInfo(ctx).TaskQueue; q != LLMQueue {
				t.Errorf("SelectCenters on %q, want %q", q, LLMQueue)
			}
			if len(in.Centers) != 2 || in.Centers[0].Center != "a.py:f" || in.Centers[1].Candidates[0] != "b.py:i" || in.MaxTokens != 500 {
				t.Errorf("input %+v", in)
			}
			return activities.SelectCentersOutput{Centers: []activities.CenterResult{
				{Center: "a.py:f", SelectOutput: activities.SelectOutput{IDs: []string{"a.py:h"}, Selector: "m", Calls: 1, PromptTokens: 10, CompletionTokens: 2}},
				{Center: "b.py:g", SelectOutput: activities.SelectOutput{Calls: 1, PromptTokens: 3}, Error: "refused", URL: "http://llm", Attempt: 1},
			}}, nil
		}).Once()
	env.ExecuteWorkflow(Localize, LocalizeInput{Repo: "acme/x", Issue: "bug", MaxIssueTokens: 500})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out LocalizeResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if got, want := itemReasons(out), []string{"a.py:f:center", "a.py:h:neighbour", "b.py:g:center"}; !slices.Equal(got, want) {
		t.Errorf("items %v, want %v", got, want)
	}
	if len(out.Failed) != 1 || out.Failed[0] != "b.py:g" || out.LLMCalls != 2 || out.PromptTokens != 13 || out.Selector != "m" {
		t.Errorf("result %+v", out)
	}
	if len(out.SelectorUnavailable) != 1 || out.SelectorUnavailable[0] != (UnavailableCenter{Center: "b.py:g", URL: "http://llm", Attempts: 1, Error: "refused"}) ||
		!strings.Contains(out.Warning, "LLM at http://llm unavailable after 1 attempt") ||
		!strings.Contains(out.Warning, "results for center b.py:g have no selected neighbours") {
		t.Errorf("selector unavailable %+v, warning %q", out.SelectorUnavailable, out.Warning)
	}
}

// When SelectCenters keeps failing, the centers its last attempt had
// settled keep their neighbours (from the error's details) and the one
// still failing is unavailable with its server, attempts and error.
func TestLocalizeKeepsSettledCentersWhenSelectionFails(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	env.OnActivity(searchActs.Retrieve, mock.Anything, mock.Anything).Return(twoCenters(), nil).Once()
	attempts := 0
	env.OnActivity(llmActs.SelectCenters, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SelectCentersInput) (activities.SelectCentersOutput, error) {
			attempts++
			a := activity.GetInfo(ctx).Attempt
			done := activities.CenterResult{Center: "a.py:f", SelectOutput: activities.SelectOutput{IDs: []string{"a.py:h"}, Selector: "m", Calls: 1, PromptTokens: 10}}
			failing := activities.CenterResult{Center: "b.py:g", Error: "HTTP 503 from http://llm", URL: "http://llm", Attempt: a}
			return activities.SelectCentersOutput{}, temporal.NewApplicationErrorWithOptions("HTTP 503 from http://llm", activities.ErrTypeLLMRetryable,
				temporal.ApplicationErrorOptions{Details: []any{activities.SelectFailure{URL: "http://llm", Attempt: a},
					activities.SelectCentersProgress{Done: []activities.CenterResult{done}, Failed: []activities.CenterResult{failing}}}})
		})
	env.ExecuteWorkflow(Localize, LocalizeInput{Repo: "acme/x", Issue: "bug", LLMRetry: RetryOptions{InitialInterval: time.Millisecond, MaximumAttempts: 3}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out LocalizeResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if attempts != 3 {
		t.Errorf("%d attempts, want 3 (the retry policy's)", attempts)
	}
	if got, want := itemReasons(out), []string{"a.py:f:center", "a.py:h:neighbour", "b.py:g:center"}; !slices.Equal(got, want) {
		t.Errorf("items %v, want %v", got, want)
	}
	if len(out.SelectorUnavailable) != 1 || out.SelectorUnavailable[0] != (UnavailableCenter{Center: "b.py:g", URL: "http://llm", Attempts: 3, Error: "HTTP 503 from http://llm"}) ||
		out.PromptTokens != 10 || out.Selector != "m" {
		t.Errorf("result %+v", out)
	}
	if !strings.Contains(out.Warning, "after 3 attempts") {
		t.Errorf("warning %q", out.Warning)
	}
}

// Centers the activity skipped for the issue's token limit are listed and
// keep their places.
func TestLocalizeReportsBudgetSkippedCenters(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	env.OnActivity(searchActs.Retrieve, mock.Anything, mock.Anything).Return(twoCenters(), nil).Once()
	env.OnActivity(llmActs.SelectCenters, mock.Anything, mock.Anything).Return(activities.SelectCentersOutput{Centers: []activities.CenterResult{
		{Center: "a.py:f", SelectOutput: activities.SelectOutput{IDs: []string{}, Selector: "m", Calls: 1, PromptTokens: 90, CompletionTokens: 20}},
		{Center: "b.py:g", Skipped: true},
	}}, nil).Once()
	env.ExecuteWorkflow(Localize, LocalizeInput{Repo: "acme/x", Issue: "bug", MaxIssueTokens: 100})
	var out LocalizeResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.BudgetSkipped) != 1 || out.BudgetSkipped[0] != "b.py:g" || len(out.Failed) != 0 || out.Warning != "" || len(out.Items) != 3 {
		t.Errorf("result %+v", out)
	}
}

func itemReasons(out LocalizeResult) []string {
	var ids []string
	for _, it := range out.Items {
		ids = append(ids, it.ID+":"+string(it.Reason))
	}
	return ids
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
	env.OnActivity(llmActs.SelectCenters, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SelectCentersInput) (activities.SelectCentersOutput, error) {
			if in.Commit != snap {
				t.Errorf("SelectCenters at %q, want the snapshot %q", in.Commit, snap)
			}
			return activities.SelectCentersOutput{Centers: []activities.CenterResult{{Center: "a.py:old", SelectOutput: activities.SelectOutput{IDs: []string{"a.py:h"}, Selector: "m"}}}}, nil
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
