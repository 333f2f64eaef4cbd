package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/eval/metrics"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// fixture: two methods on three instances (two python, one go) at two levels.
func fixture(t *testing.T) *ResultSet {
	t.Helper()
	type q struct {
		id, group string
		gold      []string
		sr, der   []string
	}
	qs := []q{
		{"p1", "python", []string{"a", "b"}, []string{"x", "a", "y", "b"}, []string{"a", "b"}},
		{"p2", "python", []string{"c"}, []string{"x", "y", "z"}, []string{"y", "c"}},
		{"g1", "go", []string{"d"}, []string{"d"}, []string{"x", "d"}},
	}
	ks := []int{1, 5, 10}
	var insts []Instance
	for _, level := range []string{"function", "file"} {
		for _, in := range qs {
			for _, m := range []struct {
				name   string
				ranked []string
			}{{"SR", in.sr}, {"DER", in.der}} {
				ranked := m.ranked
				if level == "file" { // file level: one fewer wrong item ahead
					ranked = ranked[min(1, len(ranked)-1):]
				}
				v, err := metrics.Compute(ranked, in.gold, ks)
				if err != nil {
					t.Fatal(err)
				}
				insts = append(insts, Instance{ID: in.id, Method: m.name, Group: in.group, Level: level, Gold: in.gold, Ranked: ranked, Values: v})
			}
		}
	}
	rs, err := Build(insts, BuildOptions{
		Benchmark: "fixture", Methods: []string{"SR", "DER"}, Levels: []string{"function", "file"},
		Metrics: []string{metrics.Recall, metrics.Acc}, Ks: ks, Uncut: []string{metrics.MRR, metrics.MAP},
		Baselines: []string{"SR"}, Bootstrap: metrics.DefaultBootstrap(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	rs.Notes = []string{"1 instance excluded: no function-level edit"}
	return rs
}

func TestBuildValues(t *testing.T) {
	rs := fixture(t)
	if got := strings.Join(rs.Groups, ","); got != "all,go,python" {
		t.Errorf("groups %s", got)
	}
	// function level, all instances:
	// SR Recall@5: p1 {a,b} both in top 5 → 1; p2 → 0; g1 → 1; mean 2/3
	// SR MRR: p1 a at rank 2 → 1/2; p2 → 0; g1 → 1; mean 1/2
	// DER MRR: p1 1; p2 c at rank 2 → 1/2; g1 1/2; mean 2/3
	// DER MAP: p1 (1/1+2/2)/2 = 1; p2 1/2; g1 1/2; mean 2/3
	for _, tc := range []struct {
		method, group, metric string
		k                     int
		want                  float64
		n                     int
	}{
		{"SR", "all", metrics.Recall, 5, 2.0 / 3, 3},
		{"SR", "all", metrics.MRR, 0, 0.5, 3},
		{"DER", "all", metrics.MRR, 0, 2.0 / 3, 3},
		{"DER", "all", metrics.MAP, 0, 2.0 / 3, 3},
		{"DER", "python", metrics.Acc, 1, 0, 2},
		{"SR", "go", metrics.Acc, 1, 1, 1},
	} {
		c, ok := rs.Cell(tc.method, tc.group, "function", tc.metric, tc.k)
		if !ok || math.Abs(c.Mean-tc.want) > 1e-9 || c.N != tc.n || c.Lo > c.Mean || c.Hi < c.Mean {
			t.Errorf("%s %s %s: got %+v (found %v), want mean %v n %d", tc.method, tc.group, metrics.Key(tc.metric, tc.k), c, ok, tc.want, tc.n)
		}
	}
	// Paired DER − SR on MRR, function, all: diffs {1/2, 1/2, −1/2}, mean 1/6.
	found := false
	for _, c := range rs.Comparisons {
		if c.Method == "DER" && c.Group == "all" && c.Level == "function" && c.Metric == metrics.MRR && c.K == 0 {
			found = true
			if math.Abs(c.Diff-1.0/6) > 1e-9 || c.N != 3 {
				t.Errorf("comparison %+v", c)
			}
		}
		if c.Method == "SR" {
			t.Errorf("baseline compared with itself: %+v", c)
		}
	}
	if !found {
		t.Error("no DER vs SR MRR comparison")
	}
}

func TestBuildErrors(t *testing.T) {
	o := BuildOptions{Methods: []string{"SR"}, Levels: []string{"file"}, Metrics: []string{metrics.Recall}, Ks: []int{1}}
	for name, in := range map[string]Instance{
		"method": {ID: "x", Method: "Z", Group: "go", Level: "file"},
		"level":  {ID: "x", Method: "SR", Group: "go", Level: "repo"},
		"group":  {ID: "x", Method: "SR", Group: "", Level: "file"},
	} {
		if _, err := Build([]Instance{in}, o); err == nil {
			t.Errorf("bad %s accepted", name)
		}
	}
	if _, err := Build(nil, BuildOptions{}); err == nil {
		t.Error("empty options accepted")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md.golden", b.Bytes())
}

func TestCSVGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "results.csv.golden", b.Bytes())
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if lines[0] != "method,group,level,metric,k,mean,lo,hi,n" {
		t.Errorf("header %q", lines[0])
	}
	// 2 methods × 3 groups × 2 levels × (2 metrics × 3 K + 2 uncut) = 96 rows
	if len(lines) != 1+96 {
		t.Errorf("%d lines", len(lines))
	}
}

func TestJSONRoundTrip(t *testing.T) {
	rs := fixture(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, rs); err != nil {
		t.Fatal(err)
	}
	js := b.String()
	back, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != len(rs.Cells) || len(back.Instances) != len(rs.Instances) ||
		len(back.Comparisons) != len(rs.Comparisons) || back.Cells[0] != rs.Cells[0] {
		t.Errorf("round trip lost data")
	}
	if back.Instances[0].Values["Recall@5"] != rs.Instances[0].Values["Recall@5"] || len(back.Instances[0].Ranked) == 0 {
		t.Errorf("instance values lost: %+v", back.Instances[0])
	}
	if !strings.Contains(js, `"p_le0"`) {
		t.Error("comparison p-value missing from JSON")
	}
}

// keepPlots lets a developer look at the rendered plots:
// go test ./internal/eval/report -run Plots -plots DIR
var keepPlots = flag.String("plots", "", "also write the fixture's report into this directory")

func TestPlotDataGolden(t *testing.T) {
	rs := fixture(t)
	got, err := json.MarshalIndent(PlotData(rs, "function", "all", metrics.Recall), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plot-recall-function-all.json.golden", append(got, '\n'))
}

func TestPlotDataSkipsMissing(t *testing.T) {
	rs := fixture(t)
	// Drop DER's Recall@5 and all of SR's Recall cells: SR leaves the plot,
	// DER keeps K=1 and K=10 only.
	var kept []Cell
	for _, c := range rs.Cells {
		if c.Metric == metrics.Recall && (c.Method == "SR" || c.K == 5) {
			continue
		}
		kept = append(kept, c)
	}
	rs.Cells = kept
	s := PlotData(rs, "function", "all", metrics.Recall)
	if len(s) != 1 || s[0].Method != "DER" || s[0].Color != MethodColor(1) {
		t.Fatalf("series %+v", s)
	}
	if len(s[0].Points) != 2 || s[0].Points[0].K != 1 || s[0].Points[1].K != 10 {
		t.Errorf("points %+v", s[0].Points)
	}
	var b bytes.Buffer
	if err := WritePlot(&b, rs, "function", "all", metrics.Recall); err != nil {
		t.Errorf("plot with a gap: %v", err)
	}
	for name, tc := range map[string]struct {
		ks     []int
		metric string
	}{
		"no K":     {nil, metrics.Recall},
		"no cells": {[]int{1, 5, 10}, "NoSuchMetric"},
	} {
		rs.Ks = tc.ks
		if err := WritePlot(&b, rs, "function", "all", tc.metric); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWriteDirAndPlots(t *testing.T) {
	rs := fixture(t)
	dir := t.TempDir()
	if *keepPlots != "" {
		dir = *keepPlots
	}
	paths, err := WriteDir(dir, rs)
	if err != nil {
		t.Fatal(err)
	}
	// 3 tables + 2 metrics × 2 levels × 3 groups plots
	if len(paths) != 3+12 {
		t.Errorf("wrote %d files: %v", len(paths), paths)
	}
	p := filepath.Join(dir, "plot-recall-function-all.png")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != PlotWidth || b.Dy() != PlotHeight {
		t.Fatalf("size %v", b)
	}
	// count returns the pixels of exactly colour c in columns [x0, x1).
	count := func(c color.RGBA, x0, x1 int) int {
		n := 0
		for y := 0; y < PlotHeight; y++ {
			for x := x0; x < x1; x++ {
				r, g, b, a := img.At(x, y).RGBA()
				if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(b>>8) == c.B && uint8(a>>8) == 255 {
					n++
				}
			}
		}
		return n
	}
	// Each method's colour must appear in the plotting area (lines, markers,
	// CI bars) and in the legend column at the right edge.
	const legendX = PlotWidth * 4 / 5
	for i, m := range rs.Methods {
		want := MethodColor(i)
		if n := count(want, 0, legendX); n < 300 {
			t.Errorf("method %s colour %v: %d pixels in plot area", m, want, n)
		}
		if n := count(want, legendX, PlotWidth); n < 20 {
			t.Errorf("method %s colour %v: %d pixels in the legend", m, want, n)
		}
	}
	// Text and axes are dark on a white background: the title above the
	// axes, tick labels left of them and K's labels below them.
	dark := func(x0, y0, x1, y1 int) int {
		n := 0
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if r>>8 < 100 && g>>8 < 100 && b>>8 < 100 {
					n++
				}
			}
		}
		return n
	}
	for name, r := range map[string][4]int{
		"title":         {0, 0, PlotWidth, 30},
		"y tick labels": {0, 0, 60, PlotHeight},
		"x tick labels": {0, PlotHeight - 50, legendX, PlotHeight},
	} {
		if n := dark(r[0], r[1], r[2], r[3]); n < 100 {
			t.Errorf("%s: %d dark pixels", name, n)
		}
	}
	if r, g, b, _ := img.At(1, 1).RGBA(); r>>8 != 255 || g>>8 != 255 || b>>8 != 255 {
		t.Error("background not white")
	}
}

func TestFileSafe(t *testing.T) {
	if got := fileSafe("Recall@K py/3"); got != "recall_k_py_3" {
		t.Errorf("got %q", got)
	}
}
