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

// Edge is a directed graph edge; only contains edges are used, undirected.
type Edge struct {
	Src  string `json:"src"`
	Dst  string `json:"dst"`
	Type string `json:"type"`
}

// Graph is the contains tree (directory → file → class → function) as
// undirected adjacency over int32 indices, so a BFS touches no maps or strings.
// It is immutable after NewGraph and safe for concurrent Expand calls.
type Graph struct {
	ids   []string
	index map[string]int32
	fn    []bool
	off   []int32 // adjacency of node i is adj[off[i]:off[i+1]]
	adj   []int32
	bufs  sync.Pool // *scratch, reused so repeated queries allocate nothing per node
}

// NewGraph builds a Graph. Edges other than contains are ignored; a contains
// edge naming an unknown node is an error, since it means the node and edge
// tables do not belong together.
func NewGraph(nodes []Node, edges []Edge) (*Graph, error) {
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
	type pair struct{ a, b int32 }
	var pairs []pair
	deg := make([]int32, len(nodes))
	for _, e := range edges {
		if e.Type != EdgeContains {
			continue
		}
		a, ok := g.index[e.Src]
		if !ok {
			return nil, fmt.Errorf("graph: contains edge %q -> %q: unknown source node", e.Src, e.Dst)
		}
		b, ok := g.index[e.Dst]
		if !ok {
			return nil, fmt.Errorf("graph: contains edge %q -> %q: unknown destination node", e.Src, e.Dst)
		}
		if a == b {
			continue // a self loop adds no path
		}
		pairs = append(pairs, pair{a, b})
		deg[a]++
		deg[b]++
	}
	if 2*len(pairs) >= math.MaxInt32 {
		return nil, fmt.Errorf("graph: %d contains edges, too many", len(pairs))
	}
	for i, d := range deg {
		g.off[i+1] = g.off[i] + d
	}
	g.adj = make([]int32, g.off[len(nodes)])
	fill := make([]int32, len(nodes))
	copy(fill, g.off[:len(nodes)])
	for _, p := range pairs {
		g.adj[fill[p.a]] = p.b
		fill[p.a]++
		g.adj[fill[p.b]] = p.a
		fill[p.b]++
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
