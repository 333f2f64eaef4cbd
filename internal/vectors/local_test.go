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
