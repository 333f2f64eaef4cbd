package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/eval/evalrun"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/eval/report"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/internal/webpage"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/workers"
)

func runEval(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("eval", &g)
	workerFlags(fs, &g)
	benchFile := fs.String("bench", "", "benchmark file (JSON Lines): the swe-dev.jsonl or commits-dev.jsonl format")
	repoDir := fs.String("repo-dir", "", "folder holding bare clones (owner+name/repo, owner/name.git, name.git, …)")
	out := fs.String("out", "", "report directory; default <data-dir>/eval/<benchmark name>")
	methods := fs.String("methods", strings.Join(evalrun.DefaultMethods, ","), "methods, comma-separated (function-level benchmarks)")
	repos := fs.String("repos", "", "only these repositories (owner/name, comma-separated)")
	limit := fs.Int("limit", 0, "evaluate at most this many instances")
	includeTests := fs.Bool("include-tests", false, "rank test functions too (function-level benchmarks; by default tests are left out)")
	hotspotWeight := fs.Float64("hotspot-weight", search.DefaultHotspotWeight, "hybrid: weight of how often and how recently past commits changed each BM25-ranked function")
	memoryWeight := fs.Float64("memory-weight", search.DefaultMemoryWeight, "hybrid: weight of repository memory against the code's BM25 (1) in the fusion")
	rerank := fs.Int("rerank", 0, "function-level benchmarks: an LLM (--llm) reorders the first N functions of each result; 0: no rerank")
	coChange := fs.Int("co-change-cost", 0, "hybrid: hop cost of edges to the functions past commits changed together with a function (0: none, the default; measured in docs/results.md)")
	denseWeight := fs.Float64("dense-weight", 0, "hybrid: weight of the embedder's ranking in the fusion (0: 1 with a model embedder, none with the lexical one; negative: none)")
	model := modelFlag(fs)
	fileModel := fs.String("file-model", "", "commits benchmarks: the learned file ranker (locus rank train-files writes one; default: the one shipped with locus, if any)")
	crossEnc := crossEncoderFlag(fs)
	baselines := fs.String("baselines", search.MethodSR, "function-level methods every other is compared with, paired (comma-separated)")
	seed := fs.Uint64("seed", 1, "bootstrap seed")
	maxBlob := fs.Int("max-blob-size", 0, maxBlobSizeUsage)
	paths := repoPaths{}
	fs.Var(paths, "repo-path", "owner/name=DIR: where one repository's clone is (repeatable; wins over --repo-dir)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if strings.Contains(","+*methods+",", ","+search.MethodLearned+",") {
		if err := check(fs, checkModel(search.MethodLearned, model)); err != nil {
			return err
		}
	}
	if err := check(fs, checkCrossEncoder(strings.Split(*methods, ","), crossEnc)); err != nil {
		return err
	}
	g.logger()
	if *benchFile == "" || *repoDir == "" && len(paths) == 0 {
		return exitError{code: 2, msg: "eval needs --bench FILE and --repo-dir DIR (or --repo-path owner/name=DIR)"}
	}
	start := time.Now()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	o := evalrun.Options{BenchFile: *benchFile, Bucket: b, Resolve: evalrun.Resolver(*repoDir, paths),
		Methods: strings.Split(*methods, ","), Limit: *limit, Seed: *seed, Query: search.Params{IncludeTests: *includeTests, MemoryWeight: *memoryWeight,
			HotspotWeight: *hotspotWeight, DenseWeight: *denseWeight, Rerank: *rerank, CoChangeCost: *coChange, Model: *model, CrossEncoder: *crossEnc},
		Log: func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }, MaxBlobSize: int64(*maxBlob), FileModel: *fileModel}
	o.Baselines = strings.Split(*baselines, ",")
	if *repos != "" {
		o.Repos = strings.Split(*repos, ",")
	}
	if commits, err := evalrun.IsCommitBench(*benchFile); err != nil {
		return err
	} else if !commits {
		// Function-level rankings run through the workflows users run:
		// IndexFleet, then a LocalizeBacklog per method.
		if err := check(fs, g.checkWorkerFlags(), g.checkRerank(*rerank, false), intRange("co-change-cost", *coChange, 0, 255), intRange("max-blob-size", *maxBlob, 0, -1)); err != nil {
			return err
		}
		c, closeAll, err := g.connectWorking(ctx, g.logger(), b, true, func(wc *workers.Config) { o.Embedder = wc.Search.Embedder.Name() })
		if err != nil {
			return err
		}
		defer closeAll()
		o.Client, o.Backends = c, g.backends()
		o.Watch = func(ctx context.Context, s jobs.Started) func(bool) {
			g.printWorkflowLink(s.ID)
			return watchBacklog(ctx, c, s, "instances")
		}
	}
	res, err := evalrun.Run(ctx, o)
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = evalrun.DefaultOutDir(g.dataDir, *benchFile)
	}
	files, err := report.WriteDir(dir, res.Set)
	if err != nil {
		return err
	}
	if err := writeOutFile(dir, "report.html", func(f *os.File) error { return webpage.WriteEval(f, res.Set) }); err != nil {
		return err
	}
	files = append(files, filepath.Join(dir, "report.html"))
	failed := evalrun.Failed(res.Skipped)
	if g.json {
		if err := printJSON(map[string]any{"kind": res.Kind, "files": files, "skipped": res.Skipped, "failed": failed}); err != nil {
			return err
		}
		return evalFailed(failed, dir)
	}
	rs := res.Set
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if res.Kind == evalrun.KindCommits {
		fmt.Fprintln(tw, "REPO\tMETHOD\tMAP\tMRR\tP@1\tR@10\tR@100\tR@1000")
		for _, grp := range rs.Groups {
			for _, m := range rs.Methods {
				v := func(metric string, k int) float64 { return evalrun.Mean(rs, m, grp, "file", metric, k) }
				fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", grp, m, v(metrics.MAP, 0), v(metrics.MRR, 0), v(metrics.Precision, 1),
					v(metrics.Recall, 10), v(metrics.Recall, 100), v(metrics.Recall, 1000))
			}
		}
	} else {
		fmt.Fprintln(tw, "METHOD\tRecall@20\tAcc@20\tMRR\t(function level, all instances)")
		for _, m := range rs.Methods {
			v := func(metric string, k int) float64 { return evalrun.Mean(rs, m, report.GroupAll, "function", metric, k) }
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\n", m, v(metrics.Recall, 20), v(metrics.Acc, 20), v(metrics.MRR, 0))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%d files), %d skipped, %d failed, %s\n", dir, len(files), len(res.Skipped)-failed, failed, time.Since(start).Round(time.Second))
	for _, s := range res.Skipped {
		if s.Failed {
			fmt.Fprintf(stderr, "failed: %s: %s\n", termtext.Escape(s.Instance), termtext.Escape(s.Reason))
		}
	}
	return evalFailed(failed, dir)
}

// evalFailed is the eval's exit: instances that should have been evaluated
// and were not make the figures cover fewer instances than asked for, so
// the command fails (after writing the report, which lists them).
func evalFailed(failed int, dir string) error {
	if failed == 0 {
		return nil
	}
	return exitError{code: 1, msg: fmt.Sprintf("%d instances failed and are not in the figures (report: %s)", failed, dir)}
}

// repoPaths collects --repo-path owner/name=DIR flags.
type repoPaths map[string]string

func (r repoPaths) String() string { return fmt.Sprint(map[string]string(r)) }

func (r repoPaths) Set(v string) error {
	name, dir, ok := strings.Cut(v, "=")
	if !ok || !strings.Contains(name, "/") || dir == "" {
		return fmt.Errorf("want owner/name=DIR, got %q", v)
	}
	r[strings.ToLower(name)] = dir
	return nil
}
