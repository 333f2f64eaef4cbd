package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// wantBadInput checks that a workflow failed with a non-retryable BadInput
// error whose message names want.
func wantBadInput(t *testing.T, err error, want string) {
	t.Helper()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an application error", err)
	}
	if !ae.NonRetryable() || ae.Type() != activities.ErrTypeBadInput || !strings.Contains(ae.Message(), want) {
		t.Fatalf("err = %v (non-retryable %v, type %q), want a non-retryable %s naming %q", err, ae.NonRetryable(), ae.Type(), activities.ErrTypeBadInput, want)
	}
}

// Bad inputs fail the workflow at once: no activity is registered with a
// mock, so one scheduled would fail the test with an unexpected call.
func TestLocalizeRejectsBadInputAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   LocalizeInput
		want string
	}{
		{"negative k", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Params: spider.Params{K: -1}}}, "budget K = -1"},
		{"negative n", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Params: spider.Params{N: -5}}}, "pool N = -5"},
		{"pool below budget", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Params: spider.Params{K: 50, N: 10}}}, "smaller than budget"},
		{"negative depth", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Params: spider.Params{Depth: -2}}}, "depth = -2"},
		{"negative centers", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Params: spider.Params{C: -1}}}, "centers C = -1"},
		{"negative memory weight", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Method: search.MethodHybrid, MemoryWeight: -1}}, "memory weight -1"},
		{"unknown method", LocalizeInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Method: "bm99"}}, `method "bm99"`},
		{"empty issue", LocalizeInput{Repo: "acme/x", Issue: "  \n"}, "issue text is empty"},
		{"bad repo name", LocalizeInput{Repo: "../etc", Issue: "bug"}, "../etc"},
		{"negative attempts", LocalizeInput{Repo: "acme/x", Issue: "bug", LLMRetry: RetryOptions{MaximumAttempts: -1}}, "maximum attempts -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Search{})
			env.RegisterActivity(&activities.LLM{})
			env.ExecuteWorkflow(Localize, tc.in)
			wantBadInput(t, env.GetWorkflowError(), tc.want)
		})
	}
}

func TestIndexFleetRejectsBadInputAtOnce(t *testing.T) {
	ok := []schema.RepoSpec{{Name: "acme/a", URL: "/src/a"}}
	for _, tc := range []struct {
		name string
		in   schema.IndexFleetInput
		want string
	}{
		{"negative window", schema.IndexFleetInput{Repos: ok, Options: schema.FleetOptions{Window: -1}}, "window -1"},
		{"window too large", schema.IndexFleetInput{Repos: ok, Options: schema.FleetOptions{Window: MaxWindow + 1}}, "window 1001"},
		{"negative continue-as-new", schema.IndexFleetInput{Repos: ok, Options: schema.FleetOptions{ContinueAsNewAfter: -3}}, "continue-as-new-after -3"},
		{"negative diff cap", schema.IndexFleetInput{Repos: ok, Options: schema.FleetOptions{Index: schema.IndexOptions{MaxDiffBytes: -1}}}, "max-diff-bytes -1"},
		{"bad name", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "../x", URL: "/src/x"}}}, "repos[0]"},
		{"duplicate name", schema.IndexFleetInput{Repos: append(ok, ok[0])}, "acme/a given twice"},
		{"empty url", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "acme/a"}}}, "empty URL"},
		{"negative next", schema.IndexFleetInput{Repos: ok, Next: -1}, "negative counts"},
		{"credentials in a URL", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "acme/a", URL: "https://bob:s3cret@host/a.git"}}}, "https://***@host/a.git holds credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Git{})
			env.RegisterActivity(&activities.Store{})
			env.ExecuteWorkflow(IndexFleet, tc.in)
			wantBadInput(t, env.GetWorkflowError(), tc.want)
		})
	}
}

func TestIndexRepoRejectsBadOptionsAtOnce(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Git{})
	env.RegisterActivity(&activities.Store{})
	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: schema.RepoSpec{Name: "acme/a", URL: "/src/a"},
		Options: schema.IndexOptions{CommitsPerPart: -1}})
	wantBadInput(t, env.GetWorkflowError(), "commits-per-part -1")
}

// A negative HostWait (an input written by hand or by another client) is
// refused before any step runs, rather than taken as the default.
func TestIndexRepoRejectsNegativeHostWait(t *testing.T) {
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Git{})
	env.RegisterActivity(&activities.Store{})
	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: schema.RepoSpec{Name: "acme/a", URL: "/src/a"},
		Options: schema.IndexOptions{HostWait: -time.Second}})
	wantBadInput(t, env.GetWorkflowError(), "host-wait -1s: want a positive duration")
}

// Valid inputs, zero options included (they take defaults), pass.
func TestValidateAcceptsDefaults(t *testing.T) {
	if err := validateFleetInput(schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "acme/a", URL: "/a"}}}); err != nil {
		t.Errorf("fleet defaults: %v", err)
	}
	if err := validateLocalizeInput(LocalizeInput{Repo: "acme/a", Issue: "bug"}); err != nil {
		t.Errorf("localize defaults: %v", err)
	}
	if err := validateLocalizeInput(LocalizeInput{Repo: "acme/a", Issue: "bug", Params: search.Params{Method: "sr", Params: spider.Params{K: 5, N: 5, C: 1, Depth: 1}}}); err != nil {
		t.Errorf("localize explicit: %v", err)
	}
}
