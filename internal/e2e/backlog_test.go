package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

const backlogIssueCount = 50

// backlogRepo has a few classes and functions, so that SpISR's centers
// have neighbours for the selector to judge.
func backlogRepo(t *testing.T) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def evict(self, key):\n        self.store.pop(key)\n\n    def expire(self, now):\n        for k in list(self.store):\n            self.evict(k)\n",
		"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items.clear()\n\n    def peek(self):\n        return self.items[0]\n",
		"pkg/util.py":  "def parse_key(text):\n    return text.strip()\n\ndef format_item(item):\n    return str(item)\n",
	})
	r.Commit("cache, queue, util")
	return r
}

// writeBacklogFile writes a JSON Lines backlog of n issues about the repository.
func writeBacklogFile(t *testing.T, n int) string {
	t.Helper()
	words := []string{"cache get key store", "evict pops the key", "expire entries of the cache", "queue push item",
		"drain clears items", "peek the first item of the queue", "parse key text strip", "format item str"}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"instance_id": "acme__widgets-%d", "repo": "acme/widgets", "problem_statement": "issue %d: %s"}`+"\n", i, i, words[i%len(words)])
	}
	path := filepath.Join(t.TempDir(), "issues.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// decisionCounter is a fake selector LLM that picks each center's first
// candidate and counts the prompts it was asked, by content, and by the
// worker that asked (the workerHeader a tagging proxy set, "" without
// one). While gated, calls block until released and are counted as
// interrupted.
type decisionCounter struct {
	mu          sync.Mutex
	asked       map[string]int
	interrupted map[string]int
	by          map[string]map[string]int // worker → prompt → calls
	heldBy      map[string]map[string]int // worker → prompt → calls held at the gate
	after       int                       // calls answered before the gate closes (0: never)
	blocked     chan string               // the worker of each call held at the gate
	release     chan struct{}
	opened      sync.Once
}

// workerHeader names the worker process whose call a tagging proxy
// forwarded (see taggingProxy).
const workerHeader = "X-Locus-Test-Worker"

func newDecisionCounter(fake *llmtest.Server, gateAfter int) *decisionCounter {
	d := &decisionCounter{asked: map[string]int{}, interrupted: map[string]int{}, after: gateAfter,
		by: map[string]map[string]int{}, heldBy: map[string]map[string]int{},
		blocked: make(chan string, 64), release: make(chan struct{})}
	fake.SetHandler(func(req llmtest.Request) llmtest.Step {
		prompt := req.Messages[len(req.Messages)-1].Content
		p := llmtest.ParseSelectionPrompt(prompt)
		worker := req.Header.Get(workerHeader)
		d.mu.Lock()
		d.asked[prompt]++
		if d.by[worker] == nil {
			d.by[worker], d.heldBy[worker] = map[string]int{}, map[string]int{}
		}
		d.by[worker][prompt]++
		total := 0
		for _, n := range d.asked {
			total += n
		}
		hold := d.after > 0 && total > d.after
		select {
		case <-d.release: // released: the new workers' calls are answered
			hold = false
		default:
		}
		if hold {
			d.interrupted[prompt]++
			d.heldBy[worker][prompt]++
		}
		d.mu.Unlock()
		if hold {
			d.blocked <- worker
			<-d.release // the workers that asked are gone by then
		}
		if len(p.Candidates) == 0 {
			return llmtest.IDs()
		}
		return llmtest.IDs(p.Candidates[0])
	})
	return d
}

// open releases the calls held at the gate and lets every later call
// through.
func (d *decisionCounter) open() { d.opened.Do(func() { close(d.release) }) }

// backlogEnv is one server, store, data directory and fake LLM.
type backlogEnv struct {
	c     client.Client
	b     *blob.Bucket
	cfg   workers.Config
	calls *decisionCounter
}

func newBacklogEnv(ctx context.Context, t *testing.T, repo *gitfixture.Repo, gateAfter int) *backlogEnv {
	t.Helper()
	fake := llmtest.NewServer(t)
	e := &backlogEnv{calls: newDecisionCounter(fake, gateAfter)}
	srv := startServer(t, t.TempDir())
	e.c = dial(t, srv)
	e.b = blobtest.Bucket(t)
	e.cfg = workers.Config{DataDir: t.TempDir(), Bucket: e.b, LLM: "openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake-selector"}
	return e
}

// start stores the backlog and starts (or, with the same input, attaches
// to) its run, as `locus backlog` does.
func (e *backlogEnv) start(ctx context.Context, t *testing.T, id string, in workflows.LocalizeBacklogInput, issues []schema.BacklogIssue) client.WorkflowRun {
	t.Helper()
	data, err := json.Marshal(issues)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.b.WriteAll(ctx, in.IssuesKey, data); err != nil {
		t.Fatal(err)
	}
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY}, workflows.LocalizeBacklog, in)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func (e *backlogEnv) results(ctx context.Context, t *testing.T, res workflows.BacklogResult) []backlog.Result {
	t.Helper()
	rs, err := backlog.ReadParts(ctx, e.b, activities.BacklogPartKeys(res.Run, res.Parts))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestBacklogResumesAfterWorkerLoss ranks a 50-issue JSON Lines backlog
// against a real indexed repository twice: once uninterrupted, and once with
// the workers stopped while selections are in flight, new workers started
// and the same run started again. The resumed run answers every issue
// exactly once with the same results, and the LLM is asked each decision
// once (a call cut off by the stop is asked once more, never one that was
// answered).
func TestBacklogResumesAfterWorkerLoss(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	repo := backlogRepo(t)
	parsed, perrs, err := backlog.ParseFile(writeBacklogFile(t, backlogIssueCount), backlog.ParseOptions{RequireRepo: true})
	if err != nil || len(perrs) != 0 || len(parsed) != backlogIssueCount {
		t.Fatalf("parse: %d issues, errors %v, %v", len(parsed), perrs, err)
	}
	issues := make([]schema.BacklogIssue, len(parsed))
	for i, is := range parsed {
		issues[i] = schema.BacklogIssue{ID: is.ID, Repo: schema.RepoName(is.Repo), Text: is.Text, Source: filepath.Base(is.Source)}
	}
	const id = "backlog-e2e"
	in := workflows.LocalizeBacklogInput{Run: id, IssuesKey: schema.BacklogKey(id, "input.json"), Total: len(issues),
		Params:  search.Params{Method: search.MethodSpISR, Params: spider.Params{K: 4, C: 2}},
		Options: workflows.BacklogOptions{Window: 4, ContinueAsNewAfter: 20, PartSize: 10}}
	index := func(e *backlogEnv) {
		if _, res := runFleet(ctx, t, e.c, "fleet-backlog", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "acme/widgets", URL: repo.Dir}}}); res.Done != 1 {
			t.Fatalf("indexing: %+v", res)
		}
	}

	// Uninterrupted.
	ref := newBacklogEnv(ctx, t, repo, 0)
	startWorkersWith(t, ref.c, ref.cfg)
	index(ref)
	var refRes workflows.BacklogResult
	if err := ref.start(ctx, t, id, in, issues).Get(ctx, &refRes); err != nil {
		t.Fatal(err)
	}
	want := ref.results(ctx, t, refRes)
	if refRes.Done != backlogIssueCount || len(want) != backlogIssueCount || refRes.TokensIn == 0 {
		t.Fatalf("uninterrupted run: %+v, %d results", refRes, len(want))
	}
	for p, n := range ref.calls.asked {
		if n != 1 {
			t.Errorf("uninterrupted run asked a decision %d times:\n%s", n, p)
		}
	}
	checkHistoryBound(ctx, t, ref, in, issues, want)

	// Interrupted after 30 answered calls: the workers stop while the next
	// calls are held, new ones start, and the same run is started again.
	e := newBacklogEnv(ctx, t, repo, 30)
	first, err := workers.Start(e.cfg, e.c)
	if err != nil {
		t.Fatal(err)
	}
	index(e)
	run := e.start(ctx, t, id, in, issues)
	select {
	case <-e.calls.blocked:
	case <-ctx.Done():
		t.Fatal("the backlog never reached the gate")
	}
	time.Sleep(300 * time.Millisecond) // let the other in-flight calls reach it
	var before schema.BacklogProgress
	if v, err := e.c.QueryWorkflow(ctx, id, "", workflows.ProgressQuery); err != nil || v.Get(&before) != nil {
		t.Fatalf("progress query: %v", err)
	}
	for _, w := range first {
		w.Stop()
	}
	e.calls.open()
	if before.Done+before.Failed >= backlogIssueCount || before.Done == 0 {
		t.Fatalf("progress at the stop %+v: want mid-run", before)
	}
	startWorkersWith(t, e.c, e.cfg)
	again := e.start(ctx, t, id, in, issues)
	if again.GetRunID() == "" {
		t.Fatal("no run")
	}
	var res workflows.BacklogResult
	if err := again.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if *update {
		writeHistory(ctx, t, e.c, "backlog-continued-as-new.json", id, run.GetRunID())
		writeHistory(ctx, t, e.c, "backlog-completed.json", id, "")
	}
	got := e.results(ctx, t, res)
	if res.Done != backlogIssueCount || res.Failed != 0 || res.Parts != 5 {
		t.Errorf("resumed run: %+v, want %d done in 5 parts", res, backlogIssueCount)
	}
	seen := map[string]int{}
	for _, r := range got {
		seen[r.IssueID]++
	}
	for _, is := range issues {
		if seen[is.ID] != 1 {
			t.Errorf("issue %s answered %d times, want once", is.ID, seen[is.ID])
		}
	}
	if len(got) != len(want) {
		t.Errorf("resumed run has %d results, the uninterrupted run %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		gj, _ := json.Marshal(got[i])
		wj, _ := json.Marshal(want[i])
		if string(gj) != string(wj) {
			t.Errorf("resumed result %d differs from the uninterrupted run's:\n%s\nwant\n%s", i, gj, wj)
		}
	}
	e.calls.mu.Lock()
	defer e.calls.mu.Unlock()
	if len(e.calls.interrupted) == 0 {
		t.Error("no call was in flight at the stop; the test interrupted nothing")
	}
	if len(e.calls.asked) != len(ref.calls.asked) {
		t.Errorf("resumed run asked %d distinct decisions, uninterrupted %d", len(e.calls.asked), len(ref.calls.asked))
	}
	for p, n := range e.calls.asked {
		if want := 1 + e.calls.interrupted[p]; n != want {
			t.Errorf("decision asked %d times (%d cut off by the stop), want %d:\n%s", n, e.calls.interrupted[p], want, p)
		}
	}
	if res.TokensIn != refRes.TokensIn || res.TokensOut != refRes.TokensOut {
		t.Errorf("tokens %d/%d, uninterrupted %d/%d", res.TokensIn, res.TokensOut, refRes.TokensIn, refRes.TokensOut)
	}
}

// checkHistoryBound runs the backlog again with a history bound of one
// byte: every run continues as new after its first part, and the results
// rank every issue as the run without the bound did (want).
func checkHistoryBound(ctx context.Context, t *testing.T, e *backlogEnv, in workflows.LocalizeBacklogInput, issues []schema.BacklogIssue, want []backlog.Result) {
	t.Helper()
	const id = "backlog-e2e-bounded"
	in.Run, in.IssuesKey = id, schema.BacklogKey(id, "input.json")
	in.Options.HistoryBytes = 1
	first := e.start(ctx, t, id, in, issues)
	firstRun := first.GetRunID() // Get follows the chain to the last run
	var res workflows.BacklogResult
	if err := first.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	it := e.c.GetWorkflowHistory(ctx, id, firstRun, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	ev, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	can := ev.GetWorkflowExecutionContinuedAsNewEventAttributes()
	var next workflows.LocalizeBacklogInput
	if can == nil || len(can.GetInput().GetPayloads()) != 1 || json.Unmarshal(can.GetInput().GetPayloads()[0].GetData(), &next) != nil ||
		next.Next != in.Options.PartSize {
		t.Fatalf("first run closed with %v (next %d), want continue-as-new after its first part of %d", ev.GetEventType(), next.Next, in.Options.PartSize)
	}
	got := e.results(ctx, t, res)
	if res.Done != len(issues) || len(got) != len(want) {
		t.Fatalf("bounded run: %+v, %d results, want %d", res, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.IssueID != w.IssueID || !slices.Equal(g.Files, w.Files) || !slices.EqualFunc(g.Items, w.Items, func(a, b backlog.Ranked) bool {
			return a.FunctionID == b.FunctionID && a.Rank == b.Rank && a.Why == b.Why
		}) {
			t.Errorf("bounded run ranked issue %d differently:\n%+v\nwant\n%+v", i, g, w)
		}
	}
}
