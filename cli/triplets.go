package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

func runTriplets(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "stats" {
		return runTripletsStats(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "fit" {
		return runTripletsFit(ctx, args[1:])
	}
	g := Globals{reportsFailures: true}
	fs := newFlags("triplets", &g)
	out := fs.String("out", "", "directory for the exports, stats.md and the plots (required)")
	reposFile := fs.String("repos-file", "", "file with one indexed repository per line (owner/name, or the path or URL it was indexed from; # comments allowed)")
	negatives := fs.Int("negatives", 15, "hard negatives per query")
	hardFrom := fs.String("hard-from", triplets.SourceBM25, "sources of hard negatives, comma-separated: bm25 (first-stage hits), dense (the --embedder's hits; with bm25, taken in turn), graph (functions calling or called by a positive, up to a third of --negatives)")
	minRank := fs.Int("min-rank", 1, "first BM25 rank negatives come from (SweRank uses 3)")
	maxRank := fs.Int("max-rank", 50, "last BM25 rank negatives come from (SweRank uses 25)")
	keepRank := fs.Int("keep-rank", 0, "keep a query only when a positive ranks within this many BM25 hits (the consistency filter); 0: keep all")
	maxFunctions := fs.Int("max-functions", 10, "skip changes that edit more functions than this")
	maxPerRepo := fs.Int("max-per-repo", 0, "cap on queries per repository; 0: none")
	before := fs.String("before", "", "only commits before this date (YYYY-MM-DD, UTC)")
	after := fs.String("after", "", "only commits on or after this date (YYYY-MM-DD, UTC)")
	exclude := fs.String("exclude-bench", "", "benchmark files (swe-dev or commits-dev JSON Lines, comma-separated): the commits they name, and every later commit of their repositories, are left out")
	instances := fs.String("instances", "", "benchmark instances in the SWE format (JSON Lines: problem statement, patch, base commit): each of a mined repository's becomes a query too")
	issues := fs.String("issues", "", "issues and pull requests in the backlog input formats (JSON Lines, CSV, GitHub export): a commit that references one by number gets its text as the query")
	issuesRepo := fs.String("issues-repo", "", "repository of --issues records that name none (a GitHub export names none)")
	format := fs.String("format", triplets.FormatSweRank, "export layout: "+strings.Join(triplets.Formats, ", "))
	chunk := fs.Int("chunk", triplets.DefaultChunk, "commits one activity mines")
	window := fs.Int("window", workflows.DefaultTripletsWindow, "repositories mined at once")
	hostWait := fs.Duration("host-wait", workflows.DefaultHostWait, hostWaitUsage)
	workerFlags(fs, &g)
	noWorker := fs.Bool("no-worker", false, "do not run a worker in this process (workers run elsewhere)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus triplets --out DIR [flags] (REPO... | --repos-file F)\n       locus triplets stats DIR\n       locus triplets fit DIR\n\n"+
			"Mines training triplets (query, positive functions, hard negatives) from indexed repositories' history.\n"+
			"Re-running the same command resumes the same run.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	afterMs, aerr := dateFlag("after", *after)
	beforeMs, berr := dateFlag("before", *before)
	if err := check(fs,
		intRange("negatives", *negatives, 1, 1000),
		intRange("min-rank", *minRank, 1, -1),
		intRange("max-rank", *maxRank, *minRank, -1),
		intRange("keep-rank", *keepRank, 0, -1),
		intRange("max-functions", *maxFunctions, 1, -1),
		intRange("max-per-repo", *maxPerRepo, 0, -1),
		intRange("chunk", *chunk, 1, -1),
		intRange("window", *window, 1, workflows.MaxWindow),
		oneOf("format", *format, triplets.Formats...),
		checkHostWait(*hostWait),
		aerr, berr,
	); err != nil {
		return err
	}
	if !*noWorker {
		if err := check(fs, g.checkWorkerFlags()); err != nil {
			return err
		}
	}
	if *out == "" {
		fs.Usage()
		return exitError{code: 2, msg: "triplets needs --out DIR"}
	}
	// Checked before any mining: a run is not thrown away for want of a
	// place to write it.
	if err := checkOutDir(*out); err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	repoArgs, err := tripletRepoArgs(fs.Args(), *reposFile)
	if err != nil {
		return err
	}
	if len(repoArgs) == 0 {
		fs.Usage()
		return exitError{code: 2, msg: "no repositories given"}
	}
	opts := workflows.TripletsOptions{ChunkSize: *chunk, Window: *window, HostWait: defaultZero(*hostWait, workflows.DefaultHostWait), Mine: triplets.Options{
		Filter: triplets.Filter{MaxFunctions: *maxFunctions}, Negatives: *negatives, MinRank: *minRank, MaxRank: *maxRank,
		KeepRank: *keepRank, After: afterMs, Before: beforeMs, HardFrom: strings.Split(*hardFrom, ",")}}
	if err := check(fs, opts.Mine.Validate()); err != nil {
		return err
	}
	if *exclude != "" {
		x, err := triplets.LoadExclusion(strings.Split(*exclude, ",")...)
		if err != nil {
			return err
		}
		opts.Exclude = x.Entries()
	}
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	repos, err := tripletRepos(ctx, b, repoArgs)
	if err != nil {
		return err
	}
	if *instances != "" {
		ins, err := dataset.LoadSWE(*instances)
		if err != nil {
			return err
		}
		data, err := json.Marshal(ins)
		if err != nil {
			return err
		}
		opts.InstancesKey = triplets.InstancesKey(data)
		if err := b.WriteAll(ctx, opts.InstancesKey, data); err != nil {
			return fmt.Errorf("store the instances of %s: %w", *instances, err)
		}
	}
	if *issues != "" {
		texts, skipped, err := triplets.LoadIssues(*issues, *issuesRepo)
		if err != nil {
			return err
		}
		if skipped > 0 {
			fmt.Fprintf(stderr, "locus: warning: %d records of %s have no issue number or repository and are not used\n", skipped, *issues)
		}
		data, err := json.Marshal(texts)
		if err != nil {
			return err
		}
		opts.IssuesKey = triplets.IssuesKey(data)
		if err := b.WriteAll(ctx, opts.IssuesKey, data); err != nil {
			return fmt.Errorf("store the issues of %s: %w", *issues, err)
		}
	}
	c, closeAll, err := g.connectWorking(ctx, g.logger(), b, !*noWorker, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	st, err := jobs.StartTriplets(ctx, c, jobs.TripletsRun{Repos: repos, Options: opts})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "triplets %s: %d repositories\n", st.ID, len(repos))
	g.printWorkflowLink(st.ID)
	noun := "chunks"
	if len(repos) > jobs.MaxChunkProgressRepos {
		noun = "repositories"
	}
	stopProgress := watchProgressOf(ctx, stderr, noun, func(ctx context.Context) (schema.FleetProgress, error) {
		p, _, err := jobs.TripletsChunkProgress(ctx, c, st.ID, repos)
		return p, err
	}, time.Second, 10*time.Second)
	var res workflows.TripletsResult
	err = g.untilDiskFull(ctx, func(ctx context.Context) error { return st.Run.Get(ctx, &res) })
	stopProgress(err == nil)
	if ctx.Err() != nil {
		return exitError{code: 130, msg: fmt.Sprintf("interrupted; triplets %s keeps its state in %s — run the same command again to continue", st.ID, g.dataDir)}
	}
	if full := diskFullFailure("triplets "+st.ID, err); full != nil {
		return full
	}
	if err != nil {
		return fmt.Errorf("triplets %s: %w", st.ID, err)
	}
	col, err := jobs.CollectTriplets(ctx, b, res, &triplets.Dedup{MaxPerRepo: *maxPerRepo})
	if err != nil {
		return err
	}
	files, err := triplets.Export(*out, *format, col.Records)
	if err != nil {
		return err
	}
	more, err := writeTripletsStats(*out, res, *maxPerRepo, col)
	if err != nil {
		return err
	}
	files = append(files, more...)
	dropped := 0
	for _, n := range col.Dropped {
		dropped += n
	}
	fmt.Fprintf(stdout, "%d records from %d repositories (%d failed), %d commits mined, %d dropped by the dedup\n",
		len(col.Records), res.Done, res.Failed, res.Commits, dropped)
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	for _, r := range col.Repos {
		if r.Error != "" {
			fmt.Fprintf(stderr, "%s: not mined: %s\n", r.Repo, r.Error)
		}
	}
	if res.Failed > 0 {
		return exitError{code: 1, msg: fmt.Sprintf("%d of %d repositories could not be mined (see stats.md)", res.Failed, res.Repos)}
	}
	return nil
}

// checkOutDir makes sure dir is a directory locus can write files in,
// creating it if need be.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %q: want a directory locus can create and write: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".locus-out-*")
	if err != nil {
		return fmt.Errorf("--out %q: want a directory locus can write: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// dateFlag parses a YYYY-MM-DD flag into unix ms (0 when empty).
func dateFlag(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q: want a date as YYYY-MM-DD", name, v)
	}
	return t.UnixMilli(), nil
}

// tripletRepoArgs are the repository arguments and the lines of file.
func tripletRepoArgs(args []string, file string) ([]string, error) {
	all := append([]string(nil), args...)
	if file != "" {
		lines, _, err := gitrepo.ListLines(file)
		if err != nil {
			return nil, err
		}
		all = append(all, lines...)
	}
	return all, nil
}

// tripletRepos resolves repository arguments to the stored repositories
// they mean (a path by the URL and root commit stored for each), each once;
// an owner/name not indexed is kept, for the run to report.
func tripletRepos(ctx context.Context, b *blob.Bucket, all []string) ([]schema.RepoName, error) {
	var out []schema.RepoName
	seen := map[schema.RepoName]bool{}
	for _, a := range all {
		n, err := resolveRepoOrName(ctx, b, a)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// tripletsRunFile names, in an output directory, the run it came from, so
// that `locus triplets stats DIR` can read the run again.
const tripletsRunFile = "run.json"

// tripletsRunInfo is what tripletsRunFile holds.
type tripletsRunInfo struct {
	Result     workflows.TripletsResult `json:"result"`
	MaxPerRepo int                      `json:"max_per_repo,omitempty"`
}

// writeTripletsStats writes stats.md, the plots and run.json into dir.
func writeTripletsStats(dir string, res workflows.TripletsResult, maxPerRepo int, col jobs.Collected) ([]string, error) {
	var rs []triplets.RepoStats
	for _, r := range col.Repos {
		rs = append(rs, triplets.RepoStats{Repo: string(r.Repo), Stats: r.Stats, Error: r.Error})
	}
	files, err := triplets.WriteStats(dir, col.Records, rs, col.Dropped)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(tripletsRunInfo{Result: res, MaxPerRepo: maxPerRepo}, "", "  ")
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, tripletsRunFile)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return nil, fmt.Errorf("triplets: %w", err)
	}
	return append(files, p), nil
}

// runTripletsStats rewrites the stats and plots of an output directory from
// the run it names (its parts in the store), without mining again.
func runTripletsStats(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("triplets stats", &g)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus triplets stats [flags] DIR\n\nRewrites DIR/stats.md and the plots from the run DIR came from.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	dir, b, info, col, err := openTripletsRun(ctx, &g, fs, "triplets stats")
	if err != nil {
		return err
	}
	defer b.Close()
	files, err := writeTripletsStats(dir, info.Result, info.MaxPerRepo, col)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d records from %d repositories\n", len(col.Records), len(col.Repos))
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// openTripletsRun checks that fs's arguments name one output directory,
// opens the store and collects the records of the run the directory came
// from, as the run kept them; the caller closes b.
func openTripletsRun(ctx context.Context, g *Globals, fs *flag.FlagSet, cmd string) (dir string, b *blob.Bucket, info tripletsRunInfo, col jobs.Collected, err error) {
	if fs.NArg() != 1 {
		fs.Usage()
		return "", nil, info, col, exitError{code: 2, msg: cmd + " needs one output directory"}
	}
	dir = fs.Arg(0)
	if info, err = readTripletsRun(dir, cmd); err != nil {
		return "", nil, info, col, err
	}
	g.logger()
	if b, err = g.openStore(ctx); err != nil {
		return "", nil, info, col, err
	}
	if col, err = jobs.CollectTriplets(ctx, b, info.Result, &triplets.Dedup{MaxPerRepo: info.MaxPerRepo}); err != nil {
		b.Close()
		return "", nil, info, col, err
	}
	return dir, b, info, col, nil
}

// readTripletsRun reads the run file of the output directory dir.
func readTripletsRun(dir, cmd string) (tripletsRunInfo, error) {
	var info tripletsRunInfo
	data, err := os.ReadFile(filepath.Join(dir, tripletsRunFile))
	if err != nil {
		return info, fmt.Errorf("%s: %s is not a triplets output directory: %w", cmd, dir, err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("%s: %s: %w", cmd, filepath.Join(dir, tripletsRunFile), err)
	}
	return info, nil
}

// collectTripletsRuns collects the records of the runs the directories came
// from; a repository mined by several takes the records of the last one
// given (a later run mines it again, with what changed since).
func collectTripletsRuns(ctx context.Context, b *blob.Bucket, dirs []string, cmd string) ([]triplets.Record, error) {
	byRepo := map[string][]triplets.Record{}
	var order []string
	for _, dir := range dirs {
		info, err := readTripletsRun(dir, cmd)
		if err != nil {
			return nil, err
		}
		col, err := jobs.CollectTriplets(ctx, b, info.Result, &triplets.Dedup{MaxPerRepo: info.MaxPerRepo})
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", cmd, dir, err)
		}
		fresh := map[string]bool{}
		for _, r := range col.Records {
			if !fresh[r.Repo] {
				fresh[r.Repo] = true
				if _, ok := byRepo[r.Repo]; !ok {
					order = append(order, r.Repo)
				}
				byRepo[r.Repo] = nil
			}
			byRepo[r.Repo] = append(byRepo[r.Repo], r)
		}
	}
	var out []triplets.Record
	for _, r := range order {
		out = append(out, byRepo[r]...)
	}
	return out, nil
}
