package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// GraphRun is one graph build or parse-only pass, measured once or, with
// several runs, the median of its runs.
type GraphRun struct {
	Tool    string  `json:"tool"`
	Seconds float64 `json:"seconds"`
	// CPUSeconds is the pass's own CPU time (user and system, every
	// thread), which a busy machine changes less than wall time.
	CPUSeconds float64        `json:"cpu_seconds"`
	Files      int            `json:"files"`
	Bytes      int64          `json:"bytes"`
	Nodes      int            `json:"nodes,omitempty"`
	Edges      map[string]int `json:"edges,omitempty"`
	Unresolved map[string]int `json:"unresolved,omitempty"`
	PeakRSSMiB float64        `json:"peak_rss_mib"`
	Ratio      float64        `json:"ratio_to_parse_only"`
	CPURatio   float64        `json:"cpu_ratio_to_parse_only"`
	// With several runs: how many, and the least and most seconds and
	// ratios among them (each run's ratio is to the parse-only run just
	// before it).
	Runs       int        `json:"runs,omitempty"`
	SecondsMin float64    `json:"seconds_min,omitempty"`
	SecondsMax float64    `json:"seconds_max,omitempty"`
	RatioRange [2]float64 `json:"ratio_range,omitzero"`
}

// graphSpec is what a child graph pass is told.
type graphSpec struct {
	GitDir string `json:"git_dir"`
	Head   string `json:"head"`
	Pass   string `json:"pass"` // parse or graph
}

// GraphRuns says how many times Graph runs each pass.
type GraphRuns struct {
	// Runs: at least this many of each pass; default 1.
	Runs int
	// MinSeconds: more runs, until each pass has been timed for at least
	// this long in all (at most MaxGraphRuns). A small repository's pass
	// takes tens of milliseconds in a fresh process, and the median of five
	// of those is mostly the machine's noise; default 0.
	MinSeconds float64
}

// MaxGraphRuns bounds the runs GraphRuns.MinSeconds adds.
const MaxGraphRuns = 500

// Graph times tree-sitter parsing alone and the full graph build of one
// commit, each in a child process, as often as n says (at least once), the
// two passes alternating so that a slow spell of the machine falls on
// both. Each pass reports its medians; Ratio and CPURatio are over
// parsing's.
func Graph(ctx context.Context, gitDir string, head gitrepo.Hash, child ChildFunc, n GraphRuns) ([]GraphRun, error) {
	passes := []string{"parse", "graph"}
	all := make([][]GraphRun, len(passes))
	timed := make([]float64, len(passes))
	runs := 0
	for ; runs < max(n.Runs, 1) || runs < MaxGraphRuns && slices.Min(timed) < n.MinSeconds; runs++ {
		for i, pass := range passes {
			var r GraphRun
			rss, err := runChild(ctx, child, graphSpec{GitDir: gitDir, Head: head.String(), Pass: pass}, &r)
			if err != nil {
				return nil, fmt.Errorf("bench graph %s, %s pass: %w", gitDir, pass, err)
			}
			r.PeakRSSMiB = rss
			all[i] = append(all[i], r)
			timed[i] += r.Seconds
		}
	}
	out := make([]GraphRun, len(passes))
	for i, rs := range all {
		r := rs[0] // counts are the same in every run
		r.Seconds = median(rs, func(r GraphRun) float64 { return r.Seconds })
		r.CPUSeconds = median(rs, func(r GraphRun) float64 { return r.CPUSeconds })
		r.PeakRSSMiB = median(rs, func(r GraphRun) float64 { return r.PeakRSSMiB })
		if runs > 1 {
			r.Runs = runs
			r.SecondsMin, r.SecondsMax = rs[0].Seconds, rs[0].Seconds
			r.RatioRange = [2]float64{math.Inf(1), 0}
			for k, x := range rs {
				r.SecondsMin, r.SecondsMax = min(r.SecondsMin, x.Seconds), max(r.SecondsMax, x.Seconds)
				if p := all[0][k].Seconds; p > 0 {
					q := x.Seconds / p
					r.RatioRange = [2]float64{min(r.RatioRange[0], q), max(r.RatioRange[1], q)}
				}
			}
		}
		out[i] = r
	}
	for i := range out {
		if out[0].Seconds > 0 {
			out[i].Ratio = out[i].Seconds / out[0].Seconds
		}
		if out[0].CPUSeconds > 0 {
			out[i].CPURatio = out[i].CPUSeconds / out[0].CPUSeconds
		}
	}
	return out, nil
}

// median is the median of f over rs.
func median(rs []GraphRun, f func(GraphRun) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return metrics.Quantile(v, 0.5)
}

// GraphChild runs the pass spec describes (as Graph's ChildFunc passes it)
// and writes its GraphRun as JSON to w.
func GraphChild(ctx context.Context, spec string, w io.Writer) error {
	var s graphSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("bench graph child spec %q: %w", spec, err)
	}
	head, ok := gitrepo.ParseHash(s.Head)
	if !ok {
		return fmt.Errorf("bench graph child: commit %q is not a hex object id", s.Head)
	}
	snap, err := gitrepo.OpenSnapshot(ctx, s.GitDir, "", head)
	if err != nil {
		return fmt.Errorf("bench graph %s at %s: %w", s.GitDir, s.Head, err)
	}
	defer snap.Close()
	files := codegraph.GitFiles(snap)
	cpu0 := processCPU()
	start := time.Now()
	r := GraphRun{}
	switch s.Pass {
	case "parse":
		r.Tool = "tree-sitter parse only"
		r.Files, r.Bytes, err = codegraph.ParseOnly(ctx, files, codegraph.Options{})
	case "graph":
		r.Tool = "locus graph build"
		var gr *codegraph.Graph
		gr, err = codegraph.Build(ctx, files, codegraph.Options{})
		if err == nil {
			r.Files, r.Bytes, r.Nodes, r.Edges, r.Unresolved = gr.Stats.Files, gr.Stats.Bytes, gr.Stats.Nodes, gr.Stats.Edges, gr.Stats.Unresolved
		}
	default:
		return fmt.Errorf("bench graph child: unknown pass %q: want parse or graph", s.Pass)
	}
	if err != nil {
		return fmt.Errorf("bench graph %s at %s, %s pass: %w", s.GitDir, s.Head, s.Pass, err)
	}
	r.Seconds = time.Since(start).Seconds()
	r.CPUSeconds = (processCPU() - cpu0).Seconds()
	return json.NewEncoder(w).Encode(r)
}

// WriteGraphTable prints runs as an aligned table.
func WriteGraphTable(w io.Writer, gitDir string, head gitrepo.Hash, runs []GraphRun) error {
	fmt.Fprintf(w, "repository %s at %s\n", gitDir, head)
	if len(runs) > 0 && runs[0].Runs > 1 {
		fmt.Fprintf(w, "medians of %d runs, the passes alternating\n", runs[0].Runs)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PASS\tSECONDS\tCPU SECONDS\tFILES\tFILES/S\tMB/S\tNODES\tEDGES\tPEAK RSS MiB\tTIME / PARSE-ONLY\tCPU / PARSE-ONLY")
	for _, r := range runs {
		edges := 0
		for _, n := range r.Edges {
			edges += n
		}
		ratio := fmt.Sprintf("%.2f", r.Ratio)
		if r.Runs > 1 && r.RatioRange != [2]float64{1, 1} {
			ratio += fmt.Sprintf(" (%.2f–%.2f)", r.RatioRange[0], r.RatioRange[1])
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d\t%.0f\t%.1f\t%d\t%d\t%.0f\t%s\t%.2f\n", r.Tool, r.Seconds, r.CPUSeconds, r.Files, float64(r.Files)/r.Seconds,
			float64(r.Bytes)/1e6/r.Seconds, r.Nodes, edges, r.PeakRSSMiB, ratio, r.CPURatio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(runs) == 2 {
		_, err := fmt.Fprintf(w, "edges by type: %v; unresolved references: %v\n", runs[1].Edges, runs[1].Unresolved)
		return err
	}
	return nil
}

// processCPU is the CPU time this process has used so far, user and
// system, all threads; 0 where the system does not say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
