package plotutil

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/locus-dev/locus/internal/plotutil/plottest"
	"github.com/locus-dev/locus/internal/testutil/browsertest"
)

// labelled is the labelled ticks of ts.
func labelled(ts []plot.Tick) []plot.Tick {
	var out []plot.Tick
	for _, t := range ts {
		if !t.IsMinor() {
			out = append(out, t)
		}
	}
	return out
}

// Counts labels whole numbers only, without decimals, inside the range,
// at most seven of them and at least one — where plot.DefaultTicks writes
// "250.00" and "500.00" for 0…500 and ticks 0.5 for 0…1.
func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string // the labels, when the test pins them
	}{
		{0, 500, "0 100 200 300 400 500"},
		{0, 1, "0 1"},
		{0.5, 4.5, "1 2 3 4"},
		{2013.5, 2024.5, "2014 2016 2018 2020 2022 2024"},
		{0, 53.6, "0 10 20 30 40 50"},
		{0, 3e6, "0 500000 1000000 1500000 2000000 2500000 3000000"},
		{-0.5, 0.5, "0"},
		{0, 128.1, ""},
		{7, 9993, ""},
	} {
		ts := (Counts{}).Ticks(tc.lo, tc.hi)
		lab := labelled(ts)
		var got []string
		for _, tk := range lab {
			got = append(got, tk.Label)
			if tk.Value != math.Trunc(tk.Value) || tk.Label != strconv.FormatFloat(tk.Value, 'f', 0, 64) {
				t.Errorf("Counts(%g, %g): tick %g labelled %q", tc.lo, tc.hi, tk.Value, tk.Label)
			}
		}
		if len(lab) == 0 || len(lab) > 7 {
			t.Errorf("Counts(%g, %g): %d labels %v", tc.lo, tc.hi, len(lab), got)
		}
		if tc.want != "" && strings.Join(got, " ") != tc.want {
			t.Errorf("Counts(%g, %g) = %v, want %s", tc.lo, tc.hi, got, tc.want)
		}
		for _, tk := range ts {
			if tk.Value < tc.lo || tk.Value > tc.hi || tk.Value != math.Trunc(tk.Value) {
				t.Errorf("Counts(%g, %g): tick at %g", tc.lo, tc.hi, tk.Value)
			}
		}
	}
}

// Plain keeps plot.DefaultTicks' positions but writes each label as its
// shortest decimal: "2500", not "2500.00".
func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 5750, "0 2500 5000"},
		{0.31, 0.62, "0.4 0.6"},
		{0, 1.2e7, "0 5000000 10000000"},
		{0, 1, "0 0.5 1"},
	} {
		var got []string
		for _, tk := range labelled((Plain{}).Ticks(tc.lo, tc.hi)) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Plain(%g, %g) = %v, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// HBars: the first bar at the top, bars filled with Fill and without
// outline (a single bar is not a black block), long names shortened, room
// for the values right of the longest bar; PNG renders at the size asked.
func TestHBars(t *testing.T) {
	long := strings.Repeat("x", 30) + strings.Repeat("y", 30)
	p, err := HBars("t", "records", []HBar{{"big", 500}, {long, 20}, {"small", 3}}, Counts{}, func(v float64) string { return strconv.Itoa(int(v)) })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		names = append(names, tk.Label)
	}
	if want := []string{"small", strings.Repeat("x", 23) + "…" + strings.Repeat("y", 24), "big"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("y labels (bottom up) %q, want %q", names, want)
	}
	if p.X.Min != 0 || p.X.Max < 550 {
		t.Errorf("x from %g to %g, want 0 and room beyond 500", p.X.Min, p.X.Max)
	}
	if _, err := HBars("t", "x", nil, Counts{}, nil); err == nil {
		t.Error("no bars: no error")
	}

	one, err := HBars("one repository", "records", []HBar{{"acme/widget", 500}}, Counts{}, func(v float64) string { return strconv.Itoa(int(v)) })
	if err != nil {
		t.Fatal(err)
	}
	data, err := PNG(one, 800, HBarsHeight(1))
	if err != nil {
		t.Fatal(err)
	}
	img := plottest.DecodePNG(t, data)
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != HBarsHeight(1) {
		t.Errorf("image %v, want 800×%d", b, HBarsHeight(1))
	}
	if err := browsertest.NotBlank(img, 0.02); err != nil {
		t.Error(err)
	}
	if d := plottest.DarkShare(img); d > 0.03 {
		t.Errorf("%.2f of the image is black: bars drawn black or outlined", d)
	}
}
