package graphstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/internal/parquetcol"
	"github.com/locus-dev/locus/schema"
)

// The code store keeps the code of a repository's graph nodes once per
// content hash, shared by the head's graph and every snapshot's: the graph
// of a commit a few weeks from another differs in a few hundred functions,
// and storing all its code again cost ~19 MB per snapshot of sympy.
//
// Segments are Parquet files of schema.CodeRow named by the SHA-256 of
// their bytes: writing one is idempotent (two builders writing the same
// content write the same object) and replaces nothing another graph reads.
// A graph lists the segments it reads (GraphInfo.Code); readers check each
// one's size and SHA-256, so a damaged segment is an error naming it and
// wrapping blob.ErrCorrupt, and the next build, which re-verifies every
// segment it would reuse, deletes it and writes its content anew.
//
// Segments are never deleted while intact: nothing yet tracks which graphs
// still read a segment (see docs/benchmarks.md, snapshot storage).

const (
	// codeSegmentBytes bounds the code (uncompressed) of one new segment, so
	// that a graph reads a few segments in parallel, not one huge object.
	codeSegmentBytes = 16 << 20
	// codePageBytes is the Parquet page size of segments: large enough that
	// a file's code and the code of its classes and functions (which repeat
	// it, rows being in node id order) share a zstd frame.
	codePageBytes = 4 << 20
	// codeReuseSmall: a segment this small is reused whatever share of it a
	// graph needs; a larger one only when the graph needs at least half its
	// rows (the rest is rewritten), which bounds what a reader reads beyond
	// its own code to about as much again.
	codeReuseSmall = 1 << 20
	// codeMaxReuse bounds how many stored segments one graph reads: past it,
	// the content it needs from the segments holding the least of it is
	// written again, so that snapshots built over a long time do not each
	// read every small segment their predecessors added.
	codeMaxReuse = 16
	// codeReadParallel is how many segments a reader fetches at once.
	codeReadParallel = 4
)

// codeRows is the content of nodes to store, in node order, and how many
// nodes it covers. A node's code goes to the store when its content hash is
// the hash of its code (always, for graphs the builder made: with hashed,
// that is taken as known); any other node keeps its code inline.
func codeRows(nodes []codegraph.Node, hashed bool) (rows []schema.CodeRow, stored int) {
	seen := map[string]bool{}
	for _, n := range nodes {
		if !inStore(n, hashed) {
			continue
		}
		stored++
		if !seen[n.ContentHash] {
			seen[n.ContentHash] = true
			rows = append(rows, schema.CodeRow{Hash: n.ContentHash, Code: n.Code})
		}
	}
	return rows, stored
}

func storable(n codegraph.Node) bool {
	return n.ContentHash != "" && codegraph.ContentHash(n.Code) == n.ContentHash
}

// inStore reports whether n's code goes to the store (codeRows).
func inStore(n codegraph.Node, hashed bool) bool {
	if hashed {
		return n.ContentHash != ""
	}
	return storable(n)
}

// storeCode puts the code of nodes into repo's code store, writing only
// content no intact segment holds, and returns the nodes with that code
// cleared, the segments that hold it and how many nodes read from them.
func storeCode(ctx context.Context, b *blob.Bucket, repo schema.RepoName, nodes []codegraph.Node, hashed bool) ([]codegraph.Node, []schema.CodeSegment, int, error) {
	rows, stored := codeRows(nodes, hashed)
	if stored == 0 {
		return nodes, nil, 0, nil
	}
	existing, err := listCode(ctx, b, repo)
	if err != nil {
		return nil, nil, 0, err
	}
	need := make(map[string]bool, len(rows))
	for _, r := range rows {
		need[r.Hash] = true
	}
	segs := reuseSegments(existing, need)
	var fresh []schema.CodeRow
	for _, r := range rows {
		if need[r.Hash] {
			fresh = append(fresh, r)
		}
	}
	for start := 0; start < len(fresh); {
		end, size := start, 0
		for end < len(fresh) && (end == start || size+len(fresh[end].Code) <= codeSegmentBytes) {
			size += len(fresh[end].Code)
			end++
		}
		seg, err := writeSegment(ctx, b, repo, fresh[start:end])
		if err != nil {
			return nil, nil, 0, err
		}
		segs = append(segs, seg)
		start = end
	}
	slices.SortFunc(segs, func(x, y schema.CodeSegment) int { return strings.Compare(x.Key, y.Key) })
	out := make([]codegraph.Node, len(nodes))
	copy(out, nodes)
	for i := range out {
		if inStore(out[i], hashed) {
			out[i].Code = ""
		}
	}
	return out, segs, stored, nil
}

// reuseSegments picks, among the intact segments, those worth reading for
// the content in need, and removes what they hold from need. Segments
// holding more of it go first, so that duplicated content (two builders
// that stored it at once) is read from one of them.
func reuseSegments(existing []storedSegment, need map[string]bool) []schema.CodeSegment {
	useful := func(s storedSegment) int {
		n := 0
		for _, h := range s.hashes {
			if need[h] {
				n++
			}
		}
		return n
	}
	type cand struct {
		s storedSegment
		n int
	}
	var cands []cand
	for _, s := range existing {
		if n := useful(s); n > 0 {
			cands = append(cands, cand{s, n})
		}
	}
	slices.SortFunc(cands, func(x, y cand) int {
		if x.n != y.n {
			return y.n - x.n
		}
		return strings.Compare(x.s.seg.Key, y.s.seg.Key)
	})
	var out []schema.CodeSegment
	for _, c := range cands {
		n := useful(c.s)
		if n == 0 || (c.s.seg.Bytes > codeReuseSmall && 2*n < len(c.s.hashes)) || len(out) == codeMaxReuse {
			continue
		}
		for _, h := range c.s.hashes {
			delete(need, h)
		}
		out = append(out, c.s.seg)
	}
	return out
}

// writeSegment stores rows as one segment named by its SHA-256.
func writeSegment(ctx context.Context, b *blob.Bucket, repo schema.RepoName, rows []schema.CodeRow) (schema.CodeSegment, error) {
	data, err := objio.EncodeParquet(rows, graphFormat, parquet.PageBufferSize(codePageBytes))
	if err != nil {
		return schema.CodeSegment{}, fmt.Errorf("code segment of %s: %w", repo, err)
	}
	ref := objio.RefOf("", data)
	ref.Key = repo.CodeSegmentKey(ref.SHA256)
	if _, err := objio.WriteBlob(ctx, b, ref.Key, data); err != nil {
		return schema.CodeSegment{}, fmt.Errorf("write code segment %s: %w", ref.Key, err)
	}
	seg := schema.CodeSegment{Key: ref.Key, Bytes: ref.Size, SHA256: ref.SHA256, Rows: len(rows)}
	return seg, nil
}

// storedSegment is an intact segment and the content hashes it holds.
type storedSegment struct {
	seg    schema.CodeSegment
	hashes []string
}

// listCode reads every segment of repo's code store and returns the intact
// ones. A segment whose bytes do not match its name, or that is not a
// readable segment, is deleted: no graph can read it, and the content of
// the graph being built is then written again.
func listCode(ctx context.Context, b *blob.Bucket, repo schema.RepoName) ([]storedSegment, error) {
	objs, err := b.List(ctx, repo.CodePrefix())
	if err != nil {
		return nil, fmt.Errorf("list code store of %s: %w", repo, err)
	}
	var segs []schema.CodeSegment
	for _, o := range objs {
		name := path.Base(o.Key)
		sum, ok := strings.CutSuffix(name, ".parquet")
		if !ok || len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" || o.Key != repo.CodePrefix()+name {
			continue // not a segment (e.g. a writer's temporary file)
		}
		segs = append(segs, schema.CodeSegment{Key: o.Key, Bytes: o.Size, SHA256: sum})
	}
	out := make([]storedSegment, len(segs))
	bad := make([]error, len(segs))
	err = forEachParallel(ctx, len(segs), func(i int) error {
		data, err := readSegmentBytes(ctx, b, segs[i])
		if err == nil {
			var hashes []string
			if hashes, err = segmentHashes(segs[i].Key, data); err == nil {
				segs[i].Rows = len(hashes)
				out[i] = storedSegment{seg: segs[i], hashes: hashes}
				return nil
			}
		}
		if errors.Is(err, blob.ErrCorrupt) {
			bad[i] = err
			return nil
		}
		if errors.Is(err, blob.ErrNotFound) {
			return nil // deleted since the listing
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	intact := out[:0]
	for i, s := range out {
		if bad[i] != nil {
			slog.Warn("deleting a damaged code segment; its content is stored again", "repo", repo, "segment", segs[i].Key, "error", bad[i])
			if err := b.Delete(ctx, segs[i].Key); err != nil && !errors.Is(err, blob.ErrNotFound) {
				return nil, fmt.Errorf("delete damaged code segment %s: %w", segs[i].Key, err)
			}
			continue
		}
		if s.seg.Key != "" {
			intact = append(intact, s)
		}
	}
	return intact, nil
}

// readSegmentBytes reads a segment and checks its size and SHA-256.
func readSegmentBytes(ctx context.Context, b *blob.Bucket, seg schema.CodeSegment) ([]byte, error) {
	data, err := objio.ReadBlob(ctx, b, segmentRef(seg))
	if err != nil {
		return nil, fmt.Errorf("code segment: %w", err)
	}
	return data, nil
}

func segmentRef(seg schema.CodeSegment) objio.Ref {
	return objio.Ref{Key: seg.Key, Size: seg.Bytes, SHA256: seg.SHA256}
}

// segmentHashes decodes only the hash column of a segment.
func segmentHashes(key string, data []byte) ([]string, error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("code segment %s: not readable Parquet (%v): %w", key, err, blob.ErrCorrupt)
	}
	hashes := make([]string, 0, f.NumRows())
	if err := parquetcol.Bytes(f, "hash", func(_ int64, v []byte) { hashes = append(hashes, string(v)) }); err != nil {
		return nil, fmt.Errorf("code segment %s: %v: %w", key, err, blob.ErrCorrupt)
	}
	if int64(len(hashes)) != f.NumRows() {
		return nil, fmt.Errorf("code segment %s: %d hashes in %d rows: %w", key, len(hashes), f.NumRows(), blob.ErrCorrupt)
	}
	return hashes, nil
}

// readCode returns the content of the segments a graph lists, by hash,
// each segment checked against its recorded size and SHA-256.
func readCode(ctx context.Context, b *blob.Bucket, segs []schema.CodeSegment) (map[string]string, error) {
	parts := make([][]schema.CodeRow, len(segs))
	err := forEachParallel(ctx, len(segs), func(i int) error {
		// The object as it is now: one replaced since (damaged, say) is
		// read and checked again, not answered from what it held.
		a, err := b.Attributes(ctx, segs[i].Key)
		if err != nil {
			return fmt.Errorf("code segment: %w", err)
		}
		k := segKey{b, segs[i].Key, segs[i].SHA256, a.ETag, a.Size}
		if rows, ok := segCache.get(k); ok && a.ETag != "" {
			parts[i] = rows
			return nil
		}
		rows, err := objio.ReadParquet[schema.CodeRow](ctx, b, segmentRef(segs[i]), objio.Format{})
		if err != nil {
			return fmt.Errorf("code segment: %w", err)
		}
		if a.ETag != "" {
			segCache.add(k, rows, segs[i].Bytes)
		}
		parts[i] = rows
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	code := make(map[string]string, n)
	for _, p := range parts {
		for _, r := range p {
			code[r.Hash] = r.Code
		}
	}
	return code, nil
}

// fillCode puts the code of the graph's segments back into its nodes.
func fillCode(ctx context.Context, b *blob.Bucket, info schema.GraphInfo, nodes []codegraph.Node) error {
	if len(info.Code) == 0 {
		return nil
	}
	code, err := readCode(ctx, b, info.Code)
	if err != nil {
		return fmt.Errorf("graph %s: %w", info.NodesKey, err)
	}
	filled := 0
	for i := range nodes {
		n := &nodes[i]
		if n.ContentHash == "" || n.Code != "" {
			continue
		}
		if c, ok := code[n.ContentHash]; ok {
			n.Code = c
			filled++
		}
	}
	if filled != info.CodeNodes {
		what := ""
		for _, n := range nodes {
			if _, ok := code[n.ContentHash]; n.ContentHash != "" && n.Code == "" && !ok {
				what = fmt.Sprintf(" (the code of %s, content %s, is in none of them)", n.ID, n.ContentHash)
				break
			}
		}
		return fmt.Errorf("graph %s: %d nodes found their code in its %d code segments, %d recorded%s: %w",
			info.NodesKey, filled, len(info.Code), info.CodeNodes, what, blob.ErrCorrupt)
	}
	return nil
}

// forEachParallel runs fn(0..n-1), a few at a time, and returns the first error.
func forEachParallel(ctx context.Context, n int, fn func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, codeReadParallel)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// segCache keeps code segments decoded in this process, by store, key,
// SHA-256 and the object's ETag, up to segCacheBytes of their stored size (about a third of
// their decoded size). A segment is named by its content and never
// rewritten, and snapshots of one repository share most of theirs: a
// backlog or an eval over many base commits read each snapshot's whole
// code once per method and per stored part (sympy's eval: half of SpISR's
// time decoding code it had decoded before).
var segCache = newSegmentCache(segCacheBytes)

const segCacheBytes = 96 << 20

// segKey names a segment as stored: its store, key and recorded SHA-256,
// and the object's ETag and size when it was read.
type segKey struct {
	b              *blob.Bucket
	key, sum, etag string
	size           int64
}

type segmentCache struct {
	mu    sync.Mutex
	lru   *lru.Cache[segKey, cachedSegment]
	bytes int64 // stored size of what lru holds
	max   int64
}

type cachedSegment struct {
	rows  []schema.CodeRow
	bytes int64
}

func newSegmentCache(max int64) *segmentCache {
	c := &segmentCache{max: max}
	l, err := lru.NewWithEvict(1<<16, func(_ segKey, v cachedSegment) { c.bytes -= v.bytes })
	if err != nil {
		panic(err) // only for a size below 1
	}
	c.lru = l
	return c
}

// get returns the rows of a segment decoded before; callers must not
// change them.
func (c *segmentCache) get(k segKey) ([]schema.CodeRow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.lru.Get(k)
	return v.rows, ok
}

// add keeps rows, evicting the least recently used segments past max; a
// segment larger than max is not kept.
func (c *segmentCache) add(k segKey, rows []schema.CodeRow, bytes int64) {
	if bytes > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return
	}
	c.lru.Add(k, cachedSegment{rows, bytes})
	c.bytes += bytes
	for c.bytes > c.max {
		c.lru.RemoveOldest()
	}
}
