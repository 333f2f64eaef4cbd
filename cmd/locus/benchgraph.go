package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// graphRun is one measured graph build or parse-only pass.
type graphRun struct {
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

func runBenchGraph(ctx context.Context, args []string) error {
	var g globals
	fs := newFlags("bench graph", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	ref := fs.String("ref", "", "commit to build; default HEAD")
	child := fs.String("child", "", "internal: run one pass (graph or parse) and print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	g.logger()
	gitDir, head, err := benchTarget("bench graph", *repo, *ref)
	if err != nil {
		return err
	}
	if *child != "" {
		return benchGraphChild(ctx, gitDir, head, *child)
	}
	self, _ := os.Executable()
	var runs []graphRun
	for _, pass := range []string{"parse", "graph"} {
		cmd := exec.CommandContext(ctx, self, "bench", "graph", "--repo", gitDir, "--ref", head.String(), "--child", pass, "--log-level", "warn")
		cmd.Stderr = os.Stderr
		data, rss, err := measure(cmd)
		if err != nil {
			return fmt.Errorf("%s pass: %w", pass, err)
		}
		var r graphRun
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s pass: %w: %s", pass, err, data)
		}
		r.PeakRSSMiB = rss
		runs = append(runs, r)
	}
	for i := range runs {
		runs[i].Ratio = runs[i].Seconds / runs[0].Seconds
	}
	if g.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(runs)
	}
	fmt.Fprintf(stdout, "repository %s at %s\n", gitDir, head)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(stdout, "edges by type: %v; unresolved references: %v\n", runs[1].Edges, runs[1].Unresolved)
	}
	return nil
}

func benchGraphChild(ctx context.Context, gitDir string, head gitrepo.Hash, pass string) error {
	snap, err := gitrepo.OpenSnapshot(ctx, gitDir, "", head)
	if err != nil {
		return err
	}
	defer snap.Close()
	files := codegraph.GitFiles(snap)
	start := time.Now()
	r := graphRun{Tool: pass}
	switch pass {
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
		return fmt.Errorf("unknown pass %q", pass)
	}
	if err != nil {
		return err
	}
	r.Seconds = time.Since(start).Seconds()
	return json.NewEncoder(stdout).Encode(r)
}
