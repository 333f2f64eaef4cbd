package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/webpage"
)

// runBacklogReport writes the report page of a run in the store, finished
// or not.
func runBacklogReport(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("backlog report", &g)
	out := fs.String("out", ".", "directory to write report.html to")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus backlog report [flags] RUN\n\nWrites RUN's report page (report.html: every issue and its ranked functions),\n"+
			"from what the store holds of it; a run still going shows the issues ranked so far.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError{code: 2, msg: "backlog report needs one run (locus backlog status lists them)"}
	}
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	path, err := writeBacklogReport(ctx, b, fs.Arg(0), *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return nil
}

// writeBacklogReport writes run's report page to dir/report.html and
// returns its path.
func writeBacklogReport(ctx context.Context, b *blob.Bucket, run, dir string) (string, error) {
	r, err := webpage.LoadBacklog(ctx, b, run)
	if errors.Is(err, webpage.ErrNoRun) {
		return "", exitError{code: 1, msg: err.Error()}
	}
	if err != nil {
		return "", err
	}
	if err := writeOutFile(dir, "report.html", func(f *os.File) error { return webpage.WriteBacklog(f, r) }); err != nil {
		return "", err
	}
	return filepath.Join(dir, "report.html"), nil
}
