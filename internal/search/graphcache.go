package search

import (
	"context"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// graphCacheSize is how many decoded graphs a process keeps: a query reads
// its repository's graph once for Retrieve and once per center for
// SelectNeighbors, and a worker serving a backlog sees few repositories at
// a time. A graph of 100k functions holds tens of MB of code.
const graphCacheSize = 4

// loadedGraph is a published graph decoded for queries.
type loadedGraph struct {
	sg    *spider.Graph
	code  map[string]string // node id → code, for nodes that have code
	lines map[string]int    // function id → first line
}

// graphKey names one published graph: the keys and checksums of its tables
// (the repository and commit are part of the keys). A graph at a key never
// changes, so entries are never stale.
type graphKey struct {
	bucket                 *blob.Bucket
	nodes, edges           string
	nodesSHA256, edgesSHA2 string
}

// graphs shares decoded graphs between the queries of one process (a
// worker's Retrieve and every SelectNeighbors); concurrent loads of one
// graph wait for a single decode.
var graphs = &onceLRU[graphKey, *loadedGraph]{size: graphCacheSize}

// ResetGraphCache forgets every decoded graph and the function documents
// made from graphs (functionDocs), so that the next query or index reads
// and decodes its graph again (benchmarks measure both).
func ResetGraphCache() {
	graphs.reset()
	functionDocs.reset()
}

// SetGraphCache turns the decoded-graph cache on or off (off: every Retrieve
// and SelectNeighbors decodes the graph anew, as locus did before the cache)
// and empties it; benchmarks compare the two.
func SetGraphCache(on bool) {
	graphs.mu.Lock()
	graphs.off = !on
	graphs.mu.Unlock()
	graphs.reset()
}

// keyOf names the graph info describes in b.
func keyOf(b *blob.Bucket, info schema.GraphInfo) graphKey {
	return graphKey{bucket: b, nodes: info.NodesKey, edges: info.EdgesKey, nodesSHA256: info.NodesSHA256, edgesSHA2: info.EdgesSHA256}
}

// getGraph returns the graph info describes, decoded once per process.
func getGraph(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) (*loadedGraph, error) {
	return graphs.get(ctx, keyOf(b, info), func() (*loadedGraph, error) { return loadGraph(ctx, b, info) })
}

func loadGraph(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) (*loadedGraph, error) {
	g, err := graphstore.Read(ctx, b, info)
	if err != nil {
		return nil, err
	}
	sg, code, err := SpiderGraph(g)
	if err != nil {
		return nil, err
	}
	lines := make(map[string]int, len(code))
	for _, n := range g.Nodes {
		if _, ok := code[n.ID]; ok {
			lines[n.ID] = int(n.StartLine)
		}
	}
	return &loadedGraph{sg: sg, code: code, lines: lines}, nil
}
