// Package evalrun evaluates retrieval on a benchmark file — function-level
// (swe-dev format) or commit-history (commits-dev format) — and summarises
// the per-instance metrics as a report.ResultSet.
package evalrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/locus-dev/locus/eval/funceval"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/eval/commitrun"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/eval/report"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/jobs"
	"go.temporal.io/sdk/client"
)

// FunctionKs are the cutoffs of function-level reports.
var FunctionKs = []int{1, 3, 5, 10, 20, 50}

// CommitKs are the commit-history benchmark's cutoffs (the seed paper's).
var CommitKs = []int{1, 5, 10, 20, 100, 1000}

// Commit-history methods, in report order.
const (
	MethodMessages = "bm25-messages"
	MethodFiles    = "bm25-files"
	MethodRRF      = "rrf"
	// MethodHybrid: file BM25 fused with repository memory (commitrun.HybridWeights).
	MethodHybrid = "hybrid"
	// MethodLearned: the learned file ranker's order of hybrid's
	// candidates (commitrun.LearnedFiles).
	MethodLearned = "learned"
)

// Kinds of benchmark.
const (
	KindFunctions = "functions"
	KindCommits   = "commits"
)

// Options configures Run.
type Options struct {
	BenchFile string
	Bucket    *blob.Bucket
	// Client runs function-level rankings through the workflows (workers
	// for its queues must be running); commit-history runs need none.
	Client client.Client
	// Backends name the workers' embedder, LLM, vector index and query
	// instruction (part of the run ids); Embedder is the embedder's name
	// for the report.
	Backends []string
	Embedder string
	// Watch shows a started ranking backlog's progress; may be nil.
	Watch func(ctx context.Context, s jobs.Started) (stop func(ok bool))
	// Resolve maps owner/name to the git directory of its clone.
	Resolve func(repo string) (string, error)
	Methods []string // function-level methods; default sr, der, spisr, spider
	Repos   []string // only these repositories (owner/name); empty: all
	Limit   int      // at most this many instances; 0: all
	// Query holds what every function-level query shares (tests, the
	// hybrid weights, the rerank, ...; see search.Params); Method and K
	// are set per ranking. Zero values: defaults.
	Query search.Params
	Seed  uint64 // bootstrap seed
	// Baselines are the function-level methods every other is compared
	// with (paired bootstrap); default sr.
	Baselines []string
	// Log receives progress lines; may be nil.
	Log func(format string, args ...any)
	// MaxBlobSize is the index's schema.IndexOptions.MaxBlobSize.
	MaxBlobSize int64
	// FileModel is the learned file ranker of commit benchmarks
	// (commitrun.LoadModel; "" the shipped one, none when the build ships
	// none).
	FileModel string
}

// baselines are o.Baselines, default sr.
func (o Options) baselines() []string {
	if len(o.Baselines) == 0 {
		return []string{search.MethodSR}
	}
	return o.Baselines
}

// Result is a summarised run.
type Result struct {
	Kind    string            `json:"kind"` // KindFunctions or KindCommits
	Set     *report.ResultSet `json:"-"`
	Skipped []funceval.Skip   `json:"skipped"`
}

// DefaultMethods are the function-level methods Run uses when none are given.
var DefaultMethods = search.Methods

// Run evaluates the benchmark in o.BenchFile, telling its format by its
// first record.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.BenchFile == "" || o.Bucket == nil || o.Resolve == nil {
		return nil, fmt.Errorf("eval: a benchmark file, a bucket and a repository resolver are required")
	}
	commits, err := IsCommitBench(o.BenchFile)
	if err != nil {
		return nil, err
	}
	if commits {
		return runCommits(ctx, o)
	}
	return runFunctions(ctx, o)
}

// IsCommitBench tells a commits-dev file from a swe-dev one by its first
// record (dataset.IsCommitFile).
func IsCommitBench(path string) (bool, error) { return dataset.IsCommitFile(path) }

// DefaultOutDir is where a report goes when no directory is given:
// <dataDir>/eval/<benchmark file name without .jsonl>.
func DefaultOutDir(dataDir, benchFile string) string {
	return filepath.Join(dataDir, "eval", strings.TrimSuffix(filepath.Base(benchFile), ".jsonl"))
}

// Resolver resolves owner/name to a git directory: an explicit path
// (keys lower-case owner/name, values a working copy or git directory)
// wins, then a clone under root in one of dataset.RepoLayouts.
func Resolver(root string, paths map[string]string) func(string) (string, error) {
	return func(repo string) (string, error) {
		if p, ok := paths[strings.ToLower(repo)]; ok {
			d, err := gitrepo.GitDir(p)
			if err != nil {
				return "", fmt.Errorf("repository %s: %w", repo, err)
			}
			return d, nil
		}
		if root == "" {
			return "", fmt.Errorf("repository %s: no path given for it and no repository folder", repo)
		}
		return dataset.RepoDir(root, repo)
	}
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

func runFunctions(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if o.Client == nil {
		return nil, fmt.Errorf("eval %s: function-level rankings run as workflows: a Temporal client is required", o.BenchFile)
	}
	insts, err := dataset.LoadSWE(o.BenchFile)
	if err != nil {
		return nil, err
	}
	insts = dataset.Filter{Repos: o.Repos, Limit: o.Limit}.SWE(insts)
	methods := o.Methods
	if len(methods) == 0 {
		methods = DefaultMethods
	}
	runner := &funceval.Runner{Bucket: o.Bucket, Client: o.Client, Backends: o.Backends, RepoDir: o.Resolve,
		Methods: methods, K: FunctionKs[len(FunctionKs)-1], Query: o.Query, Watch: o.Watch, Log: o.Log, MaxBlobSize: o.MaxBlobSize}
	var fi []funceval.Instance
	spans := map[string]map[string][]string{}
	for _, in := range insts {
		fi = append(fi, funceval.Instance{ID: in.InstanceID, Repo: in.Repo, Language: in.Language, BaseCommit: in.BaseCommit,
			Issue: in.ProblemStatement, Patch: in.Patch, GoldSpans: in.GoldSpans})
		spans[in.InstanceID] = in.GoldSpans
	}
	results, skips, err := runner.Run(ctx, fi)
	if err != nil {
		return nil, fmt.Errorf("eval %s: %w", o.BenchFile, err)
	}
	var recs []report.Instance
	evaluated := map[string]bool{}
	agree, withSpans := 0, 0
	for _, r := range results {
		for _, lvl := range []struct {
			name         string
			gold, ranked []string
		}{{"function", r.Gold, r.Ranked}, {"file", r.GoldFile, r.Files}} {
			vals, err := metrics.Compute(lvl.ranked, lvl.gold, FunctionKs)
			if err != nil {
				return nil, fmt.Errorf("eval %s: instance %s, method %s: %w", o.BenchFile, r.Instance, r.Method, err)
			}
			recs = append(recs, report.Instance{ID: r.Instance, Method: r.Method, Group: r.Language, Level: lvl.name,
				Gold: lvl.gold, Ranked: lvl.ranked, Values: vals})
		}
		if evaluated[r.Instance] {
			continue
		}
		evaluated[r.Instance] = true
		if sp := spans[r.Instance]; len(sp) > 0 {
			withSpans++
			if sameFunctions(r.Gold, sp) {
				agree++
			}
		}
	}
	if len(recs) == 0 {
		// Say why: every instance failed or was skipped, often for one
		// reason (an index built with another embedder, a missing clone).
		why := ""
		if len(skips) > 0 {
			why = fmt.Sprintf("; the first, %s: %s", skips[0].Instance, skips[0].Reason)
		}
		return nil, fmt.Errorf("eval %s: no instance could be evaluated (%d failed or skipped%s)", o.BenchFile, len(skips), why)
	}
	rs, err := report.Build(recs, report.BuildOptions{Benchmark: filepath.Base(o.BenchFile), Methods: methods,
		Levels: []string{"function", "file"}, Metrics: []string{metrics.Recall, metrics.Acc, metrics.Precision, metrics.NDCG},
		Ks: FunctionKs, Uncut: []string{metrics.MRR, metrics.MAP}, Baselines: o.baselines(), Bootstrap: metrics.DefaultBootstrap(o.Seed)})
	if err != nil {
		return nil, fmt.Errorf("eval %s: %w", o.BenchFile, err)
	}
	embedder, selector := o.Embedder, "none"
	if embedder == "" {
		embedder = "unnamed"
	}
	var tokensIn, tokensOut int
	for _, r := range results {
		if r.Selector != "" {
			selector = r.Selector
		}
		tokensIn += r.TokensIn
		tokensOut += r.TokensOut
	}
	failed := Failed(skips)
	rs.Notes = append(rs.Notes,
		fmt.Sprintf("embedder: %s; selector: %s (%d prompt and %d completion tokens); ranked through the LocalizeBacklog workflow, one run per method", embedder, selector, tokensIn, tokensOut),
		fmt.Sprintf("%d instances evaluated, %d skipped, %d failed (failed instances are not in the figures); every gold function from the patch is in gold_spans on %d of %d instances that have them", len(evaluated), len(skips)-failed, failed, agree, withSpans),
		fmt.Sprintf("run time %s", time.Since(start).Round(time.Second)))
	for _, s := range skips {
		what := "skipped "
		if s.Failed {
			what = "FAILED "
		}
		rs.Notes = append(rs.Notes, what+s.Instance+": "+s.Reason)
	}
	return &Result{Kind: KindFunctions, Set: rs, Skipped: skips}, nil
}

// Failed counts the skips that are failures (funceval.Skip.Failed).
func Failed(skips []funceval.Skip) int {
	n := 0
	for _, s := range skips {
		if s.Failed {
			n++
		}
	}
	return n
}

// sameFunctions reports whether every gold function id is among the
// gold_spans' function names (file:name).
func sameFunctions(gold []string, spans map[string][]string) bool {
	want := map[string]bool{}
	for f, names := range spans {
		for _, n := range names {
			want[f+":"+n] = true
		}
	}
	for _, g := range gold {
		if !want[g] {
			return false
		}
	}
	return true
}

func runCommits(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	qs, err := dataset.LoadCommits(o.BenchFile)
	if err != nil {
		return nil, err
	}
	qs = dataset.Filter{Repos: o.Repos, Limit: o.Limit}.Commits(qs)
	byRepo := map[string][]dataset.CommitQuery{}
	for _, q := range qs {
		byRepo[q.Repo] = append(byRepo[q.Repo], q)
	}
	var recs []report.Instance
	var notes []string
	var skipped []funceval.Skip
	methods := []string{MethodMessages, MethodFiles, MethodRRF, MethodHybrid}
	model, err := commitrun.LoadModel(o.FileModel)
	switch {
	case err == nil:
		methods = append(methods, MethodLearned)
		notes = append(notes, fmt.Sprintf("%s: LambdaMART over the five rankings hybrid fuses, reordering its first %d files (model %s, trained on %d queries of %d repositories)",
			MethodLearned, commitrun.LearnedCandidates, model.Name, model.File.Trained.Queries, len(model.File.Trained.Repos)))
	case o.FileModel == "" && errors.Is(err, rank.ErrNoDefault):
		model = nil
	default:
		return nil, fmt.Errorf("eval %s: %w", o.BenchFile, err)
	}
	for _, repo := range dataset.CommitRepos(qs) {
		gitDir, err := o.Resolve(repo)
		if err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: %v", repo, err))
			for _, q := range byRepo[repo] {
				skipped = append(skipped, funceval.Skip{Instance: q.QueryID, Reason: err.Error()})
			}
			continue
		}
		t0 := time.Now()
		res, skips, err := commitrun.RunWith(ctx, o.Bucket, gitDir, repo, byRepo[repo], commitrun.RunOptions{Model: model})
		if err != nil {
			return nil, fmt.Errorf("eval %s: %s: %w", o.BenchFile, repo, err)
		}
		o.logf("%s: %d queries in %s, %d skipped", repo, len(res), time.Since(t0).Round(time.Second), len(skips))
		notes = append(notes, fmt.Sprintf("%s: %d queries in %s, %d skipped", repo, len(res), time.Since(t0).Round(time.Second), len(skips)))
		for _, s := range skips {
			notes = append(notes, "skipped "+s.Query+": "+s.Reason)
			skipped = append(skipped, funceval.Skip{Instance: s.Query, Reason: s.Reason})
		}
		for _, r := range res {
			for _, m := range []struct {
				name   string
				ranked []string
			}{{MethodMessages, r.Ranked}, {MethodFiles, r.Files}, {MethodRRF, r.Fused}, {MethodHybrid, r.Hybrid}, {MethodLearned, r.Learned}} {
				if m.name == MethodLearned && model == nil {
					continue
				}
				vals, err := metrics.Compute(m.ranked, r.Gold, CommitKs)
				if err != nil {
					notes = append(notes, "excluded "+r.Query+": "+err.Error())
					break
				}
				recs = append(recs, report.Instance{ID: r.Query, Method: m.name, Group: repo, Level: "file", Gold: r.Gold, Ranked: m.ranked, Values: vals})
			}
		}
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("eval %s: no query could be evaluated: %s", o.BenchFile, strings.Join(notes, "; "))
	}
	rs, err := report.Build(recs, report.BuildOptions{Benchmark: filepath.Base(o.BenchFile), Methods: methods,
		Baselines: []string{MethodMessages, MethodHybrid},
		Levels:    []string{"file"}, Metrics: []string{metrics.Recall, metrics.Precision}, Ks: CommitKs,
		Uncut: []string{metrics.MRR, metrics.MAP}, Bootstrap: metrics.DefaultBootstrap(o.Seed)})
	if err != nil {
		return nil, fmt.Errorf("eval %s: %w", o.BenchFile, err)
	}
	rs.Notes = append([]string{MethodMessages + ": BM25 (k1=0.9, b=0.4) over commit messages older than the query, each file scored by its best commit (maxp), files that exist at the query commit's first parent",
		MethodFiles + ": BM25 (k1=1.2, b=0.75) over path and content of the files at that state (binary files and files over 1 MiB left out); " + MethodRRF + ": reciprocal-rank fusion (k=60) of the two",
		fmt.Sprintf("%s: score fusion (each ranking divided by its best) of %s (weight %v), %s (%v), votes of the 100 best older commits decayed by age and size (%v), BM25 over each file's older commit messages (%v) and BM25 over paths (%v)",
			MethodHybrid, MethodFiles, commitrun.HybridWeights.Files, MethodMessages, commitrun.HybridWeights.MaxP, commitrun.HybridWeights.Votes, commitrun.HybridWeights.Docs, commitrun.HybridWeights.Paths),
		fmt.Sprintf("run time %s", time.Since(start).Round(time.Second))}, notes...)
	return &Result{Kind: KindCommits, Set: rs, Skipped: skipped}, nil
}

// Mean is the mean of one cell of rs (0 when absent): method, group,
// level, metric and cutoff (0: uncut).
func Mean(rs *report.ResultSet, method, group, level, metric string, k int) float64 {
	for _, c := range rs.Cells {
		if c.Method == method && c.Group == group && c.Level == level && c.Metric == metric && c.K == k {
			return c.Mean
		}
	}
	return 0
}
