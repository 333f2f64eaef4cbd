package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// GraphRun is one measured graph build or parse-only pass.
type GraphRun struct {
	Tool       string         `json:"tool"`
	Seconds    float64        `json:"seconds"`
	Files      int            `json:"files"`
	Bytes      int64          `json:"bytes"`
	Nodes      int            `json:"nodes,omitempty"`
	Edges      map[string]int `json:"edges,omitempty"`
	Unresolved map[string]int `json:"unresolved,omitempty"`
	PeakRSSMiB float64        `json:"peak_rss_mib"`
	Ratio      float64        `json:"ratio_to_parse_only"`
}

// graphSpec is what a child graph pass is told.
type graphSpec struct {
	GitDir string `json:"git_dir"`
	Head   string `json:"head"`
	Pass   string `json:"pass"` // parse or graph
}

// Graph times tree-sitter parsing alone and the full graph build of one
// commit, each in a child process; Ratio is each pass's time over parsing's.
func Graph(ctx context.Context, gitDir string, head gitrepo.Hash, child ChildFunc) ([]GraphRun, error) {
	var runs []GraphRun
	for _, pass := range []string{"parse", "graph"} {
		var r GraphRun
		rss, err := runChild(ctx, child, graphSpec{GitDir: gitDir, Head: head.String(), Pass: pass}, &r)
		if err != nil {
			return nil, fmt.Errorf("bench graph %s, %s pass: %w", gitDir, pass, err)
		}
		r.PeakRSSMiB = rss
		runs = append(runs, r)
	}
	for i := range runs {
		if runs[0].Seconds > 0 {
			runs[i].Ratio = runs[i].Seconds / runs[0].Seconds
		}
	}
	return runs, nil
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
	return json.NewEncoder(w).Encode(r)
}

// WriteGraphTable prints runs as an aligned table.
func WriteGraphTable(w io.Writer, gitDir string, head gitrepo.Hash, runs []GraphRun) error {
	fmt.Fprintf(w, "repository %s at %s\n", gitDir, head)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PASS\tSECONDS\tFILES\tFILES/S\tMB/S\tNODES\tEDGES\tPEAK RSS MiB\tTIME / PARSE-ONLY")
	for _, r := range runs {
		edges := 0
		for _, n := range r.Edges {
			edges += n
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%d\t%.0f\t%.1f\t%d\t%d\t%.0f\t%.2f\n", r.Tool, r.Seconds, r.Files, float64(r.Files)/r.Seconds,
			float64(r.Bytes)/1e6/r.Seconds, r.Nodes, edges, r.PeakRSSMiB, r.Ratio)
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
