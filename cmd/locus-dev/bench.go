package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/locus-dev/locus/benchmark"
	"github.com/locus-dev/locus/benchmark/blevepeer"
	"github.com/locus-dev/locus/cli"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/historycheck"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// benchCommands are the subcommands of locus-dev bench.
var benchCommands = []string{"scrape", "graph", "search", "backlog", "reindex", "ctags", "embed", "history"}

const benchUsage = `usage: locus-dev bench scrape --repo DIR [--ref REF] [--backends cat-file,go-git]
       locus-dev bench graph  --repo DIR [--ref REF]
       locus-dev bench search --repo DIR
       locus-dev bench backlog --repo DIR [--issues N] [--window N] [--json]
       locus-dev bench reindex --repo DIR [--ref REF] [--back N] [--json]
       locus-dev bench ctags  --repo DIR [--ref REF] [--json]
       locus-dev bench history --repo DIR [--ref REF] [--base COMMIT] [--rename-limit N] [--json]
       locus-dev bench embed  --repo DIR [--model DIR] [--tokens 256,128] [--int8] [--also use-lite://] [--functions N] [--json]

Run "locus-dev bench SUBCOMMAND -h" for its flags.
`

// runBenchCommand checks the bench subcommand before handing over, so that
// help exits 0 and a misspelt subcommand gets a suggestion.
func runBenchCommand(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return cli.Exit(2, "bench needs a subcommand\n"+benchUsage)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, benchUsage)
		return cli.ErrHelp
	}
	for _, c := range benchCommands {
		if args[0] == c {
			return runBench(ctx, args)
		}
	}
	msg := fmt.Sprintf("unknown bench subcommand %q", args[0])
	if s := cli.Nearest(args[0], benchCommands); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return cli.Exit(2, msg+"\n"+benchUsage)
}

// runBench runs locus-dev bench SUBCOMMAND; args[0] is the subcommand.
func runBench(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "scrape":
			return runBenchScrape(ctx, args[1:])
		case "graph":
			return runBenchGraph(ctx, args[1:])
		case "search":
			return runBenchSearch(ctx, args[1:])
		case "backlog":
			return runBenchBacklog(ctx, args[1:])
		case "reindex":
			return runBenchReindex(ctx, args[1:])
		case "ctags":
			return runBenchCtags(ctx, args[1:])
		case "embed":
			return runBenchEmbed(ctx, args[1:])
		case "history":
			return runBenchHistory(ctx, args[1:])
		}
	}
	return cli.Exit(2, benchUsage)
}

func runBenchScrape(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench scrape", &g)
	repo := fs.String("repo", "", "git directory or working copy to scrape (read in place, not cloned)")
	ref := fs.String("ref", "", "ref to scrape up to; default HEAD")
	backends := fs.String("backends", "cat-file,go-git", "object backends to time, comma-separated")
	child := fs.String("child", "", "internal: run one measured scrape described by this JSON and print JSON")
	workers := fs.Int("workers", 0, "goroutines diffing commits; default 2 × GOMAXPROCS")
	functions := fs.String("functions", "on", "changed-functions mapping: on, off, or both (times each backend with and without it)")
	out := fs.String("out", "", "directory for the Parquet output; default a temporary directory, removed afterwards")
	verify := fs.Bool("verify-functions", false, "also parse whole every file version whose functions were derived from the other version of its change, and report how many differ (slower)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	g.Logger()
	if *child != "" {
		return benchmark.ScrapeChild(ctx, *child, stdout)
	}
	gitDir, head, err := benchTarget("bench scrape", *repo, *ref)
	if err != nil {
		return err
	}
	modes := []string{*functions}
	if *functions == "both" {
		modes = []string{"on", "off"}
	}
	runs, err := benchmark.Scrape(ctx, benchmark.ScrapeOptions{GitDir: gitDir, Head: head, Backends: strings.Split(*backends, ","),
		Functions: modes, Workers: *workers, Verify: *verify, Out: *out, Child: selfChild("bench", "scrape", "--workers", strconv.Itoa(*workers))})
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(runs)
	}
	return benchmark.WriteScrapeTable(stdout, gitDir, head, runs)
}

// runBenchHistory compares the commits table of a repository with git log.
func runBenchHistory(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench history", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to check up to; default HEAD")
	base := fs.String("base", "", "leave out the commits reachable from this commit (git log BASE..REF)")
	workers := fs.Int("workers", 0, "goroutines diffing commits; default 2 × GOMAXPROCS")
	diffs := fs.Bool("diffs", true, "also compare each stored diff with git log -p's hunks")
	renameLimit := fs.Int("rename-limit", 0, "inexact rename detection limit, given to locus and to git as diff.renameLimit; default 1000")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	g.Logger()
	gitDir, head, err := benchTarget("bench history", *repo, *ref)
	if err != nil {
		return err
	}
	var done, total atomic.Int64
	stop := cli.WatchProgress(ctx, stderr, "commits", func(context.Context) (schema.FleetProgress, error) {
		return schema.FleetProgress{Done: int(done.Load()), Total: int(total.Load())}, nil
	}, time.Second, 10*time.Second)
	res, err := historycheck.Check(ctx, historycheck.Config{GitDir: gitDir, Head: head.String(), Base: *base, Diffs: *diffs,
		Diff:     gitrepo.DiffOptions{Workers: *workers, RenameLimit: *renameLimit},
		Progress: func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) }})
	stop(err == nil)
	if err != nil {
		return err
	}
	if g.JSON() {
		if err := printJSON(res); err != nil {
			return err
		}
	} else if err := historycheck.WriteReport(stdout, gitDir, res); err != nil {
		return err
	}
	return res.Err()
}

func runBenchGraph(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench graph", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to build; default HEAD")
	child := fs.String("child", "", "internal: run one measured pass described by this JSON and print JSON")
	nruns := fs.Int("runs", 3, "runs of each pass, alternating; medians are reported")
	minSeconds := fs.Float64("min-seconds", 0, fmt.Sprintf("and more runs, until each pass has been timed this many seconds in all (at most %d runs)", benchmark.MaxGraphRuns))
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	g.Logger()
	if *child != "" {
		return benchmark.GraphChild(ctx, *child, stdout)
	}
	if *nruns < 1 {
		return cli.UsageError(fs, fmt.Errorf("--runs %d: want at least 1", *nruns))
	}
	gitDir, head, err := benchTarget("bench graph", *repo, *ref)
	if err != nil {
		return err
	}
	if *minSeconds < 0 {
		return cli.UsageError(fs, fmt.Errorf("--min-seconds %g: want 0 or more", *minSeconds))
	}
	runs, err := benchmark.Graph(ctx, gitDir, head, selfChild("bench", "graph"), benchmark.GraphRuns{Runs: *nruns, MinSeconds: *minSeconds})
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(runs)
	}
	return benchmark.WriteGraphTable(stdout, gitDir, head, runs)
}

// runBenchEmbed times the local embedders on a commit's functions.
func runBenchEmbed(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench embed", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit whose functions are embedded; default HEAD")
	model := fs.String("model", "", "ONNX model directory (model.onnx + tokenizer.json or vocab.txt); default a generated MiniLM-L6-shaped model with random weights")
	tokens := fs.String("tokens", "256,128", "max_tokens settings to time, comma-separated")
	int8 := fs.Bool("int8", false, "also time the generated model with int8 weights")
	n := fs.Int("functions", 512, "functions to embed, spread over the graph")
	batch := fs.Int("batch", 16, "texts per model run")
	others := fs.String("also", "", "more embedder URLs to time the same way, comma-separated (e.g. use-lite://)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	g.Logger()
	gitDir, head, err := benchTarget("bench embed", *repo, *ref)
	if err != nil {
		return err
	}
	var toks []int
	for _, t := range strings.Split(*tokens, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || v <= 0 {
			return cli.UsageError(fs, fmt.Errorf("--tokens %q: want positive integers, comma-separated", *tokens))
		}
		toks = append(toks, v)
	}
	res, err := benchmark.Embed(ctx, benchmark.EmbedOptions{GitDir: gitDir, Head: head, Model: *model, Tokens: toks, Int8: *int8, Functions: *n, Batch: *batch, Others: splitList(*others)})
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(res)
	}
	return benchmark.WriteEmbedTable(stdout, res)
}

// runBenchCtags compares the Rust, C and C++ function definitions of the
// repository's graph with universal-ctags'.
func runBenchCtags(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench ctags", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to compare; default HEAD")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	g.Logger()
	gitDir, head, err := benchTarget("bench ctags", *repo, *ref)
	if err != nil {
		return err
	}
	res, err := benchmark.Ctags(ctx, gitDir, head)
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(res)
	}
	return benchmark.WriteCtagsTable(stdout, res)
}

// runBenchSearch is the search benchmark, with bleve's BM25 as the peer
// engine when --peer bleve.
func runBenchSearch(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench search", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to index; default HEAD")
	nq := fs.Int("queries", 1000, "queries: the repository's latest commit subjects")
	hybrid := fs.Bool("hybrid", false, "also scrape the history, build repository memory and time the hybrid method")
	peerName := fs.String("peer", "none", "peer engine on the same tokens: none, or bleve (its BM25: latency, top-10 agreement, score differences)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Check(fs, cli.OneOf("peer", *peerName, "none", "bleve")); err != nil {
		return err
	}
	g.Logger()
	gitDir, head, err := benchTarget("bench search", *repo, *ref)
	if err != nil {
		return err
	}
	var peer benchmark.Peer
	if *peerName == "bleve" {
		peer = &blevepeer.Peer{}
	}
	res, err := benchmark.Search(ctx, benchmark.SearchOptions{GitDir: gitDir, Head: head, Queries: *nq, Hybrid: *hybrid, Peer: peer})
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(res)
	}
	return benchmark.WriteSearchTable(stdout, res)
}

// runBenchBacklog indexes the repository on the embedded Temporal server
// and ranks the same issues directly and through LocalizeBacklog.
func runBenchBacklog(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench backlog", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to index; default HEAD")
	issues := fs.Int("issues", 1000, "issues: the repository's latest commit subjects, cycled when fewer")
	window := fs.Int("window", workflows.DefaultBacklogWindow, "LocalizeBacklog's window (issues in flight)")
	batch := fs.Int("batch", workflows.DefaultBacklogBatch, "LocalizeBacklog's batch (issues per activity)")
	method := fs.String("method", search.MethodSpIDER, "sr, der, spisr, spider or hybrid (BM25 fused with repository memory, + graph)")
	k := fs.Int("k", 20, "functions per issue (budget K)")
	cpuProfile := fs.String("cpuprofile", "", "write CPU profiles of the direct and workflow passes to PREFIX-direct.pprof and PREFIX-workflow.pprof")
	keepStore := fs.String("keep-store", "", "index into this directory (a file store) and keep it; a later run with the same --keep-store and commit reuses the index (default: a temporary store)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Check(fs,
		cli.IntRange("issues", *issues, 1, -1),
		cli.IntRange("window", *window, 1, workflows.MaxWindow),
		cli.IntRange("batch", *batch, 1, workflows.MaxWindow),
		cli.OneOf("method", *method, search.AllMethods...),
		cli.IntRange("k", *k, 1, -1),
	); err != nil {
		return err
	}
	g.Logger()
	gitDir, head, err := benchTarget("bench backlog", *repo, *ref)
	if err != nil {
		return err
	}
	res, err := benchmark.Backlog(ctx, benchmark.BacklogOptions{GitDir: gitDir, Head: head, Issues: *issues, Window: *window, Batch: *batch,
		Method: *method, K: *k, CPUProfile: *cpuProfile, StoreDir: *keepStore})
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(res)
	}
	return benchmark.WriteBacklogTable(stdout, res)
}

func runBenchReindex(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev bench reindex", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "the head to re-index to; default HEAD")
	back := fs.Int("back", 1, "first-parent commits before the head that the first index stops at (the new commits to re-index)")
	g.EmbedderFlag(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Check(fs, cli.IntRange("back", *back, 1, -1)); err != nil {
		return err
	}
	g.Logger()
	gitDir, head, err := benchTarget("bench reindex", *repo, *ref)
	if err != nil {
		return err
	}
	emb, err := g.OpenEmbedder(ctx)
	if err != nil {
		return err
	}
	res, err := benchmark.Reindex(ctx, benchmark.ReindexOptions{GitDir: gitDir, Head: head, Back: *back, Embedder: emb})
	if err != nil {
		return err
	}
	if g.JSON() {
		return printJSON(res)
	}
	return benchmark.WriteReindexTable(stdout, res)
}

// selfChild re-runs this binary with args, the child spec and quiet logs.
func selfChild(args ...string) benchmark.ChildFunc {
	return func(ctx context.Context, spec string) (*exec.Cmd, error) {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this executable to run the benchmark child: %w", err)
		}
		a := append(append([]string{}, args...), "--child", spec, "--log-level", "warn")
		return exec.CommandContext(ctx, self, a...), nil
	}
}

// benchTarget resolves a benchmark's --repo (read in place) and --ref.
func benchTarget(cmd, repo, ref string) (string, gitrepo.Hash, error) {
	if repo == "" {
		return "", gitrepo.ZeroHash, cli.Exit(2, cmd+": --repo is required")
	}
	return benchmark.Target(repo, ref)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
