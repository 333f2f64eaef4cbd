package rank

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/sparse"
)

// kindDepth is how many hops of one edge kind the distances by kind look:
// beyond it a candidate is NoHops away.
const kindDepth = 2

// byKind holds one query's distances from the fused ranking's first hits,
// per edge kind (the contains tree by ids, the rest walked).
type byKind struct {
	hits                       []string
	invokes, inherits, imports map[string]int
	cochange                   map[string]int
}

// kindHops walks each recorded edge kind of in.Graph, and memory's
// co-change pairs, from the fused ranking's first n functions.
func kindHops(in Inputs, n int) (byKind, error) {
	k := byKind{}
	for _, s := range in.Fused[:min(n, len(in.Fused))] {
		k.hits = append(k.hits, s.ID)
	}
	if len(k.hits) == 0 {
		return k, nil
	}
	if g := in.Graph; g != nil {
		var err error
		// A graph that does not keep a kind apart is an error, never a
		// column of NoHops the model was not trained on.
		walk := func(kind string, from []string) map[string]int {
			if err != nil {
				return nil
			}
			var h map[string]int
			h, err = g.KindHops(from, kind, kindDepth)
			return h
		}
		// Calls link functions; inheritance links classes; imports link a
		// file to a file or to what it imports.
		var classes, all []string
		for _, id := range k.hits {
			cs := enclosing(id)
			classes = append(classes, cs...)
			all = append(append(append(all, id), cs...), fileOf(id))
		}
		k.invokes = walk(codegraph.EdgeInvokes, k.hits)
		k.inherits = walk(codegraph.EdgeInherits, classes)
		k.imports = walk(codegraph.EdgeImports, all)
		if err != nil {
			return k, fmt.Errorf("rank: %w", err)
		}
	}
	if in.CoChange != nil {
		k.cochange = map[string]int{}
		frontier := k.hits
		for _, id := range frontier {
			k.cochange[id] = 0
		}
		for d := 1; d <= kindDepth; d++ {
			var next []string
			for _, u := range frontier {
				for _, v := range in.CoChange(u) {
					if _, ok := k.cochange[v]; !ok {
						k.cochange[v] = d
						next = append(next, v)
					}
				}
			}
			frontier = next
		}
	}
	return k, nil
}

// put writes id's distances by kind into x.
func (k byKind) put(x []float64, id string) {
	x[fGraphContains] = NoHops
	for _, h := range k.hits {
		x[fGraphContains] = min(x[fGraphContains], float64(treeHops(id, h)))
	}
	least := func(h map[string]int, ids ...string) float64 {
		v := NoHops
		for _, id := range ids {
			if d, ok := h[id]; ok {
				v = min(v, d)
			}
		}
		return float64(v)
	}
	x[fGraphInvokes] = least(k.invokes, id)
	x[fGraphInherits] = least(k.inherits, enclosing(id)...)
	x[fGraphImports] = least(k.imports, append(enclosing(id), id, fileOf(id))...)
	x[fGraphCoChange] = least(k.cochange, id)
}

// enclosing lists the ids of what encloses a function inside its file,
// outermost first: "f.py:A.B.m" → "f.py:A", "f.py:A.B".
func enclosing(id string) []string {
	file, q := codegraph.SplitID(id)
	var out []string
	for i := 0; i < len(q); i++ {
		if q[i] == '.' {
			out = append(out, codegraph.EntityID(file, q[:i]))
		}
	}
	return out
}

// treeHops is the distance of a and b in the contains tree (directories,
// file, enclosing entities), read from their ids.
func treeHops(a, b string) int {
	ca, cb := chain(a), chain(b)
	common := 0
	for common < len(ca) && common < len(cb) && ca[common] == cb[common] {
		common++
	}
	return len(ca) + len(cb) - 2*common
}

// chain is the contains path of an id below the repository's root: its
// directories, its file, then each enclosing name and its own.
func chain(id string) []string {
	file, q := codegraph.SplitID(id)
	out := strings.Split(file, "/")
	if q != "" {
		out = append(out, strings.Split(q, ".")...)
	}
	return out
}

// nameBM25 scores the query against a document of each candidate's name,
// enclosing names and file path, the candidates being the corpus: each
// score divided by the best, and the 1-based rank of each that scores.
func nameBM25(query string, ids []string) (map[string]float64, map[string]int, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	b := sparse.NewBuilder(sparse.DefaultConfig())
	for _, id := range ids {
		file, q := codegraph.SplitID(id)
		stem := strings.TrimSuffix(file, path.Ext(file))
		if err := b.Add(id, q+" "+strings.NewReplacer("/", " ", ".", " ").Replace(stem)); err != nil {
			return nil, nil, fmt.Errorf("rank: names: %w", err)
		}
	}
	ix, err := b.Build()
	if err != nil {
		return nil, nil, fmt.Errorf("rank: names: %w", err)
	}
	scores, err := ix.Score(query, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("rank: names: %w", err)
	}
	order := make([]int, 0, len(ids))
	top := 0.0
	for i, s := range scores {
		if s > 0 {
			order = append(order, i)
			top = max(top, s)
		}
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(scores[j], scores[i]) })
	norm, rank := make(map[string]float64, len(order)), make(map[string]int, len(order))
	for r, i := range order {
		norm[ids[i]], rank[ids[i]] = scores[i]/top, r+1
	}
	return norm, rank, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
