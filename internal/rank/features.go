// Package rank is the learned ranker: for one query it gathers the
// candidates of every retriever the hybrid method runs (the code's BM25,
// episodic memory, hotspots, the embedder, their fusion and its graph
// expansion), describes each by the features of the table below, and orders
// them by a gradient-boosted tree model (LambdaMART) trained on the
// triplets locus mines from history.
//
// The same Collect serves training (internal/fit, a mined query at its
// commit's parent) and queries (internal/search, method "learned"), so a
// model sees at query time exactly the features it was trained on.
package rank

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
)

// FeatureVersion numbers the feature table: a model records the version it
// was trained with, and a model of another version is refused (its trees
// would read the wrong columns).
//
// Changelog:
//
//	1: the first table (retriever scores and ranks, file BM25, memory
//	   history, graph distance to the expansion's centers, name, path and
//	   code matches, size, nesting, test-ness, query length).
//	2: distances to the fused ranking's first hits by edge kind (contains,
//	   invokes, inherits, imports, co-change), BM25 over names and paths
//	   alone, stack-trace frames the issue quotes.
const FeatureVersion = 2

// Feature is one column of the feature table.
type Feature struct {
	Name string
	Doc  string
}

// Missing ranks and distances: a candidate absent from a ranking, or not
// reached by the expansion, gets these (tree models split on them like any
// value).
const (
	NoRank = 1000
	NoHops = 99
	NoAge  = 100000 // days
)

// Features is the table, in column order. docs/ranking.md prints it.
var Features = []Feature{
	{"bm25", "the code's BM25 score over function documents, divided by the query's best"},
	{"bm25_rank", "1-based rank in the code's BM25 ranking (1000 when absent; every rank below likewise)"},
	{"bm25_raw", "the code's BM25 score as is"},
	{"memory", "episodic memory's vote (past commits like the query that changed it), divided by the query's best"},
	{"memory_rank", "rank in episodic memory's ranking"},
	{"hotspot", "hotspot score (how often and how recently commits changed it) among the BM25 hits, divided by the best"},
	{"hotspot_rank", "rank in the hotspot ranking"},
	{"dense", "the embedder's cosine, divided by the query's best (0 without an embedder in the fusion)"},
	{"dense_rank", "rank in the embedder's ranking"},
	{"fused", "the hybrid fusion's score, divided by the query's best"},
	{"fused_rank", "rank in the hybrid fusion"},
	{"file_bm25", "the best BM25 (divided by the query's best) of any function of its file"},
	{"file_rank", "rank of its file when files are ordered by their best function's BM25"},
	{"file_hits", "how many functions of its file are among the BM25 candidates"},
	{"graph_hops", "hop cost from the nearest center of the fused ranking's graph expansion (contains 1, invokes and inherits 3, co-change 2; 0: a center; 99: not reached)"},
	{"graph_center_rank", "rank of that nearest center (99: not reached)"},
	{"graph_centers", "how many centers reach it"},
	{"graph_contains", "contains-tree hops (directories, file, classes) to the nearest of the fused ranking's first 5 (0: one of them; 2: a sibling in its class or file)"},
	{"graph_invokes", "call hops, either way, from the nearest of the fused ranking's first 5 (1: calls or is called by one; 99: not within 2)"},
	{"graph_inherits", "inheritance hops between its enclosing classes and those of the fused ranking's first 5 (0: a class one of them is in; 99: none within 2, or no class)"},
	{"graph_imports", "import hops between its file (or itself, or its classes) and the files, classes or functions of the fused ranking's first 5 (0: the file of one; 99: not within 2)"},
	{"graph_cochange", "co-change hops (pairs of functions memory saw changed together before the base) from the nearest of the fused ranking's first 5 (99: not within 2)"},
	{"memory_commits", "how many commits of memory (before the query's base) changed it"},
	{"memory_age_days", "days between the newest of those commits and the base (100000: never changed)"},
	{"name_hits", "tokens of its own name (camelCase and snake_case parts, whole name) that the query mentions"},
	{"name_frac", "name_hits over its own name's tokens"},
	{"name_exact", "1 when the query contains its own name as a whole identifier"},
	{"class_hits", "tokens of its enclosing class or module names that the query mentions"},
	{"path_hits", "tokens of its file's path (directories and stem) that the query mentions"},
	{"path_exact", "1 when the query names its file (its base name, or a path ending in it, as in a stack trace)"},
	{"name_bm25", "BM25 of the query over a document of its name, class and file path alone (the candidates are the corpus), divided by the best"},
	{"name_bm25_rank", "rank among the candidates by name_bm25 (1000 when it shares no token)"},
	{"stack_file", "1 when a stack-trace frame the issue quotes is in its file (Python, JVM, JavaScript, Go, Rust and gdb traces)"},
	{"stack_func", "1 when a frame names it: its own name (and its class when the frame names one) in its file, or in a frame naming no file"},
	{"stack_depth", "that frame's place from the trace's innermost (1: where it was raised or panicked; 99: no frame names it)"},
	{"stack_frames", "frames the issue quotes"},
	{"code_hits", "distinct identifier tokens its code shares with the query (the heuristic selector's score)"},
	{"code_frac", "code_hits over the query's distinct tokens"},
	{"lines", "lines of code"},
	{"depth", "nesting: dots in its qualified name (a method of a class is 1)"},
	{"test", "1 when it is test code by its path"},
	{"query_tokens", "distinct identifier tokens of the query"},
}

// FeatureNames lists the names of Features in column order.
func FeatureNames() []string {
	out := make([]string, len(Features))
	for i, f := range Features {
		out[i] = f.Name
	}
	return out
}

// Column indexes, in the order of Features.
const (
	fBM25 = iota
	fBM25Rank
	fBM25Raw
	fMemory
	fMemoryRank
	fHotspot
	fHotspotRank
	fDense
	fDenseRank
	fFused
	fFusedRank
	fFileBM25
	fFileRank
	fFileHits
	fGraphHops
	fGraphCenterRank
	fGraphCenters
	fGraphContains
	fGraphInvokes
	fGraphInherits
	fGraphImports
	fGraphCoChange
	fMemoryCommits
	fMemoryAge
	fNameHits
	fNameFrac
	fNameExact
	fClassHits
	fPathHits
	fPathExact
	fNameBM25
	fNameBM25Rank
	fStackFile
	fStackFunc
	fStackDepth
	fStackFrames
	fCodeHits
	fCodeFrac
	fLines
	fDepth
	fTest
	fQueryTokens
	numFeatures
)

// Inputs are what the query path computed for one query.
type Inputs struct {
	Query string
	// The retrievers' rankings, best first: the code's BM25 over function
	// documents, episodic memory, hotspots, the embedder's (nil: none), and
	// the hybrid fusion of them.
	Code, Memory, Hotspots, Dense, Fused []spider.Scored
	// Expansion is the fused ranking expanded along the code graph (nil:
	// none).
	Expansion *spider.Expansion
	// Graph is the code graph, with its invokes, inherits and imports
	// edges recorded (spider.NewGraphKinds; nil: no graph).
	Graph *spider.Graph
	// CoChange lists the functions memory saw changed together with id
	// before the base (nil: no memory).
	CoChange func(id string) []string
	// History is memory's record of each function (nil: no memory).
	History map[string]memory.Changes
	// Source is a function's code ("" unknown).
	Source func(id string) string
	// Keep says whether a function may be a candidate (nil: every one);
	// the query path leaves out tests unless asked, and functions the
	// graph at the base lacks.
	Keep func(id string) bool
}

// Options bound the candidate set; zero fields take the defaults written
// next to them.
type Options struct {
	// Code, Memory, Hotspots, Dense and Fused are how many of each ranking's
	// first entries become candidates; default 100, 50, 50, 50 and 100.
	Code, Memory, Hotspots, Dense, Fused int
	// Hits is how many of the fused ranking's first entries the distances
	// by edge kind are measured from; default 5 (the expansion's centers).
	Hits int
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Code, 100)
	def(&o.Memory, 50)
	def(&o.Hotspots, 50)
	def(&o.Dense, 50)
	def(&o.Fused, 100)
	def(&o.Hits, 5)
	return o
}

// Candidate is one function with its feature row.
type Candidate struct {
	ID string
	X  []float64
}

type ranked struct {
	rank  map[string]int
	score map[string]float64
	top   float64
}

func rankedOf(s []spider.Scored) ranked {
	r := ranked{rank: make(map[string]int, len(s)), score: make(map[string]float64, len(s))}
	if len(s) > 0 && s[0].Score > 0 {
		r.top = s[0].Score
	}
	for i, x := range s {
		if _, dup := r.rank[x.ID]; !dup {
			r.rank[x.ID], r.score[x.ID] = i+1, x.Score
		}
	}
	return r
}

func (r ranked) put(x []float64, id string, norm, rank int) {
	x[rank] = NoRank
	if k, ok := r.rank[id]; ok {
		x[rank] = float64(k)
		if r.top > 0 {
			x[norm] = r.score[id] / r.top
		}
	}
}

// Collect gathers the candidates of in and computes their features. The
// order is deterministic: each ranking's first entries in turn, then the
// expansion's candidates, each id once. An error names a feature that is
// not a finite number (a broken retriever), rather than rank by it.
func Collect(in Inputs, o Options) ([]Candidate, error) {
	o = o.withDefaults()
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] || in.Keep != nil && !in.Keep(id) {
			return
		}
		seen[id] = true
		ids = append(ids, id)
	}
	for _, l := range []struct {
		s []spider.Scored
		n int
	}{{in.Code, o.Code}, {in.Memory, o.Memory}, {in.Hotspots, o.Hotspots}, {in.Dense, o.Dense}, {in.Fused, o.Fused}} {
		for _, s := range l.s[:min(l.n, len(l.s))] {
			add(s.ID)
		}
	}
	type reach struct{ hops, center, centers int }
	graph := map[string]reach{}
	if in.Expansion != nil {
		touch := func(id string, hops, center int) {
			r, ok := graph[id]
			if !ok || hops < r.hops {
				r.hops, r.center = hops, center
			}
			r.centers++
			graph[id] = r
		}
		for _, c := range in.Expansion.Centers {
			touch(c.ID, 0, c.Rank)
			add(c.ID)
			for _, cand := range c.Candidates {
				touch(cand.ID, cand.Hops, c.Rank)
				add(cand.ID)
			}
		}
	}

	code, mem, hot, dense, fused := rankedOf(in.Code), rankedOf(in.Memory), rankedOf(in.Hotspots), rankedOf(in.Dense), rankedOf(in.Fused)
	// Files by their best function's BM25.
	fileBest, fileHits := map[string]float64{}, map[string]int{}
	var fileOrder []string
	for _, s := range in.Code[:min(o.Code, len(in.Code))] {
		f := fileOf(s.ID)
		if _, ok := fileBest[f]; !ok {
			fileBest[f] = s.Score
			fileOrder = append(fileOrder, f)
		}
		fileHits[f]++
	}
	fileRank := make(map[string]int, len(fileOrder))
	for i, f := range fileOrder {
		fileRank[f] = i + 1
	}
	qTokens := llm.IssueTokens(in.Query)
	lowerQuery := strings.ToLower(in.Query)
	kinds, err := kindHops(in, o.Hits)
	if err != nil {
		return nil, err
	}
	nameScore, nameRank, err := nameBM25(in.Query, ids)
	if err != nil {
		return nil, err
	}
	frames := StackFrames(in.Query)

	out := make([]Candidate, 0, len(ids))
	for _, id := range ids {
		x := make([]float64, numFeatures)
		code.put(x, id, fBM25, fBM25Rank)
		x[fBM25Raw] = code.score[id]
		mem.put(x, id, fMemory, fMemoryRank)
		hot.put(x, id, fHotspot, fHotspotRank)
		dense.put(x, id, fDense, fDenseRank)
		fused.put(x, id, fFused, fFusedRank)

		file := fileOf(id)
		x[fFileRank] = NoRank
		if k, ok := fileRank[file]; ok {
			x[fFileRank] = float64(k)
			if code.top > 0 {
				x[fFileBM25] = fileBest[file] / code.top
			}
			x[fFileHits] = float64(fileHits[file])
		}
		x[fGraphHops], x[fGraphCenterRank] = NoHops, NoHops
		if r, ok := graph[id]; ok {
			x[fGraphHops], x[fGraphCenterRank], x[fGraphCenters] = float64(r.hops), float64(r.center), float64(r.centers)
		}
		kinds.put(x, id)
		x[fMemoryAge] = NoAge
		if h, ok := in.History[id]; ok {
			x[fMemoryCommits], x[fMemoryAge] = float64(h.Commits), h.LastAgeDays
		}

		name := llm.OwnName(id)
		nameTokens := llm.IssueTokens(name)
		x[fNameHits] = float64(hits(nameTokens, qTokens))
		if len(nameTokens) > 0 {
			x[fNameFrac] = x[fNameHits] / float64(len(nameTokens))
		}
		if len(name) >= 4 && containsIdent(in.Query, name) {
			x[fNameExact] = 1
		}
		x[fClassHits] = float64(hits(llm.IssueTokens(classOf(id)), qTokens))
		x[fPathHits] = float64(hits(llm.IssueTokens(strings.TrimSuffix(file, path.Ext(file))), qTokens))
		if base := path.Base(file); strings.Contains(base, ".") && strings.Contains(lowerQuery, strings.ToLower(base)) {
			x[fPathExact] = 1
		}
		x[fNameBM25], x[fNameBM25Rank] = nameScore[id], NoRank
		if r, ok := nameRank[id]; ok {
			x[fNameBM25Rank] = float64(r)
		}
		x[fStackDepth], x[fStackFrames] = NoHops, float64(len(frames))
		if fileHit, funcHit, depth := frameMatch(frames, id); fileHit || funcHit {
			x[fStackFile], x[fStackFunc] = b2f(fileHit), b2f(funcHit)
			if funcHit {
				x[fStackDepth] = float64(depth)
			}
		}
		if in.Source != nil {
			if src := in.Source(id); src != "" {
				x[fCodeHits] = float64(hits(llm.CodeTokens(src), qTokens))
				x[fLines] = float64(strings.Count(src, "\n") + 1)
			}
		}
		if len(qTokens) > 0 {
			x[fCodeFrac] = x[fCodeHits] / float64(len(qTokens))
		}
		x[fDepth] = float64(strings.Count(qualifiedOf(id), "."))
		if codegraph.IsTestID(id) {
			x[fTest] = 1
		}
		x[fQueryTokens] = float64(len(qTokens))
		for j, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("rank: feature %s of %s is %v (a retriever's score is not a number)", Features[j].Name, id, v)
			}
		}
		out = append(out, Candidate{ID: id, X: x})
	}
	return out, nil
}

// hits counts the tokens of a that b holds.
func hits(a, b map[string]bool) int {
	n := 0
	for t := range a {
		if b[t] {
			n++
		}
	}
	return n
}

// fileOf, qualifiedOf and classOf split a graph id "dir/f.py:C.m".
func fileOf(id string) string {
	f, _ := codegraph.SplitID(id)
	return f
}

func qualifiedOf(id string) string {
	_, q := codegraph.SplitID(id)
	return q
}

func classOf(id string) string {
	q := qualifiedOf(id)
	if i := strings.LastIndexByte(q, '.'); i >= 0 {
		return q[:i]
	}
	return ""
}

// containsIdent reports whether text holds name as a whole identifier (not
// inside a longer one).
func containsIdent(text, name string) bool {
	isIdent := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isIdent(text[j-1])) && (end == len(text) || !isIdent(text[end])) {
			return true
		}
		i = j + 1
	}
}
