package benchmark

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// Hit is one document a search engine returned.
type Hit struct {
	ID    string
	Score float64
}

// Peer is another BM25 engine measured against ours on the same documents
// and queries. Only cmd/locus-dev links one (benchmark/blevepeer), so
// locus itself does not carry the peer's code.
type Peer interface {
	Name() string
	// Index indexes docs (id → text of space-separated tokens), keeping any
	// files under dir.
	Index(dir string, docs map[string]string) error
	// Search returns the top k documents for a query of tokens, best first.
	Search(tokens []string, k int) ([]Hit, error)
	Close() error
}

// SearchOptions configures Search.
type SearchOptions struct {
	GitDir  string
	Head    gitrepo.Hash
	Queries int  // how many of the latest commit subjects to run as queries
	Peer    Peer // nil: no peer comparison
	// Hybrid also scrapes the history (with changed functions), builds
	// repository memory from it and times the hybrid method; default false.
	Hybrid bool
}

// SearchResult is what Search measured; latencies are in milliseconds.
type SearchResult struct {
	Repository   string      `json:"repository"`
	Commit       string      `json:"commit"`
	Functions    int         `json:"functions"`
	GraphSeconds float64     `json:"graph_seconds"`
	IndexSeconds float64     `json:"index_seconds"`
	Embedder     string      `json:"embedder"`
	Queries      int         `json:"queries"`
	BM25P50      float64     `json:"bm25_p50_ms"`
	BM25P99      float64     `json:"bm25_p99_ms"`
	SpiderP50    float64     `json:"spider_p50_ms"`
	SpiderP99    float64     `json:"spider_p99_ms"`
	Peer         *PeerResult `json:"peer,omitempty"`
	// Localize is a whole query in process (retrieve, one neighbour
	// selection per center with the heuristic selector, assembly) with the
	// decoded-graph cache off (each step decodes nodes.parquet, as before
	// the cache), cold (one decode per query) and warm.
	Localize *LocalizeLatency `json:"localize,omitempty"`
	// Hybrid is the hybrid method's whole-query latency (SearchOptions.Hybrid).
	Hybrid *HybridLatency `json:"hybrid,omitempty"`
}

// HybridLatency is the hybrid method measured: what building its memory
// cost against the rest of the index, and its per-query latency in
// milliseconds (in process, warm caches, heuristic selector: no model calls).
type HybridLatency struct {
	ScrapeSeconds float64 `json:"scrape_seconds"`
	MemorySeconds float64 `json:"memory_seconds"`
	// MemoryShare is MemorySeconds over graph, index, scrape and memory seconds together.
	MemoryShare   float64 `json:"memory_share"`
	MemoryCommits int     `json:"memory_commits"`
	Queries       int     `json:"queries"`
	P50           float64 `json:"p50_ms"`
	P95           float64 `json:"p95_ms"`
	P99           float64 `json:"p99_ms"`
}

// LocalizeLatency holds per-query latencies in milliseconds.
type LocalizeLatency struct {
	Queries  int     `json:"queries"`
	Method   string  `json:"method"`
	OffP50   float64 `json:"cache_off_p50_ms"`
	ColdP50  float64 `json:"cache_cold_p50_ms"`
	WarmP50  float64 `json:"cache_warm_p50_ms"`
	OffWarm  float64 `json:"off_over_warm"`
	OffCold  float64 `json:"off_over_cold"`
	Selector string  `json:"selector"`
}

// PeerResult compares the peer's top 10 with ours.
type PeerResult struct {
	Name         string  `json:"name"`
	IndexSeconds float64 `json:"index_seconds"`
	P50          float64 `json:"p50_ms"`
	P99          float64 `json:"p99_ms"`
	// SameTop10 counts queries whose top 10 sets are equal; SameUpToTies
	// those where the peer's last score equals ours at that rank (a tie
	// broken differently is not a disagreement).
	SameTop10    int `json:"same_top10"`
	SameUpToTies int `json:"same_top10_up_to_ties"`
	// MaxScoreRelDiff is the largest relative difference between the
	// peer's score of a hit and ours for the same document.
	MaxScoreRelDiff float64 `json:"max_score_rel_diff"`
	MeanOverlap     float64 `json:"mean_top10_overlap"`
}

// Search measures retrieval on one repository: graph build and indexing
// time with the configured local embedder, BM25 query latency (and, with a
// peer, the peer's latency and agreement on the same tokens), and SpIDER's
// expansion and assembly latency (no LLM, no embedding calls).
func Search(ctx context.Context, o SearchOptions) (*SearchResult, error) {
	queries, err := commitSubjects(ctx, o.GitDir, o.Queries)
	if err != nil {
		return nil, err
	}
	if len(queries) == 0 {
		return nil, fmt.Errorf("bench search %s: no commit subjects to use as queries", o.GitDir)
	}
	tmp, err := os.MkdirTemp("", "locus-bench-search-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	b, err := blob.OpenFile(filepath.Join(tmp, "store"), fileblob.Options{})
	if err != nil {
		return nil, err
	}
	defer b.Close()

	t0 := time.Now()
	gr, err := codegraph.BuildCommit(ctx, o.GitDir, "", o.Head, codegraph.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench search %s: graph: %w", o.GitDir, err)
	}
	res := &SearchResult{Repository: o.GitDir, Commit: o.Head.String(), GraphSeconds: time.Since(t0).Seconds(), Queries: len(queries)}
	name := benchRepo(o.GitDir)
	info, err := graphstore.Write(ctx, b, name, o.Head.String(), gr)
	if err != nil {
		return nil, fmt.Errorf("bench search %s: %w", o.GitDir, err)
	}
	t1 := time.Now()
	ires, err := search.IndexRepo(ctx, search.Deps{Bucket: b}, name, info)
	if err != nil {
		return nil, fmt.Errorf("bench search %s: index: %w", o.GitDir, err)
	}
	res.IndexSeconds = time.Since(t1).Seconds()
	res.Functions, res.Embedder = ires.Functions, ires.Model
	si := &schema.SearchInfo{Commit: o.Head.String(), Model: ires.Model, Functions: ires.Functions, SparseKey: ires.SparseKey}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: name}, Graph: &info, Search: si}); err != nil {
		return nil, fmt.Errorf("bench search %s: %w", o.GitDir, err)
	}
	ix, err := sparse.Load(ctx, b, ires.SparseKey)
	if err != nil {
		return nil, fmt.Errorf("bench search %s: %w", o.GitDir, err)
	}
	sg, _, err := search.SpiderGraph(gr)
	if err != nil {
		return nil, fmt.Errorf("bench search %s: %w", o.GitDir, err)
	}
	var pc *peerCompare
	if o.Peer != nil {
		if pc, err = newPeerCompare(o.Peer, filepath.Join(tmp, "peer"), gr); err != nil {
			return nil, fmt.Errorf("bench search %s: %s: %w", o.GitDir, o.Peer.Name(), err)
		}
		defer o.Peer.Close() // before its files under tmp are removed
	}
	var ours, expand []time.Duration
	for _, q := range queries {
		s := time.Now()
		hits := ix.Search(q, 500)
		ours = append(ours, time.Since(s))
		if pc != nil {
			if err := pc.query(ix, q, hits); err != nil {
				return nil, fmt.Errorf("bench search %s: %s, query %q: %w", o.GitDir, o.Peer.Name(), q, err)
			}
		}
		ranking := make([]spider.Scored, len(hits))
		for i, h := range hits {
			ranking[i] = spider.Scored{ID: h.DocID, Score: h.Score}
		}
		s = time.Now()
		exp, err := spider.Expand(sg, ranking, spider.Params{})
		if err == nil {
			_, err = exp.Assemble(nil)
		}
		if err != nil {
			return nil, fmt.Errorf("bench search %s: spider, query %q: %w", o.GitDir, q, err)
		}
		expand = append(expand, time.Since(s))
	}
	res.BM25P50, res.BM25P99 = Percentile(ours, 50), Percentile(ours, 99)
	res.SpiderP50, res.SpiderP99 = Percentile(expand, 50), Percentile(expand, 99)
	if pc != nil {
		res.Peer = pc.result(len(queries))
	}
	if res.Localize, err = localizeLatency(ctx, search.Deps{Bucket: b}, name, queries); err != nil {
		return nil, fmt.Errorf("bench search %s: %w", o.GitDir, err)
	}
	if o.Hybrid {
		if res.Hybrid, err = hybridLatency(ctx, b, name, o, queries); err != nil {
			return nil, fmt.Errorf("bench search %s: hybrid: %w", o.GitDir, err)
		}
		res.Hybrid.MemoryShare = res.Hybrid.MemorySeconds /
			(res.GraphSeconds + res.IndexSeconds + res.Hybrid.ScrapeSeconds + res.Hybrid.MemorySeconds)
	}
	return res, nil
}

// hybridLatency scrapes the history into b, builds the memory, publishes
// both and runs every query through the hybrid method (after one untimed
// query that fills the caches).
func hybridLatency(ctx context.Context, b *blob.Bucket, name schema.RepoName, o SearchOptions, queries []string) (*HybridLatency, error) {
	out := &HybridLatency{Queries: len(queries)}
	t0 := time.Now()
	sr, err := commits.Scrape(ctx, commits.Config{Bucket: b, Repo: name, GitDir: o.GitDir, Head: o.Head.String(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	out.ScrapeSeconds = time.Since(t0).Seconds()
	t1 := time.Now()
	mem, err := memory.Build(ctx, memory.BuildConfig{Bucket: b, Repo: name, GitDir: o.GitDir, Head: sr.Head, Parts: sr.Parts})
	if err != nil {
		return nil, err
	}
	if mem == nil {
		return nil, fmt.Errorf("no memory built for %s", sr.Head)
	}
	out.MemorySeconds = time.Since(t1).Seconds()
	out.MemoryCommits = mem.Commits
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: name}, Head: sr.Head,
		Scrape: schema.ScrapeResult{Head: sr.Head, NewCommits: sr.NewCommits, Rows: sr.Rows, Parts: sr.Parts, FileIDs: sr.FileIDsKey, Memory: mem}}); err != nil {
		return nil, err
	}
	d := search.Deps{Bucket: b}
	p := search.Params{Method: search.MethodHybrid}
	// One untimed retrieval fills the caches, and must use the memory.
	r, err := search.RetrieveAt(ctx, d, name, "", queries[0], p)
	if err != nil {
		return nil, fmt.Errorf("warm-up query: %w", err)
	}
	if r.Warning != "" {
		return nil, fmt.Errorf("warm-up query: %s", r.Warning)
	}
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		s := time.Now()
		if _, err := localizeDirect(ctx, d, name, q, p); err != nil {
			return nil, fmt.Errorf("localize %q: %w", q, err)
		}
		lat = append(lat, time.Since(s))
	}
	out.P50, out.P95, out.P99 = Percentile(lat, 50), Percentile(lat, 95), Percentile(lat, 99)
	return out, nil
}

// localizeQueries bounds the whole-query passes (three per query).
const localizeQueries = 50

// localizeLatency runs up to localizeQueries queries through localizeDirect
// three times: with the graph cache off, cold (emptied before each query) and
// warm, and leaves the cache on.
func localizeLatency(ctx context.Context, d search.Deps, repo schema.RepoName, queries []string) (*LocalizeLatency, error) {
	if len(queries) > localizeQueries {
		queries = queries[:localizeQueries]
	}
	p := search.Params{Method: "spisr"}
	out := &LocalizeLatency{Queries: len(queries), Method: p.Method}
	defer search.SetGraphCache(true)
	run := func(on, cold bool) (float64, error) {
		search.SetGraphCache(on)
		var lat []time.Duration
		for _, q := range queries {
			if cold {
				search.ResetGraphCache()
			}
			s := time.Now()
			r, err := localizeDirect(ctx, d, repo, q, p)
			if err != nil {
				return 0, fmt.Errorf("localize %q: %w", q, err)
			}
			lat = append(lat, time.Since(s))
			out.Selector = r.Selector
		}
		return Percentile(lat, 50), nil
	}
	var err error
	if out.OffP50, err = run(false, false); err != nil {
		return nil, err
	}
	if out.ColdP50, err = run(true, true); err != nil {
		return nil, err
	}
	if _, err = run(true, false); err != nil { // fill the cache
		return nil, err
	}
	if out.WarmP50, err = run(true, false); err != nil {
		return nil, err
	}
	if out.WarmP50 > 0 {
		out.OffWarm = out.OffP50 / out.WarmP50
	}
	if out.ColdP50 > 0 {
		out.OffCold = out.OffP50 / out.ColdP50
	}
	return out, nil
}

// peerCompare accumulates a peer's latency and agreement with our BM25.
type peerCompare struct {
	peer       Peer
	r          PeerResult
	latencies  []time.Duration
	overlapSum float64
}

func newPeerCompare(p Peer, dir string, gr *codegraph.Graph) (*peerCompare, error) {
	// The peer indexes the same documents, already tokenised by our
	// tokenizer, so only ranking and scoring differ.
	docs := map[string]string{}
	classes := map[string]bool{}
	for _, n := range gr.Nodes {
		if n.Type == codegraph.TypeClass {
			classes[n.ID] = true
		}
	}
	for _, n := range gr.Nodes {
		if n.Type == codegraph.TypeFunction {
			docs[n.ID] = strings.Join(sparse.Tokenize(search.Document(n, classes)), " ")
		}
	}
	start := time.Now()
	if err := p.Index(dir, docs); err != nil {
		return nil, err
	}
	return &peerCompare{peer: p, r: PeerResult{Name: p.Name(), IndexSeconds: time.Since(start).Seconds()}}, nil
}

func (pc *peerCompare) query(ix *sparse.Index, q string, hits []sparse.Hit) error {
	s := time.Now()
	theirs, err := pc.peer.Search(sparse.Tokenize(q), 10)
	if err != nil {
		return err
	}
	pc.latencies = append(pc.latencies, time.Since(s))
	top := map[string]bool{}
	for i := 0; i < len(hits) && i < 10; i++ {
		top[hits[i].DocID] = true
	}
	common := 0
	for _, h := range theirs {
		if top[h.ID] {
			common++
		}
	}
	if n := len(theirs); n > 0 {
		pc.overlapSum += float64(common) / float64(n)
		ids := make([]string, n)
		for i, h := range theirs {
			ids[i] = h.ID
		}
		sc, err := ix.Score(q, ids)
		if err != nil {
			return fmt.Errorf("score the peer's hits: %w", err)
		}
		for i, h := range theirs {
			if d := math.Abs(sc[i]-h.Score) / math.Max(h.Score, 1e-9); d > pc.r.MaxScoreRelDiff {
				pc.r.MaxScoreRelDiff = d
			}
		}
		last := theirs[n-1].Score
		if len(hits) >= n && math.Abs(hits[n-1].Score-last) <= 1e-6*math.Max(1, hits[n-1].Score) {
			pc.r.SameUpToTies++
		}
	}
	if common == len(theirs) && len(top) == len(theirs) {
		pc.r.SameTop10++
	}
	return nil
}

func (pc *peerCompare) result(queries int) *PeerResult {
	r := pc.r
	r.P50, r.P99 = Percentile(pc.latencies, 50), Percentile(pc.latencies, 99)
	r.MeanOverlap = pc.overlapSum / float64(max(queries, 1))
	return &r
}

// commitSubjects returns the subjects of the latest n non-merge commits.
func commitSubjects(ctx context.Context, gitDir string, n int) ([]string, error) {
	if n <= 0 {
		return nil, fmt.Errorf("bench search %s: %d queries: want at least 1", gitDir, n)
	}
	out, err := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "log", "--no-merges", "--format=%s", "-n", fmt.Sprint(n)).Output()
	if err != nil {
		return nil, fmt.Errorf("bench search %s: git log for queries: %w", gitDir, err)
	}
	var qs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "" {
			qs = append(qs, l)
		}
	}
	return qs, nil
}

// WriteSearchTable prints r as two aligned columns.
func WriteSearchTable(w io.Writer, r *SearchResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("repository", r.Repository)
	row("commit", r.Commit)
	row("functions", r.Functions)
	row("graph_seconds", r.GraphSeconds)
	row("index_seconds", r.IndexSeconds)
	row("embedder", r.Embedder)
	row("queries", r.Queries)
	row("bm25_p50_ms", r.BM25P50)
	row("bm25_p99_ms", r.BM25P99)
	if p := r.Peer; p != nil {
		row(p.Name+"_p50_ms", p.P50)
		row(p.Name+"_p99_ms", p.P99)
		row(p.Name+"_index_seconds", p.IndexSeconds)
		row("same_top10", p.SameTop10)
		row("same_top10_up_to_ties", p.SameUpToTies)
		row("max_score_rel_diff", p.MaxScoreRelDiff)
		row("mean_top10_overlap", p.MeanOverlap)
	} else {
		row("peer", "none (the bleve comparison: locus-dev bench search --peer bleve)")
	}
	row("spider_p50_ms", r.SpiderP50)
	row("spider_p99_ms", r.SpiderP99)
	if l := r.Localize; l != nil {
		row("localize_queries", fmt.Sprintf("%d (%s, %s)", l.Queries, l.Method, l.Selector))
		row("localize_p50_ms_graph_cache_off", l.OffP50)
		row("localize_p50_ms_graph_cache_cold", l.ColdP50)
		row("localize_p50_ms_graph_cache_warm", l.WarmP50)
		row("localize_cache_off_over_cold", fmt.Sprintf("%.2fx", l.OffCold))
		row("localize_cache_off_over_warm", fmt.Sprintf("%.2fx", l.OffWarm))
	}
	if h := r.Hybrid; h != nil {
		row("scrape_seconds", fmt.Sprintf("%.2f", h.ScrapeSeconds))
		row("memory_seconds", fmt.Sprintf("%.2f (%d commits)", h.MemorySeconds, h.MemoryCommits))
		row("memory_share_of_index", fmt.Sprintf("%.1f%%", 100*h.MemoryShare))
		row("hybrid_queries", h.Queries)
		row("hybrid_p50_ms / p95 / p99", fmt.Sprintf("%.1f / %.1f / %.1f", h.P50, h.P95, h.P99))
	}
	return tw.Flush()
}
