// Package vectortest is the conformance suite every vectors.Index driver passes.
package vectortest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/locus-dev/locus/internal/vectors"
)

// Dim is the dimension the suite's indexes are created with.
const Dim = 4

// Run runs the suite; newIndex returns an empty index of dimension Dim.
func Run(t *testing.T, newIndex func(t *testing.T) vectors.Index) {
	ctx := context.Background()
	recs := []vectors.Record{
		{NodeID: "a.py:f", ContentHash: "h1", Commit: "c1", Vector: []float32{1, 0, 0, 0}},
		{NodeID: "a.py:g", ContentHash: "h2", Commit: "c1", Vector: []float32{0.9, 0.1, 0, 0}},
		{NodeID: "b.py:h", ContentHash: "h3", Commit: "c1", Vector: []float32{0, 1, 0, 0}},
		{NodeID: "b.py:i", ContentHash: "h4", Commit: "c1", Vector: []float32{0, 0, 1, 0}},
	}
	ids := func(hs []vectors.Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.NodeID)
		}
		return out
	}
	t.Run("upsert and search", func(t *testing.T) {
		ix := newIndex(t)
		if err := ix.Upsert(ctx, "acme/one", recs); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(ctx, "acme/one", []float32{1, 0, 0, 0}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !reflect.DeepEqual(got, []string{"a.py:f", "a.py:g", "b.py:h"}) {
			t.Errorf("search order %v", got)
		}
		if hits[0].Score < 0.999 || hits[0].Score > 1.001 {
			t.Errorf("cosine of identical directions = %v", hits[0].Score)
		}
		all, _ := ix.Search(ctx, "acme/one", []float32{1, 0, 0, 0}, 100)
		if len(all) != 4 {
			t.Errorf("k beyond the count returned %d hits", len(all))
		}
	})
	t.Run("replace, delete, ids", func(t *testing.T) {
		ix := newIndex(t)
		ix.Upsert(ctx, "acme/one", recs)
		if err := ix.Upsert(ctx, "acme/one", []vectors.Record{{NodeID: "b.py:i", ContentHash: "h9", Commit: "c2", Vector: []float32{1, 0, 0, 0}}}); err != nil {
			t.Fatal(err)
		}
		if err := ix.Delete(ctx, "acme/one", []string{"a.py:g", "no.such:id"}); err != nil {
			t.Fatal(err)
		}
		got, err := ix.IDs(ctx, "acme/one")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"a.py:f": "h1", "b.py:h": "h3", "b.py:i": "h9"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ids %v, want %v", got, want)
		}
		hits, _ := ix.Search(ctx, "acme/one", []float32{1, 0, 0, 0}, 2)
		// a.py:f and the replaced b.py:i tie at 1.0: node id breaks the tie.
		if g := ids(hits); !reflect.DeepEqual(g, []string{"a.py:f", "b.py:i"}) {
			t.Errorf("after replace and delete: %v", g)
		}
	})
	t.Run("repositories are isolated", func(t *testing.T) {
		ix := newIndex(t)
		ix.Upsert(ctx, "acme/one", recs[:2])
		ix.Upsert(ctx, "acme/two", recs[2:])
		hits, _ := ix.Search(ctx, "acme/two", []float32{1, 0, 0, 0}, 10)
		if g := ids(hits); len(g) != 2 || g[0] == "a.py:f" || g[1] == "a.py:f" {
			t.Errorf("acme/two sees %v", g)
		}
		empty, err := ix.Search(ctx, "acme/none", []float32{1, 0, 0, 0}, 10)
		if err != nil || len(empty) != 0 {
			t.Errorf("unknown repository: %v %v", empty, err)
		}
	})
	t.Run("dimension mismatch", func(t *testing.T) {
		ix := newIndex(t)
		err := ix.Upsert(ctx, "acme/one", []vectors.Record{{NodeID: "x", Vector: []float32{1, 2}}})
		if !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("upsert of a short vector: %v", err)
		}
		if _, err := ix.Search(ctx, "acme/one", []float32{1}, 1); !errors.Is(err, vectors.ErrDimension) {
			t.Errorf("search with a short query: %v", err)
		}
	})
	t.Run("many records", func(t *testing.T) {
		ix := newIndex(t)
		var many []vectors.Record
		for i := 0; i < 2500; i++ {
			many = append(many, vectors.Record{NodeID: fmt.Sprintf("f%04d.py:x", i), ContentHash: "h",
				Vector: []float32{float32(i % 7), float32(i % 11), float32(i % 13), 1}})
		}
		if err := ix.Upsert(ctx, "acme/big", many); err != nil {
			t.Fatal(err)
		}
		got, _ := ix.IDs(ctx, "acme/big")
		if len(got) != 2500 {
			t.Errorf("%d ids after upserting 2500", len(got))
		}
	})
}
