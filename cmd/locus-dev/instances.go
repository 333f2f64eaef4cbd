package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/locus-dev/locus/benchmark"
	"github.com/locus-dev/locus/cli"
)

// runInstances writes function-level instances selected from a
// repository's history (benchmark.HistoryInstances) as JSON Lines.
func runInstances(ctx context.Context, args []string) error {
	var g cli.Globals
	fs := cli.NewFlags("locus-dev instances", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "the history's last commit; default HEAD")
	name := fs.String("name", "", "the instances' repository, owner/name (what locus eval --repo-dir finds it by)")
	n := fs.Int("n", 130, "instances, their commits spread evenly over the first-parent history")
	since := fs.String("since", "", "only commits from this date on (YYYY-MM-DD)")
	until := fs.String("until", "", "only commits before this date (YYYY-MM-DD)")
	maxFiles := fs.Int("max-files", 5, "skip commits changing more non-test source files than this")
	out := fs.String("out", "", "output file (JSON Lines); default standard output")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var sinceT, untilT time.Time
	for _, d := range []struct {
		flag, v string
		t       *time.Time
	}{{"since", *since, &sinceT}, {"until", *until, &untilT}} {
		if d.v == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.v)
		if err != nil {
			return cli.UsageError(fs, fmt.Errorf("--%s %q: want a date as YYYY-MM-DD", d.flag, d.v))
		}
		*d.t = t
	}
	if err := cli.Check(fs, cli.IntRange("n", *n, 1, -1), cli.IntRange("max-files", *maxFiles, 1, -1)); err != nil {
		return err
	}
	if *name == "" {
		return cli.UsageError(fs, fmt.Errorf("--name owner/name is required"))
	}
	g.Logger()
	gitDir, head, err := benchTarget("instances", *repo, *ref)
	if err != nil {
		return err
	}
	insts, st, err := benchmark.HistoryInstances(ctx, benchmark.HistoryOptions{GitDir: gitDir, Head: head, Repo: *name,
		N: *n, Since: sinceT, Until: untilT, MaxFiles: *maxFiles})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, in := range insts {
		if err := enc.Encode(in); err != nil {
			return fmt.Errorf("write instances: %w", err)
		}
	}
	if *out == "" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("write instances: %w", err)
	}
	fmt.Fprintf(stderr, "%d instances from %d first-parent commits (%d looked at; skipped: %v)\n",
		len(insts), st.FirstParent, st.Looked, st.Skipped)
	return nil
}
