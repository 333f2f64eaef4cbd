package historycheck

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/schema"
)

// Config is one differential check of a repository's history.
type Config struct {
	GitDir string
	// Head is the ref or commit checked up to; default HEAD.
	Head string
	// Base, if set, leaves out the commits reachable from it (git log
	// Base..Head), as an incremental scrape after Base does.
	Base string
	// Diff configures the scrape (backend, workers, rename limit); its
	// RenameLimit is also given to git. Default: as `locus index` runs it.
	Diff gitrepo.DiffOptions
	// Diffs also compares each stored diff with git log -p's hunks.
	Diffs bool
	// Progress, if set, is called after each scraped commit with (done, total).
	Progress func(done, total int)
}

// Result is a check's report and how long each side took.
type Result struct {
	Report
	Head          string
	Base          string  // "" for the whole history
	ScrapeSeconds float64 // locus, without changed functions
	GitSeconds    float64 // git log --raw --numstat
}

// Check scrapes cfg.GitDir's history into a temporary store exactly as
// `locus index` does (without changed functions, which git does not report),
// reads the rows back from the Parquet parts, and compares them with git log.
func Check(ctx context.Context, cfg Config) (*Result, error) {
	hh, err := gitrepo.Resolve(cfg.GitDir, cfg.Head)
	if err != nil {
		return nil, fmt.Errorf("history check %s: %w", cfg.GitDir, err)
	}
	dir, err := os.MkdirTemp("", "locus-historycheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bucket, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	h := hh.String()
	res := &Result{Head: h}
	var prev *schema.Manifest
	if cfg.Base != "" {
		bh, err := gitrepo.Resolve(cfg.GitDir, cfg.Base)
		if err != nil {
			return nil, fmt.Errorf("history check %s: base: %w", cfg.GitDir, err)
		}
		prev = &schema.Manifest{Head: bh.String()}
		res.Base = bh.String()
	}
	start := time.Now()
	sr, err := commits.Scrape(ctx, commits.Config{Bucket: bucket, Repo: schema.RepoName("check/history"),
		GitDir: cfg.GitDir, Head: h, Prev: prev, Diff: cfg.Diff, NoFunctions: true, Progress: cfg.Progress})
	if err != nil {
		return nil, fmt.Errorf("history check: %w", err)
	}
	res.ScrapeSeconds = time.Since(start).Seconds()
	rows := map[string][]Row{}
	for _, p := range sr.Parts {
		err := commits.ReadPartOf(ctx, bucket, p, func(r *schema.CommitFile) error {
			rows[r.CommitID] = append(rows[r.CommitID], RowOf(r))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("history check: %w", err)
		}
	}
	start = time.Now()
	rep, err := Compare(ctx, cfg.GitDir, h, rows, GitLogOptions{RenameLimit: cfg.Diff.RenameLimit, Base: res.Base}, cfg.Diffs)
	if err != nil {
		return nil, fmt.Errorf("history check: %w", err)
	}
	res.GitSeconds = time.Since(start).Seconds()
	res.Report = *rep
	return res, nil
}

// WriteReport prints a result as a table of difference classes.
func WriteReport(w io.Writer, gitDir string, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if res.Base != "" {
		fmt.Fprintf(tw, "base (left out)\t%s\n", res.Base)
	}
	fmt.Fprintf(tw, "repository\t%s\nhead\t%s\ncommits (git log)\t%d\nfiles (git log)\t%d\nrows (locus)\t%d\nrenames (git log)\t%d\n",
		gitDir, res.Head, res.Commits, res.GitFiles, res.Rows, res.Renames)
	if res.DiffsChecked {
		fmt.Fprintf(tw, "stored diffs equal to git log -p\t%d\n", res.Diffs)
	}
	fmt.Fprintf(tw, "locus scrape\t%.2f s\ngit log\t%.2f s\n\nclass\tdifferences\texplained\n", res.ScrapeSeconds, res.GitSeconds)
	for _, c := range res.classes() {
		fmt.Fprintf(tw, "%s\t%d\t%v\n", c, res.ByClass[c], c.Explained())
	}
	fmt.Fprintf(tw, "unexplained\t%d\t\n", res.Unexplained())
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range res.classes() {
		if c.Explained() {
			continue
		}
		for _, d := range res.Examples[c] {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	return nil
}
