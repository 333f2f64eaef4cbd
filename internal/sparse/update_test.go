package sparse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

// TestBuilderFromEqualsRebuild changes, drops and adds documents of an index
// and checks that the index built from the old one is byte for byte the
// index of every text rebuilt from scratch.
func TestBuilderFromEqualsRebuild(t *testing.T) {
	base := syntheticCorpus(2000, 7)
	r := rand.New(rand.NewPCG(1, 2))
	other := syntheticCorpus(2000, 8)
	for _, tc := range []struct {
		name                   string
		change, remove, insert int
		cfg                    Config
	}{
		{"nothing changed", 0, 0, 0, DefaultConfig()},
		{"one document changed", 1, 0, 0, DefaultConfig()},
		{"a few changed, dropped and added", 5, 5, 5, DefaultConfig()},
		{"a third changed", 600, 100, 300, DefaultConfig()},
		{"everything dropped", 0, 2000, 3, DefaultConfig()},
		{"other parameters", 20, 20, 20, Config{K1: 0.9, B: 0.4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := buildCorpusCfg(t, tc.cfg, base)
			next := map[string]string{}
			for _, d := range base {
				next[d.id] = d.text
			}
			perm := r.Perm(len(base))
			changed := map[string]bool{}
			for _, i := range perm[:tc.change] {
				id := base[i].id
				next[id] = other[i].text // other words, other length
				changed[id] = true
			}
			for _, i := range perm[tc.change : tc.change+min(tc.remove, len(base)-tc.change)] {
				delete(next, base[i].id)
			}
			for i := range tc.insert {
				id := fmt.Sprintf("new/%04d.py:f", i)
				next[id], changed[id] = other[len(other)-1-i].text, true
			}
			var want []synthDoc
			for id, text := range next {
				want = append(want, synthDoc{id, text})
			}
			full := buildCorpusCfg(t, tc.cfg, want)

			b, err := NewBuilderFrom(old, func(id string) bool { _, ok := next[id]; return ok && !changed[id] })
			if err != nil {
				t.Fatal(err)
			}
			for id := range changed {
				if err := b.Add(id, next[id]); err != nil {
					t.Fatal(err)
				}
			}
			inc, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encode(t, inc), encode(t, full)) {
				t.Fatalf("incremental index differs from a rebuild: %d docs %d terms vs %d docs %d terms",
					inc.Len(), inc.NumTerms(), full.Len(), full.NumTerms())
			}
		})
	}
}

func TestBuilderFromRefusesDamagedPostings(t *testing.T) {
	ix := buildCorpus(t, syntheticCorpus(50, 3))
	data := encode(t, ix)
	bad, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	// Decode checks the file's checksum; damage after loading (or a crafted
	// file) must still not panic or yield a wrong builder.
	bad.postings = bytes.Repeat([]byte{0xff}, len(bad.postings))
	if _, err := NewBuilderFrom(bad, func(string) bool { return true }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}

func TestDocHashes(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	corpus := syntheticCorpus(100, 5)
	ix := buildCorpus(t, corpus)
	texts := map[string]string{}
	for _, d := range corpus {
		texts[d.id] = d.text
	}
	hash := func(id string) uint64 { return DocHash(texts[id]) }
	if err := WriteDocHashes(ctx, b, "x.docs", ix, hash); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDocHashes(ctx, b, "x.docs", ix)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(corpus) {
		t.Fatalf("%d hashes, want %d", len(got), len(corpus))
	}
	for id, text := range texts {
		if got[id] != DocHash(text) {
			t.Fatalf("hash of %s differs", id)
		}
	}
	// For another index, damaged, truncated: refused as corrupt, naming the key.
	otherIx := buildCorpus(t, syntheticCorpus(100, 6))
	data, _ := b.ReadAll(ctx, "x.docs")
	flipped := bytes.Clone(data)
	flipped[20] ^= 1
	if err := b.WriteAll(ctx, "flipped.docs", flipped); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "short.docs", data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key string
		ix  *Index
	}{{"x.docs", otherIx}, {"flipped.docs", ix}, {"short.docs", ix}} {
		if _, err := ReadDocHashes(ctx, b, tc.key, tc.ix); !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(tc.key)) {
			t.Errorf("%s: err = %v, want ErrCorrupt naming it", tc.key, err)
		}
	}
}

// BenchmarkUpdate compares a full rebuild of 10,000 Go functions with an
// update from the previous index after 5 of them changed: the case
// NewBuilderFrom exists for (a re-index after one commit).
func BenchmarkUpdate(b *testing.B) {
	docs, _ := goSourceCorpus(b, 10000, 0)
	old := buildCorpus(b, docs)
	changed := map[string]bool{}
	for i := range 5 {
		changed[docs[i*1000].id] = true
	}
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			buildCorpus(b, docs)
		}
	})
	b.Run("update", func(b *testing.B) {
		for b.Loop() {
			bl, err := NewBuilderFrom(old, func(id string) bool { return !changed[id] })
			if err != nil {
				b.Fatal(err)
			}
			for _, d := range docs {
				if changed[d.id] {
					if err := bl.Add(d.id, d.text+" changed"); err != nil {
						b.Fatal(err)
					}
				}
			}
			if _, err := bl.Build(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
