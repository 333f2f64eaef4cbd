// Command locus-bench runs the benchmarks that compare locus with peers too
// heavy to ship in the locus binary: today bleve's BM25 in the search
// benchmark.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/locus-dev/locus/benchmark"
	"github.com/locus-dev/locus/benchmark/blevepeer"
)

const usage = `usage: locus-bench search --repo DIR [--queries N] [--json]

search: BM25 index and query time of locus against bleve's BM25 on the same
tokens (latency, top-10 agreement, score differences), and SpIDER latency.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "search" {
		fmt.Fprint(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("locus-bench search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to index; default HEAD")
	queries := fs.Int("queries", 1000, "queries: the repository's latest commit subjects")
	asJSON := fs.Bool("json", false, "machine-readable output")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *repo == "" || fs.NArg() > 0 {
		fmt.Fprint(stderr, "locus-bench search: --repo DIR is required and takes no arguments\n"+usage)
		return 2
	}
	gitDir, head, err := benchmark.Target(*repo, *ref)
	if err != nil {
		fmt.Fprintln(stderr, "locus-bench:", err)
		return 1
	}
	res, err := benchmark.Search(ctx, benchmark.SearchOptions{GitDir: gitDir, Head: head, Queries: *queries, Peer: &blevepeer.Peer{}})
	if err == nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(res)
		} else {
			err = benchmark.WriteSearchTable(stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "locus-bench:", err)
		return 1
	}
	return 0
}
