package fit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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

// heatmap draws Recall@K over the grid into path.
func (res Result) heatmap(path string) error {
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
	pal := moreland.SmoothBlueRed()
	if hi <= lo {
		hi = lo + 1e-9
	}
	pal.SetMin(lo)
	pal.SetMax(hi)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Recall@%d of the fused ranking (%d queries)", res.K, res.Queries)
	p.X.Label.Text = "memory weight"
	p.Y.Label.Text = "hotspot weight"
	p.Add(plotter.NewHeatMap(g, pal.Palette(64)))
	p.X.Tick.Marker = labels(g.xs)
	p.Y.Tick.Marker = labels(g.ys)
	best := plotter.XYs{{X: float64(slices.Index(g.xs, res.Best.Weights.Memory)), Y: float64(slices.Index(g.ys, res.Best.Weights.Hotspot))}}
	sc, err := plotter.NewScatter(best)
	if err != nil {
		return err
	}
	p.Add(sc)
	p.Legend.Add(fmt.Sprintf("best: %.3f; worst %.3f", hi, lo), sc)
	if err := p.Save(6*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("fit: plot %s: %w", path, err)
	}
	return nil
}

// labels ticks each grid cell with its weight.
type labels []float64

func (l labels) Ticks(lo, hi float64) []plot.Tick {
	var t []plot.Tick
	for i, v := range l {
		t = append(t, plot.Tick{Value: float64(i), Label: fmt.Sprintf("%g", v)})
	}
	return t
}
