package spider

import "fmt"

// kindAdj is the undirected adjacency of one edge kind over a Graph's node
// indexes: the neighbours of node i are adj[off[i]:off[i+1]].
type kindAdj struct{ off, adj []int32 }

// NewGraphKinds is NewGraphCosts that also keeps, for KindHops, the edges of
// each kind in record apart, whether the expansion walks that kind or not
// (a kind recorded and not in costs is never walked by Expand). A recorded
// edge naming an unknown node is skipped: a recorded kind describes, it does
// not decide what the graph holds.
func NewGraphKinds(nodes []Node, edges []Edge, costs EdgeCosts, record []string) (*Graph, error) {
	g, err := NewGraphCosts(nodes, edges, costs)
	if err != nil || len(record) == 0 {
		return g, err
	}
	g.kinds = make(map[string]*kindAdj, len(record))
	type pair struct{ a, b int32 }
	for _, kind := range record {
		var pairs []pair
		deg := make([]int32, len(nodes)+1)
		for _, e := range edges {
			if e.Type != kind {
				continue
			}
			a, okA := g.index[e.Src]
			b, okB := g.index[e.Dst]
			if !okA || !okB || a == b {
				continue
			}
			pairs = append(pairs, pair{a, b})
			deg[a+1]++
			deg[b+1]++
		}
		k := &kindAdj{off: deg}
		for i := 1; i < len(k.off); i++ {
			k.off[i] += k.off[i-1]
		}
		k.adj = make([]int32, k.off[len(nodes)])
		fill := make([]int32, len(nodes))
		copy(fill, k.off[:len(nodes)])
		for _, p := range pairs {
			k.adj[fill[p.a]], fill[p.a] = p.b, fill[p.a]+1
			k.adj[fill[p.b]], fill[p.b] = p.a, fill[p.b]+1
		}
		g.kinds[kind] = k
	}
	return g, nil
}

// KindHops walks only edges of kind (undirected, each hop 1) from every node
// of from at once, up to depth hops, and returns each node reached (any
// type, the sources at 0) with its fewest hops. Ids the graph lacks are
// skipped. A kind the graph did not record (NewGraphKinds) is an error.
func (g *Graph) KindHops(from []string, kind string, depth int) (map[string]int, error) {
	k := g.kinds[kind]
	if k == nil {
		return nil, fmt.Errorf("graph: %s edges are not recorded", kind)
	}
	hops := map[int32]int{}
	var frontier []int32
	for _, id := range from {
		if i, ok := g.index[id]; ok {
			if _, dup := hops[i]; !dup {
				hops[i] = 0
				frontier = append(frontier, i)
			}
		}
	}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []int32
		for _, u := range frontier {
			for _, v := range k.adj[k.off[u]:k.off[u+1]] {
				if _, ok := hops[v]; !ok {
					hops[v] = d
					next = append(next, v)
				}
			}
		}
		frontier = next
	}
	out := make(map[string]int, len(hops))
	for i, d := range hops {
		out[g.ids[i]] = d
	}
	return out, nil
}
