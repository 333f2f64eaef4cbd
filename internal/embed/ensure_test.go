package embed

import (
	"context"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

// EnsureCached embeds only what the cache's listed parts do not hold: what
// another store's parts held, or a part since deleted, is embedded again;
// what it stores EmbedCached reads back as the embedder's vectors.
func TestEnsureCached(t *testing.T) {
	ctx := context.Background()
	items := []Item{{"a1", "def a(): pass"}, {"b2", "def b(): pass"}, {"c3", "def c(): pass"}, {"a1", "def a(): pass"}}
	more := []Item{{"a1", "def a(): pass"}, {"b9", "def b(): return 1"}, {"d4", "def d(): pass"}}
	one, other := blobtest.Bucket(t), blobtest.Bucket(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) *Cache // the cache the step runs on
		items []Item
		want  int
	}{
		{"empty cache", func(*testing.T) *Cache { return &Cache{Bucket: one, Repo: "acme/one", Model: "m"} }, items, 3},
		{"all held", func(*testing.T) *Cache { return &Cache{Bucket: one, Repo: "acme/one", Model: "m"} }, items, 0},
		{"two new", func(*testing.T) *Cache { return &Cache{Bucket: one, Repo: "acme/one", Model: "m"} }, more, 2},
		{"another store holds the same parts' names", func(*testing.T) *Cache { return &Cache{Bucket: other, Repo: "acme/one", Model: "m"} }, items, 3},
		{"another model", func(*testing.T) *Cache { return &Cache{Bucket: one, Repo: "acme/one", Model: "n"} }, items, 3},
		{"a part deleted", func(t *testing.T) *Cache {
			c := &Cache{Bucket: one, Repo: "acme/one", Model: "m"}
			objs, err := one.List(ctx, c.prefix(shardOf("d4")))
			if err != nil || len(objs) == 0 {
				t.Fatalf("parts of d4's shard: %v, %d", err, len(objs))
			}
			for _, o := range objs {
				if err := one.Delete(ctx, o.Key); err != nil {
					t.Fatal(err)
				}
			}
			return c
		}, more, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &counting{Embedder: &Lexical{Dims: 16}}
			c := tc.setup(t)
			n, err := EnsureCached(ctx, e, c, tc.items)
			if err != nil || n != tc.want || int(e.n.Load()) != tc.want {
				t.Fatalf("embedded %d (embedder asked for %d), %v; want %d", n, e.n.Load(), err, tc.want)
			}
			got, n, err := EmbedCached(ctx, e, c, tc.items)
			if err != nil || n != 0 {
				t.Fatalf("EmbedCached after it: %d embedded, %v; want every vector cached", n, err)
			}
			want, _ := (&Lexical{Dims: 16}).Embed(ctx, []string{tc.items[0].Text})
			if Cosine(got[tc.items[0].Hash], want[0]) < 0.999999 {
				t.Errorf("the cached vector of %s is not the embedder's", tc.items[0].Hash)
			}
		})
	}
}
