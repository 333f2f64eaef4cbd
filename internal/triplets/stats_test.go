package triplets

import (
	"fmt"
	"image"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/plotutil"
	"github.com/locus-dev/locus/internal/plotutil/plottest"
	"github.com/locus-dev/locus/internal/testutil/browsertest"
)

// manyRecords is n records of repo, the i-th with i%4+1 positives, i%16+5
// negatives, i%60+3 query words and a commit in 2014+i%11.
func manyRecords(repo string, n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := Record{Repo: repo, Query: strings.Repeat("w ", i%60+3),
			Time: time.Date(2014+i%11, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()}
		for range i%4 + 1 {
			r.Positives = append(r.Positives, Doc{ID: "a.go:f", File: "a.go"})
		}
		r.Negatives = make([]Negative, i%16+5)
		recs[i] = r
	}
	return recs
}

// One repository of 500 records: every plot decodes at its size and is not
// blank; the repository's bar is a bar, not a black block; the count axes
// are labelled in whole numbers ("500", never "500.00").
func TestStatsPlotsOneRepository(t *testing.T) {
	dir := t.TempDir()
	recs := manyRecords("acme/widget", 500)
	files, err := WriteStats(dir, recs, []RepoStats{{Repo: "acme/widget"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("files %v", files)
	}
	for _, f := range files[1:] {
		img := plottest.ReadPNG(t, f)
		want := image.Pt(plotWidth, 500)
		if filepath.Base(f) == "bar-repositories.png" {
			want.Y = plotutil.HBarsHeight(1)
		}
		if got := img.Bounds().Size(); got != want {
			t.Errorf("%s: %v, want %v", filepath.Base(f), got, want)
		}
		if err := browsertest.NotBlank(img, 0.05); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		if d := plottest.DarkShare(img); d > 0.03 {
			t.Errorf("%s: %.2f of the image is black", filepath.Base(f), d)
		}
	}
	for _, h := range histograms {
		p, err := histPlot(h.title, h.x, h.values(recs))
		if err != nil {
			t.Fatal(err)
		}
		for axis, a := range map[string][2]float64{"x": {p.X.Min, p.X.Max}, "y": {p.Y.Min, p.Y.Max}} {
			ticks := p.Y.Tick.Marker.Ticks(a[0], a[1])
			if axis == "x" {
				ticks = p.X.Tick.Marker.Ticks(a[0], a[1])
			}
			n := 0
			for _, tk := range ticks {
				if tk.Label == "" {
					continue
				}
				n++
				if _, err := strconv.Atoi(tk.Label); err != nil {
					t.Errorf("%s: %s axis labelled %q, want whole numbers", h.file, axis, tk.Label)
				}
			}
			if n < 2 {
				t.Errorf("%s: %s axis has %d labels", h.file, axis, n)
			}
		}
	}
	p, n, err := repoBars(recs)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(p.Title.Text, "500 records, 1 repository") {
		t.Errorf("%d bars, title %q", n, p.Title.Text)
	}
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if _, err := strconv.Atoi(tk.Label); tk.Label != "" && err != nil {
			t.Errorf("records axis labelled %q", tk.Label)
		}
	}
}

// Many repositories: the maxRepoBars with the most records, most first,
// and the title counts the rest; the image grows with the bars so that
// each keeps a readable row.
func TestRepoBarsTopN(t *testing.T) {
	var recs []Record
	for i := range 100 {
		recs = append(recs, manyRecords(fmt.Sprintf("org/repo-%03d", i), i+1)...)
	}
	p, n, err := repoBars(recs)
	if err != nil {
		t.Fatal(err)
	}
	if n != maxRepoBars {
		t.Errorf("%d bars, want %d", n, maxRepoBars)
	}
	// The other 70 repositories hold 1+2+…+70 records.
	if want := fmt.Sprintf("the %d with the most of 100\n(the other 70 hold 2485 of the 5050 records)", maxRepoBars); !strings.Contains(p.Title.Text, want) {
		t.Errorf("title %q lacks %q", p.Title.Text, want)
	}
	ticks := p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)
	if len(ticks) != maxRepoBars || ticks[len(ticks)-1].Label != "org/repo-099" || ticks[0].Label != "org/repo-070" {
		t.Errorf("bars (bottom up) %v", ticks)
	}
	dir := t.TempDir()
	path, err := writePNG(dir, "bars.png", p, plotWidth, plotutil.HBarsHeight(n))
	if err != nil {
		t.Fatal(err)
	}
	if err := browsertest.NotBlank(plottest.ReadPNG(t, path), 0.05); err != nil {
		t.Error(err)
	}
}

// Whole numbers are binned one per value, each in the middle of its bin,
// up to maxBins values; a longer span takes bins of a round width.
func TestIntBins(t *testing.T) {
	bins, w := intBins([]float64{1, 1, 2, 4})
	var got []string
	for _, b := range bins {
		got = append(got, fmt.Sprintf("%g-%g:%g", b.Min, b.Max, b.Weight))
	}
	if w != 1 || strings.Join(got, " ") != "0.5-1.5:2 1.5-2.5:1 2.5-3.5:0 3.5-4.5:1" {
		t.Errorf("w %g, bins %v", w, got)
	}
	bins, w = intBins([]float64{3, 250, 251})
	if w != 10 || len(bins) != 26 || bins[0].Min != -0.5 || bins[0].Weight != 1 || bins[25].Min != 249.5 || bins[25].Weight != 2 {
		t.Errorf("w %g, %d bins, first %+v, last %+v", w, len(bins), bins[0], bins[len(bins)-1])
	}
	for _, tc := range []struct{ span, want float64 }{{1, 1}, {40, 1}, {41, 2}, {80, 2}, {81, 5}, {200, 5}, {201, 10}, {4000, 100}, {4001, 200}} {
		if got := binWidth(tc.span); got != tc.want {
			t.Errorf("binWidth(%g) = %g, want %g", tc.span, got, tc.want)
		}
	}
}
