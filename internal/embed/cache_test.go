package embed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

// counting wraps an embedder and counts the texts it embeds.
type counting struct {
	Embedder
	n atomic.Int32
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n.Add(int32(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

func TestEmbedCachedEmbedsOnlyNewContent(t *testing.T) {
	b := blobtest.Bucket(t)
	ctx := context.Background()
	e := &counting{Embedder: &Lexical{Dims: 16}}
	c := &Cache{Bucket: b, Repo: "acme/one", Model: e.Name()}
	items := []Item{{"a1", "def a(): pass"}, {"b2", "def b(): pass"}, {"c3", "def c(): pass"}, {"a1", "def a(): pass"}}
	got, n, err := EmbedCached(ctx, e, c, items)
	if err != nil || n != 3 || len(got) != 3 {
		t.Fatalf("first run: %d embedded, %d vectors, %v", n, len(got), err)
	}
	// One function changed, one is new: only those two are embedded.
	items = []Item{{"a1", "def a(): pass"}, {"b9", "def b(): return 1"}, {"c3", "def c(): pass"}, {"d4", "def d(): pass"}}
	got2, n, err := EmbedCached(ctx, e, c, items)
	if err != nil || n != 2 || e.n.Load() != 5 {
		t.Fatalf("second run: %d embedded (total %d), %v; want 2 (total 5)", n, e.n.Load(), err)
	}
	if Cosine(got["a1"], got2["a1"]) < 0.999999 {
		t.Error("a cached vector changed")
	}
	// A corrupt shard is an error naming it, not a silent re-embed.
	objs, _ := b.List(ctx, "repos/acme/one/embeddings/")
	data, _ := b.ReadAll(ctx, objs[0].Key)
	b.WriteAll(ctx, objs[0].Key, data[:len(data)/2])
	if _, _, err := EmbedCached(ctx, e, c, items); err == nil || !strings.Contains(err.Error(), objs[0].Key) {
		t.Fatalf("corrupt shard: err = %v", err)
	}
}

func TestCacheAllAndPut(t *testing.T) {
	ctx := context.Background()
	c := &Cache{Bucket: blobtest.Bucket(t), Repo: "acme/w", Model: "m"}
	if all, err := c.All(ctx, 2); err != nil || len(all) != 0 {
		t.Fatalf("empty cache: %v, %v", all, err)
	}
	if err := c.Put(ctx, map[string][]float32{"a1": {1, 2}, "b2": {3, 4}, "a3": {5, 6, 7}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, map[string][]float32{"c4": {8, 9}}); err != nil {
		t.Fatal(err)
	}
	all, err := c.All(ctx, 2)
	if err != nil || len(all) != 3 || all["b2"][1] != 4 || all["c4"][0] != 8 || all["a3"] != nil {
		t.Errorf("All(2) = %v, %v; want a1, b2, c4 (a3 has another dimension)", all, err)
	}
	// What Put stored, EmbedCached finds: nothing is embedded again.
	vecs, n, err := EmbedCached(ctx, fixedDim{2}, c, []Item{{Hash: "a1", Text: "x"}, {Hash: "c4", Text: "y"}})
	if err != nil || n != 0 || vecs["a1"][0] != 1 {
		t.Errorf("EmbedCached after Put: %v, %d embedded, %v", vecs, n, err)
	}
}

// fixedDim is an embedder of dimension d that must never be called.
type fixedDim struct{ d int }

func (fixedDim) Name() string { return "m" }
func (f fixedDim) Dim() int   { return f.d }
func (fixedDim) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embedded a cached text")
}

// TestCacheReadsWhatIsWanted: a shard read for a few hashes returns their
// vectors as stored, from parts holding many, read row by row or whole;
// hashes the cache lacks are missing, not zero.
func TestCacheReadsWhatIsWanted(t *testing.T) {
	ctx := context.Background()
	c := &Cache{Bucket: blobtest.Bucket(t), Repo: "acme/w", Model: "m"}
	const dim = 8
	vec := func(h string) []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(len(h)*31+int(h[len(h)-1])*7+i) / 3
		}
		return v
	}
	m := map[string][]float32{}
	for i := range 3000 {
		h := fmt.Sprintf("a%05d", i) // all in shard "a"
		m[h] = vec(h)
	}
	if err := c.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	// A second part, sharing a hash with the first (two writers that
	// embedded one function at once).
	if err := c.Put(ctx, map[string][]float32{"a00007": vec("a00007"), "a99999": vec("a99999")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"a few", []string{"a00000", "a00001", "a01500", "a02999", "a99999", "a77777"}},
		{"most", func() []string {
			var hs []string
			for i := range 2500 {
				hs = append(hs, fmt.Sprintf("a%05d", i))
			}
			return hs
		}()},
		{"one in both parts", []string{"a00007"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]bool{}
			for _, h := range tc.want {
				set[h] = true
			}
			got, err := c.readShard(ctx, "a", set)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.want {
				v, ok := got[h]
				switch {
				case h == "a77777":
					if ok {
						t.Errorf("%s: a vector for a hash never stored", h)
					}
				case !ok || fmt.Sprint(v) != fmt.Sprint(vec(h)):
					t.Errorf("%s = %v, want %v", h, v, vec(h))
				}
			}
			if len(got) > len(tc.want) {
				t.Errorf("%d vectors for %d hashes wanted", len(got), len(tc.want))
			}
		})
	}
	if all, err := c.All(ctx, dim); err != nil || len(all) != 3001 || fmt.Sprint(all["a02998"]) != fmt.Sprint(vec("a02998")) {
		t.Errorf("All: %d vectors, %v", len(all), err)
	}
}

// TestCacheReadsWantedRowsWhereTheIndexSays: the rows a read wants are
// found in the process's index of the part (partRows, made once), not by
// reading its hash column again; a row that does not hold the hash the
// index gave it is a damaged part, named.
func TestCacheReadsWantedRowsWhereTheIndexSays(t *testing.T) {
	ctx := context.Background()
	c := &Cache{Bucket: blobtest.Bucket(t), Repo: "acme/rows", Model: "m"}
	m := map[string][]float32{}
	for i := range 64 {
		m[fmt.Sprintf("c%03d", i)] = []float32{float32(i), 1}
	}
	if err := c.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	objs, err := c.Bucket.List(ctx, c.prefix("c"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("parts %v, %v", objs, err)
	}
	key := objs[0].Key
	index, err := c.partRows(ctx, key)
	if err != nil || len(index) != 64 || index["c005"] != 5 { // a part's rows are in hash order
		t.Fatalf("index of %d hashes, c005 at %d: %v", len(index), index["c005"], err)
	}
	want := map[string]bool{"c005": true}
	out := map[string][]float32{}
	if err := c.readPart(ctx, key, want, index, out); err != nil || len(out) != 1 || fmt.Sprint(out["c005"]) != "[5 1]" {
		t.Fatalf("read of c005: %v, %v", out, err)
	}
	wrong := maps.Clone(index)
	wrong["c005"] = 9 // c009's row
	err = c.readPart(ctx, key, want, wrong, map[string][]float32{})
	if !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), key) {
		t.Errorf("a row holding another hash than its index says: %v", err)
	}
}

// TestCacheOpensOnlyPartsHoldingWanted: once a process knows which hashes
// a part holds, a read wanting none of them does not open it: a part
// damaged after that is never read, while one wanted still is.
func TestCacheOpensOnlyPartsHoldingWanted(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	c := &Cache{Bucket: b, Repo: "acme/parts", Model: "m"}
	for _, h := range []string{"b1", "b2", "b3"} {
		if err := c.Put(ctx, map[string][]float32{h: {1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.readShard(ctx, "b", map[string]bool{"b1": true, "b2": true, "b3": true}); err != nil || len(got) != 3 {
		t.Fatalf("first read: %v, %v", got, err)
	}
	objs, err := b.List(ctx, c.prefix("b"))
	if err != nil || len(objs) != 3 {
		t.Fatalf("parts %v, %v", objs, err)
	}
	var damaged string
	for _, o := range objs {
		if set, err := c.partRows(ctx, o.Key); err == nil {
			if _, ok := set["b1"]; ok {
				damaged = o.Key
			}
		}
	}
	if err := b.WriteAll(ctx, damaged, []byte("not parquet")); err != nil {
		t.Fatal(err)
	}
	got, err := c.readShard(ctx, "b", map[string]bool{"b2": true})
	if err != nil || fmt.Sprint(got["b2"]) != "[1 2]" {
		t.Fatalf("a read wanting b2 alone: %v, %v (the damaged part of b1 was opened?)", got, err)
	}
	if _, err := c.readShard(ctx, "b", map[string]bool{"b1": true}); err == nil || !strings.Contains(err.Error(), damaged) {
		t.Fatalf("a read wanting b1 from its damaged part: %v", err)
	}
}

// BenchmarkCacheReadWanted reads 80 of 20,000 vectors of 256 dimensions
// from one part, as a re-index does, against reading the whole part.
func BenchmarkCacheReadWanted(b *testing.B) {
	ctx := context.Background()
	c := &Cache{Bucket: blobtest.Bucket(b), Repo: "acme/w", Model: "m"}
	m := map[string][]float32{}
	var hashes []string
	for i := range 20000 {
		h := fmt.Sprintf("a%063x", i*7919)
		v := make([]float32, 256)
		for k := range v {
			v[k] = float32(i*k%97) / 97
		}
		m[h] = v
		hashes = append(hashes, h)
	}
	if err := c.Put(ctx, m); err != nil {
		b.Fatal(err)
	}
	want := map[string]bool{}
	for i := 0; i < len(hashes); i += len(hashes) / 80 {
		want[hashes[i]] = true
	}
	for _, bc := range []struct {
		name string
		want map[string]bool
	}{{"whole part", nil}, {"80 wanted", want}} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				got, err := c.readShard(ctx, "a", bc.want)
				if err != nil || len(got) < len(want) {
					b.Fatalf("%d vectors, %v", len(got), err)
				}
			}
		})
	}
}

// short answers one vector fewer than it is asked for.
type short struct{ Embedder }

func (s short) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := s.Embedder.Embed(ctx, texts)
	return vs[:len(vs)-1], err
}

// TestEmbedItemsCountsVectors: an embedder that answers fewer vectors than
// texts is an error naming it, whether asked directly, by EmbedCached or by
// EnsureCached, not a panic or a vector given to the wrong item.
func TestEmbedItemsCountsVectors(t *testing.T) {
	ctx := context.Background()
	e := short{&Lexical{Dims: 8}}
	items := []Item{{Hash: "a1", Text: "open the ledger"}, {Hash: "a2", Text: "close the ledger"}}
	c := &Cache{Bucket: blobtest.Bucket(t), Repo: "acme/short", Model: e.Name()}
	for name, run := range map[string]func() error{
		"EmbedItems":   func() error { _, err := EmbedItems(ctx, e, items); return err },
		"EmbedCached":  func() error { _, _, err := EmbedCached(ctx, e, c, items); return err },
		"EnsureCached": func() error { _, err := EnsureCached(ctx, e, c, items); return err },
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), "returned 1 vectors for 2 texts") || !strings.Contains(err.Error(), e.Name()) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
