package spider

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Defaults from DESIGN.md (SpIDER paper settings).
const (
	DefaultK     = 20
	DefaultN     = 500
	DefaultC     = 5
	DefaultDepth = 4
)

// Params configure SpIDER and SpISR. A zero field takes its default, because
// zero is never a useful value: with no centers or no depth the result is
// plain TopK, which callers get directly.
type Params struct {
	// K is the budget, the length of the output (S_K = top K). Default 20.
	K int `json:"k,omitempty"`
	// N is the pool: candidates must be in S_N = top N; at least K.
	// Default 500, or K when K is larger.
	N int `json:"n,omitempty"`
	// C is the number of centers, the top C of S_K. Default 5.
	C int `json:"c,omitempty"`
	// Depth is how many contains hops the BFS from a center goes. Default 4.
	Depth int `json:"depth,omitempty"`
	// ExcludeTopK restricts candidates to S_N \ S_K, saving LLM tokens on
	// nodes that are in the output anyway. Default false, as in the paper.
	ExcludeTopK bool `json:"exclude_top_k,omitempty"`
}

// DefaultParams returns the defaults.
func DefaultParams() Params {
	return Params{K: DefaultK, N: DefaultN, C: DefaultC, Depth: DefaultDepth}
}

// WithDefaults fills zero fields with their defaults.
func (p Params) WithDefaults() Params {
	if p.K == 0 {
		p.K = DefaultK
	}
	if p.N == 0 {
		p.N = max(DefaultN, p.K)
	}
	if p.C == 0 {
		p.C = DefaultC
	}
	if p.Depth == 0 {
		p.Depth = DefaultDepth
	}
	return p
}

// Validate checks p after defaults are applied.
func (p Params) Validate() error {
	p = p.WithDefaults()
	var errs []error
	if p.K < 0 {
		errs = append(errs, fmt.Errorf("budget K = %d, want > 0", p.K))
	}
	if p.N < 0 {
		errs = append(errs, fmt.Errorf("pool N = %d, want > 0", p.N))
	} else if p.N < p.K {
		errs = append(errs, fmt.Errorf("pool N = %d is smaller than budget K = %d", p.N, p.K))
	}
	if p.C < 0 {
		errs = append(errs, fmt.Errorf("centers C = %d, want > 0", p.C))
	}
	if p.Depth < 0 {
		errs = append(errs, fmt.Errorf("depth = %d, want > 0", p.Depth))
	}
	if len(errs) > 0 {
		return fmt.Errorf("spider params: %w", errors.Join(errs...))
	}
	return nil
}

// Candidate is a function reached from a center that the selector may promote.
type Candidate struct {
	ID     string  `json:"id"`
	Score  float64 `json:"score"`
	Rank   int     `json:"rank"` // 1-based position in the ranking
	Hops   int     `json:"hops"` // contains hops from the center
	InTopK bool    `json:"in_top_k,omitempty"`
}

// Center is one of the top C, with its candidates ordered by hops, then rank,
// then id, so the selector sees the same list on every run.
type Center struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	Rank  int     `json:"rank"`
	// InGraph is false when the ranking names a node the graph lacks (a stale
	// graph); such a center simply has no candidates.
	InGraph    bool        `json:"in_graph"`
	Candidates []Candidate `json:"candidates"`
}

// Expansion is the result of steps 1–3: what the selectors get and what
// Assemble needs.
type Expansion struct {
	Params  Params   `json:"params"` // effective, defaults applied
	TopK    []Scored `json:"top_k"`  // S_K
	Pool    int      `json:"pool"`   // |S_N|
	Centers []Center `json:"centers"`
}

// Expand runs steps 1–3 of SpIDER/SpISR on a ranking of functions (best
// first, as from TopK, Rank or RRF; position is rank): S_K and S_N are its
// prefixes, centers the top C of S_K, and each center's candidates are the
// function nodes in S_N within Depth undirected contains hops. All centers are
// excluded from every candidate list, since they are placed in the output
// regardless and a selection of one could not be honoured.
func Expand(g *Graph, ranking []Scored, p Params) (Expansion, error) {
	return ExpandWith(g, ranking, p, Overlay{})
}

// Overlay is extra edges for one expansion, laid over a Graph without
// rebuilding it (edges that differ per query, such as which functions past
// commits changed together before the query's base commit).
type Overlay struct {
	// Neighbours lists the nodes id has an extra edge to; ids the graph
	// lacks are skipped. It is asked about every node a walk leaves from
	// while an extra hop still fits in the depth, and must be safe for
	// concurrent use when Expand calls are. nil: no extra edges.
	Neighbours func(id string) []string
	// Cost is the hop cost of each extra edge, 1 to 255.
	Cost int
}

// ExpandWith is Expand with the overlay's edges walked too, each at
// o.Cost, from the node they are listed for (list both ends for an
// undirected edge).
func ExpandWith(g *Graph, ranking []Scored, p Params, o Overlay) (Expansion, error) {
	if o.Neighbours != nil && (o.Cost < 1 || o.Cost > math.MaxUint8) {
		return Expansion{}, fmt.Errorf("expand: overlay edges cost %d, want 1 to %d", o.Cost, math.MaxUint8)
	}
	if g == nil {
		return Expansion{}, errors.New("expand: nil graph")
	}
	if err := p.Validate(); err != nil {
		return Expansion{}, fmt.Errorf("expand: %w", err)
	}
	p = p.WithDefaults()
	nPool := min(p.N, len(ranking))
	pool := ranking[:nPool]
	if err := checkRanking(pool); err != nil {
		return Expansion{}, fmt.Errorf("expand: %w", err)
	}
	nTop := min(p.K, nPool)
	exp := Expansion{
		Params:  p,
		TopK:    slices.Clone(pool[:nTop]),
		Pool:    nPool,
		Centers: make([]Center, 0, min(p.C, nTop)),
	}

	s := g.getScratch()
	defer g.bufs.Put(s)
	call := s.nextCall()
	for i, r := range pool {
		if gi, ok := g.index[r.ID]; ok {
			if !p.ExcludeTopK || i >= nTop {
				s.pool[gi] = call
			}
			s.rank[gi] = int32(i)
		}
	}
	centers := pool[:min(p.C, nTop)]
	for _, c := range centers {
		if gi, ok := g.index[c.ID]; ok {
			s.center[gi] = call
		}
	}
	for i, c := range centers {
		ctr := Center{ID: c.ID, Score: c.Score, Rank: i + 1, Candidates: []Candidate{}}
		if gi, ok := g.index[c.ID]; ok {
			ctr.InGraph = true
			ctr.Candidates = g.bfs(s, gi, p.Depth, call, pool, nTop, o)
		}
		exp.Centers = append(exp.Centers, ctr)
	}
	return exp, nil
}

// bfs walks level by level so a node's hop count is its level, and collects
// pool functions that are not centers.
func (g *Graph) bfs(s *scratch, start int32, depth int, call uint32, pool []Scored, nTop int, o Overlay) []Candidate {
	if g.cost != nil || o.Neighbours != nil {
		return g.walk(s, start, depth, call, pool, nTop, o)
	}
	stamp := s.nextBFS()
	s.seen[start] = stamp
	q := append(s.queue[:0], start)
	var out []Candidate
	head := 0
	for hop := 1; hop <= depth && head < len(q); hop++ {
		end := len(q)
		for ; head < end; head++ {
			u := q[head]
			for _, v := range g.adj[g.off[u]:g.off[u+1]] {
				if s.seen[v] == stamp {
					continue
				}
				s.seen[v] = stamp
				q = append(q, v)
				if g.fn[v] && s.pool[v] == call && s.center[v] != call {
					r := int(s.rank[v])
					out = append(out, Candidate{ID: g.ids[v], Score: pool[r].Score, Rank: r + 1, Hops: hop, InTopK: r < nTop})
				}
			}
		}
	}
	s.queue = q
	return sortCandidates(out)
}

func sortCandidates(out []Candidate) []Candidate {
	slices.SortFunc(out, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Hops, b.Hops), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.ID, b.ID))
	})
	if out == nil {
		out = []Candidate{}
	}
	return out
}

// walk is bfs over edges with costs (Dial's algorithm: a bucket per cost up
// to depth), so a node's Hops is its cheapest path's cost. A graph without
// costs walks each of its edges at 1; the overlay's edges cost o.Cost.
func (g *Graph) walk(s *scratch, start int32, depth int, call uint32, pool []Scored, nTop int, o Overlay) []Candidate {
	stamp := s.nextBFS()
	if s.dist == nil {
		s.dist = make([]int32, len(g.ids))
	}
	for len(s.buckets) <= depth {
		s.buckets = append(s.buckets, nil)
	}
	for d := range s.buckets {
		s.buckets[d] = s.buckets[d][:0]
	}
	s.seen[start], s.dist[start] = stamp, 0
	s.buckets[0] = append(s.buckets[0], start)
	var out []Candidate
	for d := 0; d <= depth; d++ {
		for i := 0; i < len(s.buckets[d]); i++ {
			u := s.buckets[d][i]
			if s.dist[u] != int32(d) {
				continue // reached more cheaply since it was queued here
			}
			if d > 0 && g.fn[u] && s.pool[u] == call && s.center[u] != call {
				r := int(s.rank[u])
				out = append(out, Candidate{ID: g.ids[u], Score: pool[r].Score, Rank: r + 1, Hops: d, InTopK: r < nTop})
			}
			for j := g.off[u]; j < g.off[u+1]; j++ {
				nd := int32(d) + 1
				if g.cost != nil {
					nd = int32(d) + int32(g.cost[j])
				}
				s.reach(g.adj[j], nd, int32(depth), stamp)
			}
			if o.Neighbours != nil && d+o.Cost <= depth {
				for _, id := range o.Neighbours(g.ids[u]) {
					if v, ok := g.index[id]; ok {
						s.reach(v, int32(d+o.Cost), int32(depth), stamp)
					}
				}
			}
		}
	}
	return sortCandidates(out)
}

// reach queues v at cost nd unless that is beyond depth or v is already
// reached as cheaply.
func (s *scratch) reach(v, nd, depth int32, stamp uint32) {
	if nd > depth || s.seen[v] == stamp && s.dist[v] <= nd {
		return
	}
	s.seen[v], s.dist[v] = stamp, nd
	s.buckets[nd] = append(s.buckets[nd], v)
}

// checkRanking rejects rankings whose positions cannot be ranks: empty or
// repeated ids, NaN scores, or scores that rise down the list.
func checkRanking(r []Scored) error {
	seen := make(map[string]struct{}, len(r))
	for i, s := range r {
		if s.ID == "" {
			return fmt.Errorf("ranking position %d: empty id", i+1)
		}
		if _, dup := seen[s.ID]; dup {
			return fmt.Errorf("ranking: id %q appears twice", s.ID)
		}
		seen[s.ID] = struct{}{}
		if math.IsNaN(s.Score) {
			return fmt.Errorf("ranking position %d (%s): score is NaN", i+1, s.ID)
		}
		if i > 0 && s.Score > r[i-1].Score {
			return fmt.Errorf("ranking not sorted: position %d (%s) scores %v above position %d (%v)", i+1, s.ID, s.Score, i, r[i-1].Score)
		}
	}
	return nil
}
