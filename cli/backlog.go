package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/internal/webpage"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

func runBacklog(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "status" {
		return runBacklogStatus(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "report" {
		return runBacklogReport(ctx, args[1:])
	}
	g := Globals{reportsFailures: true}
	fs := newFlags("backlog", &g)
	repoFlag := fs.String("repo", "", "repository of issues that name none (a GitHub issues export names none): owner/name, or the path or URL it was indexed from")
	out := fs.String("out", "", "directory to write results.jsonl, summary.md and report.html (the page to read in a browser) to")
	window := fs.Int("window", workflows.DefaultBacklogWindow, "issues localized at once")
	batch := fs.Int("batch", workflows.DefaultBacklogBatch, "issues ranked together by one activity (at most the window)")
	maxTokens := fs.Int("max-tokens", 0, "LLM token budget of the run (selection and rerank, prompt + completion); once spent, the remaining issues are ranked without the LLM; 0: no budget")
	maxIssueTokens := fs.Int("max-issue-tokens", 0, "selector token limit of each issue (prompt + completion); once spent, its remaining centers are not asked; 0: no limit")
	method, model := methodFlags(fs)
	crossEnc := crossEncoderFlag(fs)
	includeTests := fs.Bool("include-tests", false, "rank test functions too (by default tests are left out)")
	k := fs.Int("k", 20, "functions to return per issue (budget K)")
	rerank := fs.Int("rerank", 0, "an LLM (--llm) reorders the first N functions of each result, listwise, within the token budgets; 0: no rerank")
	maxText := fs.Int("max-issue-bytes", backlog.DefaultMaxTextBytes, "issue text beyond this many bytes is cut (and the issue flagged truncated)")
	priceIn := fs.Float64("price-in", 0, "USD per million prompt tokens, for the summary's cost estimate; 0: no estimate")
	priceOut := fs.Float64("price-out", 0, "USD per million completion tokens, for the summary's cost estimate")
	perRun := fs.Int("continue-as-new-after", workflows.DefaultBacklogPerRun, "issues per workflow run before it continues as new")
	hostWait := fs.Duration("host-wait", workflows.DefaultHostWait, "snapshots (issues with a base commit): "+hostWaitUsage)
	workerFlags(fs, &g)
	noWorker := fs.Bool("no-worker", false, "do not run a worker in this process (workers run elsewhere)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus backlog [flags] FILE\n       locus backlog status [flags] [RUN]\n       locus backlog report [flags] RUN\n\n"+
			"FILE is JSON Lines (id or instance_id, repo, base_commit, problem_statement or title and body),\n"+
			"CSV with a header naming those columns, or a GitHub issues export (JSON array; needs --repo).\n"+
			"Re-running the same command resumes the same run.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs,
		intRange("window", *window, 1, workflows.MaxWindow),
		intRange("batch", *batch, 1, workflows.MaxWindow),
		intRange("max-tokens", *maxTokens, 0, -1),
		intRange("max-issue-tokens", *maxIssueTokens, 0, -1),
		oneOf("method", *method, search.AllMethods...),
		checkModel(*method, model),
		checkCrossEncoder([]string{*method}, crossEnc),
		intRange("k", *k, 1, workflows.MaxPartFunctions),
		intRange("max-issue-bytes", *maxText, 1, -1),
		intRange("continue-as-new-after", *perRun, 1, workflows.MaxContinueAsNewAfter),
		nonNegative("price-in", *priceIn),
		nonNegative("price-out", *priceOut),
		checkHostWait(*hostWait),
		g.checkRerank(*rerank, *noWorker),
	); err != nil {
		return err
	}
	if !*noWorker {
		if err := check(fs, g.checkWorkerFlags()); err != nil {
			return err
		}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError{code: 2, msg: "backlog needs one issues file"}
	}
	file := fs.Arg(0)
	log := g.logger()
	bucket, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer bucket.Close()
	defaultRepo := ""
	if *repoFlag != "" {
		name, err := resolveRepo(ctx, bucket, *repoFlag)
		if err != nil {
			return fmt.Errorf("--repo: %w", err)
		}
		defaultRepo = string(name)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("backlog: %w", err)
	}
	parsed, err := backlog.ParseDetailed(file, data, backlog.ParseOptions{DefaultRepo: defaultRepo, RequireRepo: true, MaxTextBytes: *maxText})
	if err != nil {
		return err
	}
	issues, perrs := parsed.Issues, parsed.Errors
	if n := parsed.SkippedPullRequests; n > 0 {
		fmt.Fprintf(stderr, "%s: %d pull requests skipped (a GitHub issues export lists them too)\n", file, n)
	}
	failures := backlog.FailuresOf(perrs)
	// Repositories resolve as `locus index` named them; one that does not
	// resolve fails its issues, not the others.
	names := map[string]schema.RepoName{}
	resolveErr := map[string]error{}
	var in []schema.BacklogIssue
	for _, is := range issues {
		name, ok := names[is.Repo]
		if _, bad := resolveErr[is.Repo]; !ok && !bad {
			var err error
			// A name not indexed fails its issue in the run, with the others'
			// results; a path or URL resolves to the repository stored from it.
			if name, err = resolveRepoOrName(ctx, bucket, is.Repo); err != nil {
				resolveErr[is.Repo] = err
			} else {
				names[is.Repo] = name
			}
		}
		if err := resolveErr[is.Repo]; err != nil {
			failures = append(failures, backlog.Failure{IssueID: is.ID, Source: is.Source, Error: fmt.Sprintf("field %q: %v", "repo", err)})
			continue
		}
		in = append(in, schema.BacklogIssue{ID: is.ID, Repo: name, BaseCommit: is.BaseCommit, Text: is.Text, Title: is.Title, URL: is.URL,
			Truncated: is.Truncated, Source: is.Source, Notes: is.Notes})
	}
	for _, f := range failures {
		fmt.Fprintf(stderr, "%s: %s\n", termtext.Escape(f.Source), termtext.Escape(f.Error))
	}
	opts := workflows.BacklogOptions{Window: *window, Batch: *batch, ContinueAsNewAfter: *perRun, MaxTokens: *maxTokens, MaxIssueTokens: *maxIssueTokens,
		PriceInPerM: *priceIn, PriceOutPerM: *priceOut, HostWait: defaultZero(*hostWait, workflows.DefaultHostWait)}
	params := search.Params{Method: *method, Params: spider.Params{K: *k}, IncludeTests: *includeTests, Rerank: *rerank, Model: *model, CrossEncoder: *crossEnc}
	c, closeAll, err := g.connectWorking(ctx, log, bucket, !*noWorker, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	// The same input resumes the run in progress; a finished run is not
	// run again, its result is read back.
	s, err := jobs.StartBacklog(ctx, c, bucket, jobs.Backlog{Issues: in, Failures: failures, Params: params, Options: opts,
		Backends: g.backends()})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "backlog %s: %d issues from %s\n", s.ID, len(in), file)
	g.printWorkflowLink(s.ID)
	res, err := g.waitBacklog(ctx, c, s, "issues")
	if ctx.Err() != nil {
		return exitError{code: 130, msg: fmt.Sprintf("interrupted; backlog %s keeps its state in %s — run the same command again to continue", s.ID, g.dataDir)}
	}
	if full := diskFullFailure("backlog "+s.ID, err); full != nil {
		return full
	}
	if err != nil {
		return err
	}
	return reportBacklog(ctx, bucket, res, *out, g.json)
}

// reportBacklog prints a finished run's summary, writes --out, and says in
// the exit status whether any issue or record failed.
func reportBacklog(ctx context.Context, bucket *blob.Bucket, res workflows.BacklogResult, out string, asJSON bool) error {
	sum, err := jobs.Summary(ctx, bucket, res)
	if err != nil {
		return err
	}
	if out != "" {
		rs, err := jobs.Results(ctx, bucket, res)
		if err != nil {
			return err
		}
		if err := writeBacklogOut(out, rs, sum); err != nil {
			return err
		}
		if _, err := writeBacklogReport(ctx, bucket, res.Run, out); err != nil {
			return err
		}
	}
	// A run that finished before runs stored their report page gets it now.
	if ok, err := bucket.Exists(ctx, webpage.ReportKey(res.Run)); err != nil {
		return err
	} else if !ok {
		if _, err := webpage.StoreBacklog(ctx, bucket, res.Run); err != nil {
			return err
		}
	}
	if asJSON {
		if err := printJSON(sum); err != nil {
			return err
		}
	} else {
		printBacklogSummary(bucket, sum, res)
		if out != "" {
			fmt.Fprintf(stdout, "wrote %s, %s and %s\n", filepath.Join(out, "results.jsonl"), filepath.Join(out, "summary.md"), filepath.Join(out, "report.html"))
		}
	}
	if sum.Failed > 0 || sum.ParseErrors > 0 {
		return exitError{code: 1, msg: fmt.Sprintf("%d of %d issues failed, %d records could not be read", sum.Failed, sum.Total, sum.ParseErrors)}
	}
	return nil
}

func printBacklogSummary(bucket *blob.Bucket, s backlog.Summary, res workflows.BacklogResult) {
	selector := "selector " + s.Selector
	if s.Selector == "" {
		selector = "no neighbour selection ran"
	}
	fmt.Fprintf(stdout, "backlog %s: %d issues, %d done, %d failed, %d records not read, in %s\n", s.Run, s.Total, s.Done, s.Failed,
		s.ParseErrors, s.Finished.Sub(s.Started).Round(time.Millisecond))
	fmt.Fprintf(stdout, "%s: %d tokens in, %d out", selector, s.TokensIn, s.TokensOut)
	if s.EstimatedCostUSD > 0 {
		fmt.Fprintf(stdout, ", about $%.2f", s.EstimatedCostUSD)
	}
	fmt.Fprintln(stdout)
	if s.BudgetExhausted > 0 {
		fmt.Fprintf(stdout, "token budget spent: %d issues ranked without the selector\n", s.BudgetExhausted)
	}
	if len(s.Failures) > 0 {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ISSUE\tSOURCE\tERROR")
		for _, f := range s.Failures {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", termtext.Escape(f.IssueID), termtext.Escape(f.Source), termtext.Escape(f.Error))
		}
		tw.Flush()
	}
	fmt.Fprintf(stdout, "results: %s\n", bucket.Location(schema.BacklogKey(res.Run, "part-*.parquet")))
	fmt.Fprintf(stdout, "report: %s\n", bucket.Location(webpage.ReportKey(res.Run)))
}

// writeBacklogOut writes results.jsonl and summary.md to dir, each through
// a temporary file, so an interrupted write leaves the old file or none.
// They are outputs for people and other tools: mode 0644, like any file
// a command writes, not the 0600 of a temporary file.
func writeBacklogOut(dir string, rs []backlog.Result, s backlog.Summary) error {
	if err := writeOutFile(dir, "results.jsonl", func(f *os.File) error { return backlog.WriteResultsJSONL(f, rs) }); err != nil {
		return err
	}
	return writeOutFile(dir, "summary.md", func(f *os.File) error { return backlog.WriteSummaryMarkdown(f, s) })
}

// writeOutFile writes dir/name (creating dir) through a temporary file, so
// an interrupted write leaves the old file or none; mode 0644.
func writeOutFile(dir, name string, fill func(f *os.File) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	err = f.Chmod(0o644)
	if err == nil {
		err = fill(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// waitBacklog waits for a started backlog, showing its progress on stderr,
// until it ends or the embedded server says its disk is full.
func (g *Globals) waitBacklog(ctx context.Context, c client.Client, s jobs.Started, noun string) (workflows.BacklogResult, error) {
	stop := watchBacklog(ctx, c, s, noun)
	var res workflows.BacklogResult
	err := g.untilDiskFull(ctx, func(ctx context.Context) (err error) {
		res, err = jobs.Wait(ctx, s)
		return err
	})
	stop(err == nil)
	return res, err
}

// watchBacklog shows a started backlog's progress on stderr (noun counts
// its issues) until stop is called.
func watchBacklog(ctx context.Context, c client.Client, s jobs.Started, noun string) (stop func(done bool)) {
	return watchProgressOf(ctx, stderr, noun, func(ctx context.Context) (schema.FleetProgress, error) {
		p, err := jobs.QueryProgress[schema.BacklogProgress](ctx, c, s.ID)
		return schema.FleetProgress{Total: p.Total, Done: p.Done, Failed: p.Failed, Running: p.Running, Pending: p.Pending}, err
	}, time.Second, 10*time.Second)
}

// nonNegative checks a float flag.
func nonNegative(flagName string, v float64) error {
	if v < 0 {
		return fmt.Errorf("--%s %g: want 0 or more", flagName, v)
	}
	return nil
}
