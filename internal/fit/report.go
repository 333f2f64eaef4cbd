package fit

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/plotutil"
	"github.com/locus-dev/locus/internal/search"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Report is what a fit writes: the options, each repository's preparation
// and the result.
type Report struct {
	Options Options `json:"options"`
	Repos   []Stats `json:"repos"`
	Result  Result  `json:"result"`
}

// Write writes fit.json, fit.md and fit-recall.png (Recall@K over the
// grid) into dir and returns the files written.
func (r Report) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	js := filepath.Join(dir, "fit.json")
	if err := os.WriteFile(js, data, 0o644); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	var md strings.Builder
	r.markdown(&md)
	mdPath := filepath.Join(dir, "fit.md")
	if err := os.WriteFile(mdPath, []byte(md.String()), 0o644); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	png := filepath.Join(dir, "fit-recall.png")
	if err := r.Result.heatmap(png); err != nil {
		return nil, err
	}
	return []string{js, mdPath, png}, nil
}

func (p Point) row(name string) string {
	return fmt.Sprintf("| %s | %.2f | %.2f | %.3f | %.3f | %.3f |\n", name, p.Weights.Memory, p.Weights.Hotspot, p.Recall, p.Acc, p.MRR)
}

func (r Report) markdown(w io.Writer) {
	res := r.Result
	fmt.Fprintf(w, "# Hybrid fusion weights fitted on triplets\n\n")
	fmt.Fprintf(w, "%d queries ranked at their parent commits (at most %d per repository, spread over its history); the code's BM25 has weight 1.\n\n", res.Queries, r.Options.Sample)
	if r.Options.MinWords > 0 {
		fmt.Fprintf(w, "Queries of fewer than %d words are left out before sampling.\n\n", r.Options.MinWords)
	}
	fmt.Fprintf(w, "| repository | records | too short | sampled | ranked | without memory | failed |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Repos {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d |\n", s.Repo, s.Records, s.Short, s.Sampled, s.Ranked, s.NoMemory, s.Failed)
	}
	head := fmt.Sprintf("| weights | memory | hotspot | Recall@%d | Acc@%d | MRR |\n|---|---|---|---|---|---|\n", res.K, res.K)
	fmt.Fprintf(w, "\n%s%s%s%s", head, res.Best.row("**fitted**"), res.Given.row("given (the defaults)"), res.Code.row("the code's BM25 alone"))
	fmt.Fprintf(w, "\nBy repository, Recall@%d / Acc@%d / MRR:\n\n| repository | queries | BM25 alone | given | fitted |\n|---|---|---|---|---|\n", res.K, res.K)
	three := func(p Point) string { return fmt.Sprintf("%.3f / %.3f / %.3f", p.Recall, p.Acc, p.MRR) }
	for _, rp := range res.Repos {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", rp.Repo, rp.Queries, three(rp.Code), three(rp.Given), three(rp.Fitted))
	}
	if len(res.HeldOut) > 0 {
		fmt.Fprintf(w, "\nLeaving one repository out: weights fitted on the others, scored on it.\n\n")
		fmt.Fprintf(w, "| held out | queries | memory | hotspot | Recall@%d | Acc@%d | MRR | its own best memory / hotspot | its own best Recall@%d |\n|---|---|---|---|---|---|---|---|---|\n", res.K, res.K, res.K)
		for _, h := range res.HeldOut {
			fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.3f | %.3f | %.3f | %.2f / %.2f | %.3f |\n", h.Repo, h.Queries,
				h.Fitted.Weights.Memory, h.Fitted.Weights.Hotspot, h.Fitted.Recall, h.Fitted.Acc, h.Fitted.MRR,
				h.Own.Weights.Memory, h.Own.Weights.Hotspot, h.Own.Recall)
		}
	}
	top := slices.Clone(res.Grid)
	slices.SortStableFunc(top, func(a, b Point) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	fmt.Fprintf(w, "\nThe ten best of %d settings:\n\n%s", len(res.Grid), head)
	for _, p := range top[:min(10, len(top))] {
		fmt.Fprint(w, p.row(""))
	}
}

// grid is Result.Grid as plotter.GridXYZ: memory weights along x, hotspot
// weights along y, Recall@K as z.
type grid struct {
	xs, ys []float64
	z      map[[2]float64]float64
}

func (g grid) Dims() (c, r int)   { return len(g.xs), len(g.ys) }
func (g grid) Z(c, r int) float64 { return g.z[[2]float64{g.xs[c], g.ys[r]}] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// Heatmap size in pixels, and the width of its colour bar's column.
const (
	heatWidth, heatHeight = 800, 640
	scaleWidth            = 120
	// maxCellLabels is the most columns or rows whose cells are labelled
	// with their Recall@K.
	maxCellLabels = 15
	// maxAxisLabels is the most weights labelled along an axis; a longer
	// grid labels every second (third, …) one.
	maxAxisLabels = 12
)

// recallColors is a sequential colour map (viridis' control colours: dark
// purple for the worst Recall@K, yellow for the best), its luminance rising
// with the value so that it reads in grey and to colour-blind eyes.
func recallColors() palette.ColorMap {
	m, err := moreland.NewLuminance([]color.Color{
		color.NRGBA{R: 0x44, G: 0x01, B: 0x54, A: 0xff}, color.NRGBA{R: 0x3b, G: 0x52, B: 0x8b, A: 0xff},
		color.NRGBA{R: 0x21, G: 0x91, B: 0x8c, A: 0xff}, color.NRGBA{R: 0x5e, G: 0xc9, B: 0x62, A: 0xff},
		color.NRGBA{R: 0xfd, G: 0xe7, B: 0x25, A: 0xff},
	})
	if err != nil {
		panic(err) // the control colours above are fixed
	}
	return m
}

// heatmapPlots are the plots heatmap draws side by side: Recall@K over the
// grid (each cell labelled with it when the grid is small enough, the
// fitted weights' cell outlined, the given weights' dashed) and its colour
// bar, spanning the worst to the best Recall@K.
func (res Result) heatmapPlots() (heat, scale *plot.Plot, err error) {
	if len(res.Grid) == 0 {
		return nil, nil, errors.New("fit: plot: no grid points")
	}
	g := grid{z: map[[2]float64]float64{}}
	lo, hi := 1.0, 0.0
	for _, p := range res.Grid {
		if !slices.Contains(g.xs, p.Weights.Memory) {
			g.xs = append(g.xs, p.Weights.Memory)
		}
		if !slices.Contains(g.ys, p.Weights.Hotspot) {
			g.ys = append(g.ys, p.Weights.Hotspot)
		}
		g.z[[2]float64{p.Weights.Memory, p.Weights.Hotspot}] = p.Recall
		lo, hi = min(lo, p.Recall), max(hi, p.Recall)
	}
	slices.Sort(g.xs)
	slices.Sort(g.ys)
	if hi-lo < 1e-6 { // one value everywhere: a scale around it
		lo = max(0, lo-0.01)
		hi = lo + 0.02
	}
	cmap := recallColors()
	cmap.SetMin(lo)
	cmap.SetMax(hi)
	metric := fmt.Sprintf("Recall@%d", res.K)

	at := func(w search.Weights) (plotter.XY, bool) {
		c, r := slices.Index(g.xs, w.Memory), slices.Index(g.ys, w.Hotspot)
		return plotter.XY{X: float64(c), Y: float64(r)}, c >= 0 && r >= 0
	}
	title := fmt.Sprintf("%s of the fused ranking, %d queries\nfitted (outlined): %.3f at memory %g, hotspot %g",
		metric, res.Queries, res.Best.Recall, res.Best.Weights.Memory, res.Best.Weights.Hotspot)
	_, givenOn := at(res.Given.Weights)
	given := fmt.Sprintf("\ngiven: %.3f at memory %g, hotspot %g", res.Given.Recall, res.Given.Weights.Memory, res.Given.Weights.Hotspot)
	switch {
	case res.Given.Weights == res.Best.Weights:
		title += " (the given weights)"
	case givenOn:
		title += given + " (dashed)"
	default:
		title += given + " (off the grid)"
	}
	heat = plotutil.New(title, "memory weight", "hotspot weight")
	hm := plotter.NewHeatMap(g, cmap.Palette(256))
	hm.Min, hm.Max = lo, hi
	heat.Add(hm)
	heat.X.Tick.Marker = labels(g.xs)
	heat.Y.Tick.Marker = labels(g.ys)

	// ink is black on light cells and white on dark ones.
	ink := func(v float64) color.Color {
		c, err := cmap.At(min(max(v, lo), hi))
		if err != nil {
			return color.Black
		}
		if l := color.GrayModel.Convert(c).(color.Gray).Y; l < 128 {
			return color.White
		}
		return color.Black
	}
	if len(g.xs) <= maxCellLabels && len(g.ys) <= maxCellLabels {
		var cells plotter.XYLabels
		var inks []color.Color
		for c, x := range g.xs {
			for r, y := range g.ys {
				v := g.z[[2]float64{x, y}]
				cells.XYs = append(cells.XYs, plotter.XY{X: float64(c), Y: float64(r)})
				cells.Labels = append(cells.Labels, fmt.Sprintf("%.3f", v))
				inks = append(inks, ink(v))
			}
		}
		lbl, err := plotter.NewLabels(cells)
		if err != nil {
			return nil, nil, fmt.Errorf("fit: plot: %w", err)
		}
		for i := range lbl.TextStyle {
			lbl.TextStyle[i].Font = plotutil.Sans(max(7, min(10, 130/float64(max(len(g.xs), len(g.ys))))))
			lbl.TextStyle[i].Color = inks[i]
			lbl.TextStyle[i].XAlign, lbl.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
		}
		heat.Add(lbl)
	}
	outline := func(w search.Weights, recall float64, dashed bool) error {
		xy, ok := at(w)
		if !ok {
			return nil
		}
		const h = 0.46 // inside the cell, so that neighbours do not hide it
		l, err := plotter.NewLine(plotter.XYs{{X: xy.X - h, Y: xy.Y - h}, {X: xy.X + h, Y: xy.Y - h}, {X: xy.X + h, Y: xy.Y + h}, {X: xy.X - h, Y: xy.Y + h}, {X: xy.X - h, Y: xy.Y - h}})
		if err != nil {
			return fmt.Errorf("fit: plot: %w", err)
		}
		l.LineStyle = draw.LineStyle{Color: ink(recall), Width: vg.Points(2.5)}
		if dashed {
			l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		heat.Add(l)
		return nil
	}
	if givenOn && res.Given.Weights != res.Best.Weights {
		if err := outline(res.Given.Weights, res.Given.Recall, true); err != nil {
			return nil, nil, err
		}
	}
	if err := outline(res.Best.Weights, res.Best.Recall, false); err != nil {
		return nil, nil, err
	}

	scale = plotutil.New("", "", metric)
	scale.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	scale.HideX()
	scale.Y.Padding = 0
	return heat, scale, nil
}

// heatmap draws Recall@K over the grid into path, its colour bar at the
// right.
func (res Result) heatmap(path string) error {
	heat, scale, err := res.heatmapPlots()
	if err != nil {
		return err
	}
	c := plotutil.Canvas(heatWidth, heatHeight)
	dc := plotutil.Inset(draw.New(c))
	left := draw.Crop(dc, 0, -plotutil.Pixels(scaleWidth), 0, 0)
	heat.Draw(left)
	// The bar spans the height of the heatmap's cells.
	da := heat.DataCanvas(left)
	right := dc
	right.Min = vg.Point{X: dc.Max.X - plotutil.Pixels(scaleWidth-20), Y: da.Min.Y}
	right.Max = vg.Point{X: dc.Max.X - plotutil.Pixels(20), Y: da.Max.Y}
	scale.Draw(right)
	data, err := plotutil.Encode(c)
	if err != nil {
		return fmt.Errorf("fit: plot %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("fit: plot: %w", err)
	}
	return nil
}

// labels ticks each grid cell with its weight, every n-th when there are
// more than maxAxisLabels.
type labels []float64

func (l labels) Ticks(lo, hi float64) []plot.Tick {
	every := (len(l) + maxAxisLabels - 1) / maxAxisLabels
	var t []plot.Tick
	for i, v := range l {
		tk := plot.Tick{Value: float64(i)}
		if i%every == 0 {
			tk.Label = strconv.FormatFloat(v, 'g', -1, 64)
		}
		t = append(t, tk)
	}
	return t
}
