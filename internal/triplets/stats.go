package triplets

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/plotutil"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// RepoStats is what one repository's mining did, for stats.md.
type RepoStats struct {
	Repo  string
	Stats Stats
	Error string
}

// Histogram names one PNG WriteStats draws and what it counts per record.
type histogram struct {
	file, title, x string
	value          func(Record) float64
}

var histograms = []histogram{
	{"hist-positives.png", "Positives per query", "positives", func(r Record) float64 { return float64(len(r.Positives)) }},
	{"hist-negatives.png", "Negatives per query", "negatives", func(r Record) float64 { return float64(len(r.Negatives)) }},
	{"hist-query-words.png", "Query length", "words", func(r Record) float64 { return float64(len(strings.Fields(r.Query))) }},
	{"hist-years.png", "Time coverage", "commit year", func(r Record) float64 {
		return float64(time.UnixMilli(r.Time).UTC().Year())
	}},
}

// values is h's value of each record.
func (h histogram) values(recs []Record) []float64 {
	vals := make([]float64, len(recs))
	for i, r := range recs {
		vals[i] = h.value(r)
	}
	return vals
}

// WriteStats writes stats.md (counts per repository and language, what was
// skipped and dropped and why) and PNG histograms of positives and
// negatives per query, query length, commit years and records per
// repository into dir; it returns the files written.
func WriteStats(dir string, recs []Record, repos []RepoStats, dropped map[Skip]int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("triplets stats: %w", err)
	}
	var files []string
	md := filepath.Join(dir, "stats.md")
	f, err := os.Create(md)
	if err != nil {
		return nil, fmt.Errorf("triplets stats: %w", err)
	}
	writeMarkdown(f, recs, repos, dropped)
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("triplets stats: %w", err)
	}
	files = append(files, md)
	if len(recs) == 0 {
		return files, nil
	}
	for _, h := range histograms {
		p, err := histPlot(h.title, h.x, h.values(recs))
		if err != nil {
			return files, fmt.Errorf("triplets stats %s: %w", h.file, err)
		}
		path, err := writePNG(dir, h.file, p, plotWidth, 500)
		if err != nil {
			return files, err
		}
		files = append(files, path)
	}
	p, n, err := repoBars(recs)
	if err != nil {
		return files, fmt.Errorf("triplets stats: %w", err)
	}
	path, err := writePNG(dir, "bar-repositories.png", p, plotWidth, plotutil.HBarsHeight(n))
	if err != nil {
		return files, err
	}
	return append(files, path), nil
}

// plotWidth is the width in pixels of every stats plot.
const plotWidth = 800

// maxRepoBars is how many repositories bar-repositories.png shows, those
// with the most records.
const maxRepoBars = 30

// maxBins is how many bins a histogram has at most.
const maxBins = 40

func writePNG(dir, name string, p *plot.Plot, width, height int) (string, error) {
	data, err := plotutil.PNG(p, width, height)
	if err != nil {
		return "", fmt.Errorf("triplets stats %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("triplets stats: %w", err)
	}
	return path, nil
}

// histPlot is a histogram of whole-number values (intBins), both axes
// ticked as counts, its title saying how many values and their median.
func histPlot(title, x string, vals []float64) (*plot.Plot, error) {
	if len(vals) == 0 {
		return nil, fmt.Errorf("histogram %q: no values", title)
	}
	bins, w := intBins(vals)
	top := 0.0
	for _, b := range bins {
		top = max(top, b.Weight)
	}
	sorted := slices.Sorted(slices.Values(vals))
	median := (sorted[(len(sorted)-1)/2] + sorted[len(sorted)/2]) / 2
	p := plotutil.New(fmt.Sprintf("%s: %d records, median %s", title, len(vals), strconv.FormatFloat(median, 'f', -1, 64)), x, "records")
	p.X.Tick.Marker, p.Y.Tick.Marker = plotutil.Counts{}, plotutil.Counts{}
	p.Add(plotutil.Grid(true), &plotter.Histogram{Bins: bins, Width: w, FillColor: plotutil.Fill,
		LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}})
	p.Y.Min, p.Y.Max = 0, top*1.05 // room between the tallest bin and the title
	return p, nil
}

// intBins counts whole-number values (vals is not empty) in bins of width
// w: one bin per value when they span at most maxBins, else bins of a round
// whole width (binWidth). A bin counting the whole numbers b … b+w-1 spans
// b-0.5 to b+w-0.5, so that each number sits in the middle of its bin.
func intBins(vals []float64) (bins []plotter.HistogramBin, w float64) {
	lo, hi := slices.Min(vals), slices.Max(vals)
	w = binWidth(hi - lo + 1)
	start := math.Floor(lo/w) * w
	bins = make([]plotter.HistogramBin, int((hi-start)/w)+1)
	for i := range bins {
		b := start + float64(i)*w
		bins[i] = plotter.HistogramBin{Min: b - 0.5, Max: b + w - 0.5}
	}
	for _, v := range vals {
		bins[int((math.Round(v)-start)/w)].Weight++
	}
	return bins, w
}

// binWidth is the smallest of 1, 2, 5, 10, 20, 50, … that cuts span whole
// numbers into at most maxBins bins (intBins, starting at a multiple of the
// width, may need one more).
func binWidth(span float64) float64 {
	for m := 1.0; ; m *= 10 {
		for _, w := range []float64{m, 2 * m, 5 * m} {
			if math.Ceil(span/w) <= maxBins {
				return w
			}
		}
	}
}

// repoBars is records per repository as horizontal bars, most first: the
// maxRepoBars repositories with the most records (the title counts the
// rest), and how many bars it has.
func repoBars(recs []Record) (*plot.Plot, int, error) {
	perRepo := map[string]int{}
	for _, r := range recs {
		perRepo[r.Repo]++
	}
	var bars []plotutil.HBar
	for n, c := range perRepo {
		bars = append(bars, plotutil.HBar{Name: n, Value: float64(c)})
	}
	slices.SortFunc(bars, func(a, b plotutil.HBar) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), strings.Compare(a.Name, b.Name))
	})
	title := fmt.Sprintf("Records per repository: %d records, %d %s", len(recs), len(bars), plural(len(bars), "repository", "repositories"))
	if len(bars) > maxRepoBars {
		rest := 0
		for _, b := range bars[maxRepoBars:] {
			rest += int(b.Value)
		}
		title = fmt.Sprintf("Records per repository: the %d with the most of %d\n(the other %d hold %d of the %d records)",
			maxRepoBars, len(bars), len(bars)-maxRepoBars, rest, len(recs))
		bars = bars[:maxRepoBars]
	}
	p, err := plotutil.HBars(title, "records", bars, plotutil.Counts{}, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) })
	return p, len(bars), err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// language is a record's language: the code graph's for its first
// positive's file (by extension; .h counts as C), else the extension.
func language(r Record) string {
	if len(r.Positives) == 0 {
		return "?"
	}
	if l := codegraph.LanguageFor(r.Positives[0].File); l != nil {
		return l.Name()
	}
	return strings.TrimPrefix(strings.ToLower(filepath.Ext(r.Positives[0].File)), ".")
}

func writeMarkdown(w io.Writer, recs []Record, repos []RepoStats, dropped map[Skip]int) {
	fmt.Fprintf(w, "# Triplets\n\n%d records from %d repositories.\n\n", len(recs), len(repos))
	kept := map[string]int{}
	negs := map[string]int{}
	for _, r := range recs {
		kept[r.Repo]++
		negs[r.Repo] += len(r.Negatives)
	}
	fmt.Fprintf(w, "| repository | commits | records mined | kept after dedup | negatives kept | excluded by benchmarks | failed | error |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range slices.SortedFunc(slices.Values(repos), func(a, b RepoStats) int { return cmp.Compare(a.Repo, b.Repo) }) {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %s |\n", r.Repo, r.Stats.Commits, r.Stats.Records, kept[r.Repo], negs[r.Repo],
			r.Stats.Excluded, r.Stats.Failed, strings.ReplaceAll(r.Error, "|", "\\|"))
	}
	langs := map[string]int{}
	for _, r := range recs {
		langs[language(r)]++
	}
	fmt.Fprintf(w, "\n| language | records |\n|---|---|\n")
	for _, l := range slices.Sorted(maps.Keys(langs)) {
		fmt.Fprintf(w, "| %s | %d |\n", l, langs[l])
	}
	skipped := map[Skip]int{}
	for _, r := range repos {
		for k, v := range r.Stats.Skipped {
			skipped[k] += v
		}
	}
	fmt.Fprintf(w, "\n| commits skipped because | count |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(skipped)) {
		fmt.Fprintf(w, "| %s | %d |\n", k, skipped[k])
	}
	var t Stats
	for _, r := range repos {
		t.ReadMs += r.Stats.ReadMs
		t.AnchorMs += r.Stats.AnchorMs
		t.ParentMs += r.Stats.ParentMs
		t.RankMs += r.Stats.RankMs
	}
	fmt.Fprintf(w, "\n| time in (all activities, summed) | seconds |\n|---|---|\n| reading the history from the store | %.1f |\n"+
		"| building anchor indexes (graph + BM25) | %.1f |\n| reading and parsing parents | %.1f |\n| ranking and picking negatives | %.1f |\n",
		float64(t.ReadMs)/1000, float64(t.AnchorMs)/1000, float64(t.ParentMs)/1000, float64(t.RankMs)/1000)
	fmt.Fprintf(w, "\n| records dropped by the dedup because | count |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(dropped)) {
		fmt.Fprintf(w, "| %s | %d |\n", k, dropped[k])
	}
	var failed []string
	for _, r := range repos {
		for _, e := range r.Stats.FailedExamples {
			failed = append(failed, r.Repo+" "+e)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\nCommits that could not be mined (first of each repository):\n\n")
		for _, e := range failed {
			fmt.Fprintf(w, "- %s\n", e)
		}
	}
}
