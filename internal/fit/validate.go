package fit

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/rank"
)

// Scores are means over queries of Recall@K, Acc@K and MRR.
type Scores struct {
	Recall float64 `json:"recall"`
	Acc    float64 `json:"acc"`
	MRR    float64 `json:"mrr"`
}

// Validation is one held-out repository's benchmark instances ranked by
// the model trained without it (Learned), against the hybrid fusion's
// order of the same candidates (Fused, the hybrid method before its graph
// step), at K.
type Validation struct {
	Repo      string `json:"repo"`
	Instances int    `json:"instances"`
	K         int    `json:"k"`
	Learned   Scores `json:"learned"`
	// Linear is the pairwise logistic baseline (rank.TrainLinear) trained
	// on the same queries.
	Linear Scores `json:"linear"`
	Fused  Scores `json:"fused"`
	// Candidates is the mean size of an instance's candidate set,
	// CandidateRecall the mean share of its gold functions among them (the
	// most any order of them reaches) and Recall100 the learned order's
	// Recall@100.
	Candidates      float64 `json:"candidates"`
	CandidateRecall float64 `json:"candidate_recall"`
	Recall100       float64 `json:"recall_100"`
}

// fusedColumn is the feature column of the fusion's rank.
var fusedColumn = slices.Index(rank.FeatureNames(), "fused_rank")

// validate ranks qs (one repository's instances) by m, by lin (nil: not
// scored) and by the fusion.
func validate(repo string, qs []rank.Query, m *rank.Model, lin *rank.Linear, k int) (Validation, error) {
	v := Validation{Repo: repo, Instances: len(qs), K: k}
	for _, q := range qs {
		gold := make([]string, 0, len(q.Positive))
		for id := range q.Positive {
			gold = append(gold, id)
		}
		slices.Sort(gold)
		learned, err := m.Rank(q.Candidates)
		if err != nil {
			return v, err
		}
		byModel := make([]string, len(learned))
		for i, s := range learned {
			byModel[i] = s.ID
		}
		byFusion := slices.Clone(q.Candidates)
		slices.SortStableFunc(byFusion, func(a, b rank.Candidate) int { return cmp.Compare(a.X[fusedColumn], b.X[fusedColumn]) })
		fused := make([]string, len(byFusion))
		for i, c := range byFusion {
			fused[i] = c.ID
		}
		r100, err := metrics.RecallAt(byModel, gold, 100)
		if err != nil {
			return v, fmt.Errorf("validate %s %s: %w", repo, q.ID, err)
		}
		found := 0
		for _, c := range q.Candidates {
			if q.Positive[c.ID] {
				found++
			}
		}
		n := float64(len(qs))
		v.Recall100 += r100 / n
		v.Candidates += float64(len(q.Candidates)) / n
		if len(gold) > 0 {
			v.CandidateRecall += float64(found) / float64(len(gold)) / n
		}
		var linear []string
		if lin != nil {
			for _, s := range lin.Rank(q.Candidates) {
				linear = append(linear, s.ID)
			}
		}
		for _, x := range []struct {
			s      *Scores
			ranked []string
		}{{&v.Learned, byModel}, {&v.Linear, linear}, {&v.Fused, fused}} {
			if x.ranked == nil {
				continue
			}
			r, err1 := metrics.RecallAt(x.ranked, gold, k)
			a, err2 := metrics.AccAt(x.ranked, gold, k)
			rr, err3 := metrics.ReciprocalRank(x.ranked, gold)
			if err := cmp.Or(err1, err2, err3); err != nil {
				return v, fmt.Errorf("validate %s %s: %w", repo, q.ID, err)
			}
			x.s.Recall += r / float64(len(qs))
			x.s.Acc += a / float64(len(qs))
			x.s.MRR += rr / float64(len(qs))
		}
	}
	return v, nil
}
