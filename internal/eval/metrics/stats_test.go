package metrics

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSummarizeConstant(t *testing.T) {
	s, err := Summarize([]float64{0.25, 0.25, 0.25}, DefaultBootstrap(1))
	if err != nil {
		t.Fatal(err)
	}
	if s != (Summary{Mean: 0.25, Lo: 0.25, Hi: 0.25, N: 3}) {
		t.Errorf("got %+v", s)
	}
}

func TestSummarizeMean(t *testing.T) {
	// (1 + 0 + 0 + 1 + 1) / 5 = 0.6
	s, err := Summarize([]float64{1, 0, 0, 1, 1}, DefaultBootstrap(7))
	if err != nil {
		t.Fatal(err)
	}
	if !near(s.Mean, 0.6) || s.N != 5 || !(s.Lo <= s.Mean && s.Mean <= s.Hi) || s.Lo < 0 || s.Hi > 1 {
		t.Errorf("got %+v", s)
	}
}

func TestSummarizeDeterministic(t *testing.T) {
	v := []float64{0.1, 0.9, 0.3, 0.0, 1.0, 0.5, 0.7}
	a, _ := Summarize(v, DefaultBootstrap(42))
	b, _ := Summarize(v, DefaultBootstrap(42))
	if a != b {
		t.Errorf("same seed, different result: %+v vs %+v", a, b)
	}
	c, _ := Summarize(v, DefaultBootstrap(43))
	if c == a {
		t.Errorf("different seeds gave identical intervals %+v", a)
	}
	if c.Mean != a.Mean {
		t.Errorf("mean depends on seed")
	}
}

// A sample from N(0.5, 0.2²), n=400: the 95% CI must contain 0.5 and have width
// close to the normal-theory 2·1.96·σ/√n = 0.0392.
func TestSummarizeCoversTrueMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 1))
	v := make([]float64, 400)
	for i := range v {
		v[i] = 0.5 + 0.2*rng.NormFloat64()
	}
	s, err := Summarize(v, DefaultBootstrap(99))
	if err != nil {
		t.Fatal(err)
	}
	if !(s.Lo < 0.5 && 0.5 < s.Hi) {
		t.Errorf("CI [%v, %v] misses the true mean 0.5", s.Lo, s.Hi)
	}
	if w := s.Hi - s.Lo; math.Abs(w-0.0392) > 0.0392*0.2 {
		t.Errorf("CI width %v, want about 0.0392", w)
	}
}

// Across many samples of a Bernoulli(0.3), the 95% interval should contain 0.3
// most of the time (coverage well above 85%).
func TestSummarizeCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	hit := 0
	const trials = 60
	for tr := range trials {
		v := make([]float64, 100)
		for i := range v {
			if rng.Float64() < 0.3 {
				v[i] = 1
			}
		}
		s, err := Summarize(v, Bootstrap{Draws: 400, Seed: uint64(tr)})
		if err != nil {
			t.Fatal(err)
		}
		if s.Lo <= 0.3 && 0.3 <= s.Hi {
			hit++
		}
	}
	if hit < trials*85/100 {
		t.Errorf("coverage %d/%d", hit, trials)
	}
}

func TestSummarizeErrors(t *testing.T) {
	if _, err := Summarize(nil, DefaultBootstrap(1)); !errors.Is(err, ErrNoValues) {
		t.Errorf("empty: %v", err)
	}
	if _, err := Summarize([]float64{math.NaN()}, DefaultBootstrap(1)); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := Summarize([]float64{1}, Bootstrap{Draws: -1}); err == nil {
		t.Error("negative draws accepted")
	}
	if _, err := Summarize([]float64{1}, Bootstrap{Level: 1.5}); err == nil {
		t.Error("level 1.5 accepted")
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	// type 7: h = 4q; q=0.25 → xs[1] = 2; q=0.1 → h=0.4 → 1 + 0.4·1 = 1.4
	for q, want := range map[float64]float64{0: 1, 0.25: 2, 0.1: 1.4, 1: 5, 0.975: 4.9} {
		if got := Quantile(xs, q); !near(got, want) {
			t.Errorf("Quantile(%v) = %v want %v", q, got, want)
		}
	}
}

func TestCompare(t *testing.T) {
	b := []float64{0.1, 0.5, 0.2, 0.9, 0.0}
	a := make([]float64, len(b))
	for i := range b {
		a[i] = b[i] + 0.25
	}
	p, err := Compare(a, b, DefaultBootstrap(3))
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.Diff, 0.25) || !near(p.Lo, 0.25) || !near(p.Hi, 0.25) || p.PLE0 != 0 || p.N != 5 {
		t.Errorf("shifted: %+v", p)
	}
	p, _ = Compare(b, b, DefaultBootstrap(3))
	if p.Diff != 0 || p.PLE0 != 1 {
		t.Errorf("identical: %+v", p)
	}
	// a better on 1 of 4 instances, worse on none: diffs {1,0,0,0}; a draw
	// has mean <= 0 iff it never picks instance 0: P ≈ (3/4)^4 = 0.316.
	p, _ = Compare([]float64{1, 0, 0, 0}, []float64{0, 0, 0, 0}, DefaultBootstrap(11))
	if !near(p.Diff, 0.25) || math.Abs(p.PLE0-0.316) > 0.05 {
		t.Errorf("sparse: %+v", p)
	}
	q, _ := Compare([]float64{1, 0, 0, 0}, []float64{0, 0, 0, 0}, DefaultBootstrap(11))
	if p != q {
		t.Errorf("not deterministic: %+v vs %+v", p, q)
	}
	if _, err := Compare([]float64{1}, []float64{1, 2}, DefaultBootstrap(1)); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestSummarizeGroups(t *testing.T) {
	v := []float64{1, 0, 1, 1, 0}
	g := []string{"go", "go", "python", "python", "java"}
	m, err := SummarizeGroups(v, g, DefaultBootstrap(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || !near(m["go"].Mean, 0.5) || m["go"].N != 2 || !near(m["python"].Mean, 1) || m["java"].N != 1 {
		t.Errorf("got %+v", m)
	}
	// A group's result is independent of the other groups.
	solo, _ := Summarize([]float64{1, 0}, DefaultBootstrap(1))
	if solo != m["go"] {
		t.Errorf("group go %+v != solo %+v", m["go"], solo)
	}
	if _, err := SummarizeGroups(v, g[:2], DefaultBootstrap(1)); err == nil {
		t.Error("length mismatch accepted")
	}
}
