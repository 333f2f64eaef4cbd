// Package benchmark measures locus against a peer in the same run: commit
// scraping against git log, graph building against parsing alone, and BM25
// search against another engine on the same documents.
package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locus-dev/locus/internal/gitrepo"
)

// Target resolves a repository read in place (a working copy or a bare
// directory) and a ref (empty: HEAD) to its git directory and commit.
func Target(repo, ref string) (string, gitrepo.Hash, error) {
	gitDir, err := gitrepo.GitDir(repo)
	if err != nil {
		return "", gitrepo.ZeroHash, err
	}
	head, err := gitrepo.Resolve(gitDir, ref)
	if err != nil {
		return "", gitrepo.ZeroHash, fmt.Errorf("resolve %q in %s: %w", ref, repo, err)
	}
	return gitDir, head, nil
}

// ChildFunc returns the command that runs one measured pass in a fresh
// process (so its peak RSS is its own): the caller's binary re-invoked with
// spec, which that binary hands to ScrapeChild or GraphChild.
type ChildFunc func(ctx context.Context, spec string) (*exec.Cmd, error)

// runChild runs one pass described by spec in a child process and decodes
// the JSON it prints into out; it returns the child's peak RSS in MiB.
func runChild(ctx context.Context, child ChildFunc, spec any, out any) (float64, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return 0, err
	}
	cmd, err := child(ctx, string(js))
	if err != nil {
		return 0, err
	}
	cmd.Stderr = os.Stderr
	data, rss, err := Measure(cmd)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return 0, fmt.Errorf("child output: %w: %q", err, data)
	}
	return rss, nil
}

// Measure runs cmd and returns its stdout (when not redirected) and peak RSS
// in MiB. A child's ru_maxrss counts the pages it shared with this (large)
// process between fork and exec, so the command runs under GNU time, whose
// own child is forked from a small process; without it rusage is reported.
func Measure(cmd *exec.Cmd) ([]byte, float64, error) {
	var buf strings.Builder
	if cmd.Stdout == nil {
		cmd.Stdout = &buf
	}
	var rssFile string
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		f, err := os.CreateTemp("", "locus-rss-")
		if err != nil {
			return nil, 0, err
		}
		f.Close()
		rssFile = f.Name()
		defer os.Remove(rssFile)
		cmd.Args = append([]string{"/usr/bin/time", "-f", "%M", "-o", rssFile}, cmd.Args...)
		cmd.Path = "/usr/bin/time"
	}
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	var rss float64
	if rssFile != "" {
		data, err := os.ReadFile(rssFile)
		if err != nil {
			return nil, 0, err
		}
		fields := strings.Fields(string(data))
		if len(fields) == 0 {
			return nil, 0, fmt.Errorf("GNU time wrote no peak RSS")
		}
		kib, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, 0, fmt.Errorf("GNU time output %q: %w", data, err)
		}
		rss = kib / 1024
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024 // Linux reports KiB
	}
	return []byte(buf.String()), rss, nil
}

// countWriter counts the bytes written to it (a peer's output size).
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// Percentile is the p-th percentile (nearest rank, rounded down) of ds in
// milliseconds; 0 for no samples.
func Percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return float64(s[i].Microseconds()) / 1000
}
