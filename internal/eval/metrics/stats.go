package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultDraws is the number of bootstrap resamples used by DefaultBootstrap.
const DefaultDraws = 1000

// Bootstrap configures percentile-bootstrap confidence intervals.
type Bootstrap struct {
	Draws int     // number of resamples B; DefaultDraws when 0
	Level float64 // two-sided confidence level; 0.95 when 0
	Seed  uint64  // the same seed and input always give the same interval
}

// DefaultBootstrap is B=1000 draws at 95% with the given seed.
func DefaultBootstrap(seed uint64) Bootstrap {
	return Bootstrap{Draws: DefaultDraws, Level: 0.95, Seed: seed}
}

func (b Bootstrap) norm() (Bootstrap, error) {
	if b.Draws == 0 {
		b.Draws = DefaultDraws
	}
	if b.Level == 0 {
		b.Level = 0.95
	}
	if b.Draws < 1 {
		return b, fmt.Errorf("metrics: bootstrap draws must be >= 1 (got %d)", b.Draws)
	}
	if !(b.Level > 0 && b.Level < 1) {
		return b, fmt.Errorf("metrics: bootstrap level must be in (0,1) (got %v)", b.Level)
	}
	return b, nil
}

// ErrNoValues is returned when summarising an empty sample.
var ErrNoValues = errors.New("metrics: no values to summarise")

// Summary is the mean of per-instance values with a bootstrap confidence
// interval [Lo, Hi] and the sample size N.
type Summary struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"`
}

// Summarize returns the mean of values and its percentile-bootstrap CI: draw
// B resamples of size n with replacement, take each resample's mean, and report
// the (1-Level)/2 and (1+Level)/2 quantiles of those means (linear
// interpolation between order statistics, R's type 7).
func Summarize(values []float64, cfg Bootstrap) (Summary, error) {
	cfg, err := cfg.norm()
	if err != nil {
		return Summary{}, err
	}
	n := len(values)
	if n == 0 {
		return Summary{}, ErrNoValues
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Summary{}, fmt.Errorf("metrics: value %d is %v", i, v)
		}
	}
	rng := newRNG(cfg.Seed)
	means := make([]float64, cfg.Draws)
	for d := range means {
		s := 0.0
		for range n {
			s += values[rng.IntN(n)]
		}
		means[d] = s / float64(n)
	}
	lo, hi := interval(means, cfg.Level)
	return Summary{Mean: mean(values), Lo: lo, Hi: hi, N: n}, nil
}

// Paired compares method A against baseline B on the same instances.
type Paired struct {
	// Diff is mean(a_i - b_i) with its paired-bootstrap CI [Lo, Hi].
	Diff float64 `json:"diff"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	// PLE0 is the fraction of bootstrap draws whose mean difference is <= 0
	// (within 1e-12, so float rounding of an exact tie counts as a tie): a
	// one-sided p-value estimate for "A is better than B".
	PLE0 float64 `json:"p_le0"`
	N    int     `json:"n"`
}

// Compare runs a paired bootstrap: each draw resamples instance indices with
// replacement and takes the mean of a_i - b_i over them, so per-instance
// difficulty cancels. a[i] and b[i] must be the same instance.
func Compare(a, b []float64, cfg Bootstrap) (Paired, error) {
	if len(a) != len(b) {
		return Paired{}, fmt.Errorf("metrics: paired comparison needs equal lengths (got %d and %d)", len(a), len(b))
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	cfg, err := cfg.norm()
	if err != nil {
		return Paired{}, err
	}
	s, err := Summarize(d, cfg)
	if err != nil {
		return Paired{}, err
	}
	// Re-draw with the same seed to count draws <= 0; identical to the draws
	// inside Summarize, so the p-value and the interval agree.
	rng := newRNG(cfg.Seed)
	n, le := len(d), 0
	for range cfg.Draws {
		sum := 0.0
		for range n {
			sum += d[rng.IntN(n)]
		}
		if sum/float64(n) <= 1e-12 {
			le++
		}
	}
	return Paired{Diff: s.Mean, Lo: s.Lo, Hi: s.Hi, PLE0: float64(le) / float64(cfg.Draws), N: n}, nil
}

// SummarizeGroups summarises values per group label (groups[i] labels
// values[i], e.g. a language). Every group uses cfg's seed, so a group's
// interval does not depend on which other groups exist.
func SummarizeGroups(values []float64, groups []string, cfg Bootstrap) (map[string]Summary, error) {
	if len(values) != len(groups) {
		return nil, fmt.Errorf("metrics: %d values but %d group labels", len(values), len(groups))
	}
	by := map[string][]float64{}
	for i, g := range groups {
		by[g] = append(by[g], values[i])
	}
	out := make(map[string]Summary, len(by))
	for g, vs := range by {
		s, err := Summarize(vs, cfg)
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", g, err)
		}
		out[g] = s
	}
	return out, nil
}

func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// interval sorts xs in place and returns its two-sided percentile interval.
func interval(xs []float64, level float64) (lo, hi float64) {
	slices.Sort(xs)
	a := (1 - level) / 2
	return Quantile(xs, a), Quantile(xs, 1-a)
}

// Quantile of sorted xs at q in [0,1], R type 7 (at 0.5, the median):
// h = (n-1)q, interpolate between xs[floor h] and xs[floor h + 1].
func Quantile(xs []float64, q float64) float64 {
	h := float64(len(xs)-1) * q
	i := int(math.Floor(h))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}
