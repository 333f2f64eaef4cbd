package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph/changes"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/schema"
)

// ScrapeRun is one measured scrape, or one git log peer run.
type ScrapeRun struct {
	Tool       string  `json:"tool"`
	Seconds    float64 `json:"seconds"`
	Commits    int     `json:"commits"`
	CommitsPS  float64 `json:"commits_per_second"`
	Rows       int64   `json:"rows,omitempty"`
	Bytes      int64   `json:"bytes"` // Parquet bytes written, or git's output bytes
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	RatioToGit float64 `json:"ratio_to_git,omitempty"`
	// Functions says how a scrape with changed functions read the file
	// versions (nil for git and for scrapes without functions).
	Functions *changes.MapperStats `json:"functions,omitempty"`
}

// ScrapeOptions configures Scrape.
type ScrapeOptions struct {
	GitDir   string
	Head     gitrepo.Hash
	Backends []string // gitrepo backends to time, e.g. cat-file, go-git
	// Functions lists changed-functions modes to time with each backend:
	// "on" maps changed functions, "off" skips it.
	Functions []string
	Workers   int // goroutines diffing commits; 0: 2 × GOMAXPROCS
	// Verify parses every derived file version whole as well
	// (commits.Config.VerifyFunctions): slower, but it counts mismatches.
	Verify bool
	Out    string // where the Parquet output goes; "": a temporary directory, removed afterwards
	Child  ChildFunc
}

// scrapeSpec is what a child scrape is told.
type scrapeSpec struct {
	GitDir      string `json:"git_dir"`
	Head        string `json:"head"`
	Backend     string `json:"backend"`
	Workers     int    `json:"workers"`
	NoFunctions bool   `json:"no_functions"`
	Verify      bool   `json:"verify_functions,omitempty"`
	Out         string `json:"out"`
}

// Scrape times a full-history scrape per backend and functions mode, each
// in a child process, then `git log -p --raw --numstat` over the same
// history (without and with first-parent merge diffs); RatioToGit is each
// run's time over the plain git log's.
func Scrape(ctx context.Context, o ScrapeOptions) ([]ScrapeRun, error) {
	if len(o.Backends) == 0 || len(o.Functions) == 0 {
		return nil, fmt.Errorf("bench scrape %s: no backends or functions modes", o.GitDir)
	}
	var runs []ScrapeRun
	for _, b := range o.Backends {
		if _, err := parseBackend(b); err != nil {
			return nil, fmt.Errorf("bench scrape %s: %w", o.GitDir, err)
		}
		for _, mode := range o.Functions {
			if mode != "on" && mode != "off" {
				return nil, fmt.Errorf("bench scrape %s: functions mode %q: want on or off", o.GitDir, mode)
			}
			dir := o.Out
			if dir == "" {
				tmp, err := os.MkdirTemp("", "locus-bench-")
				if err != nil {
					return nil, err
				}
				defer os.RemoveAll(tmp)
				dir = tmp
			} else {
				dir = filepath.Join(dir, b+"-functions-"+mode)
			}
			var run ScrapeRun
			rss, err := runChild(ctx, o.Child, scrapeSpec{GitDir: o.GitDir, Head: o.Head.String(), Backend: b,
				Workers: o.Workers, NoFunctions: mode == "off", Verify: o.Verify, Out: dir}, &run)
			if err != nil {
				return nil, fmt.Errorf("bench scrape %s with %s: %w", o.GitDir, b, err)
			}
			run.PeakRSSMiB = rss
			runs = append(runs, run)
		}
	}
	for _, peer := range []struct {
		name string
		args []string
	}{
		{"git log -p --raw --numstat", []string{"log", "-p", "--raw", "--numstat"}},
		{"git log -p --raw --numstat --diff-merges=first-parent", []string{"log", "-p", "--raw", "--numstat", "--diff-merges=first-parent"}},
	} {
		args := append([]string{"--git-dir", o.GitDir}, peer.args...)
		args = append(args, o.Head.String())
		cmd := exec.CommandContext(ctx, "git", args...)
		cw := &countWriter{}
		cmd.Stdout = cw
		start := time.Now()
		_, rss, err := Measure(cmd)
		if err != nil {
			return nil, fmt.Errorf("bench scrape %s: %w", o.GitDir, err)
		}
		runs = append(runs, ScrapeRun{Tool: peer.name, Seconds: time.Since(start).Seconds(), Bytes: cw.n, PeakRSSMiB: rss})
	}
	gitSecs := runs[len(runs)-2].Seconds // plain git log -p --raw --numstat
	n := runs[0].Commits
	for i := range runs {
		if runs[i].Commits == 0 {
			runs[i].Commits = n
		}
		if runs[i].Seconds > 0 {
			runs[i].CommitsPS = float64(runs[i].Commits) / runs[i].Seconds
		}
		if gitSecs > 0 {
			runs[i].RatioToGit = runs[i].Seconds / gitSecs
		}
	}
	return runs, nil
}

// ScrapeChild runs the scrape spec describes (as Scrape's ChildFunc passes
// it) into a file store and writes its ScrapeRun as JSON to w.
func ScrapeChild(ctx context.Context, spec string, w io.Writer) error {
	var s scrapeSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("bench scrape child spec %q: %w", spec, err)
	}
	backend, err := parseBackend(s.Backend)
	if err != nil {
		return fmt.Errorf("bench scrape child: %w", err)
	}
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return fmt.Errorf("bench scrape output: %w", err)
	}
	b, err := blob.OpenFile(s.Out, fileblob.Options{})
	if err != nil {
		return fmt.Errorf("bench scrape output %s: %w", s.Out, err)
	}
	defer b.Close()
	start := time.Now()
	res, err := commits.Scrape(ctx, commits.Config{Bucket: b, Repo: benchRepo(s.GitDir),
		GitDir: s.GitDir, Head: s.Head, Diff: gitrepo.DiffOptions{Backend: backend, Workers: s.Workers}, NoFunctions: s.NoFunctions,
		VerifyFunctions: s.Verify})
	if err != nil {
		return fmt.Errorf("bench scrape %s: %w", s.GitDir, err)
	}
	secs := time.Since(start).Seconds()
	var bytes int64
	for _, p := range res.Parts {
		bytes += p.Bytes
	}
	tool := fmt.Sprintf("locus scrape (%s", backend)
	if s.Workers > 0 {
		tool += fmt.Sprintf(", %d workers", s.Workers)
	}
	if s.NoFunctions {
		tool += ", no functions"
	}
	if s.Verify {
		tool += ", verified"
	}
	tool += ")"
	run := ScrapeRun{Tool: tool, Seconds: secs, Commits: res.NewCommits, Rows: res.Rows, Bytes: bytes}
	if !s.NoFunctions {
		run.Functions = &res.Functions
	}
	return json.NewEncoder(w).Encode(run)
}

// parseBackend accepts the object backends a benchmark can time.
func parseBackend(s string) (gitrepo.Backend, error) {
	switch b := gitrepo.Backend(s); b {
	case gitrepo.BackendCatFile, gitrepo.BackendGoGit:
		return b, nil
	}
	return "", fmt.Errorf("unknown object backend %q: want %s or %s", s, gitrepo.BackendCatFile, gitrepo.BackendGoGit)
}

// benchRepo names the repository a benchmark writes as bench/<directory>.
func benchRepo(gitDir string) schema.RepoName {
	base := filepath.Base(strings.TrimSuffix(strings.TrimSuffix(gitDir, "/.git"), "/"))
	return schema.RepoName("bench/" + strings.TrimSuffix(base, ".git"))
}

// WriteScrapeTable prints runs as an aligned table.
func WriteScrapeTable(w io.Writer, gitDir string, head gitrepo.Hash, runs []ScrapeRun) error {
	n := 0
	if len(runs) > 0 {
		n = runs[0].Commits
	}
	fmt.Fprintf(w, "repository %s at %s: %d commits\n", gitDir, head, n)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSECONDS\tCOMMITS/S\tROWS\tBYTES\tPEAK RSS MiB\tTIME / GIT LOG")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%d\t%d\t%.0f\t%.2f\n", r.Tool, r.Seconds, r.CommitsPS, r.Rows, r.Bytes, r.PeakRSSMiB, r.RatioToGit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range runs {
		if f := r.Functions; f != nil {
			fmt.Fprintf(w, "%s: file versions remembered %d, parsed whole %d (%s), skeleton %d (%s), bodies only %d (%s), members only %d (%s)\n",
				r.Tool, f.Cached, f.Parsed, f.ParseTime.Round(time.Millisecond), f.Skeleton, f.SkeletonTime.Round(time.Millisecond),
				f.Bodies, f.BodiesTime.Round(time.Millisecond), f.Members, f.MembersTime.Round(time.Millisecond))
			if f.Recovered > 0 {
				fmt.Fprintf(w, "%s: %d derivations failed and were parsed whole instead\n", r.Tool, f.Recovered)
				for _, m := range f.RecoveredFrom {
					fmt.Fprintf(w, "  %s\n", m)
				}
			}
			if strings.Contains(r.Tool, "verified") {
				fmt.Fprintf(w, "%s: %d derived versions parsed again whole, %d differ\n", r.Tool, f.Verified, f.Mismatched)
				for _, m := range f.Mismatches {
					fmt.Fprintf(w, "  %s\n", m)
				}
			}
		}
	}
	return nil
}
