package report

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/eval/metrics"
)

// Plot size in pixels.
const (
	PlotWidth  = 800
	PlotHeight = 500
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

var (
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
	grid  = color.RGBA{225, 225, 225, 255}
)

// WritePlot draws metric (e.g. "Recall") against K for every method at one
// level and group: K evenly spaced on the x axis, 0–1 on the y axis, one
// coloured line with square markers and vertical CI bars per method, and a
// legend. Methods without cells for this metric are left out of the plot.
func WritePlot(w io.Writer, rs *ResultSet, level, group, metric string) error {
	if len(rs.Ks) == 0 {
		return fmt.Errorf("report: plot %s: no K values", metric)
	}
	img := image.NewRGBA(image.Rect(0, 0, PlotWidth, PlotHeight))
	fillRect(img, 0, 0, PlotWidth, PlotHeight, white)
	const (
		left, right, top, bottom = 80, 190, 50, 60
		scale                    = 2
	)
	x0, x1 := left, PlotWidth-right
	y0, y1 := PlotHeight-bottom, top // y0 is the bottom (value 0)
	px := func(i int) int {
		if len(rs.Ks) == 1 {
			return (x0 + x1) / 2
		}
		return x0 + 20 + i*(x1-x0-40)/(len(rs.Ks)-1)
	}
	py := func(v float64) int { return y0 - int(v*float64(y0-y1)+0.5) }

	title := fmt.Sprintf("%s@K  %s  %s", metric, level, group)
	drawText(img, (PlotWidth-textWidth(title, scale))/2, 14, title, scale, black)
	// y grid, ticks and labels at 0, 0.2, …, 1.0
	for t := 0; t <= 5; t++ {
		v := float64(t) / 5
		y := py(v)
		fillRect(img, x0, y, x1-x0, 1, grid)
		fillRect(img, x0-6, y, 6, 1, black)
		lbl := strconv.FormatFloat(v, 'f', 1, 64)
		drawText(img, x0-10-textWidth(lbl, scale), y-glyphH*scale/2, lbl, scale, black)
	}
	// x ticks and labels at each K
	for i, k := range rs.Ks {
		x := px(i)
		fillRect(img, x, y0, 1, 6, black)
		lbl := strconv.Itoa(k)
		drawText(img, x-textWidth(lbl, scale)/2, y0+10, lbl, scale, black)
	}
	drawText(img, (x0+x1)/2-textWidth("K", scale)/2, y0+32, "K", scale, black)
	// axes
	fillRect(img, x0, y1, 2, y0-y1+1, black)
	fillRect(img, x0, y0, x1-x0, 2, black)

	legendY := top
	for mi, m := range rs.Methods {
		col := MethodColor(mi)
		prevX, prevY, have, drawn := 0, 0, false, false
		for i, k := range rs.Ks {
			c, ok := rs.cell(m, group, level, metric, k)
			if !ok {
				have = false
				continue
			}
			drawn = true
			x, y := px(i), py(c.Mean)
			// CI bar, thin, with caps; nudged sideways per method so bars of
			// different methods at the same K do not hide each other.
			lo, hi := py(c.Lo), py(c.Hi)
			bx := x + (2*mi-len(rs.Methods)+1)*3
			fillRect(img, bx, hi, 1, lo-hi+1, col)
			fillRect(img, bx-2, hi, 5, 1, col)
			fillRect(img, bx-2, lo, 5, 1, col)
			if have {
				drawLine(img, prevX, prevY, x, y, col)
			}
			fillRect(img, x-3, y-3, 7, 7, col)
			prevX, prevY, have = x, y, true
		}
		if !drawn {
			continue
		}
		fillRect(img, x1+16, legendY+2, 20, 10, col)
		drawText(img, x1+42, legendY, m, scale, black)
		legendY += 22
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("report: encode plot %s %s %s: %w", metric, level, group, err)
	}
	return nil
}

// drawLine draws a 2-pixel-thick segment with Bresenham's algorithm; no
// anti-aliasing, so every drawn pixel has exactly the method's colour.
func drawLine(img *image.RGBA, xa, ya, xb, yb int, c color.RGBA) {
	dx, dy := abs(xb-xa), -abs(yb-ya)
	sx, sy := 1, 1
	if xa > xb {
		sx = -1
	}
	if ya > yb {
		sy = -1
	}
	e := dx + dy
	for {
		fillRect(img, xa, ya, 2, 2, c)
		if xa == xb && ya == yb {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			xa += sx
		} else if e2 <= dx {
			e += dx
			ya += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
				if !rs.hasCells(level, group, metric) {
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

func (rs *ResultSet) hasCells(level, group, metric string) bool {
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
