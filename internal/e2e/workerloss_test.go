package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// backlogGate is the selector calls the fake LLM answers before it holds
// the next ones, for the kill.
const backlogGate = 20

// TestBacklogSurvivesAKilledWorker runs `locus backlog --no-worker` over 24
// issues of three indexed repositories on a cluster (`locus server`, three
// `locus worker` with an LLM selector, S3), and kills with SIGKILL the
// worker whose selector call the fake LLM is holding, after it answered
// backlogGate calls. The run must finish with every issue answered, its
// results must equal, line for line, a single-process `locus backlog` of
// the same issues over the same repositories, and its tokens must be those
// of the decisions recorded, each once: what a run without the kill
// reports. The calls the killed worker was served and never recorded are
// asked again by the retry and billed by the LLM twice; the run does not
// count them (see docs/scale.md).
func TestBacklogSurvivesAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the multi-process backlog test (it builds locus and runs six processes)")
	}
	ctx := testctx.New(t)
	fake := llmtest.NewServer(t)
	calls := newDecisionCounter(fake, backlogGate)
	var proxies []string
	for i := range 3 {
		proxies = append(proxies, taggingProxy(t, fake.URL, fmt.Sprintf("worker%d", i)))
	}
	t.Cleanup(calls.open) // before the proxies close: they wait for the calls they forward
	cl := startCluster(ctx, t, func(i int) []string { return []string{"--llm", selectorURL(proxies[i])} })
	fixtures, reposFile := writeFleet(t, cl.dir, 3, func(int) int { return 20 })
	cl.index(ctx, t, reposFile)
	issues := writeFleetIssues(t, cl.dir, fixtures, 8)
	args := []string{"--method", search.MethodSpISR, "--k", "6", "--json"}

	out := filepath.Join(cl.dir, "out")
	run := cl.run(ctx, t, "backlog", "backlog", append(args, "--out", out, issues)...)
	var victimName string
	select {
	case victimName = <-calls.blocked:
	case <-run.done:
		t.Fatalf("the backlog ended after %d selector calls, before the fake LLM held one:\n%s", fake.Total(), run.output())
	case <-ctx.Done():
		t.Fatalf("no selector call reached the gate: %v\n%s", ctx.Err(), run.output())
	}
	var victim *locusProc
	for _, w := range cl.byIndex {
		if w.name == victimName {
			victim = w
		}
	}
	if victim == nil {
		t.Fatalf("a call held at the gate came from %q, not one of this test's workers", victimName)
	}
	victim.kill(t)
	calls.open()
	t.Logf("killed %s while the fake LLM held its selector call", victim.name)
	if code := run.wait(ctx, t); code != 0 {
		t.Fatalf("backlog exit %d after a worker was killed:\n%s", code, run.output())
	}
	sum := backlogSummary(t, run)

	// The same issues ranked by one process over the same repositories,
	// with its own fake LLM and store: no kill, no cache shared.
	refFake := llmtest.NewServer(t)
	newDecisionCounter(refFake, 0)
	single, _ := indexSingle(ctx, t, cl.bin, cl.dir, reposFile)
	refOut := filepath.Join(cl.dir, "ref-out")
	ref := startLocus(ctx, t, cl.bin, "single-backlog", append([]string{"backlog", "--data-dir", single, "--log-level", "warn",
		"--llm", selectorURL(refFake.URL)}, append(args, "--out", refOut, issues)...)...)
	if code := ref.wait(ctx, t); code != 0 {
		t.Fatalf("single-process backlog exit %d:\n%s", code, ref.output())
	}
	refSum := backlogSummary(t, ref)

	total := 3 * 8
	if sum.Total != total || sum.Done != total || sum.Failed != 0 || refSum.Done != total {
		t.Fatalf("cluster run: %d of %d done, %d failed; single process: %d done; want all %d", sum.Done, sum.Total, sum.Failed, refSum.Done, total)
	}
	got, want := resultLines(t, out), resultLines(t, refOut)
	if len(got) != total || len(want) != total {
		t.Fatalf("results.jsonl: %d lines from the cluster, %d from one process, want %d", len(got), len(want), total)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("result %d differs:\ncluster: %s\nsingle:  %s", i, got[i], want[i])
		}
	}

	// Tokens: each decision recorded once. The fake bills every call it
	// answers; the run counts one call per distinct prompt.
	servedIn, servedOut, countedIn, countedOut := servedTokens(t, fake)
	_, _, refIn, refOut2 := servedTokens(t, refFake)
	if sum.TokensIn != countedIn || sum.TokensOut != countedOut {
		t.Errorf("cluster run counted %d/%d tokens; its distinct decisions cost %d/%d", sum.TokensIn, sum.TokensOut, countedIn, countedOut)
	}
	if sum.TokensIn != refSum.TokensIn || sum.TokensOut != refSum.TokensOut || refSum.TokensIn != refIn || refSum.TokensOut != refOut2 {
		t.Errorf("tokens: cluster %d/%d, single process %d/%d (its LLM served %d/%d)", sum.TokensIn, sum.TokensOut, refSum.TokensIn, refSum.TokensOut, refIn, refOut2)
	}
	t.Logf("the fake LLM served %d/%d tokens; the run counted %d/%d; %d/%d were served to the killed worker's lost attempt and asked again",
		servedIn, servedOut, sum.TokensIn, sum.TokensOut, servedIn-sum.TokensIn, servedOut-sum.TokensOut)
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if len(calls.heldBy[victimName]) == 0 {
		t.Fatal("no call of the killed worker was held: the kill interrupted nothing")
	}
	for p, n := range calls.asked {
		if n > 1+calls.by[victimName][p] {
			t.Errorf("a decision was asked %d times, %d of them by the killed worker: asked again without a lost attempt\n%s", n, calls.by[victimName][p], p)
		}
	}
	for p := range calls.heldBy[victimName] {
		if calls.asked[p] < 2 {
			t.Errorf("the killed worker's held call was not asked again (asked %d times): its decision was lost\n%s", calls.asked[p], p)
		}
	}
	if servedIn <= sum.TokensIn {
		t.Errorf("served %d prompt tokens, counted %d: the held calls of the killed worker should be served and not counted", servedIn, sum.TokensIn)
	}
}

// TestTripletsSurviveAKilledWorker runs `locus triplets --no-worker` over
// three indexed repositories on a cluster, one chunk per commit, and kills
// with SIGKILL a worker while it mines a chunk, once a chunk of that
// repository is stored. The run must finish with every repository mined,
// one stored part per chunk and no query stored twice; the repository
// whose chunk was lost must have moved to a live host within --host-wait
// of the lost attempt's timeout; and the records must equal, line for
// line, a single-process `locus triplets` of the same repositories.
// Mining asks no LLM: there are no tokens to count.
func TestTripletsSurviveAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the multi-process triplets test (it builds locus and runs six processes)")
	}
	ctx := testctx.New(t)
	cl := startCluster(ctx, t, nil)
	_, reposFile := writeFleet(t, cl.dir, 3, func(i int) int { return 24 + 4*i })
	cl.index(ctx, t, reposFile)
	args := []string{"--repos-file", reposFile, "--format", triplets.FormatJSONL, "--chunk", "1"}

	out := filepath.Join(cl.dir, "out")
	run := cl.run(ctx, t, "triplets", "triplets", append(args, "--out", out, "--host-wait", fleetHostWait.String())...)
	// The moment to kill: a worker mines a chunk of a repository with a
	// chunk stored and more to come.
	lost, victim, killedAt := cl.killMidStep(ctx, t, run, "a chunk", func() (inFlight, bool) {
		f, ok := stepInFlight(ctx, t, cl.c, "MineRepoTriplets", "MineTripletsChunk")
		if !ok {
			return f, false
		}
		p, err := jobs.QueryProgress[workflows.RepoTripletsProgress](ctx, cl.c, f.workflowID)
		return f, err == nil && p.Done > 0 && p.Done < p.Chunks
	})
	victimQueue := victim.hostQueue
	if code := run.wait(ctx, t); code != 0 {
		t.Fatalf("triplets exit %d after a worker was killed:\n%s", code, run.output())
	}
	var repoIn workflows.TripletsRepoInput
	checkMoved(t, lost.workflowID, victimQueue, hostMove(ctx, t, cl.c, lost.workflowID, lost.runID, victimQueue, &repoIn), killedAt)

	// What was stored: one part per chunk, no query twice.
	_, id, _ := strings.Cut(run.waitFor(ctx, t, ": 3 repositories"), "triplets ")
	id, _, _ = strings.Cut(id, ":")
	var res workflows.TripletsResult
	if err := cl.c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatalf("result of %s: %v", id, err)
	}
	repos, err := activities.ReadTripletsResults(ctx, cl.bucket, res.ResultKeys)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != 3 || res.Failed != 0 || len(repos) != 3 {
		t.Fatalf("run %s: %d done, %d failed, %d results; want 3 mined", id, res.Done, res.Failed, len(repos))
	}
	seen := map[string]bool{}
	stored := 0
	for _, r := range repos {
		if r.Error != "" || len(r.Parts) != r.Commits {
			t.Errorf("%s: %d parts for %d commits mined one a chunk, error %q", r.Repo, len(r.Parts), r.Commits, r.Error)
		}
		if r.Repo == repoIn.Repo && r.Commits == 0 {
			t.Errorf("%s: the repository whose chunk was lost mined nothing", r.Repo)
		}
		for _, p := range r.Parts {
			recs, err := triplets.ReadPart(ctx, cl.bucket, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				if seen[rec.QueryID] {
					t.Errorf("%s: query %s stored twice", r.Repo, rec.QueryID)
				}
				seen[rec.QueryID] = true
			}
			stored += len(recs)
		}
	}
	if stored != res.Records || stored == 0 {
		t.Errorf("%d records stored, the run counts %d", stored, res.Records)
	}

	// The same repositories mined by one process.
	single, _ := indexSingle(ctx, t, cl.bin, cl.dir, reposFile)
	refOut := filepath.Join(cl.dir, "ref-out")
	ref := startLocus(ctx, t, cl.bin, "single-triplets", append([]string{"triplets", "--data-dir", single, "--log-level", "warn", "--out", refOut}, args...)...)
	if code := ref.wait(ctx, t); code != 0 {
		t.Fatalf("single-process triplets exit %d:\n%s", code, ref.output())
	}
	got, want := readFile(t, filepath.Join(out, "records.jsonl")), readFile(t, filepath.Join(refOut, "records.jsonl"))
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("records.jsonl line %d differs (%d lines from the cluster, %d from one process):\ncluster: %.600s\nsingle:  %.600s", i+1, len(gl), len(wl), gl[i], wl[i])
			}
		}
		t.Fatalf("records.jsonl: %d lines from the cluster, %d from one process", len(gl), len(wl))
	}
}

// taggingProxy forwards HTTP requests to target with workerHeader set to
// worker, so that the fake LLM can tell the worker processes' calls apart.
func taggingProxy(t *testing.T, target, worker string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Header.Set(workerHeader, worker)
	}})
	t.Cleanup(srv.Close)
	return srv.URL
}

// selectorURL is the --llm of a fake LLM at base (http://host:port).
func selectorURL(base string) string {
	return "openai+http://" + strings.TrimPrefix(base, "http://") + "?model=fake-selector"
}

// writeFleetIssues writes a JSON Lines backlog of n issues per repository
// of fixtures, each naming functions growHistory wrote and words of every
// function's document (its path, Go's int), so that each center has
// neighbours for the selector to judge.
func writeFleetIssues(t *testing.T, dir string, fixtures map[schema.RepoName]*gitfixture.Repo, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range len(fixtures) {
		name := fmt.Sprintf("fleet/r%d", i)
		if fixtures[schema.RepoName(name)] == nil {
			t.Fatalf("no repository %s", name)
		}
		for j := range n {
			fmt.Fprintf(&b, `{"instance_id": "r%d-%d", "repo": %q, "problem_statement": "issue %d of r%d: F%d_%d in pkg core and util returns the wrong int, and f%d_%d of app main and models with it"}`+"\n",
				i, j, name, j, i, i, j%2, i, (j/2)%2)
		}
	}
	path := filepath.Join(dir, "issues.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// backlogSummary is what `locus backlog --json` printed.
func backlogSummary(t *testing.T, p *locusProc) backlog.Summary {
	t.Helper()
	var s backlog.Summary
	if err := json.Unmarshal(p.stdout.Bytes(), &s); err != nil {
		t.Fatalf("%s --json: %v\n%s", p.name, err, p.output())
	}
	return s
}

// resultLines are the lines of out/results.jsonl.
func resultLines(t *testing.T, out string) []string {
	t.Helper()
	return strings.Split(strings.TrimSuffix(string(readFile(t, filepath.Join(out, "results.jsonl"))), "\n"), "\n")
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// servedTokens adds up the tokens fake billed: served, for every call it
// answered; counted, for one call of each distinct prompt (the fake's
// answers are a function of the request).
func servedTokens(t *testing.T, fake *llmtest.Server) (servedIn, servedOut, countedIn, countedOut int) {
	t.Helper()
	seen := map[string][2]int{}
	for _, r := range fake.Requests() {
		if r.Step.Fault != llmtest.OK {
			t.Fatalf("the fake LLM answered a call with %v", r.Step.Fault)
		}
		in, out := llmtest.Usage(r, r.Step.Text)
		servedIn += in
		servedOut += out
		if u, ok := seen[r.Prompt()]; ok {
			if u != [2]int{in, out} {
				t.Fatalf("one prompt billed %v and %d/%d", u, in, out)
			}
			continue
		}
		seen[r.Prompt()] = [2]int{in, out}
		countedIn += in
		countedOut += out
	}
	return servedIn, servedOut, countedIn, countedOut
}
