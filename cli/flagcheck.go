package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
)

// cmdName is the command a flag set belongs to, as messages name it: the
// flag set's name ("locus index", "locus-dev bench graph") without the
// program's.
func cmdName(fs *flag.FlagSet) string {
	_, cmd, _ := strings.Cut(fs.Name(), " ")
	return cmd
}

// progName is the program a flag set belongs to: locus or locus-dev.
func progName(fs *flag.FlagSet) string {
	prog, _, _ := strings.Cut(fs.Name(), " ")
	return prog
}

// usageError is a bad command line: exit status 2, one line naming the command.
func usageError(fs *flag.FlagSet, err error) error {
	return exitError{code: 2, msg: fmt.Sprintf("%s: %v (run '%s %s -h' for the flags)", cmdName(fs), err, progName(fs), cmdName(fs))}
}

// flagError rewrites the flag package's parse error: an unknown flag names
// the nearest defined one.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
		if s := nearest(name, flagNames(fs)); s != "" {
			msg += "; did you mean --" + s + "?"
		}
		return usageError(fs, errors.New(msg))
	}
	return usageError(fs, err)
}

var logLevels = []string{"debug", "info", "warn", "error"}

// parseLogLevel accepts the four level names (any case).
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("--log-level %q: want one of %s", s, strings.Join(logLevels, ", "))
}

// checkStore refuses a --store that is neither a URL nor a plain directory
// but a mistyped URL ("s3:/bucket", "file:dir", "::::"): taken as a directory
// it would silently create a local store instead of the one meant.
func checkStore(s string) error {
	if s == "" || strings.Contains(s, "://") {
		return nil
	}
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.ContainsAny(s[:i], `/\`) {
		return fmt.Errorf("--store %q: looks like a URL without \"//\" (want file:///dir, s3://bucket/prefix or a directory path)", s)
	}
	return nil
}

func checkLogLevel(s string) error {
	_, err := parseLogLevel(s)
	return err
}

// checkHostPort accepts host:port with a port number.
func checkHostPort(flagName, v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%s %q: want host:port (%v)", flagName, v, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%s %q: port %q is not a number from 0 to 65535", flagName, v, port)
	}
	_ = host // empty means every interface, which a listener accepts
	return nil
}

// intRange checks lo <= v <= hi (hi < lo: no upper bound).
// maxBlobSizeUsage documents --max-blob-size on index, schedule and eval.
const maxBlobSizeUsage = "clone and fetch without blobs larger than this many bytes (git's --filter=blob:limit=N; needs the git CLI); such blobs, like those a mirror lacks, are recorded as missing (counted by status) and their files not parsed; 0: every blob"

// hostWaitUsage documents --host-wait on index, schedule create, backlog
// and triplets.
const hostWaitUsage = "how long a step waits for the worker host that holds the repository's clone before that host counts as gone and the repository is cloned again on a live host"

// checkHostWait checks --host-wait: a positive duration.
func checkHostWait(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--host-wait %v: want a positive duration, e.g. 10m", d)
	}
	return nil
}

// defaultZero is v, or 0 when v is the default def: inputs carry only what
// the user set, so a fleet's id (derived from its input) stays what it was
// before the option existed.
func defaultZero[T comparable](v, def T) T {
	var zero T
	if v == def {
		return zero
	}
	return v
}

func intRange(flagName string, v, lo, hi int) error {
	if v < lo || hi >= lo && v > hi {
		if hi < lo {
			return fmt.Errorf("--%s %d: want at least %d", flagName, v, lo)
		}
		return fmt.Errorf("--%s %d: want %d to %d", flagName, v, lo, hi)
	}
	return nil
}

// oneOf checks that v is one of the allowed values.
func oneOf(flagName, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	var shown []string
	for _, a := range allowed {
		if a == "" {
			a = `"" (automatic)`
		}
		shown = append(shown, a)
	}
	msg := fmt.Sprintf("--%s %q: want one of %s", flagName, v, strings.Join(shown, ", "))
	if s := nearest(v, allowed); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return errors.New(msg)
}

// checkBackend checks --git-backend.
func checkBackend(v string) error {
	return oneOf("git-backend", v, string(gitrepo.BackendAuto), string(gitrepo.BackendCatFile), string(gitrepo.BackendGoGit))
}

// checkWorkerFlags checks the backend URLs of a worker before anything
// starts: opening a remote embedder or a selector from a URL touches no
// network; a local model (onnx://) is loaded, and downloaded once when
// named by a Hugging Face id, and kept for the workers (openEmbedder).
func (g *Globals) checkWorkerFlags() error {
	if _, err := g.openEmbedder(context.Background()); err != nil {
		return fmt.Errorf("--embedder: %w", err)
	}
	if _, err := llm.OpenSelector(g.llm, 0); err != nil {
		return fmt.Errorf("--llm: %w", err)
	}
	if err := intRange("llm-concurrency", g.llmConc, 1, 256); err != nil {
		return err
	}
	if g.vectors != "" {
		if _, err := milvusAddress(g.vectors); err != nil {
			return err
		}
	}
	return nil
}

// checkRerank checks --rerank n: 0 (none) to search.MaxRerank, and an LLM
// to ask when this process runs the workers (noWorker false).
func (g *Globals) checkRerank(n int, noWorker bool) error {
	if err := intRange("rerank", n, 0, search.MaxRerank); err != nil {
		return err
	}
	return g.checkNeedsLLM("rerank", n > 0, noWorker)
}

// checkNeedsLLM checks that a flag that is on has an LLM (--llm) to ask,
// when this process runs the workers (noWorker false).
func (g *Globals) checkNeedsLLM(name string, on, noWorker bool) error {
	if !on || noWorker {
		return nil
	}
	if s, err := llm.OpenSelector(g.llm, 0); err == nil {
		if _, ok := s.(llm.Heuristic); ok {
			return fmt.Errorf("--%s needs an LLM: set --llm URL (or --no-worker, when workers elsewhere have one)", name)
		}
	}
	return nil
}

// milvusAddress is the host:port of a milvus:// vector index URL.
func milvusAddress(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "milvus" || u.Host == "" {
		return nil, fmt.Errorf("--vectors %q: want milvus://host:port", raw)
	}
	return u, nil
}

// check runs the checks in order and returns the first failure as a usage error.
func check(fs *flag.FlagSet, errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return usageError(fs, err)
		}
	}
	return nil
}

// atLeastK checks that the pool --n holds the budget --k.
func atLeastK(n, k int) error {
	if n < k {
		return fmt.Errorf("--n %d: the pool must hold at least --k (%d) functions", n, k)
	}
	return nil
}

// checkRef accepts an empty ref or a commit id of 7 to 64 hex digits.
func checkRef(ref string) error {
	if ref == "" {
		return nil
	}
	if len(ref) < 7 || len(ref) > 64 || strings.Trim(strings.ToLower(ref), "0123456789abcdef") != "" {
		return fmt.Errorf("--ref %q: want a commit id of 7 to 64 hex digits", ref)
	}
	return nil
}
