package triplets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/vectors"
)

// Commit is one change of a repository's history with what mining needs
// beyond the filter's view: its first parent and commit time, and for each
// changed file the path it had at the parent.
type Commit struct {
	Change
	Parent string
	Time   int64 // unix ms
	// PreviousPaths maps a changed file's path to its path at the parent
	// (renames); a path missing here had the same path.
	PreviousPaths map[string]string
}

// Options tune mining. Zero fields take the defaults written next to them.
type Options struct {
	Filter Filter
	// Negatives is how many hard negatives a record keeps; default 15.
	Negatives int
	// MinRank and MaxRank bound the first-stage (BM25) ranks negatives come
	// from, 1-based and inclusive; default 1 and 50. SweRank keeps 3 to 25.
	MinRank, MaxRank int
	// KeepRank, when set, keeps a record only when one of its positives
	// ranks within the first KeepRank of the first stage (the consistency
	// filter); 0: every record.
	KeepRank int
	// CoChangeWindow drops, as likely false negatives, functions changed
	// together with a positive by a commit at most this many commits away
	// (in time order); default 20.
	CoChangeWindow int
	// CoChangeMaxFunctions: a commit that changed more functions than this
	// (an initial import, a sweeping refactor) is no co-change evidence;
	// default 5.
	CoChangeMaxFunctions int
	// AnchorEvery is how many commits share one first-stage index, built at
	// the parent of the first; default 200.
	AnchorEvery int
	// After and Before bound the commits mined by commit time (unix ms,
	// After inclusive, Before exclusive); 0: no bound.
	After, Before int64
	// HardFrom are the sources of negatives: "bm25" (the first stage's
	// hits), "dense" (the embedder's hits, Miner.Dense; with bm25, the two
	// taken in turn) and "graph" (functions that call or are called by a
	// positive, up to a third of Negatives, taken first); default bm25
	// alone.
	HardFrom []string
}

// Negative sources.
const (
	SourceBM25  = "bm25"
	SourceDense = "dense"
	SourceGraph = "graph"
)

// Query sources (Record.Source).
const (
	QueryCommit   = "commit"
	QueryIssue    = "issue"
	QueryInstance = "instance"
)

// HardFromSources lists the negative sources Options.HardFrom accepts.
var HardFromSources = []string{SourceBM25, SourceDense, SourceGraph}

// Validate checks the options a user gives.
func (o Options) Validate() error {
	for _, h := range o.HardFrom {
		if !slices.Contains(HardFromSources, h) {
			return fmt.Errorf("hard negatives from %q: want some of %s", h, strings.Join(HardFromSources, ","))
		}
	}
	return nil
}

// NeedsEmbedder reports whether o takes negatives from an embedder.
func (o Options) NeedsEmbedder() bool { return o.from(SourceDense) }

// ErrNoEmbedder: dense negatives were asked for and the miner has none.
var ErrNoEmbedder = errors.New("hard negatives from dense need an embedder")

// Dense ranks an anchor's functions by an embedder's similarity to a query:
// the dense source of negatives.
type Dense struct {
	Embedder embed.Embedder
	// Instruction prefixes queries (embed.Query), as localize does.
	Instruction string
	// Cache keeps vectors by content: the repository's, so what its index
	// or an earlier chunk embedded is not embedded again. It is read once,
	// kept in memory, and what was added goes back with Flush.
	Cache *embed.Cache

	mu     sync.Mutex
	known  map[string][]float32 // nil until the cache is read
	fresh  map[string][]float32 // embedded since the last Flush
	Embeds int                  // texts embedded (functions and queries)
}

// vectors returns a vector for each item, embedding those not known.
func (d *Dense) vectors(ctx context.Context, items []embed.Item) (map[string][]float32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dim := d.Embedder.Dim()
	if d.known == nil {
		all, err := d.Cache.All(ctx, dim)
		if err != nil {
			return nil, fmt.Errorf("read the embedding cache: %w", err)
		}
		d.known, d.fresh = all, map[string][]float32{}
	}
	var missing []embed.Item
	seen := map[string]bool{}
	for _, it := range items {
		if _, ok := d.known[it.Hash]; !ok && !seen[it.Hash] {
			seen[it.Hash] = true
			missing = append(missing, it)
		}
	}
	if len(missing) > 0 {
		vecs, err := embed.EmbedItems(ctx, d.Embedder, missing)
		if err != nil {
			return nil, err
		}
		d.Embeds += len(missing)
		for i, it := range missing {
			if len(vecs[i]) != dim {
				return nil, fmt.Errorf("a vector of %d dimensions from %s, want %d", len(vecs[i]), d.Embedder.Name(), dim)
			}
			d.known[it.Hash], d.fresh[it.Hash] = vecs[i], vecs[i]
		}
	}
	out := make(map[string][]float32, len(items))
	for _, it := range items {
		out[it.Hash] = d.known[it.Hash]
	}
	return out, nil
}

// Flush stores the vectors embedded since the last Flush in the cache.
func (d *Dense) Flush(ctx context.Context) error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.fresh) == 0 {
		return nil
	}
	if err := d.Cache.Put(ctx, d.fresh); err != nil {
		return fmt.Errorf("store embeddings: %w", err)
	}
	d.fresh = map[string][]float32{}
	return nil
}

func (o Options) from(src string) bool {
	if len(o.HardFrom) == 0 {
		return src == SourceBM25
	}
	return slices.Contains(o.HardFrom, src)
}

func (o Options) withDefaults() Options {
	o.Negatives = positiveOr(o.Negatives, 15)
	o.MinRank = positiveOr(o.MinRank, 1)
	o.MaxRank = positiveOr(o.MaxRank, 50)
	o.CoChangeWindow = positiveOr(o.CoChangeWindow, 20)
	o.CoChangeMaxFunctions = positiveOr(o.CoChangeMaxFunctions, 5)
	o.AnchorEvery = positiveOr(o.AnchorEvery, 200)
	return o
}

func positiveOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Doc is a function as a record holds it: its graph id at the parent, file,
// code and the SHA-256 of its whitespace-normalized code (for dedup).
type Doc struct {
	ID   string `json:"id" parquet:"id"`
	File string `json:"file" parquet:"file,dict"`
	Code string `json:"code" parquet:"code,zstd"`
	Hash string `json:"hash" parquet:"hash"`
}

// Negative is a hard negative and where it came from.
type Negative struct {
	Doc
	Source string `json:"source" parquet:"source,dict"` // SourceBM25, SourceDense or SourceGraph
	// Rank is the 1-based rank in its source's ranking (BM25's for bm25
	// and graph; 0: not within MaxRank), Score the score there (cosine
	// for dense).
	Rank  int     `json:"rank" parquet:"rank"`
	Score float64 `json:"score" parquet:"score"`
}

// Record is one mined training example.
type Record struct {
	Repo   string `json:"repo" parquet:"repo,dict"`
	Commit string `json:"commit" parquet:"commit"`
	Parent string `json:"parent" parquet:"parent"`
	Time   int64  `json:"time" parquet:"time,timestamp(millisecond)"`
	// QueryID names the query: repo@commit, or a benchmark instance's id.
	QueryID string `json:"query_id" parquet:"query_id"`
	Query   string `json:"query" parquet:"query"`
	// Source says where the query came from: "commit" (its message),
	// "issue" (the text of an issue or pull request it references) or
	// "instance" (a benchmark instance's problem statement).
	Source    string `json:"source" parquet:"source,dict"`
	Positives []Doc  `json:"positives" parquet:"positives,list"`
	// PositiveRanks and PositiveScores are the positives' first-stage
	// ranks (0: not within MaxRank) and scores, in the order of Positives.
	PositiveRanks  []int      `json:"positive_ranks" parquet:"positive_ranks,list"`
	PositiveScores []float64  `json:"positive_scores" parquet:"positive_scores,list"`
	Negatives      []Negative `json:"negatives" parquet:"negatives,list"`
}

// Stats count what mining did.
type Stats struct {
	Commits  int          `json:"commits"`
	Records  int          `json:"records"`
	Excluded int          `json:"excluded"`
	Skipped  map[Skip]int `json:"skipped"`
	// Failed counts commits that could not be mined (a missing parent, an
	// unreadable object), FailedExamples names a few with why.
	Failed         int      `json:"failed"`
	FailedExamples []string `json:"failed_examples,omitempty"`
	Anchors        int      `json:"anchors"`
	// Where the time went, in milliseconds: reading the history from the
	// store, building anchor indexes, reading and parsing parents, ranking
	// and picking negatives.
	ReadMs   int64 `json:"read_ms"`
	AnchorMs int64 `json:"anchor_ms"`
	ParentMs int64 `json:"parent_ms"`
	RankMs   int64 `json:"rank_ms"`
}

func (s *Stats) skip(why Skip) {
	if s.Skipped == nil {
		s.Skipped = map[Skip]int{}
	}
	s.Skipped[why]++
}

func (s *Stats) fail(c Commit, err error) {
	s.Failed++
	if len(s.FailedExamples) < 10 {
		s.FailedExamples = append(s.FailedExamples, fmt.Sprintf("%s: %v", c.Commit, err))
	}
}

// Skips of the miner beyond the filter's.
const (
	SkipOutOfRange   Skip = "outside --after/--before"
	SkipNoParentCode Skip = "no positive exists at the parent"
	SkipInconsistent Skip = "no positive within the first stage's KeepRank"
	SkipNoNegatives  Skip = "no negative"
)

// Miner mines one repository from its clone.
type Miner struct {
	Repo    string
	GitDir  string
	Backend gitrepo.Backend
	Options Options
	Exclude Repo
	// Issues, when set, hold the texts of issues and pull requests: a
	// commit that references one gets its text as the query (source
	// "issue") instead of its message.
	Issues IssueTexts
	// Dense, needed when Options takes negatives from dense, embeds each
	// anchor's functions and the queries.
	Dense *Dense
	// KeepGraph keeps each anchor's code graph for expansion (Anchor.Graph),
	// as the learned ranker's features need.
	KeepGraph bool
	extracts  *codegraph.Extracts // the last anchor's, with KeepGraph

	anchorTime, parentTime, rankTime time.Duration
}

// timed adds the time since start to *d.
func timed(d *time.Duration, start time.Time) { *d += time.Since(start) }

// takeTimes moves the miner's time counters into st.
func (m *Miner) takeTimes(st *Stats) {
	st.AnchorMs += m.anchorTime.Milliseconds()
	st.ParentMs += m.parentTime.Milliseconds()
	st.RankMs += m.rankTime.Milliseconds()
	m.anchorTime, m.parentTime, m.rankTime = 0, 0, 0
}

// Anchor is a first-stage index over the functions of one commit (tests
// and vendored files left out).
type Anchor struct {
	commit string
	ix     *sparse.Index
	docs   map[string]Doc
	blobs  map[string]gitrepo.Hash // by path
	calls  map[string][]string     // function → functions it calls or is called by
	graph  *spider.Graph           // with Miner.KeepGraph
	// headers is the language the anchor's graph parsed .h files as
	// (codegraph.HeaderLanguage): a build of a few of the files of a
	// nearby commit parses them the same way.
	headers string
	// With a Dense: the embedder's unit vectors of the functions.
	dense *Dense
	ids   []string
	unit  []float32
}

// Mine mines commits (in time order) and calls emit for each record, and
// each of after (progress) once per commit. A commit that cannot be mined
// is counted and named in Stats, and the rest carry on; errors from emit
// and a cancelled ctx stop it.
func (m *Miner) Mine(ctx context.Context, commits []Commit, emit func(Record) error, after ...func()) (Stats, error) {
	o := m.Options.withDefaults()
	var st Stats
	if o.from(SourceDense) && (m.Dense == nil || m.Dense.Embedder == nil || m.Dense.Cache == nil) {
		return st, fmt.Errorf("triplets %s: %w (none is configured)", m.Repo, ErrNoEmbedder)
	}
	// Which functions each commit changed, for the co-change filter.
	changed := make([]map[string]bool, len(commits))
	for i, c := range commits {
		changed[i] = map[string]bool{}
		for _, f := range c.Files {
			for _, id := range f.Functions {
				changed[i][id] = true
			}
		}
	}
	progress := func() {
		for _, f := range after {
			f()
		}
	}
	var an *Anchor
	for i, c := range commits {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if i > 0 {
			progress() // for the commit before: it is settled
		}
		st.Commits++
		if m.Exclude.Excluded(c.Commit, c.Time) {
			st.Excluded++
			continue
		}
		if o.After > 0 && c.Time < o.After || o.Before > 0 && c.Time >= o.Before {
			st.skip(SkipOutOfRange)
			continue
		}
		query, positives, why := o.Filter.Check(c.Change)
		if why != "" {
			st.skip(why)
			continue
		}
		if c.Parent == "" {
			st.skip(SkipNoParentCode)
			continue
		}
		if an == nil || i%o.AnchorEvery == 0 && an.commit != c.Parent {
			a, err := m.IndexAt(ctx, c.Parent)
			if err != nil {
				if ctx.Err() != nil {
					return st, ctx.Err()
				}
				if embed.IsRetryable(err) {
					return st, err // the embedder is down: retry the chunk, not lose its commits
				}
				st.fail(c, err)
				continue
			}
			an = a
			st.Anchors++
		}
		source := QueryCommit
		if text, ok := m.Issues.lookup(m.Repo, c.Message); ok {
			query, source = text, QueryIssue
		}
		co := coChanged(changed, i, o.CoChangeWindow, o.CoChangeMaxFunctions, positives)
		rec, why, err := m.mineOne(ctx, o, an, c, query, positives, co)
		if why == SkipNoNegatives && an.commit != c.Parent {
			// The anchor has drifted from this commit's parent (a long
			// branch, say): index the parent itself and try once more.
			if a, aerr := m.IndexAt(ctx, c.Parent); aerr == nil {
				an = a
				st.Anchors++
				rec, why, err = m.mineOne(ctx, o, an, c, query, positives, co)
			}
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return st, ctx.Err()
		case err != nil && embed.IsRetryable(err):
			return st, err
		case err != nil:
			st.fail(c, err)
		case why != "":
			st.skip(why)
		default:
			rec.Source = source
			if err := emit(rec); err != nil {
				return st, err
			}
			st.Records++
		}
	}
	if len(commits) > 0 {
		progress()
	}
	m.takeTimes(&st)
	return st, nil
}

// coChanged lists the functions changed together with one of positives by
// a commit within window of commit i (i itself included) that changed at
// most maxFunctions functions.
func coChanged(changed []map[string]bool, i, window, maxFunctions int, positives []string) map[string]bool {
	out := map[string]bool{}
	for j := max(0, i-window); j < min(len(changed), i+window+1); j++ {
		if len(changed[j]) > maxFunctions {
			continue
		}
		hit := false
		for _, p := range positives {
			if changed[j][p] {
				hit = true
				break
			}
		}
		if hit {
			for id := range changed[j] {
				out[id] = true
			}
		}
	}
	return out
}

// IndexAt builds the miner's first-stage index over the functions at
// commit (a full commit id).
func (m *Miner) IndexAt(ctx context.Context, commit string) (*Anchor, error) {
	defer timed(&m.anchorTime, time.Now())
	h, ok := gitrepo.ParseHash(commit)
	if !ok {
		return nil, fmt.Errorf("anchor %q is not a commit id", commit)
	}
	snap, err := gitrepo.OpenSnapshot(ctx, m.GitDir, m.Backend, h)
	if err != nil {
		return nil, fmt.Errorf("anchor %s: %w", commit, err)
	}
	defer snap.Close()
	a := &Anchor{commit: commit, docs: map[string]Doc{}, blobs: map[string]gitrepo.Hash{}, calls: map[string][]string{}}
	for _, f := range snap.Files() {
		a.blobs[string(f.Path)] = f.Blob
	}
	files := codegraph.GitFiles(snap)
	a.headers = codegraph.HeaderLanguage(files)
	// With KeepGraph (anchors at many nearby parents), each build reuses the
	// last one's extractions: only changed files are parsed again.
	g, err := codegraph.Build(ctx, files, codegraph.Options{Reuse: m.extracts, KeepExtracts: m.KeepGraph})
	if err != nil {
		return nil, fmt.Errorf("anchor %s: %w", commit, err)
	}
	m.extracts, g.Extracts = g.Extracts, nil
	classes := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Type == codegraph.TypeClass {
			classes[n.ID] = true
		}
	}
	b := sparse.NewBuilder(sparse.DefaultConfig())
	var items []embed.Item
	for _, n := range g.Nodes {
		if n.Type != codegraph.TypeFunction || codegraph.IsTestID(n.ID) || IsVendored(n.Path) {
			continue
		}
		a.docs[n.ID] = Doc{ID: n.ID, File: n.Path, Code: n.Code, Hash: CodeHash(n.Code)}
		doc := search.Document(n, classes)
		if err := b.Add(n.ID, doc); err != nil {
			return nil, fmt.Errorf("anchor %s: %w", commit, err)
		}
		a.ids = append(a.ids, n.ID)
		items = append(items, search.EmbedItem(n, doc))
	}
	if err := a.embed(ctx, m, items); err != nil {
		return nil, fmt.Errorf("anchor %s: %w", commit, err)
	}
	for _, e := range g.Edges {
		if e.Type == codegraph.EdgeInvokes && e.Src != e.Dst {
			a.calls[e.Src] = append(a.calls[e.Src], e.Dst)
			a.calls[e.Dst] = append(a.calls[e.Dst], e.Src)
		}
	}
	if m.KeepGraph {
		if a.graph, _, err = search.SpiderGraph(g); err != nil {
			return nil, fmt.Errorf("anchor %s: %w", commit, err)
		}
	}
	if len(a.docs) > 0 {
		if a.ix, err = b.Build(); err != nil {
			return nil, fmt.Errorf("anchor %s: %w", commit, err)
		}
	}
	return a, nil
}

// mineOne makes the record of commit c: positives with their code at the
// parent, ranked by the anchor's index, and negatives from that ranking
// whose files are the same at the parent as at the anchor.
func (m *Miner) mineOne(ctx context.Context, o Options, an *Anchor, c Commit, query string, positives []string, co map[string]bool) (Record, Skip, error) {
	parentStart := time.Now()
	rankStart := time.Time{}
	defer func() {
		if rankStart.IsZero() {
			timed(&m.parentTime, parentStart)
			return
		}
		m.parentTime += rankStart.Sub(parentStart)
		timed(&m.rankTime, rankStart)
	}()
	h, ok := gitrepo.ParseHash(c.Parent)
	if !ok {
		return Record{}, "", fmt.Errorf("parent %q is not a commit id", c.Parent)
	}
	snap, err := gitrepo.OpenSnapshot(ctx, m.GitDir, m.Backend, h)
	if err != nil {
		return Record{}, "", fmt.Errorf("parent %s: %w", c.Parent, err)
	}
	defer snap.Close()
	atParent := map[string]gitrepo.TreeFile{}
	for _, f := range snap.Files() {
		atParent[string(f.Path)] = f
	}
	// The positives' files at the parent, parsed alone.
	want := map[string]string{} // id at the parent → id at the commit
	files := map[string]bool{}
	for _, id := range positives {
		path, name, ok := splitID(id)
		if !ok {
			continue
		}
		if prev, ok := c.PreviousPaths[path]; ok && prev != "" {
			path = prev
		}
		want[codegraph.EntityID(path, name)] = id
		files[path] = true
	}
	var gf []codegraph.File
	for p := range files {
		tf, ok := atParent[p]
		if !ok {
			continue // added by the change: nothing to retrieve at the parent
		}
		gf = append(gf, codegraph.File{Path: p, Regular: tf.IsRegular(), Read: func() ([]byte, error) { return snap.ReadBlob(tf.Blob) }})
	}
	slices.SortFunc(gf, func(a, b codegraph.File) int { return strings.Compare(a.Path, b.Path) })
	g, err := codegraph.Build(ctx, gf, codegraph.Options{Headers: an.headers})
	if err != nil {
		return Record{}, "", fmt.Errorf("parse the parent's files: %w", err)
	}
	rec := Record{Repo: m.Repo, Commit: c.Commit, Parent: c.Parent, Time: c.Time, QueryID: m.Repo + "@" + c.Commit, Query: query, Source: QueryCommit}
	posHash := map[string]bool{}
	isPos := map[string]bool{}
	for _, n := range g.Nodes {
		if _, ok := want[n.ID]; !ok || n.Type != codegraph.TypeFunction {
			continue
		}
		d := Doc{ID: n.ID, File: n.Path, Code: n.Code, Hash: CodeHash(n.Code)}
		rec.Positives = append(rec.Positives, d)
		posHash[d.Hash] = true
		isPos[n.ID] = true
	}
	if len(rec.Positives) == 0 {
		return Record{}, SkipNoParentCode, nil
	}
	slices.SortFunc(rec.Positives, func(a, b Doc) int { return strings.Compare(a.ID, b.ID) })
	rankStart = time.Now()
	var hits []sparse.Hit
	if an.ix != nil {
		hits = an.ix.Search(query, o.MaxRank)
	}
	rank := map[string]int{}
	score := map[string]float64{}
	for i, h := range hits {
		rank[h.DocID], score[h.DocID] = i+1, h.Score
	}
	best := 0
	for _, p := range rec.Positives {
		r := rank[p.ID]
		rec.PositiveRanks = append(rec.PositiveRanks, r)
		rec.PositiveScores = append(rec.PositiveScores, score[p.ID])
		if r > 0 && (best == 0 || r < best) {
			best = r
		}
	}
	if o.KeepRank > 0 && (best == 0 || best > o.KeepRank) {
		return Record{}, SkipInconsistent, nil
	}
	taken := map[string]bool{}
	// usable reports whether the anchor's function id can be a negative:
	// not a positive, not co-changed with one, not a positive's code, and
	// its file the same at the parent (so its code is the parent's).
	usable := func(id string) (Doc, bool) {
		d, ok := an.docs[id]
		if !ok || taken[id] || isPos[id] || co[id] || posHash[d.Hash] {
			return Doc{}, false
		}
		tf, ok := atParent[d.File]
		return d, ok && tf.Blob == an.blobs[d.File]
	}
	if o.from(SourceGraph) {
		limit := max(1, o.Negatives/3)
		for _, p := range rec.Positives {
			for _, id := range an.calls[p.ID] {
				if len(rec.Negatives) >= limit {
					break
				}
				if d, ok := usable(id); ok {
					taken[id] = true
					rec.Negatives = append(rec.Negatives, Negative{Doc: d, Source: SourceGraph, Rank: rank[id], Score: score[id]})
				}
			}
		}
	}
	// The first stages' hits, in turn: BM25's, the embedder's.
	var stages [][]spider.Scored
	var sources []string
	if o.from(SourceBM25) {
		sc := make([]spider.Scored, len(hits))
		for i, h := range hits {
			sc[i] = spider.Scored{ID: h.DocID, Score: h.Score}
		}
		stages, sources = append(stages, sc), append(sources, SourceBM25)
	}
	if o.from(SourceDense) {
		dense, err := an.searchDense(ctx, query, o.MaxRank)
		if err != nil {
			return Record{}, "", err
		}
		stages, sources = append(stages, dense), append(sources, SourceDense)
	}
	next := make([]int, len(stages)) // per stage, the index of its next hit
	for len(rec.Negatives) < o.Negatives {
		took := false
		for s, hs := range stages {
			for len(rec.Negatives) < o.Negatives && next[s] < len(hs) {
				h, r := hs[next[s]], next[s]+1
				next[s]++
				if d, ok := usable(h.ID); ok && r >= o.MinRank {
					taken[h.ID] = true
					rec.Negatives = append(rec.Negatives, Negative{Doc: d, Source: sources[s], Rank: r, Score: h.Score})
					took = true
					break
				}
			}
		}
		if !took {
			break
		}
	}
	if len(rec.Negatives) == 0 {
		return Record{}, SkipNoNegatives, nil
	}
	return rec, "", nil
}

// splitID splits a function id into its file path and name.
func splitID(id string) (path, name string, ok bool) {
	i := strings.IndexByte(id, ':')
	if i <= 0 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// CodeHash is the hex SHA-256 of code with whitespace removed, so bodies
// that differ only in layout dedup together.
func CodeHash(code string) string {
	var b strings.Builder
	for _, r := range code {
		if !unicode.IsSpace(r) {
			b.WriteRune(r)
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// embed computes the anchor's vectors for items (one per a.ids) when the
// miner has a Dense and its options take negatives from it.
func (a *Anchor) embed(ctx context.Context, m *Miner, items []embed.Item) error {
	if !m.Options.from(SourceDense) {
		return nil
	}
	if m.Dense == nil || m.Dense.Embedder == nil || m.Dense.Cache == nil {
		return ErrNoEmbedder
	}
	a.dense = m.Dense
	if len(items) == 0 {
		return nil
	}
	vecs, err := m.Dense.vectors(ctx, items)
	if err != nil {
		return fmt.Errorf("embed the functions: %w", err)
	}
	a.unit = make([]float32, 0, len(items)*m.Dense.Embedder.Dim())
	for _, it := range items {
		a.unit = append(a.unit, vectors.Normalise(vecs[it.Hash])...)
	}
	return nil
}

// searchDense ranks the anchor's functions for query by the embedder's
// cosine similarity, n of them; nil without a Dense.
func (a *Anchor) searchDense(ctx context.Context, query string, n int) ([]spider.Scored, error) {
	if a.dense == nil || len(a.ids) == 0 {
		return nil, nil
	}
	q, err := a.dense.Embedder.Embed(ctx, []string{embed.Query(a.dense.Instruction, query)})
	if err != nil {
		return nil, fmt.Errorf("embed the query: %w", err)
	}
	a.dense.mu.Lock()
	a.dense.Embeds++
	a.dense.mu.Unlock()
	dim := a.dense.Embedder.Dim()
	if len(q) != 1 || len(q[0]) != dim {
		return nil, fmt.Errorf("embed the query: %s answered no %d-dimension vector", a.dense.Embedder.Name(), dim)
	}
	var out []spider.Scored
	for _, h := range vectors.Exact(a.ids, a.unit, dim, q[0], n) {
		out = append(out, spider.Scored{ID: h.NodeID, Score: h.Score})
	}
	return out, nil
}

// Search ranks the anchor's functions for query by BM25, n of them.
func (a *Anchor) Search(query string, n int) []spider.Scored {
	if a.ix == nil {
		return nil
	}
	var out []spider.Scored
	for _, h := range a.ix.Search(query, n) {
		out = append(out, spider.Scored{ID: h.DocID, Score: h.Score})
	}
	return out
}

// Graph is the anchor's code graph for expansion (search.SpiderGraph); nil
// unless the miner keeps graphs.
func (a *Anchor) Graph() *spider.Graph { return a.graph }

// Code is the code of one of the anchor's functions ("" for others).
func (a *Anchor) Code(id string) string { return a.docs[id].Code }

// Has reports whether id is one of the anchor's functions.
func (a *Anchor) Has(id string) bool {
	_, ok := a.docs[id]
	return ok
}
