package commitrun

import (
	"math"
	"sort"

	"github.com/locus-dev/locus/internal/fileclass"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
)

// fileIndex scores whole files with BM25 at any state. Each file version
// (blob) is tokenised once; the statistics BM25 needs (document count,
// average length, document frequencies of the query's terms) are computed
// over exactly the files of the state, so every query sees its own corpus
// without rebuilding an index.
type fileIndex struct {
	terms map[string]uint32
	docs  map[docKey]*fileDoc
	k1, b float64
	// pathOnly: a document is the file's path alone, not its content.
	pathOnly bool
}

// docKey: the path is part of the document, so a blob under two paths is two documents.
type docKey struct {
	blob gitrepo.Hash
	path string
}

type fileDoc struct {
	length int
	ids    []uint32 // sorted term ids
	tfs    []uint32
}

// maxFileBytes: larger or binary files are left out of the file BM25.
const maxFileBytes = 1 << 20

func newFileIndex() *fileIndex {
	return &fileIndex{terms: map[string]uint32{}, docs: map[docKey]*fileDoc{}, k1: 1.2, b: 0.75}
}

// doc returns the tokenised blob, reading it through read on first use.
func (x *fileIndex) doc(h gitrepo.Hash, path string, read func() ([]byte, error)) (*fileDoc, error) {
	if x.pathOnly {
		h = gitrepo.Hash{}
	}
	if d, ok := x.docs[docKey{h, path}]; ok {
		return d, nil
	}
	var data []byte
	if !x.pathOnly {
		var err error
		if data, err = read(); err != nil {
			return nil, err
		}
	}
	d := &fileDoc{}
	if len(data) <= maxFileBytes && !fileclass.IsBinary(data) {
		tf := map[uint32]uint32{}
		for _, t := range sparse.Tokenize(path + "\n" + string(data)) {
			id, ok := x.terms[t]
			if !ok {
				id = uint32(len(x.terms))
				x.terms[t] = id
			}
			tf[id]++
			d.length++
		}
		for id := range tf {
			d.ids = append(d.ids, id)
		}
		sort.Slice(d.ids, func(i, j int) bool { return d.ids[i] < d.ids[j] })
		d.tfs = make([]uint32, len(d.ids))
		for i, id := range d.ids {
			d.tfs[i] = tf[id]
		}
	}
	x.docs[docKey{h, path}] = d
	return d, nil
}

func (d *fileDoc) tf(id uint32) uint32 {
	i := sort.Search(len(d.ids), func(i int) bool { return d.ids[i] >= id })
	if i < len(d.ids) && d.ids[i] == id {
		return d.tfs[i]
	}
	return 0
}

// search ranks the files of a state (paths with their docs) for query.
func (x *fileIndex) search(query string, paths []string, docs []*fileDoc, max int) []spider.Scored {
	var q []uint32
	for _, t := range sparse.Tokenize(query) {
		if id, ok := x.terms[t]; ok {
			q = append(q, id)
		}
	}
	if len(q) == 0 || len(docs) == 0 {
		return nil
	}
	n, total := 0, 0
	for _, d := range docs {
		if d.length > 0 {
			n++
			total += d.length
		}
	}
	if n == 0 {
		return nil
	}
	avgdl := float64(total) / float64(n)
	idf := make([]float64, len(q))
	for i, t := range q {
		df := 0
		for _, d := range docs {
			if d.tf(t) > 0 {
				df++
			}
		}
		idf[i] = math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
	}
	var hits []spider.Scored
	for j, d := range docs {
		if d.length == 0 {
			continue
		}
		s := 0.0
		norm := x.k1 * (1 - x.b + x.b*float64(d.length)/avgdl)
		for i, t := range q {
			if tf := float64(d.tf(t)); tf > 0 {
				s += idf[i] * tf * (x.k1 + 1) / (tf + norm)
			}
		}
		if s > 0 {
			hits = append(hits, spider.Scored{ID: paths[j], Score: s})
		}
	}
	spider.Sort(hits)
	if len(hits) > max {
		hits = hits[:max]
	}
	return hits
}
