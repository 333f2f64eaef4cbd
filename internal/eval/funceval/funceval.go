// Package funceval runs function-level localization benchmarks: it indexes each
// (repository, base commit) once, derives gold functions from the patch, and
// ranks with every method.
package funceval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
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
	LLMCalls int      `json:"llm_calls,omitempty"`
	Seconds  float64  `json:"seconds"`
}

// Skip records an instance that could not be evaluated.
type Skip struct {
	Instance string `json:"instance"`
	Reason   string `json:"reason"`
}

// Runner evaluates instances against bare clones.
type Runner struct {
	Bucket *blob.Bucket
	Deps   search.Deps
	// RepoDir resolves "owner/name" to a git directory.
	RepoDir func(repo string) (string, error)
	// Methods to run; default sr, der, spisr, spider.
	Methods []string
	// K is the list length every method produces; default 50.
	K int
	// Params for the graph methods (N, C, Depth); zero values: defaults.
	Params spider.Params
	// PrimaryLanguageOnly builds graphs of the main language only.
	PrimaryLanguageOnly bool
	// Log receives progress lines; may be nil.
	Log func(format string, args ...any)
}

// evalRepo names the store namespace of one (repository, commit).
func evalRepo(repo, commit string) schema.RepoName {
	return schema.RepoName("eval/" + strings.ReplaceAll(strings.ToLower(repo), "/", "-") + "-" + commit[:min(12, len(commit))])
}

// ensureIndex builds (or reuses) the graph and search indexes at commit.
func (r *Runner) ensureIndex(ctx context.Context, repo, commit string) (schema.RepoName, *codegraph.Graph, error) {
	name := evalRepo(repo, commit)
	m, err := manifest.Read(ctx, r.Bucket, name)
	if err != nil {
		return "", nil, err
	}
	if m != nil && m.Graph != nil && m.Search != nil && m.Graph.Commit == commit && m.Search.Model == r.Deps.Embedder.Name() {
		g, err := codegraph.Read(ctx, r.Bucket, *m.Graph)
		return name, g, err
	}
	gitDir, err := r.RepoDir(repo)
	if err != nil {
		return "", nil, err
	}
	h, ok := gitrepo.ParseHash(commit)
	if !ok {
		return "", nil, fmt.Errorf("base commit %q is not a commit id", commit)
	}
	g, err := codegraph.BuildCommit(ctx, gitDir, "", h, codegraph.Options{PrimaryLanguageOnly: r.PrimaryLanguageOnly})
	if err != nil {
		return "", nil, fmt.Errorf("graph of %s@%s: %w", repo, commit, err)
	}
	info, err := codegraph.Write(ctx, r.Bucket, name, commit, g)
	if err != nil {
		return "", nil, err
	}
	ires, err := search.IndexRepo(ctx, r.Deps, name, info)
	if err != nil {
		return "", nil, err
	}
	si := &schema.SearchInfo{Commit: commit, Model: ires.Model, Functions: ires.Functions, Embedded: ires.Embedded, SparseKey: ires.SparseKey}
	if _, err := manifest.Publish(ctx, r.Bucket, manifest.Update{Repo: schema.RepoSpec{Name: name}, Graph: &info, Search: si, IndexedAt: time.Now()}); err != nil {
		return "", nil, err
	}
	return name, g, nil
}

// Run evaluates the instances; instances that cannot run are skipped with a reason.
func (r *Runner) Run(ctx context.Context, instances []Instance) ([]Result, []Skip, error) {
	if len(r.Methods) == 0 {
		r.Methods = []string{search.MethodSR, search.MethodDER, search.MethodSpISR, search.MethodSpIDER}
	}
	if r.K <= 0 {
		r.K = 50
	}
	if r.Deps.Bucket == nil {
		r.Deps.Bucket = r.Bucket
	}
	if r.Deps.Embedder == nil {
		r.Deps.Embedder = &embed.Lexical{}
	}
	var out []Result
	var skips []Skip
	for i, in := range instances {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		name, g, err := r.ensureIndex(ctx, in.Repo, in.BaseCommit)
		if err != nil {
			skips = append(skips, Skip{in.ID, err.Error()})
			r.logf("[%d/%d] %s: skipped: %v", i+1, len(instances), in.ID, err)
			continue
		}
		gold, err := codegraph.GoldFromPatch(g, in.Patch)
		if err != nil {
			skips = append(skips, Skip{in.ID, "patch: " + err.Error()})
			continue
		}
		if len(gold) == 0 {
			skips = append(skips, Skip{in.ID, "no function-level edit"})
			continue
		}
		goldFiles := filesOf(gold)
		for _, method := range r.Methods {
			start := time.Now()
			p := r.Params
			p.K = r.K
			res, err := search.Localize(ctx, r.Deps, name, in.Issue, search.Params{Method: method, Params: p})
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return nil, nil, err
				}
				return nil, nil, fmt.Errorf("%s %s: %w", in.ID, method, err)
			}
			ranked := make([]string, len(res.Items))
			for j, it := range res.Items {
				ranked[j] = it.ID
			}
			out = append(out, Result{Instance: in.ID, Repo: in.Repo, Language: in.Language, Method: method, Gold: gold,
				Ranked: ranked, GoldFile: goldFiles, Files: filesOf(ranked), Selector: res.Selector, LLMCalls: res.LLMCalls,
				Seconds: time.Since(start).Seconds()})
		}
		r.logf("[%d/%d] %s: %d gold functions", i+1, len(instances), in.ID, len(gold))
	}
	return out, skips, nil
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
		f, _, _ := strings.Cut(id, ":")
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

var errNoRepo = errors.New("repository not found under the repo dir")
