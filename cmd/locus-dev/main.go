// Command locus-dev holds the developers' tools that do not ship in the
// locus binary: the benchmarks (scraping, graph builds, search with bleve's
// BM25 as a peer, backlogs, re-indexing, embedding), the function check
// against ctags, the history check against git log, and instances for
// locus eval selected from a repository's history.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/locus-dev/locus/cli"
	"github.com/locus-dev/locus/internal/gcstart"
)

const usage = `locus-dev runs the developers' benchmarks and checks of locus.

Usage:
  locus-dev bench  scrape|graph|search|backlog|reindex|ctags|embed|history [flags]
                   time scraping, graph builds, search (bleve as a peer with --peer bleve),
                   backlogs, re-indexing and embedding; check functions against ctags,
                   history against git log
  locus-dev instances --repo DIR --name owner/name [--n 130] [--since D] [--until D]
                   function-level instances (swe-dev.jsonl's format) from a repository's
                   history, for locus eval on a repository without an instance file

Run "locus-dev bench SUBCOMMAND -h" for the flags of a benchmark.
`

// stdout is where results go, stderr progress; tests replace them.
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

func main() {
	gcstart.Raise(cli.StartHeap)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// run is locus-dev with its arguments (without the program name); it
// returns the process exit status.
func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "bench":
		return cli.ExitStatus("locus-dev", runBenchCommand(ctx, args[1:]))
	case "instances":
		return cli.ExitStatus("locus-dev", runInstances(ctx, args[1:]))
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if s := cli.Nearest(args[0], []string{"bench", "instances"}); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	fmt.Fprintf(stderr, "locus-dev: %s\nRun 'locus-dev -h' for the list of commands.\n", msg)
	return 2
}

// printJSON writes v to stdout as indented JSON (what --json prints).
func printJSON(v any) error { return cli.WriteJSON(stdout, v) }
