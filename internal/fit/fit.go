// Package fit fits the hybrid method's fusion weights on mined triplets:
// each record's query is ranked at its parent commit the way the hybrid
// method ranks an issue (the code's BM25, episodic memory of the commits
// before the parent, hotspots), and a grid of weights is scored by where
// the fused ranking puts the record's positives.
package fit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// Defaults of Options and Fit.
const (
	DefaultSample = 150
	DefaultK      = 20
	// DefaultMemoryGap, 30 days, is the gap (of 0, 7, 30 and 90 days) whose
	// fitted weights did best on ../shared/bench/swe-dev.jsonl
	// (docs/results.md).
	DefaultMemoryGap = 30 * 24 * time.Hour
)

// DefaultGrid is the weights Fit tries for memory and for hotspots.
var DefaultGrid = []float64{0, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2}

// Query is one record's rankings at its parent, ready to fuse.
type Query struct {
	Repo      string
	ID        string
	Positives []string
	Rankings  search.HybridRankings
}

// Options of Prepare.
type Options struct {
	// Sample is how many of a repository's records are ranked, spread
	// evenly over its history; default DefaultSample.
	Sample int `json:"sample"`
	// Fetch is how many BM25 hits a query fetches; default spider.DefaultN,
	// as a hybrid query does.
	Fetch int `json:"fetch"`
	// MinWords leaves out queries of fewer words (before sampling); 0:
	// none. Issues are long (swe-dev's median is 116 words), most commit
	// subjects short (8 in the dev repositories' history).
	MinWords int `json:"min_words,omitempty"`
	// MemoryGap moves each query's memory back along first parents until
	// it is this much older than the query's parent (search.MemoryBase):
	// an issue's fix is made on a branch whose commits memory never holds,
	// while a commit's parent may be its sibling in the same pull request,
	// about the same thing. 0: memory at the parent (the CLI's default is
	// DefaultMemoryGap).
	MemoryGap time.Duration `json:"memory_gap,omitempty"`
}

func (o Options) withDefaults() Options {
	if o.Sample <= 0 {
		o.Sample = DefaultSample
	}
	if o.Fetch <= 0 {
		o.Fetch = spider.DefaultN
	}
	return o
}

// Config of Prepare: one repository's records and where its clone and
// memory are.
type Config struct {
	Bucket  *blob.Bucket
	Repo    schema.RepoName
	GitDir  string
	Backend gitrepo.Backend
	Records []triplets.Record
	Options Options
	// Progress, when set, is called after each sampled record.
	Progress func(done, total int)
}

// Stats count what Prepare did with a repository's records.
type Stats struct {
	Repo    string `json:"repo"`
	Records int    `json:"records"`
	Short   int    `json:"short"` // left out by MinWords
	Sampled int    `json:"sampled"`
	Ranked  int    `json:"ranked"`
	// NoMemory counts queries ranked without memory (a parent the memory
	// does not hold); their memory rankings are empty.
	NoMemory int `json:"no_memory"`
	// Failed counts records whose parent could not be indexed, named in
	// FailedExamples.
	Failed         int      `json:"failed"`
	FailedExamples []string `json:"failed_examples,omitempty"`
}

// ErrNoMemory: the repository has no memory to fit weights for.
var ErrNoMemory = errors.New("no repository memory")

// Sample picks n of recs spread evenly over them in time order (all when
// there are n or fewer), in time order.
func Sample(recs []triplets.Record, n int) []triplets.Record {
	s := slices.Clone(recs)
	slices.SortStableFunc(s, func(a, b triplets.Record) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.QueryID, b.QueryID))
	})
	if n <= 0 || len(s) <= n {
		return s
	}
	out := make([]triplets.Record, 0, n)
	for i := range n {
		out = append(out, s[i*len(s)/n])
	}
	return out
}

// sampleLong leaves out the records whose query has fewer than minWords
// words, counting them, and samples n of the rest (Sample).
func sampleLong(recs []triplets.Record, minWords, n int) (sample []triplets.Record, short int) {
	var long []triplets.Record
	for _, r := range recs {
		if len(strings.Fields(r.Query)) < minWords {
			short++
			continue
		}
		long = append(long, r)
	}
	return Sample(long, n), short
}

// Prepare ranks a sample of c.Records at their parents: the code's BM25
// over the functions at the parent (as the miner indexes them: tests and
// vendored files left out) and the memory rankings of the commits before
// it. A parent that cannot be indexed is counted and named, and the rest
// carry on.
func Prepare(ctx context.Context, c Config) ([]Query, Stats, error) {
	var out []Query
	st, err := rankEach(ctx, c, false, func(r triplets.Record, _ *triplets.Anchor, h search.HybridRankings, _ *memory.Episodic) error {
		q := Query{Repo: r.Repo, ID: r.QueryID, Rankings: h}
		for _, p := range r.Positives {
			q.Positives = append(q.Positives, p.ID)
		}
		out = append(out, q)
		return nil
	})
	return out, st, err
}

// rankEach calls fn for each record of a sample of c.Records with the
// anchor at its parent (keeping its graph when graph is set), the hybrid
// rankings there and the memory they came from (nil: none). Memory is
// moved back by Options.MemoryGap for commit queries; a benchmark
// instance's query sees memory at its base, as a query does.
func rankEach(ctx context.Context, c Config, graph bool, fn func(triplets.Record, *triplets.Anchor, search.HybridRankings, *memory.Episodic) error) (Stats, error) {
	o := c.Options.withDefaults()
	st := Stats{Repo: string(c.Repo), Records: len(c.Records)}
	m, err := manifest.Read(ctx, c.Bucket, c.Repo)
	if err != nil {
		return st, err
	}
	if m == nil || m.Memory == nil {
		return st, fmt.Errorf("fit %s: %w (run locus index %s)", c.Repo, ErrNoMemory, c.Repo)
	}
	var sample []triplets.Record
	sample, st.Short = sampleLong(c.Records, o.MinWords, o.Sample)
	st.Sampled = len(sample)
	miner := &triplets.Miner{Repo: string(c.Repo), GitDir: c.GitDir, Backend: c.Backend, KeepGraph: graph}
	var an *triplets.Anchor
	anchorAt := ""
	for i, r := range sample {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if an == nil || anchorAt != r.Parent {
			a, err := miner.IndexAt(ctx, r.Parent)
			if err != nil {
				if ctx.Err() != nil {
					return st, ctx.Err()
				}
				st.Failed++
				if len(st.FailedExamples) < 10 {
					st.FailedExamples = append(st.FailedExamples, fmt.Sprintf("%s: %v", r.QueryID, err))
				}
				continue
			}
			an, anchorAt = a, r.Parent
		}
		code := an.Search(r.Query, o.Fetch)
		gap := o.MemoryGap
		if r.Source == triplets.QueryInstance {
			gap = 0
		}
		base, err := search.MemoryBase(ctx, c.Bucket, m, r.Parent, gap)
		if err != nil {
			return st, fmt.Errorf("fit %s: %s: %w", c.Repo, r.QueryID, err)
		}
		h, ep, warning, err := search.MemoryRankings(ctx, c.Bucket, c.Repo, m, base, r.Query, an.Has, code)
		if err != nil {
			return st, fmt.Errorf("fit %s: %s: %w", c.Repo, r.QueryID, err)
		}
		if warning != "" {
			st.NoMemory++
		}
		if err := fn(r, an, h, ep); err != nil {
			return st, fmt.Errorf("fit %s: %s: %w", c.Repo, r.QueryID, err)
		}
		st.Ranked++
		if c.Progress != nil {
			c.Progress(i+1, len(sample))
		}
	}
	return st, nil
}

// Point is one setting of the weights and how the fused rankings placed
// the positives: means over the queries of Recall@K, Acc@K and MRR.
type Point struct {
	Weights search.Weights `json:"weights"`
	Recall  float64        `json:"recall"`
	Acc     float64        `json:"acc"`
	MRR     float64        `json:"mrr"`
}

// better orders points: higher recall, then higher MRR, then lighter
// weights (the simpler fusion).
func better(a, b Point) bool {
	if a.Recall != b.Recall {
		return a.Recall > b.Recall
	}
	if a.MRR != b.MRR {
		return a.MRR > b.MRR
	}
	return a.Weights.Memory+a.Weights.Hotspot < b.Weights.Memory+b.Weights.Hotspot
}

// HeldOut is a repository's queries scored with the weights fitted on the
// other repositories' queries.
type HeldOut struct {
	Repo    string `json:"repo"`
	Queries int    `json:"queries"`
	Fitted  Point  `json:"fitted"` // the weights fitted without Repo, scored on Repo
	Own     Point  `json:"own"`    // the best weights on Repo alone
}

// RepoPoints are one repository's queries scored with the code's BM25
// alone, the given weights and the fitted ones.
type RepoPoints struct {
	Repo    string `json:"repo"`
	Queries int    `json:"queries"`
	Code    Point  `json:"code"`
	Given   Point  `json:"given"`
	Fitted  Point  `json:"fitted"`
}

// Result of Fit.
type Result struct {
	K       int            `json:"k"`
	Queries int            `json:"queries"`
	PerRepo map[string]int `json:"per_repo"`
	// Best is the fitted point over all queries; Given is the point of
	// the weights Fit was asked to compare with (the shipped defaults).
	Best  Point   `json:"best"`
	Given Point   `json:"given"`
	Grid  []Point `json:"grid"`
	// Code is the point of the code's BM25 alone (no memory, no hotspots).
	Code Point `json:"code"`
	// Repos scores each repository's queries.
	Repos []RepoPoints `json:"repos"`
	// HeldOut leaves each repository out in turn (when there are two or
	// more).
	HeldOut []HeldOut `json:"held_out,omitempty"`
}

// Fit scores every pair of memory and hotspot weights from grid on qs at
// k, and the pair given, and picks the best (see better).
func Fit(qs []Query, grid []float64, k int, given search.Weights) (Result, error) {
	if len(qs) == 0 {
		return Result{}, errors.New("fit: no queries")
	}
	if k <= 0 {
		k = DefaultK
	}
	if len(grid) == 0 {
		grid = DefaultGrid
	}
	var ws []search.Weights
	for _, m := range grid {
		for _, h := range grid {
			ws = append(ws, search.Weights{Memory: m, Hotspot: h})
		}
	}
	// per[i][w]: query i's scores at weights w.
	per := make([]map[search.Weights]Point, len(qs))
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i, q := range qs {
		eg.Go(func() error {
			m := map[search.Weights]Point{}
			for _, w := range append(slices.Clip(ws), given, search.Weights{}) {
				p, err := score(q, w, k)
				if err != nil {
					return fmt.Errorf("fit: %s: %w", q.ID, err)
				}
				m[w] = p
			}
			per[i] = m
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return Result{}, err
	}
	res := Result{K: k, Queries: len(qs), PerRepo: map[string]int{}}
	for _, q := range qs {
		res.PerRepo[q.Repo]++
	}
	all := func(string) bool { return true }
	res.Grid = means(qs, per, ws, all)
	res.Best = best(res.Grid)
	res.Given = means(qs, per, []search.Weights{given}, all)[0]
	var repos []string
	for r := range res.PerRepo {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	res.Code = means(qs, per, []search.Weights{{}}, all)[0]
	for _, r := range repos {
		in := func(x string) bool { return x == r }
		ps := means(qs, per, []search.Weights{{}, given, res.Best.Weights}, in)
		res.Repos = append(res.Repos, RepoPoints{Repo: r, Queries: res.PerRepo[r], Code: ps[0], Given: ps[1], Fitted: ps[2]})
	}
	if len(repos) > 1 {
		for _, r := range repos {
			others := best(means(qs, per, ws, func(x string) bool { return x != r }))
			own := means(qs, per, ws, func(x string) bool { return x == r })
			res.HeldOut = append(res.HeldOut, HeldOut{Repo: r, Queries: res.PerRepo[r],
				Fitted: means(qs, per, []search.Weights{others.Weights}, func(x string) bool { return x == r })[0],
				Own:    best(own)})
		}
	}
	return res, nil
}

// score is q's Recall@k, Acc@k and reciprocal rank with w.
func score(q Query, w search.Weights, k int) (Point, error) {
	fused := q.Rankings.Fuse(w)
	ids := make([]string, len(fused))
	for i, s := range fused {
		ids[i] = s.ID
	}
	p := Point{Weights: w}
	var err error
	if p.Recall, err = metrics.RecallAt(ids, q.Positives, k); err != nil {
		return p, err
	}
	if p.Acc, err = metrics.AccAt(ids, q.Positives, k); err != nil {
		return p, err
	}
	p.MRR, err = metrics.ReciprocalRank(ids, q.Positives)
	return p, err
}

// means averages, for each of ws, per's scores over the queries keep holds.
func means(qs []Query, per []map[search.Weights]Point, ws []search.Weights, keep func(repo string) bool) []Point {
	out := make([]Point, len(ws))
	n := 0
	for i, q := range qs {
		if !keep(q.Repo) {
			continue
		}
		n++
		for j, w := range ws {
			p := per[i][w]
			out[j].Recall += p.Recall
			out[j].Acc += p.Acc
			out[j].MRR += p.MRR
		}
	}
	for j := range out {
		out[j].Weights = ws[j]
		if n > 0 {
			out[j].Recall /= float64(n)
			out[j].Acc /= float64(n)
			out[j].MRR /= float64(n)
		}
	}
	return out
}

// best is the best of ps (see better).
func best(ps []Point) Point {
	b := ps[0]
	for _, p := range ps[1:] {
		if better(p, b) {
			b = p
		}
	}
	return b
}
