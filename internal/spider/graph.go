package spider

import (
	"fmt"
	"math"
	"sync"
)

// Node and edge types the algorithms look at; they match internal/codegraph.
const (
	TypeFunction = "function"
	EdgeContains = "contains"
)

// Node is a graph node as far as retrieval cares: its id and type.
type Node struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// Edge is a directed graph edge; the kinds a Graph walks (EdgeCosts) are used, undirected.
type Edge struct {
	Src  string `json:"src"`
	Dst  string `json:"dst"`
	Type string `json:"type"`
}

// Graph is the contains tree (directory → file → class → function), with
// whichever other edge kinds it was built to walk, as
// undirected adjacency over int32 indices, so a BFS touches no maps or strings.
// It is immutable after NewGraph and safe for concurrent Expand calls.
type Graph struct {
	ids   []string
	index map[string]int32
	fn    []bool
	off   []int32 // adjacency of node i is adj[off[i]:off[i+1]]
	adj   []int32
	cost  []uint8             // hop cost of each adj entry; nil: every edge costs 1
	kinds map[string]*kindAdj // edges kept by kind for KindHops (NewGraphKinds)
	bufs  sync.Pool           // *scratch, reused so repeated queries allocate nothing per node
}

// EdgeCosts gives each edge kind walked its hop cost (1 to 255; a kind not
// listed is not walked). A candidate's Hops is the cheapest path's cost, and
// Params.Depth bounds it.
type EdgeCosts map[string]int

// DefaultEdgeCosts walks the contains tree only, each hop costing 1.
var DefaultEdgeCosts = EdgeCosts{EdgeContains: 1}

// NewGraph builds a Graph. Edges other than contains are ignored; a contains
// edge naming an unknown node is an error, since it means the node and edge
// tables do not belong together.
func NewGraph(nodes []Node, edges []Edge) (*Graph, error) {
	return NewGraphCosts(nodes, edges, DefaultEdgeCosts)
}

// NewGraphCosts builds a Graph that walks the edge kinds costs lists, each
// undirected, at its cost. An edge of a walked kind naming an unknown node
// is an error.
func NewGraphCosts(nodes []Node, edges []Edge, costs EdgeCosts) (*Graph, error) {
	unit := true
	for kind, c := range costs {
		if c < 1 || c > math.MaxUint8 {
			return nil, fmt.Errorf("graph: %s edges cost %d, want 1 to %d", kind, c, math.MaxUint8)
		}
		unit = unit && c == 1
	}
	if len(nodes) >= math.MaxInt32 {
		return nil, fmt.Errorf("graph: %d nodes, at most %d supported", len(nodes), math.MaxInt32-1)
	}
	g := &Graph{
		ids:   make([]string, len(nodes)),
		index: make(map[string]int32, len(nodes)),
		fn:    make([]bool, len(nodes)),
		off:   make([]int32, len(nodes)+1),
	}
	for i, n := range nodes {
		if n.ID == "" {
			return nil, fmt.Errorf("graph: node %d has an empty id", i)
		}
		if _, dup := g.index[n.ID]; dup {
			return nil, fmt.Errorf("graph: node %q appears twice", n.ID)
		}
		g.ids[i] = n.ID
		g.index[n.ID] = int32(i)
		g.fn[i] = n.Type == TypeFunction
	}
	type pair struct {
		a, b int32
		c    uint8
	}
	var pairs []pair
	deg := make([]int32, len(nodes))
	for _, e := range edges {
		c, walk := costs[e.Type]
		if !walk {
			continue
		}
		a, ok := g.index[e.Src]
		if !ok {
			return nil, fmt.Errorf("graph: %s edge %q -> %q: unknown source node", e.Type, e.Src, e.Dst)
		}
		b, ok := g.index[e.Dst]
		if !ok {
			return nil, fmt.Errorf("graph: %s edge %q -> %q: unknown destination node", e.Type, e.Src, e.Dst)
		}
		if a == b {
			continue // a self loop adds no path
		}
		pairs = append(pairs, pair{a, b, uint8(c)})
		deg[a]++
		deg[b]++
	}
	if 2*len(pairs) >= math.MaxInt32 {
		return nil, fmt.Errorf("graph: %d edges, too many", len(pairs))
	}
	for i, d := range deg {
		g.off[i+1] = g.off[i] + d
	}
	g.adj = make([]int32, g.off[len(nodes)])
	if !unit {
		g.cost = make([]uint8, len(g.adj))
	}
	fill := make([]int32, len(nodes))
	copy(fill, g.off[:len(nodes)])
	for _, p := range pairs {
		for _, end := range [2][2]int32{{p.a, p.b}, {p.b, p.a}} {
			g.adj[fill[end[0]]] = end[1]
			if g.cost != nil {
				g.cost[fill[end[0]]] = p.c
			}
			fill[end[0]]++
		}
	}
	return g, nil
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.ids) }

// Has reports whether id is a node.
func (g *Graph) Has(id string) bool { _, ok := g.index[id]; return ok }

// IsFunction reports whether id is a function node.
func (g *Graph) IsFunction(id string) bool {
	i, ok := g.index[id]
	return ok && g.fn[i]
}

// scratch holds per-node marks. Marks are stamps rather than booleans so that
// starting a new BFS is one increment instead of clearing 100k entries.
type scratch struct {
	call, bfs uint32   // current stamps
	seen      []uint32 // == bfs: visited by the current BFS
	pool      []uint32 // == call: in S_N and allowed as a candidate
	center    []uint32 // == call: a center of the current call
	rank      []int32  // 0-based position in the ranking, valid where pool == call
	queue     []int32
	// Weighted walks (Graph.cost set): the best cost found, valid where
	// seen == bfs, and the nodes waiting at each cost.
	dist    []int32
	buckets [][]int32
}

func (g *Graph) getScratch() *scratch {
	if s, ok := g.bufs.Get().(*scratch); ok {
		return s
	}
	n := len(g.ids)
	return &scratch{
		seen:   make([]uint32, n),
		pool:   make([]uint32, n),
		center: make([]uint32, n),
		rank:   make([]int32, n),
	}
}

// Each stamp clears its own marks on the rare wrap-around, so an old mark can
// never be mistaken for a current one, and a BFS wrapping never clears the
// call's pool marks.
func (s *scratch) nextCall() uint32 {
	if s.call == math.MaxUint32 {
		clear(s.pool)
		clear(s.center)
		s.call = 0
	}
	s.call++
	return s.call
}

func (s *scratch) nextBFS() uint32 {
	if s.bfs == math.MaxUint32 {
		clear(s.seen)
		s.bfs = 0
	}
	s.bfs++
	return s.bfs
}
