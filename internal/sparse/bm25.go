// Package sparse is locus's BM25 index over any set of text documents, with a code-aware tokenizer.
package sparse

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Default BM25 parameters, the usual Lucene / Elasticsearch values.
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// Config holds the BM25 parameters. Fields are used exactly as given, so
// start from DefaultConfig and change what you need; Build rejects the zero
// Config rather than silently scoring with k1 = 0.
type Config struct {
	// K1 is the term-frequency saturation, > 0. Default 1.2 (DefaultK1):
	// larger values let repeated terms keep adding score for longer.
	K1 float64
	// B is the document-length normalisation, in [0, 1]. Default 0.75
	// (DefaultB); 0 disables it, 1 normalises fully by length.
	B float64
}

// DefaultConfig returns k1 = 1.2, b = 0.75.
func DefaultConfig() Config { return Config{K1: DefaultK1, B: DefaultB} }

// Validate reports whether the parameters are usable.
func (c Config) Validate() error {
	if !(c.K1 > 0) || math.IsInf(c.K1, 0) {
		return fmt.Errorf("bm25 k1 = %v: must be a finite number > 0 (default %v)", c.K1, DefaultK1)
	}
	if !(c.B >= 0 && c.B <= 1) {
		return fmt.Errorf("bm25 b = %v: must be in [0, 1] (default %v)", c.B, DefaultB)
	}
	return nil
}

// Hit is one search result.
type Hit struct {
	DocID string
	Score float64
}

// Builder collects documents for an Index. It is not safe for concurrent use;
// Build does not change it, so more documents may be added and Build called again.
type Builder struct {
	cfg     Config
	ids     map[string]struct{}
	docs    []builderDoc
	termIDs map[string]uint32
	terms   []string
	df      []uint32

	// scratch, reused across Add calls
	toks []string
	tf   map[uint32]uint32
}

type builderDoc struct {
	id    string
	len   uint32
	terms []termFreq // sorted by term id
}

type termFreq struct{ term, tf uint32 }

// NewBuilder starts an index with the given BM25 parameters (see DefaultConfig).
func NewBuilder(cfg Config) *Builder {
	return &Builder{
		cfg:     cfg,
		ids:     make(map[string]struct{}),
		termIDs: make(map[string]uint32),
		tf:      make(map[uint32]uint32),
	}
}

// Len is the number of documents added so far.
func (b *Builder) Len() int { return len(b.docs) }

// Add tokenizes text (see Tokenize) and adds it as document docID. Doc IDs
// must be non-empty and unique. A document with no tokens is still counted:
// it takes part in N and the average length, but never matches.
func (b *Builder) Add(docID, text string) error {
	if docID == "" {
		return errors.New("sparse: add: empty doc id")
	}
	if _, dup := b.ids[docID]; dup {
		return fmt.Errorf("sparse: add %q: duplicate doc id", docID)
	}
	if len(b.docs) >= math.MaxUint32-1 {
		return fmt.Errorf("sparse: add %q: more than %d documents", docID, math.MaxUint32-1)
	}
	b.toks = AppendTokens(b.toks[:0], text)
	if uint64(len(b.toks)) > math.MaxUint32 {
		return fmt.Errorf("sparse: add %q: %d tokens, more than %d", docID, len(b.toks), uint32(math.MaxUint32))
	}
	clear(b.tf)
	for _, t := range b.toks {
		id, ok := b.termIDs[t]
		if !ok {
			// Clone so the map does not pin the whole document text.
			t = strings.Clone(t)
			id = uint32(len(b.terms))
			b.termIDs[t] = id
			b.terms = append(b.terms, t)
			b.df = append(b.df, 0)
		}
		b.tf[id]++
	}
	tfs := make([]termFreq, 0, len(b.tf))
	for id, n := range b.tf {
		tfs = append(tfs, termFreq{id, n})
		b.df[id]++
	}
	slices.SortFunc(tfs, func(x, y termFreq) int { return cmp.Compare(x.term, y.term) })
	clear(b.toks) // drop references into text
	b.ids[docID] = struct{}{}
	b.docs = append(b.docs, builderDoc{id: docID, len: uint32(len(b.toks)), terms: tfs})
	return nil
}

// Build returns the immutable index of every document added so far.
func (b *Builder) Build() (*Index, error) {
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sparse: build: %w", err)
	}
	// Doc ordinals follow doc ID order, so comparing ordinals breaks score
	// ties by doc ID; term ids follow term order, so the dictionary can be
	// searched by bisection after Load without building a map.
	docOrder := make([]int, len(b.docs))
	for i := range docOrder {
		docOrder[i] = i
	}
	slices.SortFunc(docOrder, func(x, y int) int { return strings.Compare(b.docs[x].id, b.docs[y].id) })
	termOrder := make([]uint32, len(b.terms))
	for i := range termOrder {
		termOrder[i] = uint32(i)
	}
	slices.SortFunc(termOrder, func(x, y uint32) int { return strings.Compare(b.terms[x], b.terms[y]) })
	newTerm := make([]uint32, len(b.terms))
	for n, old := range termOrder {
		newTerm[old] = uint32(n)
	}

	ix := &Index{cfg: b.cfg, nDocs: len(b.docs)}
	var docData strings.Builder
	ix.docOff = make([]uint32, len(b.docs)+1)
	ix.docLen = make([]uint32, len(b.docs))
	for n, i := range docOrder {
		d := &b.docs[i]
		docData.WriteString(d.id)
		if uint64(docData.Len()) > math.MaxUint32 {
			return nil, errors.New("sparse: build: doc ids exceed 4 GiB")
		}
		ix.docOff[n+1] = uint32(docData.Len())
		ix.docLen[n] = d.len
		ix.totalLen += uint64(d.len)
	}
	ix.docData = docData.String()

	var termData strings.Builder
	ix.termOff = make([]uint32, len(b.terms)+1)
	ix.df = make([]uint32, len(b.terms))
	for n, old := range termOrder {
		termData.WriteString(b.terms[old])
		if uint64(termData.Len()) > math.MaxUint32 {
			return nil, errors.New("sparse: build: terms exceed 4 GiB")
		}
		ix.termOff[n+1] = uint32(termData.Len())
		ix.df[n] = b.df[old]
	}
	ix.termData = termData.String()

	// Postings, grouped by term and in doc order within a term: walking docs
	// in ordinal order and appending to each term's slot keeps them sorted.
	start := make([]uint64, len(b.terms)+1)
	for t, df := range ix.df {
		start[t+1] = start[t] + uint64(df)
	}
	postDoc := make([]uint32, start[len(b.terms)])
	postTF := make([]uint32, len(postDoc))
	next := slices.Clone(start[:len(b.terms)])
	for n, i := range docOrder {
		for _, tf := range b.docs[i].terms {
			t := newTerm[tf.term]
			postDoc[next[t]], postTF[next[t]] = uint32(n), tf.tf
			next[t]++
		}
	}
	ix.postOff = make([]uint32, len(b.terms)+1)
	var post []byte
	for t := range ix.df {
		post = appendPostings(post, postDoc[start[t]:start[t+1]], postTF[start[t]:start[t+1]])
		if uint64(len(post)) > math.MaxUint32 {
			return nil, errors.New("sparse: build: postings exceed 4 GiB")
		}
		ix.postOff[t+1] = uint32(len(post))
	}
	ix.postings = post
	ix.derive()
	return ix, nil
}

// appendPostings encodes one term's postings: per document one uvarint
// delta<<1 | (tf == 1), followed by a uvarint tf when tf != 1. Deltas are
// from the previous doc ordinal (the first from 0). Most postings have tf 1
// and a small delta, so they take one byte.
func appendPostings(dst []byte, docs, tfs []uint32) []byte {
	prev := uint32(0)
	for i, d := range docs {
		v := uint64(d-prev) << 1
		if tfs[i] == 1 {
			v |= 1
		}
		dst = binary.AppendUvarint(dst, v)
		if tfs[i] != 1 {
			dst = binary.AppendUvarint(dst, uint64(tfs[i]))
		}
		prev = d
	}
	return dst
}

// Index is an immutable BM25 index; it is safe for concurrent use.
//
// Documents are numbered by doc ID order and terms by term order; both
// dictionaries are sorted strings with offset tables, searched by bisection.
// The same layout is what Write stores, so Load only checks and copies tables.
type Index struct {
	cfg      Config
	nDocs    int
	totalLen uint64

	docData string   // doc IDs, concatenated in order
	docOff  []uint32 // nDocs+1 offsets into docData
	docLen  []uint32 // tokens per doc

	termData string   // terms, concatenated in order
	termOff  []uint32 // nTerms+1 offsets into termData
	df       []uint32 // docs per term
	postOff  []uint32 // nTerms+1 offsets into postings
	postings []byte   // see appendPostings

	// derived from the above by derive
	avgdl float64
	idf   []float64 // per term
	norm  []float64 // per doc: k1 * (1 - b + b*len/avgdl)
	inv1  []float64 // per doc: 1 / (1 + norm), the tf = 1 factor

	scratch sync.Pool // *scratch
}

type scratch struct {
	acc     []float64 // per doc; zero outside a call
	touched []uint32
	heap    []heapEntry
	toks    []string
	terms   []queryTerm
}

// derive computes IDF and length norms. IDF is Lucene's:
// ln(1 + (N - df + 0.5) / (df + 0.5)), always > 0, so every matching
// document scores above zero.
func (ix *Index) derive() {
	n := float64(ix.nDocs)
	idf := func(df uint32) float64 {
		d := float64(df)
		return math.Log(1 + (n-d+0.5)/(d+0.5))
	}
	// Most terms are rare, so a table over small df values saves nearly
	// every logarithm when loading a large dictionary.
	var small [256]float64
	for df := 1; df < len(small); df++ {
		small[df] = idf(uint32(df))
	}
	ix.idf = make([]float64, len(ix.df))
	for t, df := range ix.df {
		if int(df) < len(small) {
			ix.idf[t] = small[df]
		} else {
			ix.idf[t] = idf(df)
		}
	}
	ix.setNorms()
}

func (ix *Index) setNorms() {
	k1, b := ix.cfg.K1, ix.cfg.B
	ix.avgdl = 0
	if ix.nDocs > 0 {
		ix.avgdl = float64(ix.totalLen) / float64(ix.nDocs)
	}
	ix.norm = make([]float64, ix.nDocs)
	ix.inv1 = make([]float64, ix.nDocs)
	for d, l := range ix.docLen {
		rel := 1.0
		if ix.avgdl > 0 {
			rel = float64(l) / ix.avgdl
		}
		ix.norm[d] = k1 * (1 - b + b*rel)
		ix.inv1[d] = 1 / (1 + ix.norm[d])
	}
}

// Config returns the BM25 parameters the index scores with.
func (ix *Index) Config() Config { return ix.cfg }

// WithConfig returns a copy of the index that scores with other BM25
// parameters; postings are shared, only per-document norms are recomputed.
func (ix *Index) WithConfig(cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sparse: %w", err)
	}
	c := &Index{
		cfg: cfg, nDocs: ix.nDocs, totalLen: ix.totalLen,
		docData: ix.docData, docOff: ix.docOff, docLen: ix.docLen,
		termData: ix.termData, termOff: ix.termOff, df: ix.df,
		postOff: ix.postOff, postings: ix.postings, idf: ix.idf,
	}
	c.setNorms()
	return c, nil
}

// Len is the number of documents.
func (ix *Index) Len() int { return ix.nDocs }

// NumTerms is the number of distinct terms.
func (ix *Index) NumTerms() int { return len(ix.df) }

// AvgDocLen is the mean document length in tokens.
func (ix *Index) AvgDocLen() float64 { return ix.avgdl }

// DocFreq is the number of documents that contain term (already a token, see Tokenize).
func (ix *Index) DocFreq(term string) int {
	t, ok := ix.lookupTerm(term)
	if !ok {
		return 0
	}
	return int(ix.df[t])
}

// Contains reports whether docID is in the index.
func (ix *Index) Contains(docID string) bool {
	_, ok := ix.lookupDoc(docID)
	return ok
}

func (ix *Index) docID(d int) string { return ix.docData[ix.docOff[d]:ix.docOff[d+1]] }

func (ix *Index) term(t int) string { return ix.termData[ix.termOff[t]:ix.termOff[t+1]] }

func (ix *Index) lookupDoc(id string) (int, bool) {
	return bisect(ix.nDocs, id, ix.docID)
}

func (ix *Index) lookupTerm(term string) (int, bool) {
	return bisect(len(ix.df), term, ix.term)
}

func bisect(n int, key string, at func(int) string) (int, bool) {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if at(m) < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n && at(lo) == key
}

type queryTerm struct {
	id     int
	weight float64 // idf * query tf * (k1 + 1)
}

// queryTerms tokenizes the query into known terms in term order. A token
// repeated in the query counts that many times, as duplicate clauses of a
// Lucene BooleanQuery do.
func (ix *Index) queryTerms(s *scratch, query string) []queryTerm {
	s.toks = AppendTokens(s.toks[:0], query)
	slices.Sort(s.toks)
	terms := s.terms[:0]
	for i := 0; i < len(s.toks); {
		j := i + 1
		for j < len(s.toks) && s.toks[j] == s.toks[i] {
			j++
		}
		if t, ok := ix.lookupTerm(s.toks[i]); ok {
			terms = append(terms, queryTerm{id: t, weight: ix.idf[t] * float64(j-i) * (ix.cfg.K1 + 1)})
		}
		i = j
	}
	clear(s.toks)
	s.terms = terms
	return terms
}

func (ix *Index) getScratch() *scratch {
	if s, ok := ix.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{acc: make([]float64, ix.nDocs)}
}

// accumulate adds every query term's BM25 contribution to s.acc, term by
// term in term order, and lists the documents it touched. Score and Search
// both sum here, so they agree to the last bit.
func (ix *Index) accumulate(s *scratch, terms []queryTerm) {
	acc, norm, inv1 := s.acc, ix.norm, ix.inv1
	touched := s.touched[:0]
	for _, qt := range terms {
		p := ix.postings[ix.postOff[qt.id]:ix.postOff[qt.id+1]]
		w := qt.weight
		doc := uint64(0)
		// A checksummed file cannot hold bad postings unless it was crafted;
		// decoding stops at the first inconsistency rather than panicking.
		i := 0
		for range ix.df[qt.id] {
			if i >= len(p) {
				break
			}
			v := uint64(p[i])
			i++
			if v >= 0x80 {
				x, n := binary.Uvarint(p[i-1:])
				if n <= 0 {
					break
				}
				v, i = x, i-1+n
			}
			doc += v >> 1
			if doc >= uint64(len(acc)) {
				break
			}
			// Most postings have tf 1; a multiplication by the per-doc
			// reciprocal spares the division there.
			var c float64
			if v&1 != 0 {
				c = w * inv1[doc]
			} else {
				x, n := binary.Uvarint(p[i:])
				if n <= 0 || x == 0 {
					break
				}
				i += n
				f := float64(x)
				c = w * f / (f + norm[doc])
			}
			if acc[doc] == 0 {
				touched = append(touched, uint32(doc))
			}
			acc[doc] += c
		}
	}
	s.touched = touched
}

// release zeroes what accumulate touched and returns s to the pool.
func (ix *Index) release(s *scratch) {
	for _, d := range s.touched {
		s.acc[d] = 0
	}
	s.touched = s.touched[:0]
	ix.scratch.Put(s)
}

// Search returns the k best documents for query: those containing at least one
// query token, by BM25 score descending and then doc ID ascending (byte
// order). Fewer than k come back when fewer match; k <= 0, an empty query or
// one with no known token returns nil.
//
// BM25 (Lucene's, with the classic (k1+1) numerator factor):
//
//	score(d) = Σ_t qtf(t) · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))
//	idf(t)   = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// with |d| and avgdl counted in tokens.
func (ix *Index) Search(query string, k int) []Hit {
	if k <= 0 || ix.nDocs == 0 {
		return nil
	}
	s := ix.getScratch()
	defer ix.release(s)
	terms := ix.queryTerms(s, query)
	if len(terms) == 0 {
		return nil
	}
	ix.accumulate(s, terms)
	h := s.heap[:0]
	for _, d := range s.touched {
		e := heapEntry{score: s.acc[d], doc: d}
		if len(h) < k {
			h = append(h, e)
			siftUp(h, len(h)-1)
		} else if worse(h[0], e) {
			h[0] = e
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, func(x, y heapEntry) int {
		if worse(x, y) {
			return 1
		}
		if worse(y, x) {
			return -1
		}
		return 0
	})
	hits := make([]Hit, len(h))
	for i, e := range h {
		hits[i] = Hit{DocID: ix.docID(int(e.doc)), Score: e.score}
	}
	s.heap = h[:0]
	return hits
}

// Score returns the BM25 score of each of docIDs for query, in the order
// given: exactly the value Search would report, and 0 for a document with
// none of the query's tokens. An ID not in the index is an error.
func (ix *Index) Score(query string, docIDs []string) ([]float64, error) {
	ords := make([]int, len(docIDs))
	var missing []string
	for i, id := range docIDs {
		d, ok := ix.lookupDoc(id)
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", id))
			continue
		}
		ords[i] = d
	}
	if len(missing) > 0 {
		if len(missing) > 5 {
			missing = append(missing[:5], fmt.Sprintf("and %d more", len(missing)-5))
		}
		return nil, fmt.Errorf("sparse: score: doc ids not in index: %s", strings.Join(missing, ", "))
	}
	scores := make([]float64, len(docIDs))
	if len(docIDs) == 0 {
		return scores, nil
	}
	s := ix.getScratch()
	defer ix.release(s)
	terms := ix.queryTerms(s, query)
	if len(terms) == 0 {
		return scores, nil
	}
	ix.accumulate(s, terms)
	for i, d := range ords {
		scores[i] = s.acc[d]
	}
	return scores, nil
}

// heapEntry orders a min-heap on (score, then reverse doc), so the root is
// the entry Search would rank last.
type heapEntry struct {
	score float64
	doc   uint32
}

// worse reports whether x ranks below y.
func worse(x, y heapEntry) bool {
	if x.score != y.score {
		return x.score < y.score
	}
	return x.doc > y.doc
}

func siftUp(h []heapEntry, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []heapEntry, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Has reports whether docID was added.
func (b *Builder) Has(docID string) bool {
	_, ok := b.ids[docID]
	return ok
}
