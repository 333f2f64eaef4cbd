package fit

import (
	"context"

	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/triplets"
)

// Features computes the learned ranker's candidates and features for a
// sample of c.Records, each at its parent (memory before it, the graph and
// BM25 of that snapshot), by the query path's own code
// (search.LearnedInputs, rank.Collect) with the hybrid method's default
// weights. Nothing of the record's own commit or later informs them: the
// anchor is the parent's tree, memory stops before the parent (further
// back by Options.MemoryGap for commit queries).
func Features(ctx context.Context, c Config) ([]rank.Query, Stats, error) {
	var out []rank.Query
	w := search.Params{}.Weights()
	sp := search.Params{}.Params.WithDefaults()
	st, err := rankEach(ctx, c, true, func(r triplets.Record, an *triplets.Anchor, h search.HybridRankings, ep *memory.Episodic) error {
		in, err := search.LearnedInputs(r.Query, h, w, ep, an.Graph(), an.Code, an.Has, sp)
		if err != nil {
			return err
		}
		cands, err := rank.Collect(in, rank.Options{})
		if err != nil {
			return err
		}
		q := rank.Query{Repo: r.Repo, ID: r.QueryID, Candidates: cands, Positive: map[string]bool{}, Gold: len(r.Positives)}
		for _, p := range r.Positives {
			q.Positive[p.ID] = true
		}
		out = append(out, q)
		return nil
	})
	return out, st, err
}
