package workflows

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
	"go.temporal.io/sdk/testsuite"
)

const testBacklogRun = "backlog-test"

// backlogIssues returns n issues i0…; those whose index is in bad fail in
// the fake Localize.
func backlogIssues(n int, bad ...int) []schema.BacklogIssue {
	out := make([]schema.BacklogIssue, n)
	for i := range out {
		out[i] = schema.BacklogIssue{ID: fmt.Sprintf("i%d", i), Repo: "acme/widget", Text: fmt.Sprintf("issue %d", i),
			Source: fmt.Sprintf("issues.jsonl:%d", i+1), Head: testHead}
		if slices.Contains(bad, i) {
			out[i].Text = "bad " + out[i].Text
		}
	}
	return out
}

// backlogRun is one run of LocalizeBacklog (up to its continue-as-new) with
// faked RetrieveBatch, SelectBatch and store activities.
type backlogRun struct {
	env *testsuite.TestWorkflowEnvironment

	mu         sync.Mutex
	running    int // issues between their RetrieveBatch and the end of their ranking
	maxRunning int
	started    []string // issue ids in RetrieveBatch order
	inputs     map[string]issueInputs
	batches    []int // RetrieveBatch sizes
	loads      []activities.LoadBacklogInput
	parts      []activities.BacklogPartInput
	summaries  []activities.BacklogSummaryInput
	snapshots  []schema.EnsureSnapshotInput
	snapHosts  []string           // the host queue of each EnsureSnapshot attempt
	syncs      []schema.SyncInput // Syncs that moved a clone off a gone host
	// snapshots in progress at once, by host queue, and the most seen
	snapsNow, snapsMax map[string]int
	// fill, when set, holds every RetrieveBatch until fill issues are in
	// flight or the chain has retrieved all of its issues (*chainLeft is
	// 0): the window is then measured by what the workflow dispatches, not
	// by whether the fakes' goroutines happened to overlap on a busy
	// machine. A workflow that never fills its window hangs the test until
	// its timeout, a failure.
	fill      int
	chainLeft *int
	filled    *sync.Cond
	// selectFails, when set, is the error of every SelectBatch attempt.
	selectFails func(in activities.SelectBatchInput, attempt int32) error
	selects     int // SelectBatch attempts
}

// issueInputs is what the activities were asked about one issue; Select is
// nil when its centers were not asked about.
type issueInputs struct {
	Retrieve activities.RetrieveInput
	Select   *activities.SelectCentersInput
}

// testSnapshots are the commits the fake EnsureSnapshot knows, by prefix.
var testSnapshots = []string{"aaaaaaa1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbb2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}

// loadCap is how many issues the fake LoadBacklogIssues returns at most, so
// that runs load their slice in several answers.
const loadCap = 3

// tokensPerIssue is what each fake selection reports spending (in + out).
const tokensPerIssue = 10

// movedCommit is the commit the fake index is at for issues whose text
// says "moved" (the index moved on since the backlog was stored).
const movedCommit = "cccccccccccccccccccccccccccccccccccccccc"

// fakeRetrieval is what the fake RetrieveBatch answers: center pkg/a.py:f
// with candidate pkg/b.py:C.g, and pkg/a.py:h, K = 3.
func fakeRetrieval(in activities.RetrieveInput) *search.Retrieval {
	commit := cmp.Or(in.Snapshot, testHead)
	if strings.Contains(in.Issue, "moved") {
		commit = movedCommit
	}
	ranking := []spider.Scored{{ID: "pkg/a.py:f", Score: 0.9}, {ID: "pkg/a.py:h", Score: 0.5}, {ID: "pkg/b.py:C.g", Score: 0.4}}
	exp := &spider.Expansion{Params: spider.Params{K: 3}.WithDefaults(), TopK: ranking, Pool: 3, Centers: []spider.Center{
		{ID: "pkg/a.py:f", Score: 0.9, Rank: 1, InGraph: true, Candidates: []spider.Candidate{{ID: "pkg/b.py:C.g", Score: 0.4, Rank: 3, Hops: 2, InTopK: true}}}}}
	exp.Params.K = 3
	return &search.Retrieval{Repo: string(in.Repo), Commit: commit, Method: cmp.Or(in.Params.Method, search.MethodSpIDER), TopK: ranking, Expansion: exp}
}

// issueIDOf is the id backlogIssues gave the issue with text.
func issueIDOf(text string) string {
	var n int
	fmt.Sscanf(strings.TrimPrefix(text, "bad "), "issue %d", &n)
	return fmt.Sprintf("i%d", n)
}

func newBacklogRun(t *testing.T, issues []schema.BacklogIssue) *backlogRun {
	t.Helper()
	r := &backlogRun{env: newTestSuite(t).NewTestWorkflowEnvironment(), inputs: map[string]issueInputs{}}
	env := r.env
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testBacklogRun, TaskQueue: IndexQueue})
	env.RegisterActivity(&activities.Store{})
	env.RegisterActivity(&activities.Search{})
	env.RegisterActivity(&activities.LLM{})
	env.OnActivity(searchActs.RetrieveBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RetrieveBatchInput) ([]activities.RetrieveOutcome, error) {
			r.mu.Lock()
			r.batches = append(r.batches, len(in.Issues))
			for _, is := range in.Issues {
				id := issueIDOf(is.Issue)
				r.started = append(r.started, id)
				r.inputs[id] = issueInputs{Retrieve: is}
			}
			r.running += len(in.Issues)
			r.maxRunning = max(r.maxRunning, r.running)
			if r.fill > 0 {
				*r.chainLeft -= len(in.Issues)
				r.filled.Broadcast()
				for r.running < r.fill && *r.chainLeft > 0 {
					r.filled.Wait()
				}
			}
			r.mu.Unlock()
			if r.fill == 0 {
				time.Sleep(5 * time.Millisecond) // so that batches in flight overlap
			}
			out := make([]activities.RetrieveOutcome, len(in.Issues))
			r.mu.Lock()
			defer r.mu.Unlock()
			for i, is := range in.Issues {
				if strings.HasPrefix(is.Issue, "bad ") {
					out[i].Error = "localize acme/widget: not indexed (run locus index first)"
				} else {
					out[i].Retrieval = fakeRetrieval(is)
				}
				if in.Issues[i].Params.Method == search.MethodSR || out[i].Error != "" || strings.Contains(is.Issue, "moved") {
					r.running-- // not asked about
				}
			}
			return out, nil
		})
	env.OnActivity(llmActs.SelectBatch, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SelectBatchInput) (activities.SelectBatchOutput, error) {
			time.Sleep(time.Millisecond)
			r.mu.Lock()
			defer r.mu.Unlock()
			r.selects++
			if r.selectFails != nil {
				return activities.SelectBatchOutput{}, r.selectFails(in, activity.GetInfo(ctx).Attempt)
			}
			var out activities.SelectBatchOutput
			for _, is := range in.Issues {
				id := issueIDOf(is.Issue)
				ii := r.inputs[id]
				ii.Select = &is
				r.inputs[id] = ii
				r.running--
				var cs []activities.CenterResult
				for _, c := range is.Centers {
					cs = append(cs, activities.CenterResult{Center: c.Center, SelectOutput: activities.SelectOutput{IDs: c.Candidates, Selector: "fake",
						Calls: 1, PromptTokens: tokensPerIssue - 2, CompletionTokens: 2}})
				}
				out.Issues = append(out.Issues, activities.SelectCentersOutput{Centers: cs})
			}
			return out, nil
		})
	env.OnActivity(store.LoadBacklogIssues, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.LoadBacklogInput) ([]schema.BacklogIssue, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.loads = append(r.loads, in)
			if in.Key != schema.BacklogKey(testBacklogRun, "input.json") {
				return nil, fmt.Errorf("issues key %q", in.Key)
			}
			return issues[in.Offset:min(in.Offset+in.Limit, in.Offset+loadCap, len(issues))], nil
		})
	env.RegisterActivity(&activities.Snapshot{})
	env.RegisterActivity(&activities.Git{})
	env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.SyncInput) (schema.SyncResult, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.syncs = append(r.syncs, in)
			return schema.SyncResult{Repo: in.Repo.Name, HostQueue: "host-live", Head: testHead}, nil
		})
	env.OnActivity(snapActs.EnsureSnapshot, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.EnsureSnapshotInput) (schema.SnapshotInfo, error) {
			host := activity.GetInfo(ctx).TaskQueue
			r.mu.Lock()
			r.snapHosts = append(r.snapHosts, host)
			if host == "host-gone" { // no worker polls it: what the server answers after the wait
				r.mu.Unlock()
				return schema.SnapshotInfo{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			if r.snapsNow == nil {
				r.snapsNow, r.snapsMax = map[string]int{}, map[string]int{}
			}
			r.snapsNow[host]++
			r.snapsMax[host] = max(r.snapsMax[host], r.snapsNow[host])
			r.mu.Unlock()
			if strings.HasPrefix(in.Commit, "ccc") {
				time.Sleep(20 * time.Millisecond) // overlap with the others in flight
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.snapsNow[host]--
			r.snapshots = append(r.snapshots, in)
			if strings.HasPrefix(in.Commit, "ccc") { // any number of distinct commits
				return schema.SnapshotInfo{Repo: in.Repo, Commit: in.Commit + strings.Repeat("0", 40-len(in.Commit)), Functions: 3}, nil
			}
			for _, c := range testSnapshots {
				if strings.HasPrefix(c, strings.ToLower(in.Commit)) {
					return schema.SnapshotInfo{Repo: in.Repo, Commit: c, Functions: 3}, nil
				}
			}
			return schema.SnapshotInfo{}, temporal.NewNonRetryableApplicationError(
				"base_commit "+in.Commit+" is not a commit of "+string(in.Repo)+": commit not in the repository", activities.ErrTypeBadInput, nil)
		})
	env.OnActivity(store.WriteBacklogPart, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.BacklogPartInput) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.parts = append(r.parts, in)
			return nil
		})
	env.OnActivity(store.WriteBacklogSummary, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.BacklogSummaryInput) (string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.summaries = append(r.summaries, in)
			return schema.BacklogKey(in.Run, "summary.json"), nil
		})
	return r
}

func (r *backlogRun) execute(t *testing.T, in LocalizeBacklogInput) (next *LocalizeBacklogInput, res BacklogResult) {
	t.Helper()
	return executeOnce[LocalizeBacklogInput, BacklogResult](t, r.env, LocalizeBacklog, "LocalizeBacklog", in)
}

// runBacklogChain runs LocalizeBacklog and every run it continues as.
func runBacklogChain(t *testing.T, issues []schema.BacklogIssue, in LocalizeBacklogInput) ([]*backlogRun, []LocalizeBacklogInput, BacklogResult) {
	t.Helper()
	return runBacklogChainFilling(t, issues, in, 0)
}

// runBacklogChainFilling is runBacklogChain with each run's RetrieveBatch
// held until fill issues are in flight (backlogRun.fill); 0: not held.
func runBacklogChainFilling(t *testing.T, issues []schema.BacklogIssue, in LocalizeBacklogInput, fill int) ([]*backlogRun, []LocalizeBacklogInput, BacklogResult) {
	t.Helper()
	left := len(issues)
	in.IssuesKey, in.Total = schema.BacklogKey(testBacklogRun, "input.json"), len(issues)
	var runs []*backlogRun
	var inputs []LocalizeBacklogInput
	for i := 0; ; i++ {
		if i > len(issues)+1 {
			t.Fatalf("LocalizeBacklog continued as new %d times for %d issues", i, len(issues))
		}
		r := newBacklogRun(t, issues)
		r.fill, r.chainLeft, r.filled = fill, &left, sync.NewCond(&r.mu)
		runs = append(runs, r)
		inputs = append(inputs, in)
		next, res := r.execute(t, in)
		if next == nil {
			return runs, inputs, res
		}
		in = *next
	}
}

// allParts is every part written over the runs, in write order.
func allParts(runs []*backlogRun) []activities.BacklogPartInput {
	var out []activities.BacklogPartInput
	for _, r := range runs {
		out = append(out, r.parts...)
	}
	return out
}

func TestLocalizeBacklogWindow(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		issues, window, perRun int
		partSize               int
		wantMax, wantRuns      int
		wantParts              int
		wantLastRunNext        int
	}{
		{"window smaller than backlog", 11, 3, 0, 4, 3, 1, 3, 0},
		{"window of one", 4, 1, 0, 0, 1, 1, 1, 0},
		{"default window", DefaultBacklogWindow + 5, 0, 0, 0, DefaultBacklogWindow, 1, 1, 0},
		// 4 per run rounded up to 6, two parts of 3 per run.
		{"continue-as-new", 14, 2, 4, 3, 2, 3, 5, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issues := backlogIssues(tc.issues)
			runs, inputs, res := runBacklogChainFilling(t, issues, LocalizeBacklogInput{
				Options: BacklogOptions{Window: tc.window, ContinueAsNewAfter: tc.perRun, PartSize: tc.partSize}}, tc.wantMax)
			if len(runs) != tc.wantRuns {
				t.Fatalf("%d runs, want %d", len(runs), tc.wantRuns)
			}
			if got := inputs[len(inputs)-1].Next; got != tc.wantLastRunNext {
				t.Errorf("last run started at issue %d, want %d", got, tc.wantLastRunNext)
			}
			var started []string
			maxRunning := 0
			for _, r := range runs {
				started = append(started, r.started...)
				maxRunning = max(maxRunning, r.maxRunning)
				for _, l := range r.loads {
					if l.MaxBytes <= 0 {
						t.Errorf("load %+v has no byte cap", l)
					}
				}
			}
			if maxRunning != tc.wantMax {
				t.Errorf("at most %d issues were in flight at once, want %d", maxRunning, tc.wantMax)
			}
			for _, r := range runs {
				for _, n := range r.batches {
					if n > min(cmp.Or(tc.window, DefaultBacklogWindow), DefaultBacklogBatch) {
						t.Errorf("a batch of %d issues, more than the window %d or the batch %d", n, tc.window, DefaultBacklogBatch)
					}
				}
			}
			var want []string
			for _, is := range issues {
				want = append(want, is.ID)
			}
			slices.Sort(started)
			slices.Sort(want)
			if !slices.Equal(started, want) {
				t.Errorf("issues retrieved %v, want each issue once: %v", started, want)
			}
			// Parts: one per PartSize issues in input order, each key once.
			parts := allParts(runs)
			if len(parts) != tc.wantParts || res.Parts != tc.wantParts {
				t.Fatalf("%d parts written, result says %d, want %d", len(parts), res.Parts, tc.wantParts)
			}
			size := tc.partSize
			if size == 0 {
				size = DefaultBacklogPartSize
			}
			var order []string
			for i, p := range parts {
				if p.Part != i || p.Run != testBacklogRun {
					t.Errorf("part %d written as %s part %d", i, p.Run, p.Part)
				}
				if len(p.Results) > size {
					t.Errorf("part %d holds %d results, more than %d", i, len(p.Results), size)
				}
				for _, r := range p.Results {
					order = append(order, r.IssueID)
				}
			}
			var ids []string
			for _, is := range issues {
				ids = append(ids, is.ID)
			}
			if !slices.Equal(order, ids) {
				t.Errorf("parts hold %v, want the issues in input order %v", order, ids)
			}
			wantRes := BacklogResult{Run: testBacklogRun, Total: tc.issues, Done: tc.issues, TokensIn: tc.issues * (tokensPerIssue - 2),
				TokensOut: tc.issues * 2, Parts: tc.wantParts, SummaryKey: "backlogs/" + testBacklogRun + "/summary.json"}
			if res != wantRes {
				t.Errorf("result %+v, want %+v", res, wantRes)
			}
			last := runs[len(runs)-1]
			if len(last.summaries) != 1 || last.summaries[0].Parts != tc.wantParts || last.summaries[0].Total != tc.issues {
				t.Errorf("summaries %+v, want one over %d parts", last.summaries, tc.wantParts)
			}
		})
	}
}

func TestLocalizeBacklogContinueAsNewCarriesTotals(t *testing.T) {
	issues := backlogIssues(7, 1)
	r := newBacklogRun(t, issues)
	in := LocalizeBacklogInput{IssuesKey: schema.BacklogKey(testBacklogRun, "input.json"), Total: len(issues),
		Params: search.Params{Method: search.MethodSpISR}, ParseErrors: 2,
		Options: BacklogOptions{Window: 2, ContinueAsNewAfter: 4, PartSize: 2, MaxTokens: 1000}}
	next, _ := r.execute(t, in)
	if next == nil {
		t.Fatal("completed, want continue-as-new after 4 issues")
	}
	want := in
	want.Run, want.Next, want.Done, want.Failed, want.Parts = testBacklogRun, 4, 3, 1, 2
	want.TokensIn, want.TokensOut = 3*(tokensPerIssue-2), 3*2
	want.StartedAt = next.StartedAt
	if next.StartedAt.IsZero() {
		t.Error("continue-as-new input has no start time")
	}
	if !backlogEqualJSON(t, *next, want) {
		t.Errorf("continue-as-new input\n%+v\nwant\n%+v", *next, want)
	}
	for id, li := range r.inputs {
		if li.Retrieve.Params.Method != search.MethodSpISR || li.Retrieve.Repo != "acme/widget" {
			t.Errorf("issue %s retrieved with %+v, want the run's params and the issue's repo", id, li.Retrieve)
		}
	}
	// The continued run finishes the rest and keeps the start time.
	r2 := newBacklogRun(t, issues)
	if n, res := r2.execute(t, *next); n != nil || res.Total != 7 || res.Done != 6 || res.Failed != 1 || res.Parts != 4 {
		t.Errorf("second run: next %+v, result %+v", n, res)
	}
	if len(r2.summaries) != 1 || !r2.summaries[0].StartedAt.Equal(next.StartedAt) || r2.summaries[0].ParseErrors != 2 {
		t.Errorf("summary input %+v, want the first run's start and 2 parse errors", r2.summaries)
	}
}

func TestLocalizeBacklogBudget(t *testing.T) {
	// One at a time, so the budget is reached at a known issue: after three
	// issues 30 tokens are spent, at least the 25 allowed.
	issues := backlogIssues(6)
	runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{Options: BacklogOptions{Window: 1, MaxTokens: 25}})
	r := runs[0]
	for i, is := range issues {
		in := r.inputs[is.ID]
		if want := i < 3; (in.Select != nil) != want {
			t.Errorf("issue %s: centers asked about %v, want %v", is.ID, in.Select != nil, want)
		}
	}
	got := allParts(runs)[0].Results
	for i, rr := range got {
		want := i >= 3
		if rr.BudgetExhausted != want || (rr.Selector == "") != want {
			t.Errorf("issue %s: budget exhausted %v, selector %q; want exhausted %v", rr.IssueID, rr.BudgetExhausted, rr.Selector, want)
		}
		if rr.Method != search.MethodSpIDER || len(rr.Items) != 3 {
			t.Errorf("issue %s: method %q, %d items; the method stays with the selector off", rr.IssueID, rr.Method, len(rr.Items))
		}
	}
	if res.BudgetExhausted != 3 || res.TokensIn+res.TokensOut != 30 || res.Done != 6 {
		t.Errorf("result %+v, want 3 issues past the budget, 30 tokens, 6 done", res)
	}
}

func TestLocalizeBacklogFailuresAreRecorded(t *testing.T) {
	issues := backlogIssues(5, 2)
	issues[3].BaseCommit = "fedcba9" // not a commit of the repository
	issues[3].HostQueue = "host-q"
	issues[4].BaseCommit = testHead[:8] // the head: ranked
	runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{Options: BacklogOptions{Window: 2}})
	r := runs[0]
	if res.Done != 3 || res.Failed != 2 || res.Total != 5 {
		t.Fatalf("result %+v, want 3 done and 2 failed", res)
	}
	if _, ok := r.inputs["i3"]; ok {
		t.Error("the issue whose base commit is not in the repository was retrieved")
	}
	if len(r.snapshots) != 1 || r.snapshots[0].Commit != "fedcba9" {
		t.Errorf("EnsureSnapshot calls %+v, want one for fedcba9", r.snapshots)
	}
	if in := r.inputs["i4"]; in.Retrieve.Snapshot != "" || in.Select == nil || in.Select.Commit != testHead {
		t.Errorf("the issue at the head was ranked with %+v, want the head", in)
	}
	byID := map[string]schema.BacklogIssueResult{}
	for _, rr := range allParts(runs)[0].Results {
		byID[rr.IssueID] = rr
	}
	if e := byID["i2"].Error; e != "localize acme/widget: not indexed (run locus index first)" {
		t.Errorf("failed retrieval recorded with error %q", e)
	}
	wantBase := "base_commit fedcba9 is not a commit of acme/widget: commit not in the repository"
	if e := byID["i3"].Error; e != wantBase {
		t.Errorf("base commit error %q, want %q", e, wantBase)
	}
	if byID["i3"].Source != "issues.jsonl:4" || byID["i2"].Repo != "acme/widget" {
		t.Errorf("failed results lost the issue's source or repo: %+v %+v", byID["i3"], byID["i2"])
	}
	ok := byID["i0"]
	if len(ok.Detail) != 0 {
		t.Errorf("issue i0 kept its detail in a run without Details: %s", ok.Detail)
	}
	if ok.Error != "" || !slices.Equal(ok.Files, []string{"pkg/a.py", "pkg/b.py"}) || len(ok.Items) != 3 ||
		ok.Items[1].FunctionID != "pkg/b.py:C.g" || ok.Items[1].Rank != 2 || !strings.Contains(ok.Items[1].Why, "neighbour of center pkg/a.py:f") {
		t.Errorf("ranked result %+v", ok)
	}
}

// Issues whose base commit is not the indexed head are ranked against the
// snapshot of that commit, built once per distinct (repository, commit).
func TestLocalizeBacklogSnapshots(t *testing.T) {
	issues := backlogIssues(7)
	bases := []string{"", "aaaaaaa1", "aaaaaaa1", "bbbbbbb2", "AAAAAAA1", testHead, "aaaaaaa1"}
	for i, b := range bases {
		issues[i].BaseCommit = b
		if b != "" {
			issues[i].HostQueue = "host-q"
		}
	}
	issues[6].Repo = "acme/other" // same commit prefix, another repository: its own snapshot
	runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{Options: BacklogOptions{Window: 3}})
	r := runs[0]
	if res.Done != 7 || res.Failed != 0 {
		t.Fatalf("result %+v, want 7 done", res)
	}
	var got []string
	for _, s := range r.snapshots {
		got = append(got, string(s.Repo)+"@"+s.Commit)
	}
	want := []string{"acme/widget@aaaaaaa1", "acme/widget@bbbbbbb2", "acme/other@aaaaaaa1"}
	if !slices.Equal(got, want) {
		t.Errorf("EnsureSnapshot calls %v, want %v (one per distinct repository and commit)", got, want)
	}
	wantSnap := []string{"", testSnapshots[0], testSnapshots[0], testSnapshots[1], testSnapshots[0], "", testSnapshots[0]}
	for i, is := range issues {
		in, ok := r.inputs[is.ID]
		if !ok || in.Select == nil {
			t.Errorf("issue %s: not ranked (%+v)", is.ID, in)
			continue
		}
		if in.Retrieve.Snapshot != wantSnap[i] || in.Select.Commit != cmp.Or(wantSnap[i], testHead) {
			t.Errorf("issue %s: retrieved at snapshot %q, selected at %q; want %q", is.ID, in.Retrieve.Snapshot, in.Select.Commit, wantSnap[i])
		}
	}
	if r.maxRunning > 3 {
		t.Errorf("%d issues at once, window 3", r.maxRunning)
	}
}

// An issue whose snapshot's host is gone (a worker killed for good: no
// worker takes the task within the wait) is not failed: the repository is
// cloned again on a live host from its manifest's URL and ref, and the
// snapshot built there.
func TestLocalizeBacklogSnapshotHostGone(t *testing.T) {
	issues := backlogIssues(3)
	for i := range issues {
		issues[i].BaseCommit = "aaaaaaa1"
		issues[i].HostQueue, issues[i].CloneURL, issues[i].CloneRef = "host-gone", "/src/widget", "main"
	}
	issues[2].BaseCommit = "bbbbbbb2"
	runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{})
	r := runs[0]
	if res.Done != 3 || res.Failed != 0 {
		t.Fatalf("result %+v, want 3 done", res)
	}
	if slices.Sort(r.snapHosts); !slices.Equal(r.snapHosts, []string{"host-gone", "host-gone", "host-live", "host-live"}) {
		t.Errorf("EnsureSnapshot ran on %v, want each of the two snapshots tried on the gone host, then built on the live one", r.snapHosts)
	}
	for _, s := range r.syncs {
		if s.Repo != (schema.RepoSpec{Name: issues[0].Repo, URL: "/src/widget", Ref: "main"}) {
			t.Errorf("synced %+v, want the manifest's URL and ref", s.Repo)
		}
	}
	if len(r.syncs) != 2 {
		t.Errorf("%d syncs, want one per snapshot whose host was gone", len(r.syncs))
	}
	for _, is := range issues {
		if in, ok := r.inputs[is.ID]; !ok || in.Retrieve.Snapshot == "" {
			t.Errorf("issue %s: not ranked at its snapshot (%+v)", is.ID, in)
		}
	}
}

// A run keeps at most SnapshotsPerHost snapshots scheduled on one host; the
// others wait in the workflow, not in the host's queue (where they would
// outlast the schedule-to-start timeout behind a slow embedder).
func TestLocalizeBacklogSnapshotWindow(t *testing.T) {
	issues := backlogIssues(14)
	for i := range issues {
		issues[i].BaseCommit = fmt.Sprintf("ccc%05d", i/2) // 7 distinct snapshots per host
		issues[i].HostQueue = []string{"host-a", "host-b"}[i%2]
		if i%2 == 1 {
			issues[i].Repo = "acme/other"
		}
	}
	runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{Options: BacklogOptions{Window: 14}})
	if res.Done != 14 || res.Failed != 0 {
		t.Fatalf("result %+v, want 14 done", res)
	}
	r := runs[0]
	if len(r.snapshots) != 14 {
		t.Errorf("%d EnsureSnapshot calls, want 14 (7 commits in each of 2 repositories)", len(r.snapshots))
	}
	for _, host := range []string{"host-a", "host-b"} {
		if m := r.snapsMax[host]; m > SnapshotsPerHost || m < 2 {
			t.Errorf("host %s: %d snapshots at once; want between 2 and %d", host, m, SnapshotsPerHost)
		}
	}
}

func TestLocalizeBacklogRejectsBadInput(t *testing.T) {
	r := newBacklogRun(t, nil)
	r.env.ExecuteWorkflow(LocalizeBacklog, LocalizeBacklogInput{IssuesKey: "k", Total: 3, Options: BacklogOptions{Window: -1, MaxTokens: -5}})
	err := r.env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "window -1") || !strings.Contains(err.Error(), "max tokens -5") {
		t.Fatalf("error %v, want one naming the window and the budget", err)
	}
	if len(r.started) != 0 || len(r.loads) != 0 {
		t.Error("a rejected input started work")
	}
}

func backlogEqualJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// --max-issue-tokens reaches every child, and the centers a child skipped
// for it are counted in the issue's row.
func TestLocalizeBacklogPassesIssueTokenLimit(t *testing.T) {
	issues := backlogIssues(3)
	runs, _, _ := runBacklogChain(t, issues, LocalizeBacklogInput{Options: BacklogOptions{Window: 2, MaxIssueTokens: 700}})
	for _, is := range issues {
		if in := runs[0].inputs[is.ID]; in.Select == nil || in.Select.MaxTokens != 700 {
			t.Errorf("issue %s selected with %+v, want MaxTokens 700", is.ID, in.Select)
		}
	}
	lr := LocalizeResult{Result: search.Result{Method: search.MethodSpIDER, BudgetSkipped: []string{"a.py:f", "b.py:g"}}}
	if r := issueResult(issues[0], lr, false); r.IssueBudgetSkipped != 2 {
		t.Errorf("row %+v, want 2 centers skipped for the issue's limit", r)
	}
	if err := validateBacklogInput(LocalizeBacklogInput{Options: BacklogOptions{MaxIssueTokens: -1}}); err == nil || !strings.Contains(err.Error(), "max issue tokens") {
		t.Errorf("negative limit: %v", err)
	}
}

// Batches never hold more issues than BacklogOptions.Batch or the window.
func TestLocalizeBacklogBatchSize(t *testing.T) {
	for _, tc := range []struct{ window, batch, want int }{{10, 3, 3}, {2, 5, 2}, {32, 0, DefaultBacklogBatch}} {
		issues := backlogIssues(23)
		runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{Options: BacklogOptions{Window: tc.window, Batch: tc.batch}})
		if res.Done != 23 {
			t.Errorf("window %d batch %d: result %+v", tc.window, tc.batch, res)
		}
		largest := 0
		for _, n := range runs[0].batches {
			largest = max(largest, n)
		}
		if largest != tc.want {
			t.Errorf("window %d batch %d: batches %v, want at most %d issues each and one that full", tc.window, tc.batch, runs[0].batches, tc.want)
		}
	}
}

// An issue whose base commit is the head the backlog was stored against,
// while the index has moved on since, is an error naming both commits.
func TestLocalizeBacklogIndexMoved(t *testing.T) {
	issues := backlogIssues(2)
	issues[1].Text = "issue 1 moved"
	issues[1].BaseCommit = testHead[:10]
	runs, _, res := runBacklogChain(t, issues, LocalizeBacklogInput{})
	if res.Done != 1 || res.Failed != 1 {
		t.Fatalf("result %+v, want 1 done and 1 failed", res)
	}
	got := allParts(runs)[0].Results[1]
	want := "the index of acme/widget is at " + movedCommit + ", not " + testHead[:10] + ": index that ref first (locus index acme/widget=URL#REF)"
	if got.Error != want || len(got.Items) != 0 {
		t.Errorf("moved index: %+v, want error %q", got, want)
	}
}

// When SelectBatch keeps failing, each issue keeps the centers the last
// attempt settled (from the error's details) and the others are
// unavailable, with the server, attempts and error; nothing fails.
func TestLocalizeBacklogKeepsSettledCentersWhenSelectionFails(t *testing.T) {
	issues := backlogIssues(2)
	r := newBacklogRun(t, issues)
	r.selectFails = func(in activities.SelectBatchInput, attempt int32) error {
		p := activities.SelectBatchProgress{Issues: make([]activities.SelectCentersProgress, len(in.Issues))}
		for i, is := range in.Issues {
			c := activities.CenterResult{Center: is.Centers[0].Center}
			if issueIDOf(is.Issue) == "i0" {
				c.SelectOutput = activities.SelectOutput{IDs: is.Centers[0].Candidates, Selector: "m", Calls: 1, PromptTokens: 7}
				p.Issues[i].Done = append(p.Issues[i].Done, c)
			} else {
				c.Error, c.URL, c.Attempt = "HTTP 503 from http://llm", "http://llm", attempt
				p.Issues[i].Failed = append(p.Issues[i].Failed, c)
			}
		}
		return temporal.NewApplicationErrorWithOptions("HTTP 503 from http://llm", activities.ErrTypeLLMRetryable,
			temporal.ApplicationErrorOptions{Details: []any{activities.SelectFailure{URL: "http://llm", Attempt: attempt}, p}})
	}
	_, res := r.execute(t, LocalizeBacklogInput{IssuesKey: schema.BacklogKey(testBacklogRun, "input.json"), Total: 2,
		LLMRetry: RetryOptions{InitialInterval: time.Millisecond, MaximumAttempts: 3}, Options: BacklogOptions{Details: true}})
	if res.Done != 2 || res.Failed != 0 || res.TokensIn != 7 {
		t.Fatalf("result %+v, want 2 done, 7 prompt tokens", res)
	}
	if r.selects != 3 {
		t.Errorf("%d SelectBatch attempts, want 3 (the retry policy's)", r.selects)
	}
	rs := r.parts[0].Results
	var lr0, lr1 LocalizeResult
	if err := json.Unmarshal(rs[0].Detail, &lr0); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rs[1].Detail, &lr1); err != nil {
		t.Fatal(err)
	}
	if got, want := itemReasons(lr0), []string{"pkg/a.py:f:center", "pkg/b.py:C.g:neighbour", "pkg/a.py:h:semantic"}; !slices.Equal(got, want) || rs[0].SelectorUnavailable {
		t.Errorf("settled issue: items %v (want %v), row %+v", got, want, rs[0])
	}
	if got, want := itemReasons(lr1), []string{"pkg/a.py:f:center", "pkg/a.py:h:semantic", "pkg/b.py:C.g:semantic"}; !slices.Equal(got, want) || !rs[1].SelectorUnavailable {
		t.Errorf("failing issue: items %v (want %v), row %+v", got, want, rs[1])
	}
	if len(lr1.SelectorUnavailable) != 1 || lr1.SelectorUnavailable[0] != (UnavailableCenter{Center: "pkg/a.py:f", URL: "http://llm", Attempts: 3, Error: "HTTP 503 from http://llm"}) ||
		!strings.Contains(lr1.Warning, "after 3 attempts") {
		t.Errorf("failing issue: %+v, warning %q", lr1.SelectorUnavailable, lr1.Warning)
	}
	if lr0.Commit != testHead || lr0.Repo != "acme/widget" || lr0.PromptTokens != 7 || lr0.Selector != "m" {
		t.Errorf("detail of the settled issue: %+v", lr0)
	}
}

// BacklogPartSize keeps a part's ranked functions within PartFunctions
// (one issue a part at least, up to MaxPartFunctions).
func TestBacklogPartSize(t *testing.T) {
	for _, tc := range []struct{ k, want int }{
		{0, DefaultBacklogPartSize}, {20, DefaultBacklogPartSize}, {25, 80}, {50, 40}, {100, 20}, {1000, 2}, {2000, 1}, {2500, 1}, {9999, 1},
	} {
		if got := BacklogPartSize(tc.k); got != tc.want {
			t.Errorf("BacklogPartSize(%d) = %d, want %d", tc.k, got, tc.want)
		}
	}
}
