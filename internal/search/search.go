// Package search indexes a repository's functions for retrieval (embeddings,
// vectors, BM25) and answers localization queries with SR, DER, SpISR and SpIDER.
package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/schema"
)

// Deps are the backends indexing and queries use.
type Deps struct {
	Bucket   *blob.Bucket
	Embedder embed.Embedder // default: embed.Lexical (named as lexical in every output)
	Vectors  vectors.Index  // default: vectors.NewLocal on Bucket for the embedder's model
	Selector llm.Selector   // default: llm.Heuristic (no LLM)
	// Reranker orders a result's first items when a query asks for it
	// (Params.Rerank); default none: such a query fails with ErrNoReranker.
	Reranker llm.Reranker
	// Summarizer, when set, writes LLM summaries of functions at index time
	// (SummarizeFunctions), and function documents carry the stored ones;
	// default none.
	Summarizer *Summarizer
	// QueryInstruction prefixes queries for instruction-tuned embedders; default none.
	QueryInstruction string
}

func (d *Deps) defaults() {
	if d.Embedder == nil {
		d.Embedder = &embed.Lexical{}
	}
	if d.Vectors == nil {
		d.Vectors = sharedLocal(d.Bucket, d.Embedder.Name(), d.Embedder.Dim())
	}
	if d.Selector == nil {
		d.Selector = llm.Heuristic{}
	}
}

// localKey names one process-wide local vector index.
type localKey struct {
	bucket *blob.Bucket
	model  string
	dim    int
}

var (
	localsMu sync.Mutex
	locals   = map[localKey]*vectors.Local{}
)

// sharedLocal is the process's local vector index of one bucket and model.
// Every query used to open its own and decode the repository's whole vector
// file (68% of a backlog's direct ranking time on pytest); a shared one keeps
// it decoded and re-reads it only when its ETag changes.
func sharedLocal(b *blob.Bucket, model string, dim int) *vectors.Local {
	localsMu.Lock()
	defer localsMu.Unlock()
	k := localKey{b, model, dim}
	l, ok := locals[k]
	if !ok {
		l = vectors.NewLocal(b, model, dim)
		locals[k] = l
	}
	return l
}

// Document is what gets embedded and BM25-indexed for a function node;
// classes holds the ids of class nodes.
func Document(n codegraph.Node, classes map[string]bool) string {
	class := ""
	if i := strings.LastIndexByte(n.Name, '.'); i > 0 && classes[codegraph.EntityID(n.Path, n.Name[:i])] {
		class = n.Name[:i]
	}
	return embed.Document(n.Path, class, n.Code)
}

// IndexResult says what IndexRepo did.
type IndexResult struct {
	Functions int    `json:"functions"`
	Embedded  int    `json:"embedded"` // neither in the vector store as they are nor in the embedding cache
	Upserted  int    `json:"upserted"` // vectors written: new or changed documents
	Deleted   int    `json:"deleted"`  // vectors of functions that vanished
	Model     string `json:"model"`
	SparseKey string `json:"sparse_key"`
	// SparseDocsKey holds the hashes of the BM25 index's documents, by
	// which the next run tells the documents it can take over.
	SparseDocsKey string `json:"sparse_docs_key,omitempty"`
	// SparseReused is how many documents the BM25 index took over from the
	// previous one; the others were tokenized.
	SparseReused int `json:"sparse_reused"`
}

// IndexRepo embeds the functions of the published graph (only content not
// embedded before), upserts the vectors of documents the vector store does
// not hold as they are, deletes vectors of functions that no longer exist,
// and writes the BM25 index, taking over unchanged documents from the
// previous one. Each step's work follows the change since the last run, and
// the result equals a full rebuild's (TestReindexTouchesOnlyTheChange).
func IndexRepo(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo) (*IndexResult, error) {
	d.defaults()
	key := repo.SparseKey(info.Commit)
	// The vector store keeps each node's document hash (code, path and
	// summary): an equal one means an equal vector, already stored, so
	// only the other functions' vectors are looked up or embedded.
	have, err := d.Vectors.IDs(ctx, string(repo))
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", repo, err)
	}
	ef, err := embedFunctions(ctx, d, repo, info, key, "index "+string(repo), previousSparse(ctx, d.Bucket, repo), have, true)
	if err != nil {
		return nil, err
	}
	fns, items, vecs, res := ef.fns, ef.items, ef.vecs, ef.res
	var recs []vectors.Record
	keep := map[string]bool{}
	for i, n := range fns {
		keep[n.ID] = true
		if have[n.ID] != items[i].Hash {
			recs = append(recs, vectors.Record{NodeID: n.ID, Commit: info.Commit, ContentHash: items[i].Hash, Vector: vecs[items[i].Hash]})
		}
	}
	if len(recs) > 0 {
		if err := d.Vectors.Upsert(ctx, string(repo), recs); err != nil {
			return nil, fmt.Errorf("index %s: upsert: %w", repo, err)
		}
	}
	res.Upserted = len(recs)
	var gone []string
	for id := range have {
		if !keep[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		if err := d.Vectors.Delete(ctx, string(repo), gone); err != nil {
			return nil, fmt.Errorf("index %s: delete: %w", repo, err)
		}
	}
	res.Deleted = len(gone)
	res.SparseDocsKey = key + ".docs"
	return ef.writeSparse(ctx, d)
}

// SparseBase is a BM25 index and its documents' hashes, for the next index
// to take unchanged documents from.
type SparseBase struct {
	ix     *sparse.Index
	hashes map[string]uint64
	// embedded: every document of ix has its vector in the embedding cache
	// of the model the next index embeds with (a snapshot's base), so an
	// unchanged document is not looked up there again.
	embedded bool
}

// previousSparse is the published BM25 index of repo with its document
// hashes, or nil when there is none to build on. One that does not read back
// intact is not used: the next index is built from every document (slower,
// the same result), with a warning.
func previousSparse(ctx context.Context, b *blob.Bucket, repo schema.RepoName) *SparseBase {
	m, err := manifest.Read(ctx, b, repo)
	if err != nil || m == nil || m.Search == nil || m.Search.SparseDocsKey == "" {
		return nil
	}
	base, err := ReadSparseBase(ctx, b, *m.Search, "")
	if err != nil {
		slog.WarnContext(ctx, "the previous BM25 index cannot be built on; indexing every document", "repo", repo, "error", err)
		return nil
	}
	return base
}

// ReadSparseBase reads the BM25 index si records and its documents'
// hashes, checked (size, SHA-256, checksums): an error when it has none or
// they do not read back intact. model is the embedder of the index to
// build: when si's vectors are that model's, its unchanged documents are
// not looked up in the embedding cache again.
func ReadSparseBase(ctx context.Context, b *blob.Bucket, si schema.SearchInfo, model string) (*SparseBase, error) {
	if si.SparseDocsKey == "" {
		return nil, fmt.Errorf("BM25 index %s kept no document hashes", si.SparseKey)
	}
	ix, err := sparse.LoadVerified(ctx, b, si.SparseKey, si.SparseBytes, si.SparseSHA256)
	if err == nil && ix.Config() != sparse.DefaultConfig() {
		err = fmt.Errorf("BM25 parameters %+v, not the default", ix.Config())
	}
	var hashes map[string]uint64
	if err == nil {
		hashes, err = sparse.ReadDocHashes(ctx, b, si.SparseDocsKey, ix)
	}
	if err != nil {
		return nil, err
	}
	return &SparseBase{ix: ix, hashes: hashes, embedded: model != "" && si.Model == model}, nil
}

// embeddedFunctions are a graph's functions, embedded into the repository's
// content-addressed cache and added to a BM25 builder: what IndexRepo and
// IndexSnapshot share.
type embeddedFunctions struct {
	fns    []codegraph.Node
	items  []embed.Item
	vecs   map[string][]float32 // by items[i].Hash
	bm     *sparse.Builder
	hashes map[string]uint64 // document hash by node id
	res    *IndexResult
}

// embedFunctions reads the functions of info, adds their documents to a
// BM25 builder and embeds what the cache does not hold, returning the
// vectors with wantVectors; what prefixes errors. Documents of base whose
// hash is unchanged are taken over, not tokenized.
func embedFunctions(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo, sparseKey, what string, base *SparseBase, stored map[string]string, wantVectors bool) (*embeddedFunctions, error) {
	fns, items, err := functionItems(ctx, d, repo, info)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	hashes := make(map[string]uint64, len(fns))
	for i, n := range fns {
		hashes[n.ID] = sparse.DocHash(items[i].Text)
	}
	bm := sparse.NewBuilder(sparse.DefaultConfig())
	if base != nil {
		from, err := sparse.NewBuilderFrom(base.ix, func(id string) bool {
			h, ok := hashes[id]
			return ok && base.hashes[id] == h
		})
		if err == nil {
			bm = from
		} else {
			slog.WarnContext(ctx, "the previous BM25 index cannot be built on; indexing every document", "repo", repo, "error", err)
		}
	}
	reused := bm.Len()
	if stored == nil && base != nil && base.embedded && reused > 0 {
		// The base's documents are in the cache: only the others are
		// looked up there (and embedded when missing).
		stored = make(map[string]string, reused)
		for i, n := range fns {
			if bm.Has(n.ID) {
				stored[n.ID] = items[i].Hash
			}
		}
	}
	for i, n := range fns {
		if bm.Has(n.ID) {
			continue
		}
		if err := bm.Add(n.ID, items[i].Text); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	cache := &embed.Cache{Bucket: d.Bucket, Repo: repo, Model: d.Embedder.Name()}
	var vecs map[string][]float32
	var embedded int
	if wantVectors {
		vecs, embedded, err = embed.EmbedCached(ctx, d.Embedder, cache, unstored(fns, items, stored))
	} else {
		embedded, err = embed.EnsureCached(ctx, d.Embedder, cache, unstored(fns, items, stored))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: embed: %w", what, err)
	}
	return &embeddedFunctions{fns: fns, items: items, vecs: vecs, bm: bm, hashes: hashes,
		res: &IndexResult{Functions: len(fns), Embedded: embedded, Model: d.Embedder.Name(), SparseKey: sparseKey, SparseReused: reused}}, nil
}

// unstored are the items of fns whose documents a vector store holding
// stored (node id → document hash) does not hold as they are: all of them
// when stored is nil.
func unstored(fns []codegraph.Node, items []embed.Item, stored map[string]string) []embed.Item {
	if stored == nil {
		return items
	}
	var out []embed.Item
	for i, n := range fns {
		if stored[n.ID] != items[i].Hash {
			out = append(out, items[i])
		}
	}
	return out
}

// writeSparse builds the BM25 index and writes it under res.SparseKey, and
// its documents' hashes under res.SparseDocsKey when that is set.
func (e *embeddedFunctions) writeSparse(ctx context.Context, d Deps) (*IndexResult, error) {
	ix, err := e.bm.Build()
	if err != nil {
		return nil, err
	}
	if err := sparse.Write(ctx, d.Bucket, e.res.SparseKey, ix); err != nil {
		return nil, err
	}
	if e.res.SparseDocsKey != "" {
		if err := sparse.WriteDocHashes(ctx, d.Bucket, e.res.SparseDocsKey, ix, func(id string) uint64 { return e.hashes[id] }); err != nil {
			return nil, err
		}
	}
	return e.res, nil
}

// contentKey distinguishes documents of equal code under different paths
// (the path is part of the embedded text).
func contentKey(doc string) string {
	return fmt.Sprintf("%016x", sparse.DocHash(doc))
}

// Methods.
const (
	MethodSR     = "sr"     // BM25
	MethodDER    = "der"    // dense retrieval
	MethodSpISR  = "spisr"  // BM25 + graph expansion
	MethodSpIDER = "spider" // dense + graph expansion
	MethodHybrid = "hybrid" // BM25 fused with repository memory, + graph expansion
	// MethodLearned orders the hybrid method's candidates (its rankings and
	// their graph expansion) by a trained model (internal/rank).
	MethodLearned = "learned"
)

// Methods lists every method, in the order reports show them.
var Methods = []string{MethodSR, MethodDER, MethodSpISR, MethodSpIDER, MethodHybrid}

// AllMethods are Methods and the learned method, which needs a model
// (Params.Model).
var AllMethods = append(slices.Clone(Methods), MethodLearned)

// CheckMethod says what is wrong with method ("" is the default).
func CheckMethod(method string) error {
	if method == "" || slices.Contains(AllMethods, method) {
		return nil
	}
	return fmt.Errorf("method %q: want %s", method, strings.Join(AllMethods, ", "))
}

// Params of one query.
type Params struct {
	// Method: sr, der, spisr, spider or hybrid; default spider.
	Method string
	spider.Params
	// IncludeTests keeps test functions (codegraph.IsTestID) in the
	// ranking; default false: an issue asks to change the code, and gold
	// functions, like most fixes, are never tests.
	IncludeTests bool `json:"include_tests,omitempty"`
	// MemoryWeight is repository memory's weight against the code's BM25
	// (weight 1) in the hybrid method's fusion; 0: DefaultMemoryWeight.
	MemoryWeight float64 `json:"memory_weight,omitempty"`
	// HotspotWeight is the weight, in the hybrid method's fusion, of how
	// often and how recently memory's commits changed each function the
	// code's BM25 ranks; 0: DefaultHotspotWeight.
	HotspotWeight float64 `json:"hotspot_weight,omitempty"`
	// DenseWeight is the weight, in the hybrid method's fusion, of the
	// embedder's ranking; 0: DefaultDenseWeight with a model embedder and
	// none with the lexical one (it adds nothing BM25 lacks, measured in
	// docs/results.md); negative: none.
	DenseWeight float64 `json:"dense_weight,omitempty"`
	// Rerank is how many of the result's first items an LLM reorders
	// (listwise, after neighbour selection); 0: none. At most MaxRerank.
	Rerank int `json:"rerank,omitempty"`
	// CoChangeCost is the hop cost (1 to 255), in the hybrid method's
	// expansion, of an edge from a function to those that memory's commits
	// changed together with it (see coChangeOverlay); 0: no such edges.
	CoChangeCost int `json:"co_change_cost,omitempty"`
	// Model is the ranking model file of the learned method (rank.File,
	// written by locus rank train); required by that method.
	Model string `json:"model,omitempty"`
	// CrossEncoder is a cross-encoder model directory (locus rank
	// train-neural) that reorders the first 50 functions of the hybrid and
	// learned methods' ranking, before graph expansion; default none.
	CrossEncoder string `json:"cross_encoder,omitempty"`
}

// MaxRerank bounds Params.Rerank: a rerank prompt holds every item's code.
const MaxRerank = 100

// Validate checks p: the graph parameters and the memory weight.
func (p Params) Validate() error {
	if err := p.Params.Validate(); err != nil {
		return err
	}
	if p.MemoryWeight < 0 || math.IsNaN(p.MemoryWeight) || math.IsInf(p.MemoryWeight, 0) {
		return fmt.Errorf("memory weight %v: want 0 or more (0: default %v)", p.MemoryWeight, DefaultMemoryWeight)
	}
	if p.HotspotWeight < 0 || math.IsNaN(p.HotspotWeight) || math.IsInf(p.HotspotWeight, 0) {
		return fmt.Errorf("hotspot weight %v: want 0 or more (0: default %v)", p.HotspotWeight, DefaultHotspotWeight)
	}
	if math.IsNaN(p.DenseWeight) || math.IsInf(p.DenseWeight, 0) {
		return fmt.Errorf("dense weight %v: want a number (0: default, negative: none)", p.DenseWeight)
	}
	if p.Rerank < 0 || p.Rerank > MaxRerank {
		return fmt.Errorf("rerank %d: want 0 (none) to %d items", p.Rerank, MaxRerank)
	}
	return nil
}

// Result of one query.
type Result struct {
	Repo     string        `json:"repo"`
	Commit   string        `json:"commit"`
	Method   string        `json:"method"`
	Embedder string        `json:"embedder,omitempty"`
	Selector string        `json:"selector,omitempty"`
	Items    []spider.Item `json:"items"`
	// LLM usage over all centers.
	LLMCalls         int           `json:"llm_calls"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	SelectLatency    time.Duration `json:"select_latency"`
	Latency          time.Duration `json:"latency"`
	// Failed lists centers whose selection failed (kept without neighbours).
	Failed []string `json:"failed,omitempty"`
	// BudgetSkipped lists the centers not asked because the issue's token
	// limit was spent (kept without neighbours).
	BudgetSkipped []string `json:"budget_skipped,omitempty"`
	// Rerank says what the LLM rerank did, when the query asked for one;
	// its usage is included in the totals above.
	Rerank *RerankInfo `json:"rerank,omitempty"`
}

// Retrieval is steps 1–3 of a query: the ranking and, for the graph methods,
// the expansion whose centers need neighbour selection. It is small enough
// to pass between workflow steps (ids and scores, no code).
type Retrieval struct {
	Repo      string            `json:"repo"`
	Commit    string            `json:"commit"`
	Method    string            `json:"method"`
	Embedder  string            `json:"embedder,omitempty"`
	TopK      []spider.Scored   `json:"top_k"`
	Expansion *spider.Expansion `json:"expansion,omitempty"`
	// Warning says in one line what the ranking lacks (a repository
	// without memory, say); "" when nothing.
	Warning string `json:"warning,omitempty"`
	// Sources, for the hybrid method, says of each function a result can
	// hold where the rankings it fuses placed it (HybridRankings.SourceRanks).
	Sources map[string]string `json:"sources,omitempty"`
}

// Retrieve ranks the functions of repo for issue and, for SpISR and SpIDER,
// expands the top centers along the code graph.
func Retrieve(ctx context.Context, d Deps, repo schema.RepoName, issue string, p Params) (*Retrieval, error) {
	return RetrieveAt(ctx, d, repo, "", issue, p)
}

// RetrieveAt is Retrieve against the snapshot of repo at commit snapshot (a
// full commit id, built by EnsureSnapshot), or the indexed head when
// snapshot is "" or the head's commit.
func RetrieveAt(ctx context.Context, d Deps, repo schema.RepoName, snapshot, issue string, p Params) (*Retrieval, error) {
	d.defaults()
	if p.Method == "" {
		p.Method = MethodSpIDER
	}
	p.Params = p.Params.WithDefaults()
	var graph schema.GraphInfo
	var si *schema.SearchInfo
	var snap *schema.SnapshotManifest
	m, err := manifest.Read(ctx, d.Bucket, repo)
	if err != nil {
		return nil, err
	}
	if snapshot != "" && (m == nil || m.Graph == nil || m.Graph.Commit != snapshot) {
		if snap, err = ReadSnapshot(ctx, d.Bucket, repo, snapshot); err != nil {
			return nil, fmt.Errorf("localize %s@%s: %w", repo, snapshot, err)
		}
		if snap == nil {
			return nil, fmt.Errorf("localize %s@%s: no snapshot of that commit is built: %w", repo, snapshot, ErrNotIndexed)
		}
		graph, si = snap.Graph, &snap.Search
	} else {
		if m != nil && m.Head == "" && m.Graph == nil {
			return nil, fmt.Errorf("localize %s: repository %s is indexed but empty (no commits): %w", repo, repo, ErrNotIndexed)
		}
		if m == nil || m.Graph == nil {
			return nil, fmt.Errorf("localize %s: %w (run locus index first)", repo, ErrNotIndexed)
		}
		graph, si = *m.Graph, m.Search
	}
	if p.CrossEncoder != "" {
		// The model first, as the learned method's: a query must not
		// answer without the stage it asked for.
		if p.Method != MethodHybrid && p.Method != MethodLearned {
			return nil, fmt.Errorf("localize %s: a cross-encoder second stage is for the %s and %s methods, not %s: %w", repo, MethodHybrid, MethodLearned, p.Method, ErrBadQuery)
		}
		if _, err := LoadCrossEncoder(p.CrossEncoder); err != nil {
			return nil, fmt.Errorf("localize %s: %w", repo, err)
		}
	}
	r := &Retrieval{Repo: string(repo), Commit: graph.Commit, Method: p.Method}
	// A repository mostly in a language without a graph: said with the
	// answer, and instead of it when the graph has nothing to rank.
	if r.Warning = codegraph.LanguageWarning(&graph); r.Warning != "" && graph.Files == 0 {
		return nil, fmt.Errorf("localize %s: %s: %w", repo, r.Warning, ErrNoGraph)
	}
	var ranking []spider.Scored
	var lg *loadedGraph // decoded once, when a step needs it
	fetch := p.N        // ranked before tests are dropped
	if !p.IncludeTests {
		fetch = 2 * p.N
	}
	var co spider.Overlay     // hybrid: co-change edges from memory
	var fused *HybridRankings // hybrid: the rankings its ranking fuses
	switch p.Method {
	case MethodSR, MethodSpISR, MethodHybrid, MethodLearned:
		key := repo.SparseKey(graph.Commit)
		if snap != nil {
			key = snap.Search.SparseKey
		}
		var size int64
		var sum string
		if si != nil && si.SparseKey == key {
			size, sum = si.SparseBytes, si.SparseSHA256
		}
		ix, err := sparse.LoadVerified(ctx, d.Bucket, key, size, sum)
		if err != nil {
			return nil, fmt.Errorf("localize %s: %w", repo, err)
		}
		for _, h := range ix.Search(issue, fetch) {
			ranking = append(ranking, spider.Scored{ID: h.DocID, Score: h.Score})
		}
		var model *rank.Model
		if p.Method == MethodLearned {
			// The model first: a query must not fall back to another
			// ranking (below, when no word of it is indexed) and hide that
			// its model cannot be read.
			if model, err = ModelOf(ctx, d.Bucket, p.Model, repo); err != nil {
				return nil, fmt.Errorf("localize %s: %w", repo, err)
			}
		}
		if p.Method == MethodHybrid || p.Method == MethodLearned {
			if lg, err = getGraph(ctx, d.Bucket, graph); err != nil {
				return nil, fmt.Errorf("localize %s: %w", repo, err)
			}
			h, ep, warning, err := MemoryRankings(ctx, d.Bucket, repo, m, graph.Commit, issue, lg.sg.IsFunction, ranking)
			if err != nil {
				return nil, err
			}
			r.Warning = joinWarnings(r.Warning, warning)
			if co, err = coChangeOverlay(ep, p); err != nil {
				return nil, fmt.Errorf("localize %s: %w", repo, err)
			}
			w := p.Weights()
			if w.Dense = denseWeight(p.DenseWeight, d.Embedder); w.Dense > 0 {
				if h.Dense, err = denseRanking(ctx, d, repo, snapshot, snap != nil, graph, si, issue, fetch); err != nil {
					return nil, err
				}
				r.Embedder = d.Embedder.Name()
			}
			if p.Method == MethodLearned && (len(h.Code) > 0 || len(h.Memory) > 0) {
				if ranking, err = learnedRanking(model, issue, h, w, ep, lg, p); err != nil {
					return nil, fmt.Errorf("localize %s: %w", repo, err)
				}
				if ranking, err = secondStage(ctx, p, issue, ranking, lg); err != nil {
					return nil, fmt.Errorf("localize %s: %w", repo, err)
				}
				r.TopK = spider.TopK(ranking, p.K)
				return r, nil
			}
			ranking = h.Fuse(w)
			fused = &h
			if len(ranking) == 0 {
				fused = nil
				// No word of the issue is in the code or the history: rather
				// than an empty answer, the embedder's ranking, said so.
				r.Embedder = d.Embedder.Name()
				if ranking, err = denseRanking(ctx, d, repo, snapshot, snap != nil, graph, si, issue, fetch); err != nil {
					return nil, err
				}
				r.Warning = joinWarnings(r.Warning, "no word of the issue is in the code's BM25 index or the commit history: ranked by the embedder "+d.Embedder.Name()+" alone")
			}
		}
	case MethodDER, MethodSpIDER:
		r.Embedder = d.Embedder.Name()
		if ranking, err = denseRanking(ctx, d, repo, snapshot, snap != nil, graph, si, issue, fetch); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown %w: %w", CheckMethod(p.Method), ErrBadQuery)
	}
	ranking = withoutTests(ranking, p.IncludeTests, p.N)
	if p.Method == MethodHybrid {
		if ranking, err = secondStage(ctx, p, issue, ranking, lg); err != nil {
			return nil, fmt.Errorf("localize %s: %w", repo, err)
		}
	}
	r.TopK = spider.TopK(ranking, p.K)
	if p.Method == MethodSR || p.Method == MethodDER {
		return r, nil
	}
	if lg == nil {
		if lg, err = getGraph(ctx, d.Bucket, graph); err != nil {
			return nil, fmt.Errorf("localize %s: %w", repo, err)
		}
	}
	exp, err := spider.ExpandWith(lg.sg, ranking, p.Params, co)
	if err != nil {
		return nil, err
	}
	r.Expansion = &exp
	if fused != nil && p.Method == MethodHybrid {
		r.Sources = fused.SourceRanks(r.placed())
	}
	return r, nil
}

// placed are the ids a result of r can hold: S_K and every center's
// candidates.
func (r *Retrieval) placed() []string {
	var ids []string
	for _, s := range r.TopK {
		ids = append(ids, s.ID)
	}
	if r.Expansion != nil {
		for _, c := range r.Expansion.Centers {
			for _, cand := range c.Candidates {
				ids = append(ids, cand.ID)
			}
		}
	}
	return ids
}

// Weights are the hybrid fusion's weights of p's query, defaults filled in;
// Dense is left 0 (it depends on the embedder: see denseWeight).
func (p Params) Weights() Weights {
	return Weights{Memory: cmp.Or(p.MemoryWeight, DefaultMemoryWeight), Hotspot: cmp.Or(p.HotspotWeight, DefaultHotspotWeight)}
}

// denseWeight is the hybrid fusion's weight of the embedder's ranking for
// the query's w (see Params.DenseWeight): 0 means none.
func denseWeight(w float64, e embed.Embedder) float64 {
	switch {
	case w < 0:
		return 0
	case w > 0:
		return w
	}
	if _, lexical := e.(*embed.Lexical); lexical {
		return 0
	}
	return DefaultDenseWeight
}

// denseRanking ranks the functions of repo (at the snapshot's graph when
// atSnapshot) by the embedder's similarity to issue, fetch of them.
func denseRanking(ctx context.Context, d Deps, repo schema.RepoName, snapshot string, atSnapshot bool, graph schema.GraphInfo, si *schema.SearchInfo, issue string, fetch int) ([]spider.Scored, error) {
	if si != nil && si.Model != d.Embedder.Name() {
		return nil, fmt.Errorf("localize %s: indexed with embedder %s, queried with %s: %w", repo, si.Model, d.Embedder.Name(), ErrBadQuery)
	}
	q, err := d.Embedder.Embed(ctx, []string{embed.Query(d.QueryInstruction, issue)})
	if err != nil {
		return nil, fmt.Errorf("localize %s: embed query: %w", repo, err)
	}
	var ranking []spider.Scored
	if atSnapshot {
		sv, err := getSnapVectors(ctx, d, repo, graph)
		if err != nil {
			return nil, fmt.Errorf("localize %s@%s: %w", repo, snapshot, err)
		}
		for _, h := range sv.search(q[0], fetch) {
			ranking = append(ranking, spider.Scored{ID: h.NodeID, Score: h.Score})
		}
		return ranking, nil
	}
	hits, err := d.Vectors.Search(ctx, string(repo), q[0], fetch)
	if err != nil {
		return nil, fmt.Errorf("localize %s: %w", repo, err)
	}
	for _, h := range hits {
		ranking = append(ranking, spider.Scored{ID: h.NodeID, Score: h.Score})
	}
	return ranking, nil
}

// withoutTests is the first n of ranking, without test functions unless
// keep.
func withoutTests(ranking []spider.Scored, keep bool, n int) []spider.Scored {
	if !keep {
		ranking = slices.DeleteFunc(ranking, func(s spider.Scored) bool { return codegraph.IsTestID(s.ID) })
	}
	return ranking[:min(n, len(ranking))]
}

// joinWarnings joins one-line warnings with "; ", skipping empty ones.
func joinWarnings(ws ...string) string {
	var out []string
	for _, w := range ws {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, "; ")
}

// Errors of bad queries, for callers that must not retry them.
var (
	ErrNotIndexed = errors.New("not indexed")
	// ErrNoGraph: the repository is indexed, but no file of it is in a
	// language the code graph parses; there is nothing to rank.
	ErrNoGraph  = errors.New("nothing to rank")
	ErrBadQuery = errors.New("bad query")
)

// Code returns the code of the given function ids at the repository's
// published graph commit or a snapshot's commit (ids that are not functions of it are left out).
// The decoded graph is shared with Retrieve and other queries of this
// process (see graphCacheSize).
func Code(ctx context.Context, d Deps, repo schema.RepoName, commit string, ids []string) (map[string]string, error) {
	fs, err := Functions(ctx, d, repo, commit, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(fs))
	for id, f := range fs {
		out[id] = f.Code
	}
	return out, nil
}

// FunctionAt is a function as the graph of a commit has it: its first
// line (1-based) and its code.
type FunctionAt struct {
	Line int
	Code string
}

// Functions is Code with each function's first line.
func Functions(ctx context.Context, d Deps, repo schema.RepoName, commit string, ids []string) (map[string]FunctionAt, error) {
	lg, err := graphAt(ctx, d, repo, commit)
	if err != nil {
		return nil, err
	}
	out := make(map[string]FunctionAt, len(ids))
	for _, id := range ids {
		if c, ok := lg.code[id]; ok {
			out[id] = FunctionAt{Line: lg.lines[id], Code: c}
		}
	}
	return out, nil
}

// graphAt is the decoded graph of repo at commit: the published graph, or
// the snapshot of commit.
func graphAt(ctx context.Context, d Deps, repo schema.RepoName, commit string) (*loadedGraph, error) {
	m, err := manifest.Read(ctx, d.Bucket, repo)
	if err != nil {
		return nil, err
	}
	var graph schema.GraphInfo
	if m != nil && m.Graph != nil && m.Graph.Commit == commit {
		graph = *m.Graph
	} else {
		// Not the head: the snapshot of that commit, if one is built.
		snap, err := ReadSnapshot(ctx, d.Bucket, repo, commit)
		if err != nil {
			return nil, fmt.Errorf("code of %s@%s: %w", repo, commit, err)
		}
		if snap == nil {
			return nil, fmt.Errorf("code of %s@%s: neither the published graph nor a snapshot is at that commit: %w", repo, commit, ErrNotIndexed)
		}
		graph = snap.Graph
	}
	lg, err := getGraph(ctx, d.Bucket, graph)
	if err != nil {
		return nil, fmt.Errorf("code of %s@%s: %w", repo, commit, err)
	}
	return lg, nil
}

// Finish turns a retrieval and the selections into the result list.
func Finish(r *Retrieval, selected map[string]spider.Selection) ([]spider.Item, error) {
	ranking := RankingOf(r.Method)
	if r.Expansion == nil {
		items := make([]spider.Item, len(r.TopK))
		for i, s := range r.TopK {
			items[i] = spider.Item{ID: s.ID, Score: s.Score, Rank: i + 1, Reason: spider.ReasonSemantic, Ranking: ranking, Sources: r.Sources[s.ID]}
		}
		return items, nil
	}
	asm, err := r.Expansion.Assemble(selected)
	if err != nil {
		return nil, err
	}
	for i := range asm.Items {
		asm.Items[i].Ranking, asm.Items[i].Sources = ranking, r.Sources[asm.Items[i].ID]
	}
	return asm.Items, nil
}

// RankingOf names the ranking a method's items are ranked by: "BM25" (sr,
// spisr), "dense" (der, spider), "fused" (hybrid: BM25 and memory).
func RankingOf(method string) string {
	switch method {
	case MethodSR, MethodSpISR:
		return "BM25"
	case MethodDER, MethodSpIDER:
		return "dense"
	case MethodHybrid:
		return "fused"
	}
	return ""
}

// ExpansionCosts are the edges SpIDER, SpISR and hybrid expand along
// (undirected) and what one hop along each costs against the depth d (4 by
// default): a containment hop 1, a call or an inheritance 3, so a center
// reaches what it calls or inherits directly, and that code's siblings, but
// no chain of calls. Measured against contains alone on swe-dev
// (docs/results.md).
var ExpansionCosts = spider.EdgeCosts{codegraph.EdgeContains: 1, codegraph.EdgeInvokes: 3, codegraph.EdgeInherits: 3}

// RecordedKinds are the edge kinds a converted graph keeps apart, walked or
// not, for the learned ranker's distances by edge kind (rank.Features).
var RecordedKinds = []string{codegraph.EdgeInvokes, codegraph.EdgeInherits, codegraph.EdgeImports}

// SpiderGraph converts a stored graph for expansion (ExpansionCosts), keeps
// the RecordedKinds' edges apart, and indexes code by id.
func SpiderGraph(g *codegraph.Graph) (*spider.Graph, map[string]string, error) {
	nodes := make([]spider.Node, len(g.Nodes))
	code := make(map[string]string, len(g.Nodes))
	for i, n := range g.Nodes {
		nodes[i] = spider.Node{ID: n.ID, Type: n.Type}
		if n.Type == codegraph.TypeFunction {
			code[n.ID] = n.Code
		}
	}
	edges := make([]spider.Edge, 0, len(g.Edges))
	for _, e := range g.Edges {
		if _, ok := ExpansionCosts[e.Type]; ok || slices.Contains(RecordedKinds, e.Type) {
			edges = append(edges, spider.Edge{Src: e.Src, Dst: e.Dst, Type: e.Type})
		}
	}
	sg, err := spider.NewGraphKinds(nodes, edges, ExpansionCosts, RecordedKinds)
	return sg, code, err
}
