package cli

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/schema"
)

// What cmd/locus-dev builds its commands on: the shared flags, parsing and
// checking them with locus's messages, exit statuses, JSON and progress
// output. Its commands name their flag sets "locus-dev COMMAND"; ExitStatus
// and -h print to the process's standard error and output.

// StartHeap is the heap a locus process grows to before its collections
// are paced by GOGC (gcstart): short commands, and the benchmarks' fresh
// child processes, then do not collect over and over while their heaps
// are small.
const StartHeap = 64 << 20

// ErrHelp ends a command after it printed its help: exit status 0.
var ErrHelp error = errHelp

// Exit is an error that ExitStatus prints as msg (nothing when empty) and
// ends the process with code.
func Exit(code int, msg string) error { return exitError{code: code, msg: msg} }

// JSON reports whether --json was given.
func (g *Globals) JSON() bool { return g.json }

// Logger sets the default logger to --log-level on Stderr and returns it.
func (g *Globals) Logger() *slog.Logger { return g.logger() }

// EmbedderFlag adds --embedder to fs.
func (g *Globals) EmbedderFlag(fs *flag.FlagSet) {
	fs.StringVar(&g.embedder, "embedder", "", embedderHelp)
}

// OpenEmbedder opens --embedder, once per process.
func (g *Globals) OpenEmbedder(ctx context.Context) (embed.Embedder, error) {
	return g.openEmbedder(ctx)
}

// Parse parses args into fs as every locus command does: LOCUS_<FLAG>
// environment variables, -h (ErrHelp), and one message naming the nearest
// flag for a bad one.
func Parse(fs *flag.FlagSet, args []string) error { return parse(fs, args) }

// UsageError is err as a usage error of fs's command (exit status 2).
func UsageError(fs *flag.FlagSet, err error) error { return usageError(fs, err) }

// Check returns the first of errs as a usage error of fs's command.
func Check(fs *flag.FlagSet, errs ...error) error { return check(fs, errs...) }

// IntRange checks --flagName v against [lo, hi]; hi < lo: no upper bound.
func IntRange(flagName string, v, lo, hi int) error { return intRange(flagName, v, lo, hi) }

// OneOf checks that --flagName v is one of allowed.
func OneOf(flagName, v string, allowed ...string) error { return oneOf(flagName, v, allowed...) }

// Nearest is the candidate a misspelt s most likely meant, or "".
func Nearest(s string, candidates []string) string { return nearest(s, candidates) }

// WriteJSON writes v to w as indented JSON (what --json prints).
func WriteJSON(w io.Writer, v any) error { return writeJSON(w, v) }

// WatchProgress polls query every poll interval and shows the count of
// noun on w: a bar on a terminal, plain lines every plainEvery otherwise.
// The returned stop ends it (done: the work finished) once the last state
// is shown.
func WatchProgress(ctx context.Context, w io.Writer, noun string, query func(context.Context) (schema.FleetProgress, error),
	poll, plainEvery time.Duration) (stop func(done bool)) {
	return watchProgressOf(ctx, w, noun, query, poll, plainEvery)
}
