package vectors_test

import (
	"context"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/internal/vectors/vectortest"
)

func TestLocalConformance(t *testing.T) {
	vectortest.Run(t, func(t *testing.T) vectors.Index { return vectors.NewLocal(blobtest.Bucket(t), "m", vectortest.Dim) })
}

func TestLocalPersistsAndRejectsCorruption(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	ix := vectors.NewLocal(b, "model/x", 2)
	if err := ix.Upsert(ctx, "acme/one", []vectors.Record{{NodeID: "a:f", ContentHash: "h", Vector: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	again := vectors.NewLocal(b, "model/x", 2)
	hits, err := again.Search(ctx, "acme/one", []float32{1, 0}, 1)
	if err != nil || len(hits) != 1 || hits[0].NodeID != "a:f" {
		t.Fatalf("a new instance reads %v, %v", hits, err)
	}
	objs, _ := b.List(ctx, "repos/acme/one/vectors/")
	if len(objs) != 1 {
		t.Fatalf("objects %v", objs)
	}
	data, _ := b.ReadAll(ctx, objs[0].Key)
	b.WriteAll(ctx, objs[0].Key, data[:len(data)-3])
	_, err = vectors.NewLocal(b, "model/x", 2).Search(ctx, "acme/one", []float32{1, 0}, 1)
	if err == nil || !strings.Contains(err.Error(), objs[0].Key) {
		t.Fatalf("truncated index: err = %v, want one naming %s", err, objs[0].Key)
	}
	if _, err := vectors.NewLocal(b, "model/x", 2).Search(ctx, "../escape", []float32{1, 0}, 1); err == nil {
		t.Fatal("a repository name that escapes was accepted")
	}
}

func TestPrimaryKeyIsStable(t *testing.T) {
	a, b := vectors.PrimaryKey("acme/one", "a.py:f"), vectors.PrimaryKey("acme/one", "a.py:f")
	if a != b || a < 0 || a == vectors.PrimaryKey("acme/two", "a.py:f") {
		t.Fatal("primary keys must be stable, non-negative and differ across repositories")
	}
}

// A Local kept by a process (search shares one per bucket and model) must
// see what another process writes, and after its own failed write must not
// serve vectors the store does not hold.
func TestLocalSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	reader := vectors.NewLocal(b, "m", 2)
	writer := vectors.NewLocal(b, "m", 2)
	if err := writer.Upsert(ctx, "acme/a", []vectors.Record{{NodeID: "a.py:f", Vector: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	ids, err := reader.IDs(ctx, "acme/a")
	if err != nil || len(ids) != 1 {
		t.Fatalf("first read: %v, %v", ids, err)
	}
	if err := writer.Upsert(ctx, "acme/a", []vectors.Record{{NodeID: "a.py:g", Vector: []float32{0, 1}}}); err != nil {
		t.Fatal(err)
	}
	hits, err := reader.Search(ctx, "acme/a", []float32{0, 1}, 1)
	if err != nil || len(hits) != 1 || hits[0].NodeID != "a.py:g" {
		t.Fatalf("after another writer: hits %v, %v; want a.py:g (the cached copy is stale)", hits, err)
	}
	if err := writer.Delete(ctx, "acme/a", []string{"a.py:f", "a.py:g"}); err != nil {
		t.Fatal(err)
	}
	if ids, err := reader.IDs(ctx, "acme/a"); err != nil || len(ids) != 0 {
		t.Fatalf("after the other writer deleted everything: %v, %v", ids, err)
	}
	// Many repositories: the cache stays bounded and every one still reads right.
	for i := 0; i < 20; i++ {
		repo := "acme/r" + string(rune('a'+i))
		if err := writer.Upsert(ctx, repo, []vectors.Record{{NodeID: "x.py:f", Vector: []float32{1, 1}}}); err != nil {
			t.Fatal(err)
		}
		if ids, err := reader.IDs(ctx, repo); err != nil || len(ids) != 1 {
			t.Fatalf("%s: %v, %v", repo, ids, err)
		}
	}
}
