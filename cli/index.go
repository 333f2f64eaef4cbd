package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

func runIndex(ctx context.Context, args []string) error {
	g := Globals{reportsFailures: true}
	fs := newFlags("index", &g)
	reposFile := fs.String("repos-file", "", "file with one repository spec per line (# comments allowed)")
	window := fs.Int("window", workflows.DefaultWindow, "repositories indexed at once")
	perRun := fs.Int("continue-as-new-after", workflows.DefaultContinueAsNewAfter, "children per fleet run before continuing as new")
	noWorker := fs.Bool("no-worker", false, "do not run a worker in this process (workers run elsewhere)")
	id := fs.String("id", "", "fleet workflow id; default derived from the repositories and options, so re-running the same command resumes the same fleet")
	maxDiff := fs.Int("max-diff-bytes", 256<<10, "cap on the stored diff of one file in one commit")
	maxBlob := fs.Int("max-blob-size", 0, maxBlobSizeUsage)
	hostWait := fs.Duration("host-wait", workflows.DefaultHostWait, hostWaitUsage)
	backend := fs.String("git-backend", "", "how objects are read: cat-file, go-git, or empty for automatic")
	workerFlags(fs, &g)
	metricsFlag(fs, &g)
	primary := fs.Bool("primary-language-only", false, "build the code graph of the repository's main language only (the SpIDER paper's setting)")
	summaries := fs.Bool("summaries", false, "have the LLM (--llm) summarize every function whose code has no stored summary; summaries join the functions' BM25 and embedded documents")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus index [flags] REPO...\n\nREPO is [owner/name=]URL-or-path[#ref], e.g. . or redis/redis=/srv/git/redis.git#7.2\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs,
		intRange("window", *window, 1, workflows.MaxWindow),
		intRange("continue-as-new-after", *perRun, 1, workflows.MaxContinueAsNewAfter),
		intRange("max-diff-bytes", *maxDiff, 1, -1),
		intRange("max-blob-size", *maxBlob, 0, -1),
		checkBackend(*backend),
		checkHostWait(*hostWait),
		g.checkNeedsLLM("summaries", *summaries, *noWorker),
	); err != nil {
		return err
	}
	if !*noWorker {
		if err := check(fs, g.checkWorkerFlags()); err != nil {
			return err
		}
	}
	log := g.logger()
	specs, err := gitrepo.ReadSpecs(fs.Args(), *reposFile, "")
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		fs.Usage()
		return exitError{code: 2, msg: "no repositories given"}
	}
	stopMetrics, err := g.serveMetrics(ctx)
	if err != nil {
		return err
	}
	defer stopMetrics()
	in := schema.IndexFleetInput{Repos: specs, Options: schema.FleetOptions{
		Window: *window, ContinueAsNewAfter: *perRun, Index: schema.IndexOptions{MaxDiffBytes: *maxDiff, PrimaryLanguageOnly: *primary, Summaries: *summaries, MaxBlobSize: int64(*maxBlob),
			HostWait: defaultZero(*hostWait, workflows.DefaultHostWait)},
	}}
	if *id == "" {
		*id = jobs.FleetID(in)
	}
	bucket, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer bucket.Close()
	c, closeAll, err := g.connectWorking(ctx, log, bucket, !*noWorker, func(wc *workers.Config) { wc.Backend = gitrepo.Backend(*backend) })
	if err != nil {
		return err
	}
	defer closeAll()
	run, err := jobs.StartFleet(ctx, c, bucket, *id, in)
	if err != nil {
		return g.orDiskFull(err)
	}
	fmt.Fprintf(stderr, "fleet %s: %d repositories (run %s)\n", *id, len(specs), run.GetRunID())
	g.printWorkflowLink(*id)
	stopProgress := watchProgress(ctx, stderr, func(ctx context.Context) (schema.FleetProgress, error) {
		return jobs.QueryProgress[schema.FleetProgress](ctx, c, *id)
	}, time.Second, 10*time.Second)
	var res workflows.FleetResult
	err = g.untilDiskFull(ctx, func(ctx context.Context) error { return run.Get(ctx, &res) })
	stopProgress(err == nil)
	if ctx.Err() != nil {
		return exitError{code: 130, msg: fmt.Sprintf("interrupted; fleet %s keeps its state in %s — run the same command again to continue", *id, g.dataDir)}
	}
	if full := diskFullFailure("fleet "+*id, err); full != nil {
		return full
	}
	if err != nil {
		return fmt.Errorf("fleet %s: %w", *id, err)
	}
	sum, err := jobs.FleetSummary(ctx, bucket, res)
	if err != nil {
		return err
	}
	if g.json {
		if err := printJSON(sum); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "REPO\tSTATUS\tHEAD\tNEW COMMITS\tROWS\tERROR")
		var cut []schema.RepoResult // errors too long for the table, printed whole below it
		for _, r := range sum.Results {
			status := "ok"
			switch {
			case !r.OK:
				status = "failed"
			case r.Empty:
				status = "empty (no commits)"
			case r.Rewritten:
				status = "ok (history rewritten: replaced)"
			case r.Repaired:
				status = "ok (damaged commit parts re-scraped)"
			}
			msg := r.Error
			if !fitsTable(msg) {
				cut, msg = append(cut, r), "(below the table)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", r.Repo, status, short(r.Head), r.NewCommits, r.Rows, termtext.Escape(msg))
		}
		tw.Flush()
		for _, r := range cut {
			fmt.Fprintf(stdout, "%s: %s\n", r.Repo, termtext.Lines(r.Error))
		}
		for _, r := range sum.Results {
			if r.Warning != "" {
				fmt.Fprintf(stderr, "warning: %s: %s\n", r.Repo, termtext.Lines(r.Warning))
			}
			if w := missingWarning(r); w != "" {
				fmt.Fprintf(stderr, "warning: %s: %s\n", r.Repo, w)
			}
		}
		fmt.Fprintf(stdout, "%d done, %d failed in %s; summary: %s\n", sum.Done, sum.Failed,
			sum.FinishedAt.Sub(sum.StartedAt).Round(time.Millisecond), bucket.Location(res.SummaryKey))
	}
	if sum.Failed > 0 {
		msg := fmt.Sprintf("%d of %d repositories failed", sum.Failed, sum.Total)
		if slices.ContainsFunc(sum.Results, func(r schema.RepoResult) bool { return !r.OK && gitrepo.DiskFullText(r.Error) }) {
			msg += "; the disk is full: free space, then run the same command again"
		}
		return exitError{code: 1, msg: msg}
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// fitsTable reports whether an error fits the index table's last column:
// one line of at most 120 characters. Longer ones are printed whole below
// the table, never cut.
func fitsTable(s string) bool {
	return !strings.Contains(s, "\n") && utf8.RuneCountInString(s) <= 120
}

// missingWarning says what a repository's index lacks because the clone
// lacks blobs (a partial clone's filter, an incomplete mirror); "" when
// nothing is missing.
func missingWarning(r schema.RepoResult) string {
	if r.MissingRows == 0 && r.MissingFiles == 0 {
		return ""
	}
	return fmt.Sprintf("the clone lacks blobs (a partial clone's filter, or the source lacks them): %d commit rows flagged missing, line counts unknown; %d files of the head not parsed",
		r.MissingRows, r.MissingFiles)
}
