package triplets

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
		vals := make(plotter.Values, len(recs))
		for i, r := range recs {
			vals[i] = h.value(r)
		}
		p := plot.New()
		p.Title.Text, p.X.Label.Text, p.Y.Label.Text = h.title, h.x, "records"
		lo, hi := slices.Min(vals), slices.Max(vals)
		hist, err := plotter.NewHist(vals, max(1, min(40, int(hi-lo)+1)))
		if err != nil {
			return files, fmt.Errorf("triplets stats %s: %w", h.file, err)
		}
		p.Add(hist)
		path := filepath.Join(dir, h.file)
		if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
			return files, fmt.Errorf("triplets stats %s: %w", h.file, err)
		}
		files = append(files, path)
	}
	perRepo := map[string]int{}
	for _, r := range recs {
		perRepo[r.Repo]++
	}
	names := slices.Sorted(maps.Keys(perRepo))
	vals := make(plotter.Values, len(names))
	for i, n := range names {
		vals[i] = float64(perRepo[n])
	}
	p := plot.New()
	p.Title.Text, p.Y.Label.Text = "Records per repository", "records"
	bars, err := plotter.NewBarChart(vals, vg.Points(max(4, 300/float64(len(names)))))
	if err != nil {
		return files, fmt.Errorf("triplets stats: %w", err)
	}
	p.Add(bars)
	p.NominalX(names...)
	path := filepath.Join(dir, "bar-repositories.png")
	if err := p.Save(vg.Length(max(6, len(names)/2))*vg.Inch, 4*vg.Inch, path); err != nil {
		return files, fmt.Errorf("triplets stats: %w", err)
	}
	return append(files, path), nil
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
