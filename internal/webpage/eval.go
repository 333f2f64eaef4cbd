package webpage

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/eval/report"
)

// headlineCols are the figures the eval page shows first, the first of
// these lists whose metrics the result set has: function-level
// benchmarks' Recall@20, Acc@20 and MRR, else commit search's.
var headlineCols = [][]report.Column{
	{{Metric: metrics.Recall, K: 20}, {Metric: metrics.Acc, K: 20}, {Metric: metrics.MRR}},
	{{Metric: metrics.MAP}, {Metric: metrics.MRR}, {Metric: metrics.Precision, K: 1}, {Metric: metrics.Recall, K: 10}, {Metric: metrics.Recall, K: 100}},
}

// shownRanked is how much of each instance's ranking the page lists.
const shownRanked = 20

type evalData struct {
	Notes       []string
	Empty       string
	Headline    *evalTable
	ByGroup     *evalTable
	Plots       []plotView
	Tables      []evalTable
	Comparisons []report.Comparison
	Instances   []instanceView
	Shown       int
}

type evalTable struct {
	Caption string
	Cols    []string
	Rows    []evalRow
}

type evalRow struct {
	Group, Label string
	Cells        []evalCell
}

type evalCell struct {
	OK bool
	metrics.Summary
}

type plotView struct {
	Src template.URL
	Alt string
	W   int
}

type instanceView struct {
	ID, Method, Level, Group, Figures, Search string
	Ranked                                    []rankedView
	Missed                                    []string
}

type rankedView struct {
	Name string
	Gold bool
}

// WriteEval writes the evaluation page of rs: the headline figures per
// method and per group, the plots, every table one click away, and each
// instance's ranking with its gold marked.
func WriteEval(w io.Writer, rs *report.ResultSet) error {
	d, err := evalView(rs)
	if err != nil {
		return err
	}
	title := "Evaluation"
	if rs.Benchmark != "" {
		title += ": " + text(rs.Benchmark)
	}
	sub := fmt.Sprintf("Means over instances with percentile-bootstrap 95%% intervals (%d draws, seed %d).", rs.Draws, rs.Seed)
	return render(w, "eval", title, sub, d)
}

func evalView(rs *report.ResultSet) (evalData, error) {
	d := evalData{Shown: shownRanked, Comparisons: rs.Comparisons}
	for _, n := range rs.Notes {
		d.Notes = append(d.Notes, text(n))
	}
	if len(rs.Cells) == 0 {
		d.Empty = "No instance was evaluated: there are no figures."
	}
	level := ""
	if len(rs.Levels) > 0 {
		level = rs.Levels[0]
	}
	var head []report.Column
	for _, cand := range headlineCols {
		for _, c := range cand {
			if rs.HasColumn(level, c) {
				head = append(head, c)
			}
		}
		if len(head) > 0 {
			break
		}
	}
	if len(head) > 0 {
		_, n := rs.Columns(level, report.GroupAll)
		d.Headline = &evalTable{Caption: fmt.Sprintf("%s level, all instances (n=%d)", level, n), Cols: labels(head)}
		for _, m := range rs.Methods {
			d.Headline.Rows = append(d.Headline.Rows, evalRow{Label: m, Cells: cells(rs, m, report.GroupAll, level, head)})
		}
		var groups []string
		for _, g := range rs.Groups {
			if g != report.GroupAll {
				groups = append(groups, g)
			}
		}
		if len(groups) > 0 {
			d.ByGroup = &evalTable{Caption: fmt.Sprintf("%s level, by group", level), Cols: labels(head)}
			for _, g := range groups {
				_, n := rs.Columns(level, g)
				for _, m := range rs.Methods {
					d.ByGroup.Rows = append(d.ByGroup.Rows, evalRow{Group: fmt.Sprintf("%s (n=%d)", g, n), Label: m, Cells: cells(rs, m, g, level, head)})
				}
			}
		}
	}
	for _, metric := range report.PlotMetrics {
		for _, lv := range rs.Levels {
			if !rs.HasPlot(lv, report.GroupAll, metric) {
				continue
			}
			var buf bytes.Buffer
			if err := report.WritePlot(&buf, rs, lv, report.GroupAll, metric); err != nil {
				return d, fmt.Errorf("eval page: %w", err)
			}
			// Bytes this package made: a PNG, as a data URL.
			src := template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()))
			d.Plots = append(d.Plots, plotView{Src: src, Alt: fmt.Sprintf("%s@K, %s level, all instances", metric, lv), W: 520})
		}
	}
	for _, lv := range rs.Levels {
		for _, g := range rs.Groups {
			cols, n := rs.Columns(lv, g)
			if len(cols) == 0 {
				continue
			}
			t := evalTable{Caption: fmt.Sprintf("%s level, %s (n=%d)", lv, g, n), Cols: labels(cols)}
			for _, m := range rs.Methods {
				t.Rows = append(t.Rows, evalRow{Label: m, Cells: cells(rs, m, g, lv, cols)})
			}
			d.Tables = append(d.Tables, t)
		}
	}
	for _, in := range rs.Instances {
		v := instanceView{ID: text(in.ID), Method: text(in.Method), Level: text(in.Level), Group: text(in.Group)}
		var figs []string
		for _, c := range head {
			if x, ok := in.Values[c.Label()]; ok {
				figs = append(figs, fmt.Sprintf("%s %.3f", c.Label(), x))
			}
		}
		v.Figures = strings.Join(figs, " · ")
		gold := map[string]bool{}
		for _, g := range in.Gold {
			gold[g] = true
		}
		for _, r := range in.Ranked[:min(len(in.Ranked), shownRanked)] {
			v.Ranked = append(v.Ranked, rankedView{Name: text(r), Gold: gold[r]})
		}
		shown := in.Ranked[:min(len(in.Ranked), shownRanked)]
		for _, g := range in.Gold {
			if !slices.Contains(shown, g) {
				v.Missed = append(v.Missed, text(g))
			}
		}
		v.Search = text(strings.Join(append([]string{v.ID, v.Method, v.Level, v.Group}, shown...), " "))
		d.Instances = append(d.Instances, v)
	}
	return d, nil
}

func labels(cols []report.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Label()
	}
	return out
}

func cells(rs *report.ResultSet, method, group, level string, cols []report.Column) []evalCell {
	out := make([]evalCell, len(cols))
	for i, c := range cols {
		if cell, ok := rs.Cell(method, group, level, c.Metric, c.K); ok {
			out[i] = evalCell{OK: true, Summary: cell.Summary}
		}
	}
	return out
}
