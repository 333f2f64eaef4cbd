package fit

import (
	"fmt"
	"image"
	"image/color"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/plotutil"
	"github.com/locus-dev/locus/internal/plotutil/plottest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/browsertest"
)

// gridResult is a 4 × 3 grid whose Recall@10 rises with both weights from
// 0.2 to 0.75, the best at its top right, the given weights at 0.5/0.5.
func gridResult() Result {
	res := Result{K: 10, Queries: 40}
	for i, m := range []float64{0, 0.5, 1, 1.5} {
		for j, h := range []float64{0, 0.5, 1} {
			p := Point{Weights: search.Weights{Memory: m, Hotspot: h}, Recall: 0.2 + 0.05*float64(i*3+j)}
			res.Grid = append(res.Grid, p)
			if m == 1.5 && h == 1 {
				res.Best = p
			}
			if m == 0.5 && h == 0.5 {
				res.Given = p
			}
		}
	}
	return res
}

func near(a, b color.Color) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) bool { return max(x, y)-min(x, y) <= 24<<8 }
	return d(ar, br) && d(ag, bg) && d(ab, bb)
}

// The heatmap has a colour scale: a bar right of the cells running from the
// worst Recall@K's colour at the bottom to the best's at the top, its axis
// spanning exactly the grid's Recall@K.
func TestHeatmapColourBar(t *testing.T) {
	res := gridResult()
	heat, scale, err := res.heatmapPlots()
	if err != nil {
		t.Fatal(err)
	}
	if scale == nil || scale.Y.Min != 0.2 || scale.Y.Max != 0.75 {
		t.Fatalf("colour bar axis %v", scale)
	}
	for _, want := range []string{"Recall@10 of the fused ranking, 40 queries", "fitted (outlined): 0.750 at memory 1.5, hotspot 1", "given: 0.400 at memory 0.5, hotspot 0.5 (dashed)"} {
		if !strings.Contains(heat.Title.Text, want) {
			t.Errorf("title %q lacks %q", heat.Title.Text, want)
		}
	}
	path := filepath.Join(t.TempDir(), "fit-recall.png")
	if err := res.heatmap(path); err != nil {
		t.Fatal(err)
	}
	img := plottest.ReadPNG(t, path)
	if got := img.Bounds().Size(); got != image.Pt(heatWidth, heatHeight) {
		t.Errorf("size %v", got)
	}
	if err := browsertest.NotBlank(img, 0.3); err != nil {
		t.Error(err)
	}
	cmap := recallColors()
	cmap.SetMin(0.2)
	cmap.SetMax(0.75)
	worst, _ := cmap.At(0.2)
	best, _ := cmap.At(0.75)
	found := false
	for x := heatWidth - scaleWidth; x < heatWidth && !found; x++ {
		seen := map[color.Color]bool{}
		top, bottom := -1, -1
		for y := range heatHeight {
			c := img.At(x, y)
			if r, g, b, _ := c.RGBA(); r == 0xffff && g == 0xffff && b == 0xffff {
				continue
			}
			seen[c] = true
			if top < 0 {
				top = y
			}
			bottom = y
		}
		found = len(seen) >= 100 && near(img.At(x, top+2), best) && near(img.At(x, bottom-2), worst)
	}
	if !found {
		t.Errorf("no colour bar from %v (bottom) to %v (top) right of the heatmap", worst, best)
	}
}

// A grid of one Recall@K everywhere still gets a scale (around it), and
// no grid is an error, not an empty picture.
func TestHeatmapFlatAndEmpty(t *testing.T) {
	res := gridResult()
	for i := range res.Grid {
		res.Grid[i].Recall = 0.25
	}
	_, scale, err := res.heatmapPlots()
	if err != nil {
		t.Fatal(err)
	}
	if !(scale.Y.Min < 0.25 && scale.Y.Max > 0.25) {
		t.Errorf("flat grid: scale from %g to %g", scale.Y.Min, scale.Y.Max)
	}
	path := filepath.Join(t.TempDir(), "flat.png")
	if err := res.heatmap(path); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.NotBlank(plottest.ReadPNG(t, path), 0.3); err != nil {
		t.Error(err)
	}
	if err := (Result{K: 10}).heatmap(path); err == nil || !strings.Contains(err.Error(), "no grid points") {
		t.Errorf("empty grid: %v", err)
	}
}

// A long grid labels every n-th weight so that the labels do not overlap.
func TestGridLabels(t *testing.T) {
	var ws labels
	for i := range 21 {
		ws = append(ws, float64(i)/20)
	}
	var got []string
	for _, tk := range ws.Ticks(0, 20) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if strings.Join(got, " ") != "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1" {
		t.Errorf("labels %v", got)
	}
}

// importance.png: the largest maxImportanceBars features as coloured bars
// (not black), the gain axis labelled without padded decimals, and a model
// without importances drawn with a title that says so.
func TestImportancePlot(t *testing.T) {
	imp := map[string]float64{}
	for i := range 42 {
		imp[fmt.Sprintf("feature_%02d", i)] = 5000 / float64(i+1)
	}
	r := RankerResult{Fleet: "train", Importance: imp}
	p, n, err := r.importanceBars()
	if err != nil {
		t.Fatal(err)
	}
	if n != maxImportanceBars || !strings.Contains(p.Title.Text, "the 20 largest of 42 features") {
		t.Errorf("%d bars, title %q", n, p.Title.Text)
	}
	ticks := p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)
	if ticks[len(ticks)-1].Label != "feature_00" || ticks[0].Label != "feature_19" {
		t.Errorf("bars (bottom up) %v", ticks)
	}
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if strings.Contains(tk.Label, ".") {
			t.Errorf("gain axis labelled %q", tk.Label)
		}
	}
	data, err := r.importancePlot()
	if err != nil {
		t.Fatal(err)
	}
	img := plottest.DecodePNG(t, data)
	if got := img.Bounds().Size(); got != image.Pt(800, plotutil.HBarsHeight(n)) {
		t.Errorf("size %v", got)
	}
	if err := browsertest.NotBlank(img, 0.05); err != nil {
		t.Error(err)
	}
	if share := plottest.DarkShare(img); share > 0.03 {
		t.Errorf("%.2f of importance.png is black", share)
	}

	none := RankerResult{Fleet: "train"}
	p, n, err = none.importanceBars()
	if err != nil || n != 0 || !strings.Contains(p.Title.Text, "none") {
		t.Errorf("no importances: %d bars, %v, %v", n, p, err)
	}
	if _, err := none.importancePlot(); err != nil {
		t.Error(err)
	}
}
