package embed

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

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
