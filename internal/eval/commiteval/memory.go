package commiteval

import (
	"math"

	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
)

// MemoryOptions tune the file-level memory rankings of Memory. Zero fields
// take the defaults written next to them.
type MemoryOptions struct {
	// Commits is how many best-matching commits vote; default 100.
	Commits int
	// HalfLifeDays is the age at which a commit's vote halves; default 365
	// (fitted on ../shared/bench/commits-dev.jsonl, see docs/results.md).
	HalfLifeDays float64
	// Docs ranks each file's messages document; default k1 = 1.2, b = 0.75.
	Docs sparse.Config
}

func (o MemoryOptions) withDefaults() MemoryOptions {
	if o.Commits <= 0 {
		o.Commits = 100
	}
	if o.HalfLifeDays <= 0 {
		o.HalfLifeDays = 365
	}
	if o.Docs == (sparse.Config{}) {
		o.Docs = sparse.Config{K1: 1.2, B: 0.75}
	}
	return o
}

// Memory is what the history says about the files of q.State, three ways:
//
//   - MaxP: each file scored by its best commit (Search's ranking, from the
//     same commit search);
//   - Votes: the Commits best-matching commits vote for every file they
//     changed, each vote decayed by age and commit size (memory.Vote, the
//     function-level episodic memory's formula);
//   - Docs: BM25 over one document per file made of the messages of every
//     commit that changed it (the file's history as a summary).
//
// Only commits strictly older than q.Time count, and only files that exist
// at q.State are ranked, under their path there.
type Memory struct {
	MaxP, Votes, Docs []spider.Scored
}

// Memory ranks q.State's files by the history before q.Time.
func (e *Engine) Memory(q Query, o MemoryOptions) (Memory, error) {
	o = o.withDefaults()
	hits, err := e.Commits(q.Text, q.Time)
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, f := range e.maxP(q.State, hits) {
		m.MaxP = append(m.MaxP, spider.Scored{ID: f.Path, Score: f.Score})
	}
	votes := map[string]float64{}
	for _, h := range hits[:min(o.Commits, len(hits))] {
		c := &e.commits[e.byID[h.ID]]
		w := memory.Vote(h.Score, (q.Time-c.Time)*1000, o.HalfLifeDays, len(c.Files))
		for _, fc := range c.Files {
			if p := q.State.Resolve(fc); p != "" {
				votes[p] += w
			}
		}
	}
	// Both come sorted: keep the best MaxFiles.
	m.Votes = spider.Rank(votes)
	m.Votes = m.Votes[:min(len(m.Votes), e.opt.MaxFiles)]
	m.Docs = e.fileDocs(q, o.Docs)
	m.Docs = m.Docs[:min(len(m.Docs), e.opt.MaxFiles)]
	return m, nil
}

// fileDocs is BM25 over one document per file of q.State: the messages of
// the commits older than q.Time that changed it. Only the query's terms are
// counted; each message is tokenised once per engine.
func (e *Engine) fileDocs(q Query, cfg sparse.Config) []spider.Scored {
	terms := sparse.Tokenize(q.Text)
	want := make(map[string]int, len(terms))
	for _, t := range terms {
		if _, ok := want[t]; !ok {
			want[t] = len(want)
		}
	}
	if len(want) == 0 {
		return nil
	}
	type doc struct {
		length int
		tf     []int32
	}
	docs := map[string]*doc{}
	n := e.before(q.Time)
	for i := range n {
		c := &e.commits[i]
		toks := e.tokens(i)
		var hit []int32 // tf of each wanted term in this message
		for t, k := range toks.count {
			if j, ok := want[t]; ok {
				if hit == nil {
					hit = make([]int32, len(want))
				}
				hit[j] = k
			}
		}
		for _, fc := range c.Files {
			p := q.State.Resolve(fc)
			if p == "" {
				continue
			}
			d := docs[p]
			if d == nil {
				d = &doc{tf: make([]int32, len(want))}
				docs[p] = d
			}
			d.length += toks.length
			for j, k := range hit {
				d.tf[j] += k
			}
		}
	}
	if len(docs) == 0 {
		return nil
	}
	total, df := 0, make([]int, len(want))
	for _, d := range docs {
		total += d.length
		for j, k := range d.tf {
			if k > 0 {
				df[j]++
			}
		}
	}
	nd := float64(len(docs))
	avg := float64(total) / nd
	idf := make([]float64, len(want))
	for j := range idf {
		idf[j] = math.Log(1 + (nd-float64(df[j])+0.5)/(float64(df[j])+0.5))
	}
	scores := map[string]float64{}
	for p, d := range docs {
		norm := cfg.K1 * (1 - cfg.B + cfg.B*float64(d.length)/max(avg, 1e-9))
		s := 0.0
		for j, k := range d.tf {
			if k > 0 {
				s += idf[j] * float64(k) * (cfg.K1 + 1) / (float64(k) + norm)
			}
		}
		if s > 0 {
			scores[p] = s
		}
	}
	return spider.Rank(scores)
}

// msgTokens is a commit message's token counts.
type msgTokens struct {
	count  map[string]int32
	length int
}

// tokens returns commit row i's message tokens, tokenising it on first use.
func (e *Engine) tokens(i int) *msgTokens {
	e.tokMu.Lock()
	defer e.tokMu.Unlock()
	if e.toks == nil {
		e.toks = make([]*msgTokens, len(e.commits))
	}
	if t := e.toks[i]; t != nil {
		return t
	}
	t := &msgTokens{count: map[string]int32{}}
	for _, w := range sparse.Tokenize(e.commits[i].Message) {
		t.count[w]++
		t.length++
	}
	e.toks[i] = t
	return t
}
