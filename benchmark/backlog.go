package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// BacklogOptions configures Backlog. Zero values get the defaults written
// next to each field.
type BacklogOptions struct {
	GitDir string
	Head   gitrepo.Hash
	// Issues is how many issues to rank; default 1000. Their texts are the
	// repository's latest non-merge commit subjects, cycled when fewer.
	Issues int
	// Window is LocalizeBacklog's window; default workflows.DefaultBacklogWindow.
	Window int
	// Batch is LocalizeBacklog's batch; default workflows.DefaultBacklogBatch.
	Batch int
	// Method is the retrieval method; default spider (the backlog's default).
	Method string
	// K is the functions per issue; default 20 (the backlog's default).
	K int
	// CPUProfile, when set, is a path prefix: the direct pass's CPU profile
	// goes to CPUProfile+"-direct.pprof" and the workflow pass's to
	// CPUProfile+"-workflow.pprof".
	CPUProfile string
	// StoreDir, when set, is the store to index into and keep: a later run
	// with the same StoreDir and Head reuses its index instead of indexing
	// again (IndexSeconds 0), so that passes compared across builds rank
	// against one index. Default: a temporary store, removed at the end.
	StoreDir string
	// Logger receives the embedded server's and workers' warnings; default
	// warnings and errors to stderr.
	Logger *slog.Logger
}

// BacklogResult is what Backlog measured; latencies are in milliseconds.
type BacklogResult struct {
	Repository string `json:"repository"`
	Commit     string `json:"commit"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// Indexing is how the repository was indexed, and IndexSeconds how long
	// that took.
	Indexing     string  `json:"indexing"`
	IndexSeconds float64 `json:"index_seconds"`
	Functions    int     `json:"functions"`
	Embedder     string  `json:"embedder"`
	Method       string  `json:"method"`
	K            int     `json:"k"`
	Selector     string  `json:"selector"`
	Issues       int     `json:"issues"`
	// DistinctTexts is how many different commit subjects the issues use.
	DistinctTexts int `json:"distinct_texts"`
	Window        int `json:"window"`
	Batch         int `json:"batch"`

	// The direct path: localizeDirect per issue, one after another.
	DirectSeconds      float64 `json:"direct_seconds"`
	DirectIssuesPerSec float64 `json:"direct_issues_per_s"`
	DirectP50          float64 `json:"direct_p50_ms"`
	DirectP99          float64 `json:"direct_p99_ms"`
	// The workflow path: one LocalizeBacklog run, from storing its input to
	// its result (parts and summary written).
	WorkflowSeconds      float64 `json:"workflow_seconds"`
	WorkflowIssuesPerSec float64 `json:"workflow_issues_per_s"`
	// OverheadPerIssue is (workflow seconds − direct seconds) / issues.
	OverheadPerIssue float64 `json:"overhead_ms_per_issue"`

	// Identical counts issues whose ranked function ids (in order) are the
	// same on both paths; Mismatches the others, the first few in Examples.
	Identical  int                `json:"identical"`
	Mismatches int                `json:"mismatches"`
	Examples   []BacklogMismatch  `json:"mismatch_examples,omitempty"`
	Failed     int                `json:"failed"` // issues the workflow path answered with an error
	Summary    *backlogRunSummary `json:"run"`
}

// BacklogMismatch is an issue ranked differently by the two paths.
type BacklogMismatch struct {
	Issue    string   `json:"issue"`
	Text     string   `json:"text"`
	Direct   []string `json:"direct"`
	Workflow []string `json:"workflow"`
	Error    string   `json:"error,omitempty"`
}

type backlogRunSummary struct {
	ID    string `json:"id"`
	Parts int    `json:"parts"`
}

// maxMismatchExamples bounds BacklogResult.Examples.
const maxMismatchExamples = 5

// Backlog indexes the repository at Head the way `locus index` does (an
// IndexFleet run on an embedded Temporal server with this process's
// workers, into a temporary store), then ranks the same issues twice in
// the same run: directly (localizeDirect per issue, in process) and
// through a LocalizeBacklog run with the input stored as `locus backlog`
// stores it. It reports both throughputs, the orchestration overhead per
// issue and whether both paths ranked every issue the same.
func Backlog(ctx context.Context, o BacklogOptions) (*BacklogResult, error) {
	if o.Issues == 0 {
		o.Issues = 1000
	}
	if o.Issues < 0 {
		return nil, fmt.Errorf("bench backlog: %d issues: want at least 1", o.Issues)
	}
	if o.Window == 0 {
		o.Window = workflows.DefaultBacklogWindow
	}
	if o.Window < 0 || o.Window > workflows.MaxWindow {
		return nil, fmt.Errorf("bench backlog: window %d: want 1 to %d", o.Window, workflows.MaxWindow)
	}
	if o.Batch == 0 {
		o.Batch = workflows.DefaultBacklogBatch
	}
	if o.Batch < 0 || o.Batch > workflows.MaxWindow {
		return nil, fmt.Errorf("bench backlog: batch %d: want 1 to %d", o.Batch, workflows.MaxWindow)
	}
	if o.Method == "" {
		o.Method = search.MethodSpIDER
	}
	if o.K == 0 {
		o.K = 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	subjects, err := commitSubjects(ctx, o.GitDir, o.Issues)
	if err != nil {
		return nil, err
	}
	if len(subjects) == 0 {
		return nil, fmt.Errorf("bench backlog %s: no commit subjects to use as issues", o.GitDir)
	}
	name := benchRepo(o.GitDir)
	issues := backlogIssues(name, subjects, o.Issues)

	env, err := newEnv(ctx, "backlog", o.StoreDir, o.Logger, nil)
	if err != nil {
		return nil, err
	}
	defer env.close()
	b, c, deps := env.b, env.c, env.deps

	res := &BacklogResult{Repository: o.GitDir, Commit: o.Head.String(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Indexing: "IndexFleet workflow, embedded Temporal server, in-process workers", Method: o.Method, K: o.K,
		Issues: len(issues), DistinctTexts: min(len(subjects), len(issues)), Window: o.Window, Batch: o.Batch}
	t0 := time.Now()
	m, err := manifest.Read(ctx, b, name)
	if err != nil {
		return nil, err
	}
	if m == nil || m.Graph == nil || m.Search == nil || m.Graph.Commit != o.Head.String() {
		if err := indexAt(ctx, c, "bench-index", name, o.GitDir, o.Head); err != nil {
			return nil, err
		}
		res.IndexSeconds = time.Since(t0).Seconds()
		if m, err = manifest.Read(ctx, b, name); err != nil {
			return nil, err
		}
	} else {
		res.Indexing = "reused the index in " + o.StoreDir
	}
	if m == nil || m.Graph == nil || m.Search == nil || m.Graph.Commit != o.Head.String() {
		return nil, fmt.Errorf("bench backlog %s: the index is not at %s after indexing", o.GitDir, o.Head)
	}
	res.Functions, res.Embedder = m.Search.Functions, m.Search.Model

	// The same parameters on both paths: what `locus backlog` passes.
	params := search.Params{Method: o.Method, Params: spider.Params{K: o.K}}
	// One untimed query, so that both paths find the decoded graph cached.
	if _, err := localizeDirect(ctx, deps, name, issues[0].Text, params); err != nil {
		return nil, fmt.Errorf("bench backlog %s: warm-up query: %w", o.GitDir, err)
	}

	// Direct path.
	direct := make([]*search.Result, len(issues))
	lat := make([]time.Duration, len(issues))
	stop, err := startProfile(o.CPUProfile, "direct")
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	for i, is := range issues {
		s := time.Now()
		r, err := localizeDirect(ctx, deps, name, is.Text, params)
		if err != nil {
			stop()
			return nil, fmt.Errorf("bench backlog %s: direct, issue %s: %w", o.GitDir, is.ID, err)
		}
		lat[i] = time.Since(s)
		direct[i] = r
	}
	directTime := time.Since(t1)
	stop()
	res.DirectSeconds = directTime.Seconds()
	res.DirectIssuesPerSec = float64(len(issues)) / directTime.Seconds()
	res.DirectP50, res.DirectP99 = Percentile(lat, 50), Percentile(lat, 99)
	for _, r := range direct {
		if res.Selector == "" {
			res.Selector = r.Selector
		}
	}

	// Workflow path.
	const run = "bench-backlog"
	in := workflows.LocalizeBacklogInput{Run: run, IssuesKey: schema.BacklogKey(run, "input.json"), Total: len(issues),
		Params: params, Options: workflows.BacklogOptions{Window: o.Window, Batch: o.Batch}}
	if stop, err = startProfile(o.CPUProfile, "workflow"); err != nil {
		return nil, err
	}
	t2 := time.Now()
	out, err := runBacklog(ctx, c, b, in, issues)
	wfTime := time.Since(t2)
	stop()
	if err != nil {
		return nil, fmt.Errorf("bench backlog %s: %w", o.GitDir, err)
	}
	res.WorkflowSeconds = wfTime.Seconds()
	res.WorkflowIssuesPerSec = float64(len(issues)) / wfTime.Seconds()
	res.OverheadPerIssue = float64((wfTime - directTime).Microseconds()) / 1000 / float64(len(issues))
	res.Summary = &backlogRunSummary{ID: run, Parts: out.Parts}

	rs, err := backlog.ReadParts(ctx, b, activities.BacklogPartKeys(out.Run, out.Parts))
	if err != nil {
		return nil, fmt.Errorf("bench backlog %s: read results: %w", o.GitDir, err)
	}
	compareBacklog(res, issues, direct, rs)
	return res, nil
}

// localizeDirect ranks one issue in this process with the engine calls the
// Localize workflow makes as activities (search.RetrieveAt, then
// search.SelectCenters for all centers, then search.Finish), without
// Temporal: the peer the workflow path is measured against.
func localizeDirect(ctx context.Context, d search.Deps, repo schema.RepoName, issue string, p search.Params) (*search.Result, error) {
	start := time.Now()
	r, err := search.RetrieveAt(ctx, d, repo, "", issue, p)
	if err != nil {
		return nil, err
	}
	res := &search.Result{Repo: r.Repo, Commit: r.Commit, Method: r.Method, Embedder: r.Embedder}
	var selected map[string]spider.Selection
	if r.Expansion != nil {
		// The selector that ranks, named even when no center had candidates.
		if d.Selector != nil {
			res.Selector = d.Selector.Name()
		} else {
			res.Selector = llm.HeuristicName
		}
		s, err := search.SelectCenters(ctx, d, search.SelectRequest{Repo: repo, Commit: r.Commit, Issue: issue,
			Centers: search.CentersOf(r), Concurrency: 1})
		if err != nil {
			return nil, err
		}
		selected = s.Usage(res)
	}
	if res.Items, err = search.Finish(r, selected); err != nil {
		return nil, err
	}
	res.Latency = time.Since(start)
	return res, nil
}

// backlogIssues makes n issues from subjects, cycled.
func backlogIssues(repo schema.RepoName, subjects []string, n int) []schema.BacklogIssue {
	issues := make([]schema.BacklogIssue, n)
	for i := range issues {
		issues[i] = schema.BacklogIssue{ID: fmt.Sprintf("bench-%05d", i), Repo: repo, Text: subjects[i%len(subjects)],
			Source: fmt.Sprintf("subjects:%d", i%len(subjects)+1)}
	}
	return issues
}

// runBacklog stores the issues and runs LocalizeBacklog to the end, as
// `locus backlog` does.
func runBacklog(ctx context.Context, c client.Client, b *blob.Bucket, in workflows.LocalizeBacklogInput, issues []schema.BacklogIssue) (workflows.BacklogResult, error) {
	var out workflows.BacklogResult
	data, err := json.Marshal(issues)
	if err != nil {
		return out, err
	}
	if err := b.WriteAll(ctx, in.IssuesKey, data); err != nil {
		return out, fmt.Errorf("store %s: %w", in.IssuesKey, err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: in.Run, TaskQueue: workflows.IndexQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY}, workflows.LocalizeBacklog, in)
	if err != nil {
		return out, fmt.Errorf("start backlog: %w", err)
	}
	if err := run.Get(ctx, &out); err != nil {
		return out, fmt.Errorf("backlog: %w", err)
	}
	return out, nil
}

// compareBacklog counts the issues both paths ranked alike.
func compareBacklog(res *BacklogResult, issues []schema.BacklogIssue, direct []*search.Result, rs []backlog.Result) {
	byID := make(map[string]backlog.Result, len(rs))
	for _, r := range rs {
		byID[r.IssueID] = r
	}
	for i, is := range issues {
		d := make([]string, len(direct[i].Items))
		for j, it := range direct[i].Items {
			d[j] = it.ID
		}
		r, ok := byID[is.ID]
		var w []string
		for _, it := range r.Items {
			w = append(w, it.FunctionID)
		}
		if r.Error != "" {
			res.Failed++
		}
		if ok && r.Error == "" && slices.Equal(d, w) {
			res.Identical++
			continue
		}
		res.Mismatches++
		if len(res.Examples) < maxMismatchExamples {
			e := BacklogMismatch{Issue: is.ID, Text: is.Text, Direct: d, Workflow: w, Error: r.Error}
			if !ok {
				e.Error = "no result stored"
			}
			res.Examples = append(res.Examples, e)
		}
	}
}

// startProfile starts a CPU profile at prefix-pass.pprof; "" profiles nothing.
func startProfile(prefix, pass string) (stop func(), err error) {
	if prefix == "" {
		return func() {}, nil
	}
	f, err := os.Create(prefix + "-" + pass + ".pprof")
	if err != nil {
		return nil, fmt.Errorf("bench backlog: cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench backlog: cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// WriteBacklogTable prints r as two aligned columns, then the first
// mismatches.
func WriteBacklogTable(w io.Writer, r *BacklogResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("repository", r.Repository)
	row("commit", r.Commit)
	row("gomaxprocs", r.GOMAXPROCS)
	row("indexing", r.Indexing)
	row("index_seconds", fmt.Sprintf("%.2f", r.IndexSeconds))
	row("functions", r.Functions)
	row("embedder", r.Embedder)
	row("method", fmt.Sprintf("%s, K=%d, selector %s", r.Method, r.K, r.Selector))
	row("issues", fmt.Sprintf("%d (%d distinct commit subjects)", r.Issues, r.DistinctTexts))
	row("window / batch", fmt.Sprintf("%d / %d", r.Window, r.Batch))
	row("direct_seconds", fmt.Sprintf("%.2f", r.DirectSeconds))
	row("direct_issues_per_s", fmt.Sprintf("%.1f", r.DirectIssuesPerSec))
	row("direct_p50_ms / p99", fmt.Sprintf("%.1f / %.1f", r.DirectP50, r.DirectP99))
	row("workflow_seconds", fmt.Sprintf("%.2f", r.WorkflowSeconds))
	row("workflow_issues_per_s", fmt.Sprintf("%.1f", r.WorkflowIssuesPerSec))
	row("overhead_ms_per_issue", fmt.Sprintf("%.1f", r.OverheadPerIssue))
	row("identical", fmt.Sprintf("%d of %d (%d mismatches, %d failed)", r.Identical, r.Issues, r.Mismatches, r.Failed))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range r.Examples {
		fmt.Fprintf(w, "mismatch %s %q:\n  direct   %v\n  workflow %v\n", e.Issue, e.Text, e.Direct, e.Workflow)
		if e.Error != "" {
			fmt.Fprintf(w, "  error    %s\n", e.Error)
		}
	}
	return nil
}

// env is what a benchmark indexes and queries with: a store (temporary, or
// storeDir), an embedded Temporal server, a client and this process's
// workers with the default backends (lexical embedder, local vectors,
// heuristic selector), as `locus index` starts them.
type env struct {
	b     *blob.Bucket
	c     client.Client
	deps  search.Deps
	close func()
}

func newEnv(ctx context.Context, what, storeDir string, log *slog.Logger, emb embed.Embedder) (*env, error) {
	tmp, err := os.MkdirTemp("", "locus-bench-"+what+"-")
	if err != nil {
		return nil, err
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		os.RemoveAll(tmp)
	}
	if storeDir == "" {
		storeDir = filepath.Join(tmp, "store")
	}
	b, err := blob.OpenFile(storeDir, fileblob.Options{})
	if err != nil {
		closeAll()
		return nil, err
	}
	closers = append(closers, func() { b.Close() })
	srv, err := devserver.Start(ctx, devserver.Options{DataDir: filepath.Join(tmp, "temporal"), Address: "127.0.0.1:0", Logger: log})
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("bench %s: start the embedded Temporal server: %w", what, err)
	}
	closers = append(closers, func() { srv.Stop() })
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(),
		Logger: sdklog.NewStructuredLogger(log)})
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("bench %s: connect to the embedded server: %w", what, err)
	}
	closers = append(closers, c.Close)
	deps := search.Deps{Bucket: b, Embedder: emb}
	ws, err := workers.Start(workers.Config{DataDir: tmp, Bucket: b, Search: deps}, c)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("bench %s: %w", what, err)
	}
	closers = append(closers, func() {
		for _, w := range ws {
			w.Stop()
		}
	})
	return &env{b: b, c: c, deps: deps, close: closeAll}, nil
}
