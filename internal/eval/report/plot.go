package report

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/plotutil"
)

// Plot size in pixels and the resolution text sizes are measured at.
const (
	PlotWidth  = 960
	PlotHeight = 600
	plotDPI    = plotutil.DPI
)

// Palette gives method i the colour Palette[i%len(Palette)] (Tableau 10,
// chosen to stay distinct from each other and from the greys of the axes).
var Palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {188, 189, 34, 255},
	{23, 190, 207, 255}, {127, 127, 127, 255},
}

// MethodColor is the colour of the method at position i of ResultSet.Methods.
func MethodColor(i int) color.RGBA { return Palette[i%len(Palette)] }

// Point is one method's summary of a metric at one cutoff.
type Point struct {
	K    int     `json:"k"`
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// Series is what a plot draws for one method: its colour and its points in
// the order of ResultSet.Ks (cutoffs without a cell are absent).
type Series struct {
	Method string     `json:"method"`
	Color  color.RGBA `json:"color"`
	Points []Point    `json:"points"`
}

// PlotData returns the series WritePlot draws for metric at one level and
// group, one per method that has at least one cell, in the order of
// ResultSet.Methods.
func PlotData(rs *ResultSet, level, group, metric string) []Series {
	var out []Series
	for mi, m := range rs.Methods {
		s := Series{Method: m, Color: MethodColor(mi)}
		for _, k := range rs.Ks {
			if c, ok := rs.Cell(m, group, level, metric, k); ok {
				s.Points = append(s.Points, Point{K: k, Mean: c.Mean, Lo: c.Lo, Hi: c.Hi})
			}
		}
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// ciBars are one series' points with their CI as error bars.
type ciBars struct {
	plotter.XYs
	lo, hi []float64 // distances below and above each point
}

func (b ciBars) YError(i int) (float64, float64) { return b.lo[i], b.hi[i] }

// WritePlot draws metric (e.g. "Recall") against K for every method at one
// level and group as a PNG of PlotWidth × PlotHeight pixels: K evenly spaced
// on the x axis, 0–1 on the y axis, one line with square markers and 95% CI
// error bars per method, and a legend to the right of the axes. Methods
// without cells for this metric are left out of the plot.
func WritePlot(w io.Writer, rs *ResultSet, level, group, metric string) error {
	if len(rs.Ks) == 0 {
		return fmt.Errorf("report: plot %s %s %s: no K values", metric, level, group)
	}
	series := PlotData(rs, level, group, metric)
	if len(series) == 0 {
		return fmt.Errorf("report: plot %s %s %s: no cells", metric, level, group)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s@K — %s level, %s", metric, level, group)
	p.Title.TextStyle.Font = plotutil.Sans(15)
	p.Title.Padding = vg.Points(10)
	p.X.Label.Text = "K (cutoff)"
	p.Y.Label.Text = metric + "@K (mean, 95% CI)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = plotutil.Sans(13)
		a.Tick.Label.Font = plotutil.Sans(12)
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.ConstantTicks(fractionTicks())
	// K is categorical (1, 3, 5, 10, 20, 50 evenly spaced) so small cutoffs
	// are not squashed into one corner.
	ticks := make([]plot.Tick, len(rs.Ks))
	for i, k := range rs.Ks {
		ticks[i] = plot.Tick{Value: float64(i), Label: strconv.Itoa(k)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.4, float64(len(rs.Ks))-0.6

	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 200}
	p.Add(grid)

	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font = plotutil.Sans(13)
	legend.ThumbnailWidth = vg.Points(24)
	legend.Padding = vg.Points(4)
	kIndex := map[int]int{}
	for i, k := range rs.Ks {
		kIndex[k] = i
	}
	for si, s := range series {
		// Nudge each method sideways so CI bars at one K do not hide each other.
		nudge := (float64(si) - float64(len(series)-1)/2) * 0.06
		var all ciBars
		var runs []plotter.XYs // contiguous K runs: a missing cutoff breaks the line
		prev := -2
		for _, pt := range s.Points {
			i := kIndex[pt.K]
			xy := plotter.XY{X: float64(i) + nudge, Y: pt.Mean}
			all.XYs = append(all.XYs, xy)
			all.lo = append(all.lo, max(pt.Mean-pt.Lo, 0))
			all.hi = append(all.hi, max(pt.Hi-pt.Mean, 0))
			if i != prev+1 || len(runs) == 0 {
				runs = append(runs, nil)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], xy)
			prev = i
		}
		lineStyle := draw.LineStyle{Color: s.Color, Width: vg.Points(2)}
		var line *plotter.Line
		for _, r := range runs {
			l, err := plotter.NewLine(r)
			if err != nil {
				return fmt.Errorf("report: plot %s %s %s, method %s: %w", metric, level, group, s.Method, err)
			}
			l.LineStyle = lineStyle
			p.Add(l)
			line = l
		}
		bars, err := plotter.NewYErrorBars(all)
		if err != nil {
			return fmt.Errorf("report: plot %s %s %s, method %s: %w", metric, level, group, s.Method, err)
		}
		bars.LineStyle = draw.LineStyle{Color: s.Color, Width: vg.Points(1.2)}
		bars.CapWidth = vg.Points(7)
		marks, err := plotter.NewScatter(all.XYs)
		if err != nil {
			return fmt.Errorf("report: plot %s %s %s, method %s: %w", metric, level, group, s.Method, err)
		}
		marks.GlyphStyle = draw.GlyphStyle{Color: s.Color, Radius: vg.Points(3.5), Shape: draw.BoxGlyph{}}
		p.Add(bars, marks)
		legend.Add(s.Method, line, marks)
	}

	img := image.NewRGBA(image.Rect(0, 0, PlotWidth, PlotHeight))
	c := vgimg.NewWith(vgimg.UseImage(img), vgimg.UseDPI(plotDPI))
	dc := draw.New(c)
	// The legend gets its own column right of the axes, as wide as its
	// longest entry (at most a third of the image), so it never covers data.
	var textW vg.Length
	for _, s := range series {
		textW = max(textW, legend.TextStyle.Width(s.Method))
	}
	legendW := min(legend.ThumbnailWidth+textW+vg.Points(24), dc.Max.X/3)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	legendArea := draw.Crop(dc, dc.Max.X-legendW+vg.Points(8), 0, 0, -vg.Points(40))
	legend.Draw(legendArea)
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("report: encode plot %s %s %s: %w", metric, level, group, err)
	}
	return nil
}

// fractionTicks labels 0, 0.2, …, 1.0 with minor ticks at the tenths.
func fractionTicks() []plot.Tick {
	var ts []plot.Tick
	for t := 0; t <= 10; t++ {
		v := float64(t) / 10
		lbl := ""
		if t%2 == 0 {
			lbl = strconv.FormatFloat(v, 'f', 1, 64)
		}
		ts = append(ts, plot.Tick{Value: v, Label: lbl})
	}
	return ts
}

// PlotMetrics are the metrics WriteDir plots against K.
var PlotMetrics = []string{metrics.Recall, metrics.Acc}

// WriteDir writes report.md, results.csv, results.json and one PNG per
// plotted metric × level × group (plot-<metric>-<level>-<group>.png) into
// dir, creating it, and returns the paths written.
func WriteDir(dir string, rs *ResultSet) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var paths []string
	write := func(name string, f func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		fh, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := f(fh); err != nil {
			fh.Close()
			return fmt.Errorf("report: write %s: %w", p, err)
		}
		if err := fh.Close(); err != nil {
			return fmt.Errorf("report: close %s: %w", p, err)
		}
		paths = append(paths, p)
		return nil
	}
	for name, f := range map[string]func(io.Writer, *ResultSet) error{
		"report.md": WriteMarkdown, "results.csv": WriteCSV, "results.json": WriteJSON,
	} {
		if err := write(name, func(w io.Writer) error { return f(w, rs) }); err != nil {
			return paths, err
		}
	}
	for _, metric := range PlotMetrics {
		for _, level := range rs.Levels {
			for _, group := range rs.Groups {
				if !rs.HasPlot(level, group, metric) {
					continue
				}
				name := fmt.Sprintf("plot-%s-%s-%s.png", fileSafe(metric), fileSafe(level), fileSafe(group))
				if err := write(name, func(w io.Writer) error { return WritePlot(w, rs, level, group, metric) }); err != nil {
					return paths, err
				}
			}
		}
	}
	return paths, nil
}

// HasPlot reports whether metric has cells with a cutoff at level and
// group: WriteDir plots it against K.
func (rs *ResultSet) HasPlot(level, group, metric string) bool {
	for _, c := range rs.Cells {
		if c.Level == level && c.Group == group && c.Metric == metric && c.K > 0 {
			return true
		}
	}
	return false
}

// fileSafe lower-cases s and replaces anything but [a-z0-9_-] with '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
}
