package commitrun

import (
	"path"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/fileclass"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
)

// The learned file ranker: LambdaMART over the five rankings the hybrid
// method fuses, trained on commits of the training fleet (locus rank
// train-files), reordering the hybrid method's first LearnedCandidates
// files (and each ranking's first LearnedPerRanking).
const (
	LearnedCandidates = 200
	LearnedPerRanking = 50
)

// Rankings are the file rankings of one query: what the hybrid method
// fuses, each best first, and the fusion.
type Rankings struct {
	Files, MaxP, Votes, Docs, Paths []spider.Scored
	Hybrid                          []spider.Scored
}

func (r Rankings) all() [][]spider.Scored {
	return [][]spider.Scored{r.Files, r.MaxP, r.Votes, r.Docs, r.Paths, r.Hybrid}
}

// FileTable is the learned file ranker's feature table.
var FileTable = rank.Table{Name: "files", Version: 1, Retrain: "locus rank train-files", Names: []string{
	"files", "files_rank", "maxp", "maxp_rank", "votes", "votes_rank", "docs", "docs_rank", "paths", "paths_rank",
	"hybrid", "hybrid_rank", "path_hits", "path_frac", "base_named", "test", "depth", "query_tokens",
}}

// absent is the rank of a file a ranking does not hold.
const absent = 1000

// FileCandidates are the files the learned ranker orders for a query and
// their features (FileTable): the hybrid method's first LearnedCandidates
// and each ranking's first LearnedPerRanking, in that order, each once.
func FileCandidates(query string, r Rankings) []rank.Candidate {
	all := r.all()
	type pos struct {
		score float64
		rank  int
	}
	at := make([]map[string]pos, len(all))
	for i, ranking := range all {
		at[i] = make(map[string]pos, len(ranking))
		for j, s := range ranking {
			at[i][s.ID] = pos{s.Score, j + 1}
		}
	}
	var ids []string
	seen := map[string]bool{}
	add := func(ranking []spider.Scored, n int) {
		for _, s := range ranking[:min(n, len(ranking))] {
			if !seen[s.ID] {
				seen[s.ID] = true
				ids = append(ids, s.ID)
			}
		}
	}
	add(r.Hybrid, LearnedCandidates)
	for _, ranking := range all[:5] {
		add(ranking, LearnedPerRanking)
	}
	qtoks := map[string]bool{}
	for _, t := range sparse.Tokenize(query) {
		qtoks[t] = true
	}
	lower := strings.ToLower(query)
	out := make([]rank.Candidate, len(ids))
	for k, id := range ids {
		x := make([]float64, 0, len(FileTable.Names))
		for i, ranking := range all {
			p, ok := at[i][id]
			best := 0.0
			if len(ranking) > 0 {
				best = ranking[0].Score
			}
			switch {
			case !ok:
				x = append(x, 0, absent)
			case best > 0:
				x = append(x, p.score/best, float64(p.rank))
			default:
				x = append(x, 0, float64(p.rank))
			}
		}
		ptoks := dedupe(sparse.Tokenize(id))
		hits := 0
		for _, t := range ptoks {
			if qtoks[t] {
				hits++
			}
		}
		frac := 0.0
		if len(ptoks) > 0 {
			frac = float64(hits) / float64(len(ptoks))
		}
		base := strings.ToLower(path.Base(id))
		named := 0.0
		if len(base) > 2 && strings.Contains(lower, base) {
			named = 1
		}
		test := 0.0
		if fileclass.IsTest(id) {
			test = 1
		}
		x = append(x, float64(hits), frac, named, test, float64(strings.Count(id, "/")), float64(len(qtoks)))
		out[k] = rank.Candidate{ID: id, X: x}
	}
	return out
}

func dedupe(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// LearnedFiles is m's order of the query's candidates, followed by the
// rest of the hybrid ranking, at most max files.
func LearnedFiles(m *rank.Model, query string, r Rankings, max int) ([]string, error) {
	ranked, err := m.Rank(FileCandidates(query, r))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, max)
	seen := map[string]bool{}
	for _, list := range [][]spider.Scored{ranked, r.Hybrid} {
		for _, s := range list {
			if len(out) == max {
				return out, nil
			}
			if !seen[s.ID] {
				seen[s.ID] = true
				out = append(out, s.ID)
			}
		}
	}
	return out, nil
}
