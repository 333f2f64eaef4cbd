// Package plotutil is what locus's PNG plots (gonum.org/v1/plot) share:
// sans-serif text at sizes that read at 96 DPI, tick markers that label
// counts as whole numbers and other values without padded decimals,
// labelled horizontal bars without outlines, and PNG output at a size in
// pixels.
package plotutil

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution plots are rendered at: text sizes in points are
// measured at it, so a 12-point label is 16 pixels high.
const DPI = 96

// Fill is the colour of bars and histogram bins (Tableau 10's blue).
var Fill = color.RGBA{R: 31, G: 119, B: 180, A: 255}

// Sans is the sans-serif face gonum embeds (Liberation Sans), which stays
// readable at small sizes.
func Sans(points float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(points)}
}

// New returns a plot titled title with axis labels x and y, its text in
// Sans (title 15 points, axis labels 13, tick labels 11), light horizontal
// grid lines behind what is added next, and both axes ticked by Plain.
func New(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = Sans(15)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = Sans(13)
		a.Tick.Label.Font = Sans(11)
		a.Tick.Marker = Plain{}
	}
	p.Legend.TextStyle.Font = Sans(11)
	return p
}

// Grid returns light grey grid lines across the value axis: horizontal
// lines when horizontal is true (values up the y axis), else vertical ones.
func Grid(horizontal bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 215}, color.Gray{Y: 215}
	if horizontal {
		g.Vertical.Color = nil
	} else {
		g.Horizontal.Color = nil
	}
	return g
}

// Counts is a plot.Ticker for axes that count things (records, queries,
// years): up to seven labelled ticks at whole multiples of 1, 2 or 5 × 10ⁿ,
// labelled without decimals ("500", not "500.00"), and unlabelled minor
// ticks at whole numbers between them.
type Counts struct{}

// Ticks implements plot.Ticker.
func (Counts) Ticks(lo, hi float64) []plot.Tick {
	step, minor := countStep(hi - lo)
	var out []plot.Tick
	for v := math.Ceil(lo/minor) * minor; v <= hi; v += minor {
		if v == 0 {
			v = 0 // not -0
		}
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', 0, 64)
		}
		out = append(out, t)
	}
	return out
}

// countStep is the smallest of 1, 2, 5, 10, 20, 50, … that cuts span into
// at most seven steps, and the whole step of the minor ticks between.
func countStep(span float64) (step, minor float64) {
	for m := 1.0; ; m *= 10 {
		for _, s := range []float64{m, 2 * m, 5 * m} {
			if span/s <= 7 {
				switch {
				case s == 1:
					return s, 1
				case s == 2*m:
					return s, s / 2
				}
				return s, s / 5
			}
		}
	}
}

// Plain is plot.DefaultTicks with each label its value to 12 significant
// digits, trailing zeros dropped ("2500", "0.25", "0.6" for
// 0.6000000000000001), not a precision shared by all labels ("2500.00").
type Plain struct{}

// Ticks implements plot.Ticker.
func (Plain) Ticks(lo, hi float64) []plot.Tick {
	ts := (plot.DefaultTicks{}).Ticks(lo, hi)
	for i, t := range ts {
		if !t.IsMinor() {
			ts[i].Label = strconv.FormatFloat(t.Value, 'g', 12, 64)
		}
	}
	return ts
}

// HBar is one labelled bar of HBars.
type HBar struct {
	Name  string
	Value float64
}

// Row is the height in pixels HBars gives each bar; HBarsHeight sizes
// an image by it.
const Row = 20

// HBars returns horizontal bars, the first at the top, each filled with
// Fill and without outline, its name on the y axis (names longer than 48
// characters are shortened with "…" in the middle) and its value,
// formatted by label, at its end; the value axis starts at 0 and is ticked
// by ticker. It errors when bars is empty.
func HBars(title, xLabel string, bars []HBar, ticker plot.Ticker, label func(float64) string) (*plot.Plot, error) {
	if len(bars) == 0 {
		return nil, fmt.Errorf("plot %q: no bars", title)
	}
	p := New(title, xLabel, "")
	p.X.Tick.Marker = ticker
	vals := make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	var ends plotter.XYLabels
	top := 0.0
	for i, b := range bars {
		j := len(bars) - 1 - i // the first bar at the top
		vals[j], names[j] = b.Value, shorten(b.Name, 48)
		ends.XYs = append(ends.XYs, plotter.XY{X: b.Value, Y: float64(j)})
		ends.Labels = append(ends.Labels, " "+label(b.Value))
		top = max(top, b.Value)
	}
	ch, err := plotter.NewBarChart(vals, vg.Points(0.6*Row*72/DPI))
	if err != nil {
		return nil, fmt.Errorf("plot %q: %w", title, err)
	}
	ch.Horizontal = true
	ch.Color = Fill
	ch.LineStyle.Width = 0
	lbl, err := plotter.NewLabels(ends)
	if err != nil {
		return nil, fmt.Errorf("plot %q: %w", title, err)
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].Font = Sans(10)
		lbl.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(Grid(false), ch, lbl)
	p.NominalY(names...)
	p.Y.Tick.Label.Font = Sans(11)
	p.X.Min = 0
	// Room right of the longest bar for its value.
	p.X.Max = max(top*1.15, 1)
	return p, nil
}

// HBarsHeight is the height in pixels of an image of n bars from HBars.
func HBarsHeight(n int) int { return 120 + Row*n }

// shorten cuts s to n characters when it is longer, an ellipsis in the
// middle: names that share a long prefix (one owner's repositories) keep
// the ends that tell them apart.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// Margin is the blank border PNG leaves around a plot, in pixels.
const Margin = 8

// PNG renders p as a PNG image of width × height pixels at DPI, Margin
// pixels inside its edges.
func PNG(p *plot.Plot, width, height int) ([]byte, error) {
	c := Canvas(width, height)
	p.Draw(Inset(draw.New(c)))
	return Encode(c)
}

// Canvas is an image canvas of width × height pixels at DPI.
func Canvas(width, height int) *vgimg.Canvas {
	return vgimg.NewWith(vgimg.UseWH(Pixels(width), Pixels(height)), vgimg.UseDPI(DPI))
}

// Pixels is n pixels at DPI as a length.
func Pixels(n int) vg.Length { return vg.Length(n) * vg.Inch / DPI }

// Inset is c less Margin pixels on each side.
func Inset(c draw.Canvas) draw.Canvas {
	m := Pixels(Margin)
	return draw.Crop(c, m, -m, m, -m)
}

// Encode encodes what was drawn on c as PNG.
func Encode(c *vgimg.Canvas) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode plot: %w", err)
	}
	return buf.Bytes(), nil
}
