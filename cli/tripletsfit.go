package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
)

// runTripletsFit fits the hybrid method's fusion weights on the records of
// an output directory's run and writes fit.json, fit.md and a plot there.
func runTripletsFit(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("triplets fit", &g)
	sample := fs.Int("sample", fit.DefaultSample, "records ranked per repository, spread evenly over its history")
	k := fs.Int("k", fit.DefaultK, "cut-off of the recall the weights are fitted for")
	gridFlag := fs.String("grid", joinFloats(fit.DefaultGrid), "weights tried for memory and for hotspots, comma-separated")
	minWords := fs.Int("min-words", 0, "leave out queries of fewer words (issues are long, most commit subjects short)")
	memoryGap := fs.Duration("memory-gap", fit.DefaultMemoryGap, "take each query's memory this much before its parent commit, along first parents (a commit's parent may hold its pull request's other commits, an issue's never does)")
	jobs := fs.Int("jobs", 2, "repositories ranked at once")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus triplets fit [flags] DIR\n\n"+
			"Fits the hybrid method's fusion weights (memory, hotspots) on the records of the run DIR came from:\n"+
			"each sampled query is ranked at its parent commit from the repository's clone and memory, and every\n"+
			"pair of weights is scored by the Recall@K of the fused ranking. Writes DIR/fit.json, fit.md, fit-recall.png.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	grid, gerr := parseFloats("grid", *gridFlag)
	if err := check(fs, intRange("sample", *sample, 1, -1), intRange("k", *k, 1, -1), intRange("jobs", *jobs, 1, 64), intRange("min-words", *minWords, 0, -1), gerr); err != nil {
		return err
	}
	dir, b, _, col, err := openTripletsRun(ctx, &g, fs, "triplets fit")
	if err != nil {
		return err
	}
	defer b.Close()
	byRepo := map[string][]triplets.Record{}
	for _, r := range col.Records {
		byRepo[r.Repo] = append(byRepo[r.Repo], r)
	}
	var repos []string
	for r := range byRepo {
		repos = append(repos, r)
	}
	slices.Sort(repos)
	opts := fit.Options{Sample: *sample, MinWords: *minWords, MemoryGap: *memoryGap}
	// Per repository: queries to rank (at most the sample until Prepare
	// says) and ranked.
	totals, dones := make([]atomic.Int64, len(repos)), make([]atomic.Int64, len(repos))
	for i, r := range repos {
		totals[i].Store(int64(min(len(byRepo[r]), *sample)))
	}
	var running atomic.Int64
	stopProgress := watchProgressOf(ctx, stderr, "queries", func(context.Context) (schema.FleetProgress, error) {
		var t, d int
		for i := range repos {
			t, d = t+int(totals[i].Load()), d+int(dones[i].Load())
		}
		run := int(running.Load())
		return schema.FleetProgress{Total: t, Done: d, Running: run, Pending: max(t-d-run, 0)}, nil
	}, time.Second, 10*time.Second)
	var mu sync.Mutex
	var queries []fit.Query
	stats := make([]fit.Stats, len(repos))
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(*jobs)
	for i, r := range repos {
		eg.Go(func() error {
			repo := schema.RepoName(r)
			gitDir, err := activities.ClonePath(workers.CloneDir(g.dataDir), repo)
			if err != nil {
				return err
			}
			running.Add(1)
			defer running.Add(-1)
			qs, st, err := fit.Prepare(gctx, fit.Config{Bucket: b, Repo: repo, GitDir: gitDir, Records: byRepo[r], Options: opts,
				Progress: func(d, t int) { dones[i].Store(int64(d)); totals[i].Store(int64(t)) }})
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			queries = append(queries, qs...)
			stats[i] = st
			return nil
		})
	}
	err = eg.Wait()
	stopProgress(err == nil)
	if err != nil {
		return err
	}
	slices.SortFunc(queries, func(a, b fit.Query) int { return strings.Compare(a.ID, b.ID) })
	res, err := fit.Fit(queries, grid, *k, search.Params{}.Weights())
	if err != nil {
		return err
	}
	files, err := fit.Report{Options: opts, Repos: stats, Result: res}.Write(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d queries: fitted memory %g, hotspot %g: Recall@%d %.3f, MRR %.3f (defaults %g, %g: %.3f, %.3f)\n",
		res.Queries, res.Best.Weights.Memory, res.Best.Weights.Hotspot, res.K, res.Best.Recall, res.Best.MRR,
		res.Given.Weights.Memory, res.Given.Weights.Hotspot, res.Given.Recall, res.Given.MRR)
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// parseFloats parses a comma-separated list of weights, each 0 or more.
func parseFloats(name, v string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || x < 0 || x != x || x > 1e6 {
			return nil, fmt.Errorf("--%s %q: want weights of 0 or more, comma-separated", name, v)
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out, nil
}

func joinFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}
