package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/eval/bench"
	"github.com/locus-dev/locus/internal/eval/commitrun"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/eval/report"
)

// commitKs are the seed paper's cutoffs.
var commitKs = []int{1, 5, 10, 20, 100, 1000}

// isCommitBench tells a commits-dev file from a swe-dev one by its first record.
func isCommitBench(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			return strings.Contains(l, `"query_id"`), nil
		}
	}
	return false, sc.Err()
}

// evalCommits runs the commit-history benchmark and writes its report.
func evalCommits(ctx context.Context, g *globals, b *blob.Bucket, benchFile string, resolve func(string) (string, error), out string, repos []string, limit int, seed uint64) error {
	start := time.Now()
	qs, err := bench.LoadCommits(benchFile)
	if err != nil {
		return err
	}
	qs = bench.Filter{Repos: repos, Limit: limit}.Commits(qs)
	byRepo := map[string][]bench.CommitQuery{}
	for _, q := range qs {
		byRepo[q.Repo] = append(byRepo[q.Repo], q)
	}
	var recs []report.Instance
	var notes []string
	for _, repo := range bench.CommitRepos(qs) {
		gitDir, err := resolve(repo)
		if err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: %v", repo, err))
			continue
		}
		t0 := time.Now()
		res, skips, err := commitrun.Run(ctx, b, gitDir, repo, byRepo[repo])
		if err != nil {
			return fmt.Errorf("%s: %w", repo, err)
		}
		notes = append(notes, fmt.Sprintf("%s: %d queries in %s, %d skipped", repo, len(res), time.Since(t0).Round(time.Second), len(skips)))
		for _, s := range skips {
			notes = append(notes, "skipped "+s.Query+": "+s.Reason)
		}
		for _, r := range res {
			for _, m := range []struct {
				name   string
				ranked []string
			}{{"bm25-messages", r.Ranked}, {"bm25-files", r.Files}, {"rrf", r.Fused}} {
				vals, err := metrics.Compute(m.ranked, r.Gold, commitKs)
				if err != nil {
					notes = append(notes, "excluded "+r.Query+": "+err.Error())
					break
				}
				recs = append(recs, report.Instance{ID: r.Query, Method: m.name, Group: repo, Level: "file", Gold: r.Gold, Ranked: m.ranked, Values: vals})
			}
		}
	}
	if len(recs) == 0 {
		return fmt.Errorf("no query could be evaluated: %v", notes)
	}
	rs, err := report.Build(recs, report.BuildOptions{Benchmark: filepath.Base(benchFile), Methods: []string{"bm25-messages", "bm25-files", "rrf"},
		Baseline: "bm25-messages",
		Levels:   []string{"file"}, Metrics: []string{metrics.Recall, metrics.Precision}, Ks: commitKs,
		Uncut: []string{metrics.MRR, metrics.MAP}, Bootstrap: metrics.DefaultBootstrap(seed)})
	if err != nil {
		return err
	}
	rs.Notes = append([]string{"bm25-messages: BM25 (k1=0.9, b=0.4) over commit messages older than the query, each file scored by its best commit (maxp), files that exist at the query commit's first parent",
		"bm25-files: BM25 (k1=1.2, b=0.75) over path and content of the files at that state (binary files and files over 1 MiB left out); rrf: reciprocal-rank fusion (k=60) of the two",
		fmt.Sprintf("run time %s", time.Since(start).Round(time.Second))}, notes...)
	if out == "" {
		out = filepath.Join(g.dataDir, "eval", strings.TrimSuffix(filepath.Base(benchFile), ".jsonl"))
	}
	files, err := report.WriteDir(out, rs)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tMETHOD\tMAP\tMRR\tP@1\tR@10\tR@100\tR@1000")
	for _, grp := range rs.Groups {
		for _, m := range rs.Methods {
			v := func(metric string, k int) float64 {
				for _, c := range rs.Cells {
					if c.Group == grp && c.Method == m && c.Metric == metric && c.K == k {
						return c.Mean
					}
				}
				return 0
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", grp, m, v(metrics.MAP, 0), v(metrics.MRR, 0), v(metrics.Precision, 1),
				v(metrics.Recall, 10), v(metrics.Recall, 100), v(metrics.Recall, 1000))
		}
	}
	tw.Flush()
	fmt.Fprintf(stdout, "report: %s (%d files), %s\n", out, len(files), time.Since(start).Round(time.Second))
	return nil
}
