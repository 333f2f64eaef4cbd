package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/schema"
)

// benchRun is one measured run.
type benchRun struct {
	Tool       string  `json:"tool"`
	Seconds    float64 `json:"seconds"`
	Commits    int     `json:"commits"`
	CommitsPS  float64 `json:"commits_per_second"`
	Rows       int64   `json:"rows,omitempty"`
	Bytes      int64   `json:"bytes"` // Parquet bytes written, or git's output bytes
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	RatioToGit float64 `json:"ratio_to_git,omitempty"`
}

func runBench(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "graph" {
		return runBenchGraph(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "search" {
		return runBenchSearch(ctx, args[1:])
	}
	if len(args) == 0 || args[0] != "scrape" {
		return exitError{code: 2, msg: "usage: locus bench scrape --repo DIR [--ref REF] [--backends cat-file,go-git]\n       locus bench graph --repo DIR [--ref REF]"}
	}
	var g globals
	fs := newFlags("bench scrape", &g)
	repo := fs.String("repo", "", "git directory or working copy to scrape (read in place, not cloned)")
	ref := fs.String("ref", "", "ref to scrape up to; default HEAD")
	backends := fs.String("backends", "cat-file,go-git", "object backends to time, comma-separated")
	child := fs.String("child", "", "internal: run one scrape with this backend and print JSON")
	workers := fs.Int("workers", 0, "goroutines diffing commits; default GOMAXPROCS")
	functions := fs.String("functions", "on", "changed-functions mapping: on, off, or both (times each backend with and without it)")
	out := fs.String("out", "", "directory for the Parquet output; default a temporary directory, removed afterwards")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	gitDir, head, err := benchTarget("bench scrape", *repo, *ref)
	if err != nil {
		return err
	}
	g.logger()
	if *child != "" {
		return benchChild(ctx, gitDir, head.String(), gitrepo.DiffOptions{Backend: gitrepo.Backend(*child), Workers: *workers}, *functions == "off", *out)
	}
	var runs []benchRun
	modes := []string{*functions}
	if *functions == "both" {
		modes = []string{"on", "off"}
	}
	for _, combo := range crossModes(strings.Split(*backends, ","), modes) {
		b, mode := combo[0], combo[1]
		dir := *out
		if dir == "" {
			if dir, err = os.MkdirTemp("", "locus-bench-"); err != nil {
				return err
			}
			defer os.RemoveAll(dir)
		} else {
			dir = filepath.Join(dir, b+"-functions-"+mode)
		}
		self, _ := os.Executable()
		cmd := exec.CommandContext(ctx, self, "bench", "scrape", "--repo", gitDir, "--ref", head.String(), "--child", b, "--out", dir,
			"--workers", strconv.Itoa(*workers), "--functions", mode, "--log-level", "warn")
		cmd.Stderr = os.Stderr
		var run benchRun
		data, rss, err := measure(cmd)
		if err != nil {
			return fmt.Errorf("scrape with %s: %w", b, err)
		}
		if err := json.Unmarshal(data, &run); err != nil {
			return fmt.Errorf("scrape with %s: %w: %s", b, err, data)
		}
		run.PeakRSSMiB = rss
		runs = append(runs, run)
	}
	for _, peer := range []struct {
		name string
		args []string
	}{
		{"git log -p --raw --numstat", []string{"log", "-p", "--raw", "--numstat"}},
		{"git log -p --raw --numstat --diff-merges=first-parent", []string{"log", "-p", "--raw", "--numstat", "--diff-merges=first-parent"}},
	} {
		args := append([]string{"--git-dir", gitDir}, peer.args...)
		args = append(args, head.String())
		cmd := exec.CommandContext(ctx, "git", args...)
		cw := &countWriter{}
		cmd.Stdout = cw
		start := time.Now()
		_, rss, err := measure(cmd)
		if err != nil {
			return fmt.Errorf("%s: %w", peer.name, err)
		}
		secs := time.Since(start).Seconds()
		runs = append(runs, benchRun{Tool: peer.name, Seconds: secs, Bytes: cw.n, PeakRSSMiB: rss})
	}
	gitSecs := runs[len(runs)-2].Seconds
	n := runs[0].Commits
	for i := range runs {
		if runs[i].Commits == 0 {
			runs[i].Commits = n
		}
		runs[i].CommitsPS = float64(runs[i].Commits) / runs[i].Seconds
		runs[i].RatioToGit = runs[i].Seconds / gitSecs
	}
	if g.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(runs)
	}
	fmt.Fprintf(stdout, "repository %s at %s: %d commits\n", gitDir, head, n)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSECONDS\tCOMMITS/S\tROWS\tBYTES\tPEAK RSS MiB\tTIME / GIT LOG")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%d\t%d\t%.0f\t%.2f\n", r.Tool, r.Seconds, r.CommitsPS, r.Rows, r.Bytes, r.PeakRSSMiB, r.RatioToGit)
	}
	return tw.Flush()
}

// benchChild scrapes the whole history into a file store and prints a benchRun.
func benchChild(ctx context.Context, gitDir, head string, diff gitrepo.DiffOptions, noFunctions bool, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := blob.OpenFile(out, fileblob.Options{})
	if err != nil {
		return err
	}
	defer b.Close()
	start := time.Now()
	res, err := commits.Scrape(ctx, commits.Config{Bucket: b, Repo: schema.RepoName("bench/" + filepath.Base(strings.TrimSuffix(gitDir, "/.git"))),
		GitDir: gitDir, Head: head, Diff: diff, NoFunctions: noFunctions})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	var bytes int64
	for _, p := range res.Parts {
		bytes += p.Bytes
	}
	tool := fmt.Sprintf("locus scrape (%s", diff.Backend)
	if diff.Workers > 0 {
		tool += fmt.Sprintf(", %d workers", diff.Workers)
	}
	if noFunctions {
		tool += ", no functions"
	}
	tool += ")"
	return json.NewEncoder(stdout).Encode(benchRun{Tool: tool, Seconds: secs,
		Commits: res.NewCommits, Rows: res.Rows, Bytes: bytes})
}

// measure runs cmd and returns its stdout (when not redirected) and peak RSS
// in MiB. A child's ru_maxrss counts the pages it shared with this (large)
// process between fork and exec, so the command runs under GNU time, whose
// own child is forked from a small process; without it rusage is reported.
func measure(cmd *exec.Cmd) ([]byte, float64, error) {
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
		return nil, 0, err
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

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// gitDirOf returns the git directory of a working copy, or dir itself if bare.
func gitDirOf(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(filepath.Join(abs, ".git")); err == nil && st.IsDir() {
		return filepath.Join(abs, ".git"), nil
	}
	if _, err := os.Stat(filepath.Join(abs, "objects")); err != nil {
		return "", fmt.Errorf("%s is not a git repository", dir)
	}
	return abs, nil
}

// crossModes pairs every backend with every functions mode.
func crossModes(backends, modes []string) [][2]string {
	var out [][2]string
	for _, b := range backends {
		for _, m := range modes {
			out = append(out, [2]string{b, m})
		}
	}
	return out
}

// benchTarget resolves a benchmark's --repo (read in place) and --ref.
func benchTarget(cmd, repo, ref string) (string, gitrepo.Hash, error) {
	if repo == "" {
		return "", gitrepo.ZeroHash, exitError{code: 2, msg: cmd + ": --repo is required"}
	}
	gitDir, err := gitDirOf(repo)
	if err != nil {
		return "", gitrepo.ZeroHash, err
	}
	head, err := gitrepo.Resolve(gitDir, ref)
	return gitDir, head, err
}
