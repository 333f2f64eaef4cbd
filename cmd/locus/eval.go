package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/eval/bench"
	"github.com/locus-dev/locus/internal/eval/funceval"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/eval/report"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
)

// evalKs are the cutoffs every report uses.
var evalKs = []int{1, 3, 5, 10, 20, 50}

func runEval(ctx context.Context, args []string) error {
	var g globals
	fs := newFlags("eval", &g)
	workerFlags(fs, &g)
	benchFile := fs.String("bench", "", "benchmark file (JSON Lines): the swe-dev.jsonl or commits-dev.jsonl format")
	repoDir := fs.String("repo-dir", "", "folder holding bare clones (owner+name/repo, owner/name.git, name.git, …)")
	out := fs.String("out", "", "report directory; default <data-dir>/eval/<benchmark name>")
	methods := fs.String("methods", "sr,der,spisr,spider", "methods, comma-separated")
	repos := fs.String("repos", "", "only these repositories (owner/name, comma-separated)")
	limit := fs.Int("limit", 0, "evaluate at most this many instances")
	seed := fs.Uint64("seed", 1, "bootstrap seed")
	paths := repoPaths{}
	fs.Var(paths, "repo-path", "owner/name=DIR: where one repository's clone is (repeatable; wins over --repo-dir)")
	if err := parse(fs, args); err != nil {
		return err
	}
	g.logger()
	if *benchFile == "" || *repoDir == "" && len(paths) == 0 {
		return exitError{code: 2, msg: "eval needs --bench FILE and --repo-dir DIR (or --repo-path owner/name=DIR)"}
	}
	resolve := func(repo string) (string, error) {
		if p, ok := paths[strings.ToLower(repo)]; ok {
			return gitDirOf(p)
		}
		if *repoDir == "" {
			return "", fmt.Errorf("repository %s: no --repo-path for it and no --repo-dir", repo)
		}
		return bench.RepoDir(*repoDir, repo)
	}
	if commitsBench, err := isCommitBench(*benchFile); err != nil {
		return err
	} else if commitsBench {
		b, err := g.openStore(ctx)
		if err != nil {
			return err
		}
		defer b.Close()
		var rs []string
		if *repos != "" {
			rs = strings.Split(*repos, ",")
		}
		return evalCommits(ctx, &g, b, *benchFile, resolve, *out, rs, *limit, *seed)
	}
	insts, err := bench.LoadSWE(*benchFile)
	if err != nil {
		return err
	}
	f := bench.Filter{Limit: *limit}
	if *repos != "" {
		f.Repos = strings.Split(*repos, ",")
	}
	insts = f.SWE(insts)
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	e, err := embed.Open(ctx, g.embedder)
	if err != nil {
		return err
	}
	sel, err := llm.OpenSelector(g.llm, 0)
	if err != nil {
		return err
	}
	start := time.Now()
	runner := &funceval.Runner{Bucket: b, Deps: search.Deps{Bucket: b, Embedder: e, Selector: sel, QueryInstruction: g.queryInst},
		RepoDir: resolve,
		Methods: strings.Split(*methods, ","), K: evalKs[len(evalKs)-1],
		Log: func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }}
	var fi []funceval.Instance
	agree, withSpans := 0, 0
	for _, in := range insts {
		fi = append(fi, funceval.Instance{ID: in.InstanceID, Repo: in.Repo, Language: in.Language, BaseCommit: in.BaseCommit,
			Issue: in.ProblemStatement, Patch: in.Patch, GoldSpans: in.GoldSpans})
	}
	results, skips, err := runner.Run(ctx, fi)
	if err != nil {
		return err
	}
	// Per-instance records at function and file level.
	var recs []report.Instance
	spans := map[string]map[string][]string{}
	for _, in := range fi {
		spans[in.ID] = in.GoldSpans
	}
	seen := map[string]bool{}
	for _, r := range results {
		for _, lvl := range []struct {
			name         string
			gold, ranked []string
		}{{"function", r.Gold, r.Ranked}, {"file", r.GoldFile, r.Files}} {
			vals, err := metrics.Compute(lvl.ranked, lvl.gold, evalKs)
			if err != nil {
				return fmt.Errorf("%s %s: %w", r.Instance, r.Method, err)
			}
			recs = append(recs, report.Instance{ID: r.Instance, Method: r.Method, Group: r.Language, Level: lvl.name,
				Gold: lvl.gold, Ranked: lvl.ranked, Values: vals})
		}
		if sp := spans[r.Instance]; len(sp) > 0 && !seen[r.Instance] {
			seen[r.Instance] = true
			withSpans++
			if sameFunctions(r.Gold, sp) {
				agree++
			}
		}
	}
	if len(recs) == 0 {
		return fmt.Errorf("no instance could be evaluated (%d skipped)", len(skips))
	}
	rs, err := report.Build(recs, report.BuildOptions{Benchmark: filepath.Base(*benchFile), Methods: strings.Split(*methods, ","),
		Levels: []string{"function", "file"}, Metrics: []string{metrics.Recall, metrics.Acc, metrics.Precision, metrics.NDCG},
		Ks: evalKs, Uncut: []string{metrics.MRR, metrics.MAP}, Baseline: search.MethodSR, Bootstrap: metrics.DefaultBootstrap(*seed)})
	if err != nil {
		return err
	}
	rs.Notes = append(rs.Notes,
		fmt.Sprintf("embedder: %s; selector: %s", e.Name(), sel.Name()),
		fmt.Sprintf("%d instances evaluated, %d skipped; every gold function from the patch is in gold_spans on %d of %d instances that have them", len(seen)+countOthers(results, seen), len(skips), agree, withSpans),
		fmt.Sprintf("run time %s", time.Since(start).Round(time.Second)))
	for _, s := range skips {
		rs.Notes = append(rs.Notes, "skipped "+s.Instance+": "+s.Reason)
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(g.dataDir, "eval", strings.TrimSuffix(filepath.Base(*benchFile), ".jsonl"))
	}
	files, err := report.WriteDir(dir, rs)
	if err != nil {
		return err
	}
	if g.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"files": files, "skipped": skips})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METHOD\tRecall@20\tAcc@20\tMRR\t(function level, all instances)")
	for _, m := range rs.Methods {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\n", m, cell(rs, m, metrics.Recall, 20), cell(rs, m, metrics.Acc, 20), cell(rs, m, metrics.MRR, 0))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "report: %s (%d files), %d skipped, %s\n", dir, len(files), len(skips), time.Since(start).Round(time.Second))
	return nil
}

func cell(rs *report.ResultSet, method, metric string, k int) float64 {
	for _, c := range rs.Cells {
		if c.Method == method && c.Group == report.GroupAll && c.Level == "function" && c.Metric == metric && c.K == k {
			return c.Mean
		}
	}
	return 0
}

// sameFunctions compares gold function ids with gold_spans' function names.
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

func countOthers(results []funceval.Result, seen map[string]bool) int {
	other := map[string]bool{}
	for _, r := range results {
		if !seen[r.Instance] {
			other[r.Instance] = true
		}
	}
	return len(other)
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
