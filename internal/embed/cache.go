package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// cacheRow is one cached vector: repos/<repo>/embeddings/<model>/<shard>/<part>.parquet.
type cacheRow struct {
	ContentHash string    `parquet:"content_hash"`
	Vector      []float32 `parquet:"vector,list"`
}

// Cache keeps vectors by (model, content hash) in the object store, so
// re-indexing embeds only code that changed. Shards are the first hex digit
// of the content hash; each shard is a folder of append-only parts.
type Cache struct {
	Bucket *blob.Bucket
	Repo   schema.RepoName
	Model  string
}

func (c *Cache) prefix(shard string) string { return c.root() + shard + "/" }

func (c *Cache) root() string {
	return c.Repo.EmbedCachePrefix(c.Model)
}

func shardOf(hash string) string {
	if hash == "" {
		return "_"
	}
	return hash[:1]
}

// readShard merges the vectors of want (content hashes) that the parts of a
// shard hold. Parts are append-only and named by their content, so parallel
// writers never overwrite each other; a hash in two parts (two writers that
// embedded it at once) takes the last listed part's vector.
func (c *Cache) readShard(ctx context.Context, shard string, want map[string]bool) (map[string][]float32, error) {
	return c.readUnder(ctx, c.prefix(shard), want)
}

// readUnder merges the vectors of want (all of them when nil) that the
// parts under prefix hold.
func (c *Cache) readUnder(ctx context.Context, prefix string, want map[string]bool) (map[string][]float32, error) {
	objs, err := c.Bucket.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := map[string][]float32{}
	for _, o := range objs {
		var index map[string]int64
		if want != nil {
			// Parts are never rewritten: where each hash of one lies is
			// read once per process (partRows), and a part holding none of
			// want is not opened again. A snapshot's load wants the few
			// functions another snapshot lacked, and its repository's
			// shards hold a part for every snapshot built.
			index, err = c.partRows(ctx, o.Key)
			if err != nil {
				return nil, err
			}
			if !overlaps(index, want) {
				continue
			}
		}
		if err := c.readPart(ctx, o.Key, want, index, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// overlaps reports whether set and want share a hash, walking the smaller.
func overlaps(set map[string]int64, want map[string]bool) bool {
	if len(set) < len(want) {
		for h := range set {
			if want[h] {
				return true
			}
		}
		return false
	}
	for h := range want {
		if _, ok := set[h]; ok {
			return true
		}
	}
	return false
}

// readPart adds to out the vectors of part key: all of them when want is
// nil, else those whose hashes want holds, at the rows index (partRows)
// gives. A part holds every function of a repository that falls in its
// shard, and a re-index wants the few that changed: only the rows wanted
// are decoded (all of them when more than an eighth are;
// BenchmarkCacheReadWanted).
func (c *Cache) readPart(ctx context.Context, key string, want map[string]bool, index map[string]int64, out map[string][]float32) error {
	var rows []int64 // wanted, ascending
	if want != nil {
		for h := range want {
			if r, ok := index[h]; ok {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			return nil
		}
		slices.Sort(rows)
	}
	ra, err := c.Bucket.OpenReaderAt(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer ra.Close()
	f, err := parquet.OpenFile(ra, ra.Size())
	if err != nil {
		return fmt.Errorf("embedding cache %s: %w", key, err)
	}
	r := parquet.NewGenericReader[cacheRow](f)
	defer r.Close()
	// A wanted row costs about 40 µs to seek and decode alone, against 7 µs
	// a row for the whole part (20,000 rows of 256 dimensions): past an
	// eighth of the rows, the whole part is cheaper.
	if want == nil || int64(len(rows))*8 > f.NumRows() {
		buf := make([]cacheRow, 256)
		for {
			n, err := r.Read(buf)
			for _, row := range buf[:n] {
				if want == nil || want[row.ContentHash] {
					out[row.ContentHash] = row.Vector
				}
			}
			clear(buf[:n]) // the next Read must not write into these vectors
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("embedding cache %s: %w", key, err)
			}
		}
	}
	buf := make([]cacheRow, 1)
	for _, i := range rows {
		if err := r.SeekToRow(i); err != nil {
			return fmt.Errorf("embedding cache %s: row %d: %w", key, i, err)
		}
		if n, err := r.Read(buf); n != 1 {
			return fmt.Errorf("embedding cache %s: row %d: %v", key, i, err)
		}
		if !want[buf[0].ContentHash] {
			return fmt.Errorf("embedding cache %s: row %d holds %q, not the hash its index gave it: %w", key, i, buf[0].ContentHash, blob.ErrCorrupt)
		}
		out[buf[0].ContentHash] = buf[0].Vector
		buf[0] = cacheRow{} // the next Read must not append to this vector
	}
	return nil
}

// writePart adds the vectors of m to a shard as one new part.
func (c *Cache) writePart(ctx context.Context, shard string, m map[string][]float32) error {
	hashes := make([]string, 0, len(m))
	for h := range m {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	rows := make([]cacheRow, len(hashes))
	sum := sha256.New()
	for i, h := range hashes {
		rows[i] = cacheRow{h, m[h]}
		sum.Write([]byte(h))
	}
	key := c.prefix(shard) + hex.EncodeToString(sum.Sum(nil)[:12]) + ".parquet"
	w, err := c.Bucket.NewWriter(ctx, key)
	if err != nil {
		return err
	}
	if err := parquet.Write(w, rows, parquet.Compression(&zstd.Codec{})); err != nil {
		w.Abort()
		return fmt.Errorf("embedding cache %s: %w", key, err)
	}
	return w.Close()
}

// All reads every vector of dimension dim the cache holds, by hash: for a
// caller that embeds many overlapping sets (a miner's anchors) and keeps
// them in memory, storing what it added with Put.
func (c *Cache) All(ctx context.Context, dim int) (map[string][]float32, error) {
	out, err := c.readUnder(ctx, c.root(), nil)
	if err != nil {
		return nil, err
	}
	for h, v := range out {
		if len(v) != dim {
			delete(out, h)
		}
	}
	return out, nil
}

// Put stores the vectors of m, one new part per shard they fall in.
func (c *Cache) Put(ctx context.Context, m map[string][]float32) error {
	byShard := map[string]map[string][]float32{}
	for h, v := range m {
		s := shardOf(h)
		if byShard[s] == nil {
			byShard[s] = map[string][]float32{}
		}
		byShard[s][h] = v
	}
	for _, s := range slices.Sorted(maps.Keys(byShard)) {
		if err := c.writePart(ctx, s, byShard[s]); err != nil {
			return err
		}
	}
	return nil
}

// Item is one text to embed, identified by the hash of its content.
type Item struct {
	Hash string
	Text string
}

// EmbedItems embeds the items' texts, a vector per item in their order, or
// an error naming the embedder when it answers another number of vectors.
func EmbedItems(ctx context.Context, e Embedder, items []Item) ([][]float32, error) {
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(items) {
		return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", e.Name(), len(vecs), len(items))
	}
	return vecs, nil
}

// EmbedCached returns a vector for every item, embedding only hashes the
// cache does not have and storing those. It reports how many were embedded.
func EmbedCached(ctx context.Context, e Embedder, c *Cache, items []Item) (map[string][]float32, int, error) {
	out := make(map[string][]float32, len(items))
	embedded := 0
	err := c.eachShard(ctx, items, func(s string, items []Item, cached map[string][]float32) error {
		var missing []Item
		seen := map[string]bool{}
		for _, it := range items {
			if v, ok := cached[it.Hash]; ok && len(v) == e.Dim() {
				out[it.Hash] = v
			} else if !seen[it.Hash] {
				seen[it.Hash] = true
				missing = append(missing, it)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		vecs, err := EmbedItems(ctx, e, missing)
		if err != nil {
			return err
		}
		fresh := make(map[string][]float32, len(missing))
		for i, it := range missing {
			out[it.Hash] = vecs[i]
			fresh[it.Hash] = vecs[i]
		}
		embedded += len(missing)
		return c.writePart(ctx, s, fresh)
	})
	if err != nil {
		return nil, 0, err
	}
	return out, embedded, nil
}

// Missing returns the items (deduplicated by hash) the cache has no vector for.
func Missing(ctx context.Context, dim int, c *Cache, items []Item) ([]Item, error) {
	var out []Item
	seen := map[string]bool{}
	err := c.eachShard(ctx, items, func(_ string, items []Item, cached map[string][]float32) error {
		for _, it := range items {
			if v, ok := cached[it.Hash]; (!ok || len(v) != dim) && !seen[it.Hash] {
				seen[it.Hash] = true
				out = append(out, it)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachShard groups items by the shard of their hash and hands fn, shard
// by shard in order, the shard's items and the vectors it holds for them.
func (c *Cache) eachShard(ctx context.Context, items []Item, fn func(shard string, items []Item, cached map[string][]float32) error) error {
	byShard := map[string][]Item{}
	for _, it := range items {
		byShard[shardOf(it.Hash)] = append(byShard[shardOf(it.Hash)], it)
	}
	for _, s := range slices.Sorted(maps.Keys(byShard)) {
		cached, err := c.readShard(ctx, s, hashesOf(byShard[s]))
		if err != nil {
			return err
		}
		if err := fn(s, byShard[s], cached); err != nil {
			return err
		}
	}
	return nil
}

// hashesOf is the set of items' hashes.
func hashesOf(items []Item) map[string]bool {
	set := make(map[string]bool, len(items))
	for _, it := range items {
		set[it.Hash] = true
	}
	return set
}
