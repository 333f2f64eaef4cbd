package search

import (
	"context"
	"sync"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
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
	sg   *spider.Graph
	code map[string]string // node id → code, for nodes that have code
}

type graphEntry struct {
	bucket *blob.Bucket // held so its address cannot be reused by another bucket while cached
	key    graphKey
	ready  chan struct{} // closed when g or err is set
	g      *loadedGraph
	err    error
}

// graphKey names one published graph: the keys and checksums of its tables
// (the repository and commit are part of the keys). A graph at a key never
// changes, so entries are never stale.
type graphKey struct {
	bucket                 *blob.Bucket
	nodes, edges           string
	nodesSHA256, edgesSHA2 string
}

// graphLRU shares decoded graphs between the queries of one process (a
// worker's Retrieve and every SelectNeighbors); concurrent loads of one
// graph wait for a single decode. Failed loads are not kept.
type graphLRU struct {
	mu      sync.Mutex
	entries []*graphEntry // most recently used first
	loads   int           // decodes done, for tests
	// off makes every get decode anew, as before the cache (benchmarks).
	off bool
}

var graphs = &graphLRU{}

// ResetGraphCache forgets every decoded graph, so that the next query reads
// and decodes its graph again (benchmarks measure both).
func ResetGraphCache() { graphs.reset() }

// SetGraphCache turns the decoded-graph cache on or off (off: every Retrieve
// and SelectNeighbors decodes the graph anew, as locus did before the cache)
// and empties it; benchmarks compare the two.
func SetGraphCache(on bool) {
	graphs.mu.Lock()
	graphs.off = !on
	graphs.mu.Unlock()
	graphs.reset()
}

func (c *graphLRU) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	c.loads = 0
}

func (c *graphLRU) get(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) (*loadedGraph, error) {
	k := graphKey{bucket: b, nodes: info.NodesKey, edges: info.EdgesKey, nodesSHA256: info.NodesSHA256, edgesSHA2: info.EdgesSHA256}
	c.mu.Lock()
	if c.off {
		c.loads++
		c.mu.Unlock()
		return loadGraph(ctx, b, info)
	}
	for i, e := range c.entries {
		if e.key == k {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if e.err != nil {
				return c.get(ctx, b, info) // the loader failed and removed it: load again
			}
			return e.g, nil
		}
	}
	e := &graphEntry{bucket: b, key: k, ready: make(chan struct{})}
	c.entries = append([]*graphEntry{e}, c.entries...)
	if len(c.entries) > graphCacheSize {
		c.entries = c.entries[:graphCacheSize]
	}
	c.loads++
	c.mu.Unlock()

	e.g, e.err = loadGraph(ctx, b, info)
	if e.err != nil {
		c.mu.Lock()
		for i, x := range c.entries {
			if x == e {
				c.entries = append(c.entries[:i], c.entries[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
	}
	close(e.ready)
	return e.g, e.err
}

func loadGraph(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) (*loadedGraph, error) {
	g, err := codegraph.Read(ctx, b, info)
	if err != nil {
		return nil, err
	}
	sg, code, err := spiderGraph(g)
	if err != nil {
		return nil, err
	}
	return &loadedGraph{sg: sg, code: code}, nil
}
