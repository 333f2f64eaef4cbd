package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

const testFleetID = "fleet-test"

// badURLPrefix marks a repository spec whose fake IndexRepo fails.
const badURLPrefix = "/not/a/repo/"

var errPermanent = errors.New("permanent")

// repos returns n specs acme/r0…; those whose index is in bad point at a path
// the fake child rejects.
func repos(n int, bad ...int) []schema.RepoSpec {
	out := make([]schema.RepoSpec, n)
	for i := range out {
		name := fmt.Sprintf("acme/r%d", i)
		out[i] = schema.RepoSpec{Name: schema.RepoName(name), URL: "https://example.com/" + name + ".git"}
		if slices.Contains(bad, i) {
			out[i].URL = badURLPrefix + name
		}
	}
	return out
}

// fleetRun is one run of IndexFleet (up to its continue-as-new) in a test
// environment whose IndexRepo children are faked.
type fleetRun struct {
	env *testsuite.TestWorkflowEnvironment

	mu         sync.Mutex
	running    int
	maxRunning int
	started    []schema.RepoName // in start order
	results    []activities.FleetResultsInput
	summaries  []activities.FleetSummaryInput
	childTime  func(schema.RepoSpec) time.Duration
	ends       map[schema.RepoName]time.Time // when each child started here ends
	start      time.Time
}

// fakeIndex is the faked IndexRepo's outcome: success, or the Sync
// activity's failure for a URL with badURLPrefix.
func fakeIndex(spec schema.RepoSpec) (schema.RepoResult, error) {
	if strings.HasPrefix(spec.URL, badURLPrefix) {
		// As the Sync activity fails: the message says it all, the
		// cause chain ends in a sentinel that says little.
		err := fmt.Errorf("sync %s: repository path %q: not a git repository: %w", spec.Name, spec.URL, errPermanent)
		return schema.RepoResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrTypeBadInput, err)
	}
	return schema.RepoResult{Repo: spec.Name, URL: spec.URL, OK: true, Head: testHead, NewCommits: 2, Rows: 5}, nil
}

// adopt makes the children an earlier run left running (in.Running) run on
// in this run's environment: each counts as running until it ends, when it
// reports by signal as IndexRepo does (the fake children of env do not).
func (r *fleetRun) adopt(in schema.IndexFleetInput, left map[schema.RepoName]time.Duration) {
	for _, spec := range in.Running {
		r.running++
		r.maxRunning = max(r.maxRunning, r.running)
		r.env.RegisterDelayedCallback(func() {
			r.mu.Lock()
			r.running--
			r.mu.Unlock()
			res, err := fakeIndex(spec)
			if err != nil {
				res = schema.RepoResult{Repo: spec.Name, URL: spec.URL, Error: errorText(err)}
			}
			r.env.SignalWorkflow(RepoDoneSignal, res)
		}, max(left[spec.Name], time.Second))
	}
}

// left is how long each child started by this run had still to go when it
// ended, for the next run to adopt.
func (r *fleetRun) left(next *schema.IndexFleetInput, prev map[schema.RepoName]time.Duration) map[schema.RepoName]time.Duration {
	out := map[schema.RepoName]time.Duration{}
	now := r.env.Now()
	for _, spec := range next.Running {
		if end, ok := r.ends[spec.Name]; ok {
			out[spec.Name] = end.Sub(now)
		} else {
			out[spec.Name] = prev[spec.Name] - now.Sub(r.start) // adopted here too, still running
		}
	}
	return out
}

// newFleetRun fakes IndexRepo: each child takes childTime (1h if zero) of
// workflow time, then succeeds, or fails if its URL has badURLPrefix.
func newFleetRun(t *testing.T, childTime func(schema.RepoSpec) time.Duration) *fleetRun {
	t.Helper()
	r := &fleetRun{env: newTestSuite(t).NewTestWorkflowEnvironment(), ends: map[schema.RepoName]time.Time{},
		childTime: func(s schema.RepoSpec) time.Duration {
			if childTime == nil {
				return time.Hour
			}
			return childTime(s)
		}}
	env := r.env
	r.start = env.Now()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testFleetID, TaskQueue: IndexQueue})
	env.RegisterWorkflow(IndexRepo)
	env.RegisterActivity(&activities.Git{})
	env.RegisterActivity(&activities.Store{})

	env.OnWorkflow(IndexRepo, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in schema.IndexRepoInput) (schema.RepoResult, error) {
			if got, want := workflow.GetInfo(ctx).WorkflowExecution.ID, RepoWorkflowID(string(in.Repo.Name)); got != want {
				t.Errorf("child workflow id %q, want %q", got, want)
			}
			if got := workflow.GetInfo(ctx).TaskQueueName; got != IndexQueue {
				t.Errorf("child on task queue %q, want %q", got, IndexQueue)
			}
			r.mu.Lock()
			r.running++
			r.maxRunning = max(r.maxRunning, r.running)
			r.started = append(r.started, in.Repo.Name)
			r.mu.Unlock()
			defer func() {
				r.mu.Lock()
				r.running--
				r.mu.Unlock()
			}()
			d := r.childTime(in.Repo)
			r.mu.Lock()
			r.ends[in.Repo.Name] = workflow.Now(ctx).Add(d)
			r.mu.Unlock()
			if err := workflow.Sleep(ctx, d); err != nil {
				return schema.RepoResult{}, err
			}
			return fakeIndex(in.Repo)
		})
	env.OnActivity(store.WriteFleetResults, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FleetResultsInput) (string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.results = append(r.results, in)
			return fmt.Sprintf("%sresults-%05d.json", schema.RunPrefix(in.FleetID), in.Seq), nil
		})
	env.OnActivity(store.WriteFleetSummary, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FleetSummaryInput) (string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.summaries = append(r.summaries, in)
			return schema.RunPrefix(in.FleetID) + "summary.json", nil
		})
	return r
}

// execute runs IndexFleet and returns the input of the next run if it
// continued as new, or its result if it finished.
func (r *fleetRun) execute(t *testing.T, in schema.IndexFleetInput) (next *schema.IndexFleetInput, res FleetResult) {
	t.Helper()
	return executeOnce[schema.IndexFleetInput, FleetResult](t, r.env, IndexFleet, "IndexFleet", in)
}

// executeOnce runs one run of workflow wf (registered as name) in env and
// returns the input of the next run if it continued as new, or its result
// if it finished; any other end fails the test.
func executeOnce[In, Out any](t *testing.T, env *testsuite.TestWorkflowEnvironment, wf any, name string, in In) (next *In, res Out) {
	t.Helper()
	env.ExecuteWorkflow(wf, in)
	if !env.IsWorkflowCompleted() {
		t.Fatalf("%s did not complete", name)
	}
	err := env.GetWorkflowError()
	if err == nil {
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		return nil, res
	}
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("%s failed: %v", name, err)
	}
	if can.WorkflowType.Name != name {
		t.Errorf("continued as %q, want %s", can.WorkflowType.Name, name)
	}
	next = new(In)
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, next); err != nil {
		t.Fatalf("decode continue-as-new input: %v", err)
	}
	return next, res
}

// allResults flattens what the run passed to WriteFleetResults.
func (r *fleetRun) allResults() []schema.RepoResult {
	var out []schema.RepoResult
	for _, in := range r.results {
		out = append(out, in.Results...)
	}
	return out
}

// runChain runs IndexFleet and every run it continues as, like the server would.
func runChain(t *testing.T, in schema.IndexFleetInput, childTime func(schema.RepoSpec) time.Duration) ([]*fleetRun, FleetResult) {
	t.Helper()
	var runs []*fleetRun
	var left map[schema.RepoName]time.Duration
	for i := 0; ; i++ {
		if i > len(in.Repos)+in.Total+1 {
			t.Fatalf("IndexFleet continued as new %d times for %d repositories", i, len(in.Repos))
		}
		r := newFleetRun(t, childTime)
		r.adopt(in, left)
		runs = append(runs, r)
		next, res := r.execute(t, in)
		if next == nil {
			return runs, res
		}
		left = r.left(next, left)
		in = *next
	}
}

func TestIndexFleetWindow(t *testing.T) {
	// Children of uneven length, so completions interleave with starts.
	uneven := func(s schema.RepoSpec) time.Duration {
		var i int
		fmt.Sscanf(string(s.Name), "acme/r%d", &i)
		return time.Duration(i%3+1) * time.Hour
	}
	for _, tc := range []struct {
		name          string
		repos, window int
		perRun        int
		wantMax       int
		wantRuns      int
	}{
		{"window smaller than fleet", 7, 3, 0, 3, 1},
		{"window of one", 4, 1, 0, 1, 1},
		{"window larger than fleet", 3, 10, 0, 3, 1},
		{"default window", DefaultWindow + 10, 0, 0, DefaultWindow, 1},
		// Children outlive their run: the window stays full across runs.
		{"continue-as-new smaller than window", 5, 4, 2, 4, 3},
		{"continue-as-new larger than window", 9, 2, 4, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := schema.IndexFleetInput{Repos: repos(tc.repos),
				Options: schema.FleetOptions{Window: tc.window, ContinueAsNewAfter: tc.perRun}}
			runs, res := runChain(t, in, uneven)
			if len(runs) != tc.wantRuns {
				t.Errorf("%d runs, want %d", len(runs), tc.wantRuns)
			}
			var started []schema.RepoName
			maxRunning := 0
			for _, r := range runs {
				started = append(started, r.started...)
				maxRunning = max(maxRunning, r.maxRunning)
			}
			if maxRunning != tc.wantMax {
				t.Errorf("at most %d children ran at once, want %d", maxRunning, tc.wantMax)
			}
			// Each repository exactly once.
			var want []schema.RepoName
			for _, s := range in.Repos {
				want = append(want, s.Name)
			}
			slices.Sort(started)
			slices.Sort(want)
			if !slices.Equal(started, want) {
				t.Errorf("children started %v, want %v", started, want)
			}
			if res.Total != tc.repos || res.Done != tc.repos || res.Failed != 0 {
				t.Errorf("result %+v, want %d done", res, tc.repos)
			}
		})
	}
}

func TestIndexFleetFailedRepoIsRecorded(t *testing.T) {
	r := newFleetRun(t, nil)
	in := schema.IndexFleetInput{Repos: repos(3, 1), Options: schema.FleetOptions{Window: 2}}
	next, res := r.execute(t, in)
	if next != nil {
		t.Fatalf("continued as new with %+v, want completion", next)
	}
	want := FleetResult{Total: 3, Done: 2, Failed: 1, SummaryKey: "runs/" + testFleetID + "/summary.json"}
	if res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if len(r.results) != 1 || r.results[0].Seq != 0 || r.results[0].FleetID != testFleetID {
		t.Fatalf("WriteFleetResults calls %+v, want one with seq 0 for %s", r.results, testFleetID)
	}
	got := r.allResults()
	if len(got) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(got), got)
	}
	for _, rr := range got {
		bad := rr.Repo == "acme/r1"
		switch {
		case bad && (rr.OK || !strings.Contains(rr.Error, in.Repos[1].URL) || rr.URL != in.Repos[1].URL):
			t.Errorf("failed repository recorded as %+v, want not OK with an error naming %s", rr, in.Repos[1].URL)
		case !bad && (!rr.OK || rr.Error != "" || rr.Head != testHead || rr.Rows != 5):
			t.Errorf("indexed repository recorded as %+v", rr)
		}
	}
	if len(r.summaries) != 1 {
		t.Fatalf("WriteFleetSummary called %d times, want 1", len(r.summaries))
	}
	s := r.summaries[0]
	if s.FleetID != testFleetID || s.Total != 3 || !slices.Equal(s.ResultKeys, []string{"runs/" + testFleetID + "/results-00000.json"}) {
		t.Errorf("summary input %+v", s)
	}
	if s.StartedAt.IsZero() || s.FinishedAt.Sub(s.StartedAt) != 2*time.Hour {
		t.Errorf("summary times %v → %v, want two hours of workflow time (two waves of one-hour children)", s.StartedAt, s.FinishedAt)
	}
}

func TestIndexFleetContinuesAsNew(t *testing.T) {
	r := newFleetRun(t, nil)
	in := schema.IndexFleetInput{Repos: repos(5, 0), Options: schema.FleetOptions{Window: 2, ContinueAsNewAfter: 2,
		Index: schema.IndexOptions{CommitsPerPart: 7}}}
	next, _ := r.execute(t, in)
	if next == nil {
		t.Fatal("IndexFleet finished, want continue-as-new after 2 children")
	}
	slices.Sort(r.started)
	if !slices.Equal(r.started, []schema.RepoName{"acme/r0", "acme/r1"}) {
		t.Errorf("first run started %v, want acme/r0 and acme/r1", r.started)
	}
	// Both children still run: the next run adopts them, nothing is
	// counted or stored yet.
	if next.Next != 2 || next.Done != 0 || next.Failed != 0 || !slices.Equal(next.Running, in.Repos[:2]) {
		t.Errorf("continued with next=%d done=%d failed=%d running %v, want 2, 0, 0 and the first two", next.Next, next.Done, next.Failed, next.Running)
	}
	if len(next.ResultKeys) != 0 {
		t.Errorf("continued with result keys %v", next.ResultKeys)
	}
	if next.StartedAt.IsZero() {
		t.Error("continued without the fleet's start time")
	}
	if !slices.Equal(next.Repos, in.Repos) || next.Options != in.Options {
		t.Errorf("continued with repos %v options %+v, want the original ones", next.Repos, next.Options)
	}
	if len(r.results) != 0 || len(r.summaries) != 0 {
		t.Errorf("results %+v and summaries %+v written before any child ended", r.results, r.summaries)
	}
	// The next run gets their reports by signal, starts the rest, and
	// stores both results once.
	r2 := newFleetRun(t, nil)
	r2.adopt(*next, r.left(next, nil))
	next2, _ := r2.execute(t, *next)
	if next2 == nil || next2.Next != 4 || next2.Done != 1 || next2.Failed != 1 || !slices.Equal(next2.Running, in.Repos[2:4]) {
		t.Fatalf("second run continued with %+v, want r0 done, r1 failed, r2 and r3 running", next2)
	}
	if len(r2.results) != 1 || len(r2.results[0].Results) != 2 || r2.results[0].Seq != 0 {
		t.Errorf("WriteFleetResults calls %+v, want one with both results", r2.results)
	}
}

func TestIndexFleetSummaryAfterContinueAsNew(t *testing.T) {
	in := schema.IndexFleetInput{Repos: repos(5, 1, 4), Options: schema.FleetOptions{Window: 2, ContinueAsNewAfter: 2}}
	runs, res := runChain(t, in, nil)
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	want := FleetResult{Total: 5, Done: 3, Failed: 2, SummaryKey: "runs/" + testFleetID + "/summary.json"}
	if res != want {
		t.Errorf("result %+v, want %+v", res, want)
	}
	var keys []string
	var startedAt time.Time
	stored := 0
	for i, r := range runs {
		// A run that saw no child end stores nothing; the others one part each.
		if len(r.results) > 1 || len(r.results) == 1 && r.results[0].Seq != len(keys) {
			t.Fatalf("run %d: WriteFleetResults calls %+v, want at most one, with seq %d", i, r.results, len(keys))
		}
		if len(r.results) == 1 {
			keys = append(keys, fmt.Sprintf("runs/%s/results-%05d.json", testFleetID, len(keys)))
			stored += len(r.results[0].Results)
		}
		if i < len(runs)-1 && len(r.summaries) != 0 {
			t.Errorf("run %d wrote a summary", i)
		}
	}
	if stored != 5 {
		t.Errorf("%d results stored, want 5", stored)
	}
	last := runs[len(runs)-1]
	if len(last.summaries) != 1 {
		t.Fatalf("last run wrote %d summaries, want 1", len(last.summaries))
	}
	s := last.summaries[0]
	if !slices.Equal(s.ResultKeys, keys) || s.Total != 5 {
		t.Errorf("summary input %+v, want result keys %v", s, keys)
	}
	startedAt = s.StartedAt
	if startedAt.IsZero() || !s.FinishedAt.After(startedAt) {
		t.Errorf("summary times %v → %v", s.StartedAt, s.FinishedAt)
	}
}

// TestIndexFleetStoredList: a large fleet's list lives in the store and each
// run loads only its own slice.
func TestIndexFleetStoredList(t *testing.T) {
	all := repos(7, 3)
	const key = "runs/" + testFleetID + "/repos.json"
	in := schema.IndexFleetInput{ReposKey: key, Total: len(all), Options: schema.FleetOptions{Window: 2, ContinueAsNewAfter: 3}}
	var loads []activities.LoadReposInput
	var mu sync.Mutex
	var runs []*fleetRun
	var left map[schema.RepoName]time.Duration
	for i := 0; ; i++ {
		if i > 5 {
			t.Fatal("too many runs")
		}
		r := newFleetRun(t, nil)
		r.adopt(in, left)
		r.env.OnActivity(store.LoadFleetRepos, mock.Anything, mock.Anything).Return(
			func(_ context.Context, li activities.LoadReposInput) ([]schema.RepoSpec, error) {
				mu.Lock()
				loads = append(loads, li)
				mu.Unlock()
				if li.Key != key {
					t.Errorf("loaded %q, want %q", li.Key, key)
				}
				return all[li.Offset:min(li.Offset+li.Limit, len(all))], nil
			})
		runs = append(runs, r)
		next, res := r.execute(t, in)
		if next == nil {
			want := FleetResult{Total: 7, Done: 6, Failed: 1, SummaryKey: "runs/" + testFleetID + "/summary.json"}
			if res != want {
				t.Errorf("result %+v, want %+v", res, want)
			}
			break
		}
		if len(next.Repos) != 0 || next.ReposKey != key || next.Total != 7 {
			t.Errorf("continued with %d inline repos, key %q, total %d", len(next.Repos), next.ReposKey, next.Total)
		}
		left = r.left(next, left)
		in = *next
	}
	want := []activities.LoadReposInput{{Key: key, Offset: 0, Limit: 3}, {Key: key, Offset: 3, Limit: 3}, {Key: key, Offset: 6, Limit: 1}}
	if !slices.Equal(loads, want) {
		t.Errorf("loads %v, want %v", loads, want)
	}
	var started []schema.RepoName
	for _, r := range runs {
		started = append(started, r.started...)
	}
	slices.Sort(started)
	if len(started) != 7 || len(slices.Compact(started)) != 7 {
		t.Errorf("started %v, want each of the 7 repositories once", started)
	}
}

func TestIndexFleetNoRepos(t *testing.T) {
	r := newFleetRun(t, nil)
	next, res := r.execute(t, schema.IndexFleetInput{})
	if next != nil {
		t.Fatal("continued as new with nothing to do")
	}
	if res.Total != 0 || res.Done != 0 || res.Failed != 0 || res.SummaryKey == "" {
		t.Errorf("result %+v, want zero totals and a summary", res)
	}
	if len(r.results) != 0 || len(r.summaries) != 1 || len(r.summaries[0].ResultKeys) != 0 {
		t.Errorf("results %+v summaries %+v, want only an empty summary", r.results, r.summaries)
	}
}

func TestIndexFleetProgressQuery(t *testing.T) {
	type at struct {
		after time.Duration
		want  schema.FleetProgress
	}
	for _, tc := range []struct {
		name    string
		in      schema.IndexFleetInput
		queries []at
	}{
		{
			// One-hour children, two at a time; acme/r1 fails.
			name: "first run",
			in:   schema.IndexFleetInput{Repos: repos(5, 1), Options: schema.FleetOptions{Window: 2}},
			queries: []at{
				{30 * time.Minute, schema.FleetProgress{Total: 5, Running: 2, Pending: 3}},
				{90 * time.Minute, schema.FleetProgress{Total: 5, Done: 1, Failed: 1, Running: 2, Pending: 1}},
				{150 * time.Minute, schema.FleetProgress{Total: 5, Done: 3, Failed: 1, Running: 1, Pending: 0}},
			},
		},
		{
			// A continued run counts what earlier runs did.
			name: "continued run",
			in: schema.IndexFleetInput{Repos: repos(5, 1), Options: schema.FleetOptions{Window: 2, ContinueAsNewAfter: 2},
				Next: 4, Done: 3, Failed: 1, ResultKeys: []string{"a", "b"}, StartedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
			queries: []at{
				{30 * time.Minute, schema.FleetProgress{Total: 5, Done: 3, Failed: 1, Running: 1, Pending: 0}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFleetRun(t, nil)
			asked := 0
			for _, q := range tc.queries {
				r.env.RegisterDelayedCallback(func() {
					asked++
					v, err := r.env.QueryWorkflow(ProgressQuery)
					if err != nil {
						t.Errorf("query at %v: %v", q.after, err)
						return
					}
					var got schema.FleetProgress
					if err := v.Get(&got); err != nil {
						t.Errorf("query at %v: %v", q.after, err)
						return
					}
					if got != q.want {
						t.Errorf("progress at %v = %+v, want %+v", q.after, got, q.want)
					}
				}, q.after)
			}
			next, res := r.execute(t, tc.in)
			if next != nil {
				t.Fatalf("continued as new: %+v", next)
			}
			if asked != len(tc.queries) {
				t.Errorf("%d of %d queries ran", asked, len(tc.queries))
			}
			// After the end the query still answers, with the totals.
			v, err := r.env.QueryWorkflow(ProgressQuery)
			if err != nil {
				t.Fatalf("query after completion: %v", err)
			}
			var got schema.FleetProgress
			if err := v.Get(&got); err != nil {
				t.Fatal(err)
			}
			want := schema.FleetProgress{Total: res.Total, Done: res.Done, Failed: res.Failed}
			if got != want {
				t.Errorf("progress after completion = %+v, want %+v", got, want)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	root := errors.New(`repository path "/x": not a git repository`)
	long := strings.Repeat("é", maxErrorLen)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", root, root.Error()},
		{"wrapped", fmt.Errorf("sync acme/x: %w", fmt.Errorf("clone: %w", root)), "sync acme/x: clone: " + root.Error()},
		// As activities report permanent failures: the message is the whole story.
		{"application error", temporal.NewNonRetryableApplicationError("sync acme/x: "+root.Error()+": permanent", "BadInput",
			fmt.Errorf("sync acme/x: %w: %w", root, errPermanent)), "sync acme/x: " + root.Error() + ": permanent"},
		{"timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), "Test timeout (type: Heartbeat)"}, // the SDK's message for constructed timeouts
		{"capped", errors.New(long), long[:maxErrorLen] + "…"},
		{"capped on a rune boundary", errors.New("a" + long), "a" + long[:maxErrorLen-2] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := errorText(tc.err)
			if !utf8.ValidString(got) {
				t.Errorf("errorText = %q is not valid UTF-8", got)
			}
			if got != tc.want {
				t.Errorf("errorText = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestIndexFleetProbesSilentChildren: a child adopted from the previous run
// that never reports (terminated by hand) is started again after ProbeAfter,
// and its result ends the fleet; one that reports is not.
func TestIndexFleetProbesSilentChildren(t *testing.T) {
	all := repos(2)
	in := schema.IndexFleetInput{Repos: all, Next: 2, Running: all, Options: schema.FleetOptions{Window: 2}}
	r := newFleetRun(t, nil)
	// acme/r0 reports after 10 minutes; acme/r1 never does.
	r.adopt(schema.IndexFleetInput{Running: all[:1]}, map[schema.RepoName]time.Duration{"acme/r0": 10 * time.Minute})
	next, res := r.execute(t, in)
	if next != nil {
		t.Fatalf("continued as new with %+v", next)
	}
	if !slices.Equal(r.started, []schema.RepoName{"acme/r1"}) {
		t.Errorf("started %v, want only the silent acme/r1, once", r.started)
	}
	if res.Done != 2 || res.Failed != 0 {
		t.Errorf("result %+v, want both done", res)
	}
	if got := r.summaries[0].FinishedAt.Sub(r.summaries[0].StartedAt); got < ProbeAfter+time.Hour {
		t.Errorf("finished after %v, want the probe (%v) and the hour of its child", got, ProbeAfter)
	}
}
