package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

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
// faked Localize children and store activities.
type backlogRun struct {
	env *testsuite.TestWorkflowEnvironment

	mu         sync.Mutex
	running    int
	maxRunning int
	started    []string // child workflow ids in start order
	inputs     map[string]LocalizeInput
	loads      []activities.LoadBacklogInput
	parts      []activities.BacklogPartInput
	summaries  []activities.BacklogSummaryInput
	snapshots  []schema.EnsureSnapshotInput
}

// testSnapshots are the commits the fake EnsureSnapshot knows, by prefix.
var testSnapshots = []string{"aaaaaaa1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbb2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}

// loadCap is how many issues the fake LoadBacklogIssues returns at most, so
// that runs load their slice in several answers.
const loadCap = 3

// tokensPerIssue is what each fake child reports spending (in + out).
const tokensPerIssue = 10

func newBacklogRun(t *testing.T, issues []schema.BacklogIssue) *backlogRun {
	t.Helper()
	r := &backlogRun{env: newTestSuite(t).NewTestWorkflowEnvironment(), inputs: map[string]LocalizeInput{}}
	env := r.env
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testBacklogRun, TaskQueue: IndexQueue})
	env.RegisterWorkflow(Localize)
	env.RegisterActivity(&activities.Store{})
	env.OnWorkflow(Localize, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in LocalizeInput) (LocalizeResult, error) {
			id := workflow.GetInfo(ctx).WorkflowExecution.ID
			r.mu.Lock()
			r.running++
			r.maxRunning = max(r.maxRunning, r.running)
			r.started = append(r.started, id)
			r.inputs[id] = in
			r.mu.Unlock()
			defer func() {
				r.mu.Lock()
				r.running--
				r.mu.Unlock()
			}()
			// Uneven lengths, so completions interleave with starts.
			var n int
			fmt.Sscanf(in.Issue, "issue %d", &n)
			if err := workflow.Sleep(ctx, time.Duration(n%3+1)*time.Hour); err != nil {
				return LocalizeResult{}, err
			}
			if strings.HasPrefix(in.Issue, "bad ") {
				return LocalizeResult{}, temporal.NewNonRetryableApplicationError("localize acme/widget: not indexed (run locus index first)", activities.ErrTypeBadInput, nil)
			}
			res := LocalizeResult{Result: search.Result{Repo: string(in.Repo), Commit: testHead, Method: search.MethodSpIDER,
				Items: []spider.Item{
					{ID: "pkg/a.py:f", Score: 0.9, Rank: 1, Reason: spider.ReasonCenter},
					{ID: "pkg/b.py:C.g", Score: 0.5, Rank: 3, Reason: spider.ReasonNeighbour, Center: "pkg/a.py:f", Hops: 2, Selector: "fake"},
					{ID: "pkg/a.py:h", Score: 0.4, Rank: 2, Reason: spider.ReasonSemantic},
				}}}
			if !in.NoSelector {
				res.Selector, res.LLMCalls, res.PromptTokens, res.CompletionTokens = "fake", 1, tokensPerIssue-2, 2
			}
			return res, nil
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
	env.OnActivity(snapActs.EnsureSnapshot, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in schema.EnsureSnapshotInput) (schema.SnapshotInfo, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.snapshots = append(r.snapshots, in)
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
	in.IssuesKey, in.Total = schema.BacklogKey(testBacklogRun, "input.json"), len(issues)
	var runs []*backlogRun
	var inputs []LocalizeBacklogInput
	for i := 0; ; i++ {
		if i > len(issues)+1 {
			t.Fatalf("LocalizeBacklog continued as new %d times for %d issues", i, len(issues))
		}
		r := newBacklogRun(t, issues)
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
			runs, inputs, res := runBacklogChain(t, issues, LocalizeBacklogInput{
				Options: BacklogOptions{Window: tc.window, ContinueAsNewAfter: tc.perRun, PartSize: tc.partSize}})
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
				t.Errorf("at most %d children ran at once, want %d", maxRunning, tc.wantMax)
			}
			var want []string
			for _, is := range issues {
				want = append(want, testBacklogRun+"/"+is.ID)
			}
			slices.Sort(started)
			slices.Sort(want)
			if !slices.Equal(started, want) {
				t.Errorf("children started %v, want each issue once: %v", started, want)
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
		if li.Params.Method != search.MethodSpISR || li.Repo != "acme/widget" {
			t.Errorf("child %s got %+v, want the run's params and the issue's repo", id, li)
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
		in := r.inputs[testBacklogRun+"/"+is.ID]
		if want := i >= 3; in.NoSelector != want {
			t.Errorf("issue %s started with NoSelector %v, want %v", is.ID, in.NoSelector, want)
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
	if _, ok := r.inputs[testBacklogRun+"/i3"]; ok {
		t.Error("the issue whose base commit is not in the repository started a Localize child")
	}
	if len(r.snapshots) != 1 || r.snapshots[0].Commit != "fedcba9" {
		t.Errorf("EnsureSnapshot calls %+v, want one for fedcba9", r.snapshots)
	}
	if in := r.inputs[testBacklogRun+"/i4"]; in.Commit != testHead[:8] {
		t.Errorf("the issue at the head was localized with commit %q, want %q", in.Commit, testHead[:8])
	}
	byID := map[string]schema.BacklogIssueResult{}
	for _, rr := range allParts(runs)[0].Results {
		byID[rr.IssueID] = rr
	}
	if e := byID["i2"].Error; e != "localize acme/widget: not indexed (run locus index first)" {
		t.Errorf("failed child recorded with error %q", e)
	}
	wantBase := "base_commit fedcba9 is not a commit of acme/widget: commit not in the repository"
	if e := byID["i3"].Error; e != wantBase {
		t.Errorf("base commit error %q, want %q", e, wantBase)
	}
	if byID["i3"].Source != "issues.jsonl:4" || byID["i2"].Repo != "acme/widget" {
		t.Errorf("failed results lost the issue's source or repo: %+v %+v", byID["i3"], byID["i2"])
	}
	ok := byID["i0"]
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
		in, ok := r.inputs[testBacklogRun+"/"+is.ID]
		if !ok {
			t.Errorf("issue %s: no Localize child", is.ID)
			continue
		}
		if in.Snapshot != wantSnap[i] || in.Commit != strings.ToLower(bases[i]) {
			t.Errorf("issue %s: Localize with snapshot %q, commit %q; want %q, %q", is.ID, in.Snapshot, in.Commit, wantSnap[i], strings.ToLower(bases[i]))
		}
	}
	if r.maxRunning > 3 {
		t.Errorf("%d children at once, window 3", r.maxRunning)
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
		if in := runs[0].inputs[testBacklogRun+"/"+is.ID]; in.MaxIssueTokens != 700 {
			t.Errorf("issue %s started with MaxIssueTokens %d, want 700", is.ID, in.MaxIssueTokens)
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
