// Package report turns evaluation results into markdown, CSV, JSON and PNG reports.
package report

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/eval/metrics"
)

// GroupAll is the group label of the summary over every instance.
const GroupAll = "all"

// ResultSet is one evaluation run: summaries for methods × levels × groups ×
// metrics × K, paired comparisons, and the per-instance records behind them.
// The order of Methods, Levels, Groups and Metrics is the order of rows,
// tables and plot colours.
type ResultSet struct {
	Benchmark   string       `json:"benchmark"`
	Seed        uint64       `json:"seed"`
	Draws       int          `json:"draws"`
	Methods     []string     `json:"methods"`
	Levels      []string     `json:"levels"`  // e.g. "function", "file"
	Groups      []string     `json:"groups"`  // e.g. "all", "python", "java"
	Metrics     []string     `json:"metrics"` // e.g. "Recall", "Acc", "MRR", "MAP", "P", "NDCG"
	Ks          []int        `json:"ks"`
	Notes       []string     `json:"notes,omitempty"` // e.g. excluded-instance counts
	Cells       []Cell       `json:"cells"`
	Comparisons []Comparison `json:"comparisons,omitempty"`
	Instances   []Instance   `json:"instances,omitempty"`
}

// Cell is the summary of one metric at one cutoff; K = 0 means no cutoff
// (MRR, MAP).
type Cell struct {
	Method string `json:"method"`
	Group  string `json:"group"`
	Level  string `json:"level"`
	Metric string `json:"metric"`
	K      int    `json:"k"`
	metrics.Summary
}

// Comparison is a paired bootstrap of Method minus Baseline on the instances
// both were scored on.
type Comparison struct {
	Method   string `json:"method"`
	Baseline string `json:"baseline"`
	Group    string `json:"group"`
	Level    string `json:"level"`
	Metric   string `json:"metric"`
	K        int    `json:"k"`
	metrics.Paired
}

// Instance is one method's result on one benchmark instance at one level.
// Values is keyed by metrics.Key (e.g. "Recall@5", "MRR") as metrics.Compute
// returns them.
type Instance struct {
	ID     string             `json:"id"`
	Method string             `json:"method"`
	Group  string             `json:"group"`
	Level  string             `json:"level"`
	Gold   []string           `json:"gold,omitempty"`
	Ranked []string           `json:"ranked,omitempty"`
	Values map[string]float64 `json:"values"`
}

// BuildOptions controls Build.
type BuildOptions struct {
	Benchmark string
	Methods   []string // row order; required
	Levels    []string // required
	Metrics   []string // metric names (metrics.Recall, …); required
	Ks        []int    // cutoffs for metrics that take one
	Uncut     []string // metrics reported without cutoff, e.g. MRR, MAP
	Baselines []string // every other method is compared against each
	Bootstrap metrics.Bootstrap
}

// Build summarises per-instance records into a ResultSet: for every method,
// level, group ("all" plus each instance group, sorted) and metric key present
// in the records, the mean with its bootstrap CI; and, with a baseline, paired
// comparisons over instance IDs scored by both methods.
func Build(insts []Instance, o BuildOptions) (*ResultSet, error) {
	if len(o.Methods) == 0 || len(o.Levels) == 0 || len(o.Metrics) == 0 {
		return nil, fmt.Errorf("report: Build needs methods, levels and metrics")
	}
	bs := o.Bootstrap
	if bs.Draws == 0 {
		bs.Draws = metrics.DefaultDraws
	}
	rs := &ResultSet{
		Benchmark: o.Benchmark, Seed: bs.Seed, Draws: bs.Draws,
		Methods: o.Methods, Levels: o.Levels, Ks: slices.Sorted(slices.Values(o.Ks)),
		Instances: insts,
	}
	rs.Metrics = slices.Clone(o.Metrics)
	for _, m := range o.Uncut {
		if !slices.Contains(rs.Metrics, m) {
			rs.Metrics = append(rs.Metrics, m)
		}
	}
	groups := map[string]bool{}
	for _, in := range insts {
		if !slices.Contains(o.Methods, in.Method) {
			return nil, fmt.Errorf("report: instance %s has unknown method %q", in.ID, in.Method)
		}
		if !slices.Contains(o.Levels, in.Level) {
			return nil, fmt.Errorf("report: instance %s has unknown level %q", in.ID, in.Level)
		}
		if in.Group == "" || in.Group == GroupAll {
			return nil, fmt.Errorf("report: instance %s needs a group other than %q", in.ID, GroupAll)
		}
		groups[in.Group] = true
	}
	rs.Groups = append([]string{GroupAll}, slices.Sorted(func(yield func(string) bool) {
		for g := range groups {
			if !yield(g) {
				return
			}
		}
	})...)

	type mk struct {
		metric string
		k      int
	}
	var keys []mk
	for _, m := range o.Metrics {
		for _, k := range rs.Ks {
			keys = append(keys, mk{m, k})
		}
	}
	for _, m := range o.Uncut {
		keys = append(keys, mk{m, 0})
	}
	sel := func(method, level, group string) []Instance {
		var out []Instance
		for _, in := range insts {
			if in.Method == method && in.Level == level && (group == GroupAll || in.Group == group) {
				out = append(out, in)
			}
		}
		return out
	}
	for _, level := range rs.Levels {
		for _, group := range rs.Groups {
			for _, method := range rs.Methods {
				s := sel(method, level, group)
				for _, key := range keys {
					name := metrics.Key(key.metric, key.k)
					var vs []float64
					for _, in := range s {
						if v, ok := in.Values[name]; ok {
							vs = append(vs, v)
						}
					}
					if len(vs) == 0 {
						continue
					}
					sum, err := metrics.Summarize(vs, bs)
					if err != nil {
						return nil, fmt.Errorf("report: %s %s %s %s: %w", method, level, group, name, err)
					}
					rs.Cells = append(rs.Cells, Cell{method, group, level, key.metric, key.k, sum})
				}
				for _, baseline := range o.Baselines {
					if method == baseline {
						continue
					}
					base := map[string]Instance{}
					for _, in := range sel(baseline, level, group) {
						base[in.ID] = in
					}
					for _, key := range keys {
						name := metrics.Key(key.metric, key.k)
						var a, b []float64
						for _, in := range s {
							bi, ok := base[in.ID]
							va, okA := in.Values[name]
							vb, okB := bi.Values[name]
							if ok && okA && okB {
								a, b = append(a, va), append(b, vb)
							}
						}
						if len(a) == 0 {
							continue
						}
						p, err := metrics.Compare(a, b, bs)
						if err != nil {
							return nil, fmt.Errorf("report: %s vs %s %s %s %s: %w", method, baseline, level, group, name, err)
						}
						rs.Comparisons = append(rs.Comparisons, Comparison{method, baseline, group, level, key.metric, key.k, p})
					}
				}
			}
		}
	}
	return rs, nil
}

// Column is one metric@K column of a table (K = 0: no cutoff).
type Column struct {
	Metric string
	K      int
}

// Label is the column's metric key, e.g. "Recall@5".
func (c Column) Label() string { return metrics.Key(c.Metric, c.K) }

// Columns are the metric@K columns the cells of level and group have, in
// the order of Metrics then K, and the most instances a cell of them
// summarises.
func (rs *ResultSet) Columns(level, group string) ([]Column, int) {
	var cols []Column
	n := 0
	for _, c := range rs.sortedCells() {
		if c.Level != level || c.Group != group {
			continue
		}
		n = max(n, c.N)
		if col := (Column{c.Metric, c.K}); !slices.Contains(cols, col) {
			cols = append(cols, col)
		}
	}
	slices.SortStableFunc(cols, func(a, b Column) int {
		return cmp.Or(cmp.Compare(index(rs.Metrics, a.Metric), index(rs.Metrics, b.Metric)),
			strings.Compare(a.Metric, b.Metric), cmp.Compare(a.K, b.K))
	})
	return cols, n
}

func index(list []string, s string) int {
	if i := slices.Index(list, s); i >= 0 {
		return i
	}
	return len(list)
}

// sortedCells orders cells by method, group, level, metric (each in the
// ResultSet's order, unknown names last by name) and K, so output does not
// depend on the order cells were added.
func (rs *ResultSet) sortedCells() []Cell {
	cs := slices.Clone(rs.Cells)
	slices.SortStableFunc(cs, func(a, b Cell) int {
		return cmp.Or(
			cmp.Compare(index(rs.Methods, a.Method), index(rs.Methods, b.Method)), strings.Compare(a.Method, b.Method),
			cmp.Compare(index(rs.Groups, a.Group), index(rs.Groups, b.Group)), strings.Compare(a.Group, b.Group),
			cmp.Compare(index(rs.Levels, a.Level), index(rs.Levels, b.Level)), strings.Compare(a.Level, b.Level),
			cmp.Compare(index(rs.Metrics, a.Metric), index(rs.Metrics, b.Metric)), strings.Compare(a.Metric, b.Metric),
			cmp.Compare(a.K, b.K),
		)
	})
	return cs
}

// HasColumn reports whether some method has a cell of c over all
// instances at level.
func (rs *ResultSet) HasColumn(level string, c Column) bool {
	for _, cell := range rs.Cells {
		if cell.Level == level && cell.Group == GroupAll && cell.Metric == c.Metric && cell.K == c.K {
			return true
		}
	}
	return false
}

// Cell is the summary of metric@k for method, group and level.
func (rs *ResultSet) Cell(method, group, level, metric string, k int) (Cell, bool) {
	for _, c := range rs.Cells {
		if c.Method == method && c.Group == group && c.Level == level && c.Metric == metric && c.K == k {
			return c, true
		}
	}
	return Cell{}, false
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// WriteMarkdown writes one table per level and group: rows are methods,
// columns metric@K, each cell "mean [lo, hi]" with the bootstrap CI; then the
// paired comparisons, if any.
func WriteMarkdown(w io.Writer, rs *ResultSet) error {
	var b strings.Builder
	title := "Evaluation"
	if rs.Benchmark != "" {
		title += ": " + rs.Benchmark
	}
	fmt.Fprintf(&b, "# %s\n\nMean over instances with a percentile-bootstrap 95%% CI (%d draws, seed %d).\n", title, rs.Draws, rs.Seed)
	for _, n := range rs.Notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	if len(rs.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, level := range rs.Levels {
		for _, group := range rs.Groups {
			cols, n := rs.Columns(level, group)
			if len(cols) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n## %s level, %s (n=%d)\n\n| method |", level, group, n)
			for _, c := range cols {
				fmt.Fprintf(&b, " %s |", c.Label())
			}
			b.WriteString("\n|---|")
			for range cols {
				b.WriteString("---|")
			}
			b.WriteString("\n")
			for _, m := range rs.Methods {
				fmt.Fprintf(&b, "| %s |", m)
				for _, col := range cols {
					if c, ok := rs.Cell(m, group, level, col.Metric, col.K); ok {
						fmt.Fprintf(&b, " %s [%s, %s] |", f3(c.Mean), f3(c.Lo), f3(c.Hi))
					} else {
						b.WriteString(" – |")
					}
				}
				b.WriteString("\n")
			}
		}
	}
	if len(rs.Comparisons) > 0 {
		b.WriteString("\n## Paired comparisons\n\nMean difference (method − baseline) on the same instances, paired-bootstrap 95% CI, and P(diff ≤ 0) over the draws.\n\n")
		b.WriteString("| method | baseline | level | group | metric | diff [lo, hi] | P(diff ≤ 0) | n |\n|---|---|---|---|---|---|---|---|\n")
		for _, c := range rs.Comparisons {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s [%s, %s] | %s | %d |\n", c.Method, c.Baseline, c.Level, c.Group,
				metrics.Key(c.Metric, c.K), f3(c.Diff), f3(c.Lo), f3(c.Hi), f3(c.PLE0), c.N)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes every cell in long format with the header
// method,group,level,metric,k,mean,lo,hi,n (k = 0: no cutoff).
func WriteCSV(w io.Writer, rs *ResultSet) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"method", "group", "level", "metric", "k", "mean", "lo", "hi", "n"}); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	for _, c := range rs.sortedCells() {
		if err := cw.Write([]string{c.Method, c.Group, c.Level, c.Metric, strconv.Itoa(c.K),
			g(c.Mean), g(c.Lo), g(c.Hi), strconv.Itoa(c.N)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the whole ResultSet, per-instance records included.
func WriteJSON(w io.Writer, rs *ResultSet) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rs)
}

// ReadJSON reads a ResultSet written by WriteJSON.
func ReadJSON(r io.Reader) (*ResultSet, error) {
	var rs ResultSet
	if err := json.NewDecoder(r).Decode(&rs); err != nil {
		return nil, fmt.Errorf("report: read result set: %w", err)
	}
	return &rs, nil
}
