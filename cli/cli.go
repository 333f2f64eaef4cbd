package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/jobs"
)

// stderr is where messages, progress and usage errors go; tests replace it.
var stderr io.Writer = os.Stderr

// commands are the subcommands of locus by name.
var commands = map[string]func(context.Context, []string) error{
	"index":    runIndex,
	"status":   runStatus,
	"localize": runLocalize,
	"backlog":  runBacklog,
	"triplets": runTriplets,
	"rank":     runRank,
	"schedule": runSchedule,
	"eval":     runEval,
	"server":   runServer,
	"worker":   runWorker,
}

// Main is locus with its arguments (without the program name); it prints
// what the user must see and returns the process exit status.
func Main(ctx context.Context, args []string) int { return run(ctx, args) }

// run is Main; commands that hand over to others (help COMMAND) call it.
func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 {
			// "locus help index" is "locus index -h".
			if _, ok := commands[rest[0]]; ok {
				return run(ctx, []string{rest[0], "-h"})
			}
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, versionString(debug.ReadBuildInfo()))
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		msg := fmt.Sprintf("unknown command %q", name)
		if name == "bench" {
			// Benchmarks are developer tools, kept out of the locus binary.
			msg += "; benchmarks are in locus-dev: go run ./cmd/locus-dev bench " + strings.Join(rest, " ")
		} else if s := nearest(name, sortedKeys(commands)); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		fmt.Fprintf(stderr, "locus: %s\nRun 'locus -h' for the list of commands.\n", msg)
		return 2
	}
	return ExitStatus("locus", cmd(ctx, rest))
}

// ExitStatus prints err once, as the user should read it, after the
// program's name, and returns the exit status.
func ExitStatus(prog string, err error) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, prog+":", termtext.Lines(ee.msg))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, prog+":", termtext.Lines(errorMessage(err)))
	return 1
}

// errHelp ends a command after it printed its help: exit status 0.
var errHelp = exitError{code: 0}

// errorMessage is err as one readable line: where a Temporal workflow,
// child or activity error wraps the failure, only the failing step's own
// message is kept (the SDK's wrappers repeat ids, types and the cause chain),
// and a prefix the message already starts with is not said twice.
func errorMessage(err error) string {
	full := err.Error()
	var root error
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch e.(type) {
		case *temporal.WorkflowExecutionError, *temporal.ChildWorkflowExecutionError, *temporal.ActivityError:
			if root == nil {
				root = e
			}
		}
	}
	if root == nil {
		return full
	}
	prefix := strings.TrimSuffix(full, root.Error())
	msg := jobs.FailureMessage(root)
	if p := strings.TrimSuffix(prefix, ": "); p != "" && strings.HasPrefix(msg, p) {
		return msg
	}
	return prefix + msg
}

// versionString is what locus --version prints: the module version and the
// commit it was built from, marked when the tree had local changes.
func versionString(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "locus (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified, when string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		case "vcs.time":
			when = s.Value
		}
	}
	out := "locus " + v
	if rev != "" {
		out += " commit " + short(rev) + modified
		if when != "" {
			out += " (" + when + ")"
		}
	}
	return out + " " + bi.GoVersion
}

// nearest is the candidate closest to s by edit distance, or "" when none
// is close enough to be what was meant.
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := levenshtein(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	// At most a third of the longer name may differ (and at least one edit is
	// always allowed): "indx" is index, "foo" is nothing.
	limit := max(1, max(len(s), len(best))/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// levenshtein is the edit distance between a and b (insertions, deletions,
// substitutions), over bytes: flag and command names are ASCII.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// flagNames lists the flags of fs.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
