package rank

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"

	"github.com/locus-dev/locus/internal/spider"
)

// Linear is the simple baseline the tree model is compared with: a
// pairwise logistic model (RankNet with a linear scorer). Each feature is
// squashed (sign(x)·log(1+|x|): ranks, ages and counts span orders of
// magnitude) and standardised; the score is W·z.
type Linear struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
	W    []float64 `json:"w"`
}

// LinearConfig configures TrainLinear; zero fields take the defaults
// written next to them.
type LinearConfig struct {
	// Negatives per positive, the best-fused first; default 50.
	Negatives int
	// L2 regularisation; default 1e-3.
	L2 float64
}

func squash(v float64) float64 {
	if v < 0 {
		return -math.Log1p(-v)
	}
	return math.Log1p(v)
}

func (l *Linear) z(x []float64, j int) float64 {
	return (squash(x[j]) - l.Mean[j]) / l.Std[j]
}

// Score is W·z of one feature row.
func (l *Linear) Score(x []float64) float64 {
	s := 0.0
	for j := range l.W {
		s += l.W[j] * l.z(x, j)
	}
	return s
}

// TrainLinear fits a Linear model on the labelled queries of qs by L-BFGS
// (gonum) on the mean pairwise logistic loss. Deterministic: pairs are
// taken in candidate order.
func TrainLinear(qs []Query, c LinearConfig) (*Linear, error) {
	if c.Negatives <= 0 {
		c.Negatives = 50
	}
	if c.L2 <= 0 {
		c.L2 = 1e-3
	}
	n := numFeatures
	l := &Linear{Mean: make([]float64, n), Std: make([]float64, n), W: make([]float64, n)}
	var rows int
	for _, q := range qs {
		for _, cand := range q.Candidates {
			for j := range n {
				l.Mean[j] += squash(cand.X[j])
			}
			rows++
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf("train linear: %w", ErrNoPositives)
	}
	for j := range n {
		l.Mean[j] /= float64(rows)
	}
	for _, q := range qs {
		for _, cand := range q.Candidates {
			for j := range n {
				d := squash(cand.X[j]) - l.Mean[j]
				l.Std[j] += d * d
			}
		}
	}
	for j := range n {
		if l.Std[j] = math.Sqrt(l.Std[j] / float64(rows)); l.Std[j] < 1e-9 {
			l.Std[j] = 1 // a constant feature: z is 0
		}
	}
	// Pair differences z(p) − z(n).
	var diffs [][]float64
	for _, q := range qs {
		var pos, neg [][]float64
		for _, cand := range q.Candidates {
			z := make([]float64, n)
			for j := range n {
				z[j] = l.z(cand.X, j)
			}
			if q.Positive[cand.ID] {
				pos = append(pos, z)
			} else if len(neg) < c.Negatives {
				neg = append(neg, z)
			}
		}
		for _, p := range pos {
			for _, m := range neg {
				d := make([]float64, n)
				for j := range n {
					d[j] = p[j] - m[j]
				}
				diffs = append(diffs, d)
			}
		}
	}
	if len(diffs) == 0 {
		return nil, fmt.Errorf("train linear: %w", ErrNoPositives)
	}
	inv := 1 / float64(len(diffs))
	p := optimize.Problem{
		Func: func(w []float64) float64 {
			loss := 0.0
			for _, d := range diffs {
				loss += softplus(-dot(w, d))
			}
			return loss*inv + c.L2/2*dot(w, w)
		},
		Grad: func(g, w []float64) {
			for j := range g {
				g[j] = c.L2 * w[j]
			}
			for _, d := range diffs {
				s := -sigmoid(-dot(w, d)) * inv
				for j := range g {
					g[j] += s * d[j]
				}
			}
		},
	}
	res, err := optimize.Minimize(p, make([]float64, n), &optimize.Settings{GradientThreshold: 1e-6, MajorIterations: 500}, &optimize.LBFGS{})
	if err != nil && !errors.Is(err, optimize.ErrLinesearcherFailure) {
		return nil, fmt.Errorf("train linear: %w", err)
	}
	if res == nil {
		return nil, fmt.Errorf("train linear: no result: %w", err)
	}
	l.W = slices.Clone(res.X)
	return l, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// softplus is log(1+e^x), stable for large |x|.
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Rank orders cands by the linear score, best first, ties by id.
func (l *Linear) Rank(cands []Candidate) []spider.Scored {
	out := make([]spider.Scored, len(cands))
	for i, c := range cands {
		out[i] = spider.Scored{ID: c.ID, Score: l.Score(c.X)}
	}
	spider.Sort(out)
	return out
}
