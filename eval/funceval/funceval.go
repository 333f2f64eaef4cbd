// Package funceval runs function-level localization benchmarks through the
// workflows users run (IndexFleet, LocalizeBacklog): it ranks every instance
// against its base commit with every method and derives the gold functions
// from the patch.
package funceval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// Instance is one benchmark task.
type Instance struct {
	ID         string
	Repo       string // owner/name
	Language   string
	BaseCommit string
	Issue      string
	Patch      string
	GoldSpans  map[string][]string
}

// Result is one instance under one method.
type Result struct {
	Instance string   `json:"instance"`
	Repo     string   `json:"repo"`
	Language string   `json:"language"`
	Method   string   `json:"method"`
	Gold     []string `json:"gold"`       // function ids
	Ranked   []string `json:"ranked"`     // function ids, best first
	GoldFile []string `json:"gold_files"` // files of the gold functions
	Files    []string `json:"files"`      // files of Ranked, first occurrence order
	Selector string   `json:"selector,omitempty"`
	// Selector tokens spent on the instance (prompt, completion).
	TokensIn  int `json:"tokens_in,omitempty"`
	TokensOut int `json:"tokens_out,omitempty"`
}

// Skip records an instance that could not be evaluated.
type Skip struct {
	Instance string `json:"instance"`
	Reason   string `json:"reason"`
	// Failed marks an instance that should have been evaluated but could
	// not be (its repository failed to index, its ranking failed, its
	// patch did not parse), as against one the protocol excludes (an
	// unsupported language, no function-level edit). The figures leave
	// both out; a failure makes the eval fail.
	Failed bool `json:"failed,omitempty"`
}

// Runner evaluates instances through the same workflows users run: it
// indexes each repository with IndexFleet, ranks every instance with one
// LocalizeBacklog per method (an instance's base commit gets a snapshot,
// built once and cached), and derives the gold functions from the patch
// against that snapshot's code graph.
type Runner struct {
	Bucket *blob.Bucket
	// Client runs the workflows; workers for its queues must be running.
	Client client.Client
	// Backends name the embedder, LLM, vector index and query instruction
	// the workers use (part of the run ids, see jobs.Backlog).
	Backends []string
	// RepoDir resolves "owner/name" to a git directory.
	RepoDir func(repo string) (string, error)
	// Methods to run; default sr, der, spisr, spider.
	Methods []string
	// K is the list length every method produces; default 50.
	K int
	// Query holds what every method's queries share (N, C, Depth, tests,
	// the hybrid weights, the rerank, ...); Method and K are set per
	// ranking. Zero values: defaults.
	Query search.Params
	// PrimaryLanguageOnly builds graphs of the main language only.
	PrimaryLanguageOnly bool
	// MaxBlobSize clones without blobs over this many bytes (see
	// schema.IndexOptions.MaxBlobSize); 0: every blob.
	MaxBlobSize int64
	// Watch shows a started backlog's progress until stop is called; may be nil.
	Watch func(ctx context.Context, s jobs.Started) (stop func(ok bool))
	// Log receives progress lines; may be nil.
	Log func(format string, args ...any)
}

// Run evaluates the instances; instances that cannot run are skipped with
// a reason (an unsupported language, a repository that is not there or
// fails to index, a base commit not in it, a patch without a function-level
// edit). Results are instance by instance, methods in order.
func (r *Runner) Run(ctx context.Context, instances []Instance) ([]Result, []Skip, error) {
	if r.Bucket == nil || r.Client == nil || r.RepoDir == nil {
		return nil, nil, errors.New("funceval: a bucket, a Temporal client and a repository resolver are required")
	}
	if len(r.Methods) == 0 {
		r.Methods = search.Methods
	}
	if r.K <= 0 {
		r.K = 50
	}
	skipped := map[string]string{}
	var skips []Skip
	add := func(id, reason string, failed bool) {
		if _, done := skipped[id]; !done {
			skipped[id] = reason
			skips = append(skips, Skip{Instance: id, Reason: reason, Failed: failed})
		}
	}
	skip := func(id, reason string) { add(id, reason, false) }
	fail := func(id, reason string) { add(id, reason, true) }
	names, err := r.index(ctx, instances, skip, fail)
	if err != nil {
		return nil, nil, err
	}
	var issues []schema.BacklogIssue
	for _, in := range instances {
		if _, ok := skipped[in.ID]; !ok {
			issues = append(issues, schema.BacklogIssue{ID: in.ID, Repo: names[in.Repo], BaseCommit: in.BaseCommit, Text: in.Issue, Source: "instance " + in.ID})
		}
	}
	ranked := map[string]map[string]schema.BacklogIssueResult{} // method → instance → result
	if len(issues) > 0 {
		for _, method := range r.Methods {
			q := r.Query
			q.Method, q.K = method, r.K
			res, err := r.rank(ctx, q, issues)
			if err != nil {
				return nil, nil, err
			}
			ranked[method] = res
		}
	}
	graphs := map[string]*codegraph.Graph{}
	var out []Result
	for _, in := range instances {
		if _, ok := skipped[in.ID]; ok {
			continue
		}
		first := ranked[r.Methods[0]][in.ID]
		if first.Error != "" {
			fail(in.ID, first.Error)
			continue
		}
		g, err := r.graphAt(ctx, names[in.Repo], in.BaseCommit, graphs)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.ID, err)
		}
		gold, err := dataset.GoldFromPatch(g, in.Patch)
		if err != nil {
			fail(in.ID, "patch: "+err.Error())
			continue
		}
		if len(gold) == 0 {
			skip(in.ID, dataset.NoGoldReason(g, in.Patch))
			continue
		}
		goldFiles := filesOf(gold)
		for _, method := range r.Methods {
			res := ranked[method][in.ID]
			if res.Error != "" {
				return nil, nil, fmt.Errorf("%s %s: %s", in.ID, method, res.Error)
			}
			ids := make([]string, len(res.Items))
			for j, it := range res.Items {
				ids[j] = it.FunctionID
			}
			out = append(out, Result{Instance: in.ID, Repo: in.Repo, Language: in.Language, Method: method, Gold: gold,
				Ranked: ids, GoldFile: goldFiles, Files: filesOf(ids), Selector: res.Selector,
				TokensIn: res.TokensIn, TokensOut: res.TokensOut})
		}
		r.logf("%s: %d gold functions", in.ID, len(gold))
	}
	return out, skips, nil
}

// index indexes the repositories of the instances as `locus index` would
// (one IndexFleet; an indexed repository only catches up) and returns their
// store names. Instances of an unsupported language are skipped; those of a
// repository that cannot be found or indexed fail.
func (r *Runner) index(ctx context.Context, instances []Instance, skip, fail func(id, reason string)) (map[string]schema.RepoName, error) {
	names := map[string]schema.RepoName{}
	failed := map[string]string{}
	var specs []schema.RepoSpec
	for _, in := range instances {
		if !supported(in.Language) {
			skip(in.ID, fmt.Sprintf("unsupported language %s: locus builds no code graph for it yet", in.Language))
			continue
		}
		if _, ok := names[in.Repo]; ok {
			continue
		}
		if _, ok := failed[in.Repo]; ok {
			continue
		}
		dir, err := r.RepoDir(in.Repo)
		if err == nil {
			var s schema.RepoSpec
			if s, err = gitrepo.ResolveSpec(in.Repo + "=" + dir); err == nil {
				names[in.Repo] = s.Name
				specs = append(specs, s)
				continue
			}
		}
		failed[in.Repo] = err.Error()
	}
	if len(specs) > 0 {
		in := schema.IndexFleetInput{Repos: specs, Options: schema.FleetOptions{Index: schema.IndexOptions{PrimaryLanguageOnly: r.PrimaryLanguageOnly, MaxBlobSize: r.MaxBlobSize}}}
		start := time.Now()
		run, err := jobs.StartFleet(ctx, r.Client, r.Bucket, jobs.FleetID(in), in)
		if err != nil {
			return nil, err
		}
		var res workflows.FleetResult
		if err := run.Get(ctx, &res); err != nil {
			return nil, fmt.Errorf("index %d repositories: %w", len(specs), err)
		}
		fs, err := jobs.FleetSummary(ctx, r.Bucket, res)
		if err != nil {
			return nil, err
		}
		for _, rr := range fs.Results {
			if !rr.OK {
				for repo, name := range names {
					if name == rr.Repo {
						failed[repo] = "index: " + rr.Error
						delete(names, repo)
					}
				}
			}
		}
		r.logf("indexed %d repositories (%d failed) in %s", fs.Done, fs.Failed, time.Since(start).Round(time.Millisecond))
	}
	for _, in := range instances {
		if why, ok := failed[in.Repo]; ok {
			fail(in.ID, why)
		}
	}
	return names, nil
}

// rank runs one backlog of every issue under one method and returns its
// results by issue id.
func (r *Runner) rank(ctx context.Context, q search.Params, issues []schema.BacklogIssue) (map[string]schema.BacklogIssueResult, error) {
	method := q.Method
	start := time.Now()
	s, err := jobs.StartBacklog(ctx, r.Client, r.Bucket, jobs.Backlog{Prefix: "eval-" + method, Rerun: true, Issues: issues,
		Params: q, Backends: r.Backends})
	if err != nil {
		return nil, err
	}
	stop := func(bool) {}
	if r.Watch != nil {
		stop = r.Watch(ctx, s)
	}
	res, err := jobs.Wait(ctx, s)
	stop(err == nil)
	if err != nil {
		return nil, fmt.Errorf("rank with %s: %w", method, err)
	}
	rs, err := jobs.Results(ctx, r.Bucket, res)
	if err != nil {
		return nil, err
	}
	out := make(map[string]schema.BacklogIssueResult, len(rs))
	for _, x := range rs {
		out[x.IssueID] = x
	}
	for _, is := range issues {
		if _, ok := out[is.ID]; !ok {
			return nil, fmt.Errorf("rank with %s: backlog %s has no result for %s", method, res.Run, is.ID)
		}
	}
	r.logf("%s: %d issues ranked in %s (backlog %s, %d failed)", method, len(issues), time.Since(start).Round(time.Millisecond), res.Run, res.Failed)
	return out, nil
}

// graphAt reads the code graph the ranking used: the indexed head's when
// commit is the head, else the snapshot's of commit.
func (r *Runner) graphAt(ctx context.Context, repo schema.RepoName, commit string, cache map[string]*codegraph.Graph) (*codegraph.Graph, error) {
	key := string(repo) + "@" + commit
	if g, ok := cache[key]; ok {
		return g, nil
	}
	m, err := manifest.Read(ctx, r.Bucket, repo)
	if err != nil {
		return nil, err
	}
	var info schema.GraphInfo
	if m != nil && m.Graph != nil && strings.HasPrefix(m.Graph.Commit, strings.ToLower(commit)) {
		info = *m.Graph
	} else {
		snap, err := search.ReadSnapshot(ctx, r.Bucket, repo, strings.ToLower(commit))
		if err != nil {
			return nil, err
		}
		if snap == nil {
			return nil, fmt.Errorf("no snapshot of %s at %s after ranking it", repo, commit)
		}
		info = snap.Graph
	}
	g, err := graphstore.Read(ctx, r.Bucket, info)
	if err != nil {
		return nil, fmt.Errorf("graph of %s@%s: %w", repo, commit, err)
	}
	cache[key] = g
	return g, nil
}

// supported reports whether locus builds code graphs of a benchmark
// language ("" is taken as supported: the repository decides).
func supported(language string) bool {
	if language == "" {
		return true
	}
	for _, l := range codegraph.Languages() {
		if strings.EqualFold(l.Name(), language) {
			return true
		}
	}
	return false
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		r.Log(format, args...)
	}
}

// filesOf lists the files of entity ids, first occurrence order.
func filesOf(ids []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		f, _ := codegraph.SplitID(id)
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
