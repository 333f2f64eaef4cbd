package sparse

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/schema"
)

const testKey = "repos/acme+widget/sparse/0123abcd/functions.bm25"

func testBucket(t testing.TB) *blob.Bucket {
	t.Helper()
	b, err := blob.OpenFile(t.TempDir(), fileblob.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func encode(t testing.TB, ix *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := ix.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n != ix.Size() {
		t.Fatalf("WriteTo returned %d, wrote %d, Size says %d", n, buf.Len(), ix.Size())
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	bucket := testBucket(t)
	corpus := syntheticCorpus(3000, 5)
	cfg := Config{K1: 1.5, B: 0.6}
	b := NewBuilder(cfg)
	for _, d := range corpus {
		if err := b.Add(d.id, d.text); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, bucket, testKey, ix); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, bucket, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config() != cfg || got.Len() != ix.Len() || got.NumTerms() != ix.NumTerms() || got.AvgDocLen() != ix.AvgDocLen() {
		t.Fatalf("loaded %+v %d %d %v, built %+v %d %d %v", got.Config(), got.Len(), got.NumTerms(), got.AvgDocLen(),
			ix.Config(), ix.Len(), ix.NumTerms(), ix.AvgDocLen())
	}
	ids := []string{corpus[0].id, corpus[17].id, corpus[2999].id}
	for _, q := range syntheticQueries(100, 6) {
		if a, b := ix.Search(q, 50), got.Search(q, 50); !slices.Equal(a, b) {
			t.Fatalf("%q: built %v\nloaded %v", q, a, b)
		}
		a, _ := ix.Score(q, ids)
		b, err := got.Score(q, ids)
		if err != nil || !slices.Equal(a, b) {
			t.Fatalf("Score %q: %v vs %v (%v)", q, a, b, err)
		}
	}
	// Writing the loaded index reproduces the file byte for byte, stored
	// (compressed) and as the format.
	stored, err := bucket.ReadAll(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, bucket, testKey+".again", got); err != nil {
		t.Fatal(err)
	}
	if again, err := bucket.ReadAll(ctx, testKey+".again"); err != nil || !bytes.Equal(again, stored) {
		t.Fatalf("writing the loaded index again stored other bytes (%v)", err)
	}
	data, err := zstdDecoder.DecodeAll(stored, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, got), data) {
		t.Fatal("re-encoding a loaded index changed the bytes")
	}
	// Building twice gives identical files (no map-order leaks).
	if !bytes.Equal(encode(t, buildCorpusCfg(t, cfg, corpus)), data) {
		t.Fatal("two builds of one corpus encode differently")
	}
}

func buildCorpusCfg(t testing.TB, cfg Config, corpus []synthDoc) *Index {
	t.Helper()
	b := NewBuilder(cfg)
	for i := len(corpus) - 1; i >= 0; i-- { // other insertion order
		if err := b.Add(corpus[i].id, corpus[i].text); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestRoundTripSmall(t *testing.T) {
	for name, docs := range map[string]map[string]string{
		"tiny":      tiny,
		"empty":     {},
		"no tokens": {"a": "", "b": "the of"},
		"unicode":   {"größe.py:f": "größeBerechnen", "用户.py:g": "获取用户名"},
	} {
		t.Run(name, func(t *testing.T) {
			ix := build(t, DefaultConfig(), docs)
			got, err := Decode(encode(t, ix))
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"apple", "cherry durian", "größe", "获取用户名", ""} {
				if a, b := ix.Search(q, 10), got.Search(q, 10); !slices.Equal(a, b) {
					t.Errorf("%q: %v vs %v", q, a, b)
				}
			}
			for id := range docs {
				if !got.Contains(id) {
					t.Errorf("lost doc %q", id)
				}
			}
		})
	}
}

func TestLoadTruncated(t *testing.T) {
	ctx := context.Background()
	bucket := testBucket(t)
	data := encode(t, build(t, DefaultConfig(), tiny))
	for _, n := range []int{0, 1, 7, 8, 11, 12, headerSize - 1, headerSize, headerSize + 3, len(data) / 2, len(data) - 5, len(data) - 1} {
		if err := bucket.WriteAll(ctx, testKey, data[:n]); err != nil {
			t.Fatal(err)
		}
		_, err := Load(ctx, bucket, testKey)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d of %d bytes: err = %v, want ErrCorrupt", n, len(data), err)
		}
		if !strings.Contains(err.Error(), testKey) {
			t.Fatalf("%d bytes: error %q does not name the key", n, err)
		}
		if n >= 12 && !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("%d bytes: error %q does not say truncated", n, err)
		}
	}
	// Extra bytes are corruption too.
	if _, err := Decode(append(slices.Clone(data), 0)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "trailing") {
		t.Fatalf("trailing byte: %v", err)
	}
}

func TestLoadWrongVersion(t *testing.T) {
	ctx := context.Background()
	bucket := testBucket(t)
	data := encode(t, build(t, DefaultConfig(), tiny))

	v2 := slices.Clone(data)
	binary.LittleEndian.PutUint16(v2[8:], schema.SparseIndexVersion+1)
	if err := bucket.WriteAll(ctx, testKey, v2); err != nil {
		t.Fatal(err)
	}
	_, err := Load(ctx, bucket, testKey)
	if !errors.Is(err, ErrVersion) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), testKey) ||
		!strings.Contains(err.Error(), "format version 2") {
		t.Fatalf("err = %v, want ErrVersion naming the key and version 2", err)
	}

	tok := slices.Clone(data)
	binary.LittleEndian.PutUint16(tok[10:], schema.TokenizerVersion+1)
	if _, err := Decode(tok); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "tokenizer version") {
		t.Fatalf("tokenizer version: err = %v", err)
	}
}

func TestLoadCorrupt(t *testing.T) {
	data := encode(t, build(t, DefaultConfig(), tiny))
	// Flip each byte in turn: every change must be caught, never panic.
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x40
		_, err := Decode(bad)
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("byte %d flipped: err = %v", i, err)
		}
	}
	bad := slices.Clone(data)
	bad[headerSize+2] ^= 1
	if _, err := Decode(bad); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("err = %v, want checksum mismatch", err)
	}
	bad = slices.Clone(data)
	bad[0] = 'X'
	if _, err := Decode(bad); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("err = %v, want bad magic", err)
	}
}

// reseal recomputes the checksum, to reach the structural checks behind it.
func reseal(data []byte) []byte {
	body := data[:len(data)-trailerSize]
	binary.LittleEndian.PutUint32(data[len(body):], crc32.Checksum(body, castagnoli))
	return data
}

func TestLoadStructuralChecks(t *testing.T) {
	ix := build(t, DefaultConfig(), tiny)
	data := encode(t, ix)
	le := binary.LittleEndian
	docOff := headerSize
	docLen := docOff + (ix.Len()+1)*4
	docIDs := docLen + ix.Len()*4
	termOff := docIDs + len(ix.docData)
	terms := termOff + (ix.NumTerms()+1)*4
	df := terms + len(ix.termData)
	postOff := df + ix.NumTerms()*4
	postings := postOff + (ix.NumTerms()+1)*4
	cases := []struct {
		name, want string
		edit       func(b []byte)
	}{
		{"flags", "flags", func(b []byte) { le.PutUint32(b[12:], 1) }},
		{"reserved", "reserved", func(b []byte) { le.PutUint32(b[60:], 1) }},
		{"k1", "k1", func(b []byte) { le.PutUint64(b[16:], 0) }},
		{"total length", "lengths add up", func(b []byte) { le.PutUint64(b[40:], 99) }},
		{"doc order", "doc ids out of order", func(b []byte) { b[docIDs], b[docIDs+1] = 'b', 'a' }},
		{"doc offsets", "doc id offsets", func(b []byte) { le.PutUint32(b[docOff+4:], 3) }},
		{"term order", "terms out of order", func(b []byte) { b[terms] = 'z' }},
		{"term offsets", "term offsets", func(b []byte) { le.PutUint32(b[termOff:], 1) }},
		{"df zero", "document frequency 0", func(b []byte) { le.PutUint32(b[df:], 0) }},
		{"df too big", "document frequency 4", func(b []byte) { le.PutUint32(b[df:], 4) }},
		{"postings offsets", "postings offsets", func(b []byte) { le.PutUint32(b[postOff+len(ix.df)*4:], 1) }},
	}
	for _, c := range cases {
		bad := slices.Clone(data)
		c.edit(bad)
		_, err := Decode(reseal(bad))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrCorrupt mentioning %q", c.name, err, c.want)
		}
	}

	// Postings pass the cheap load checks; nonsense in them (a doc ordinal
	// past N, a truncated varint) is skipped at search time, never a panic.
	for i := postings; i < len(data)-trailerSize; i++ {
		for _, v := range []byte{0xff, 0x80, 0x00, 0x7e} {
			bad := slices.Clone(data)
			bad[i] = v
			got, err := Decode(reseal(bad))
			if err != nil {
				continue
			}
			for _, q := range []string{"apple banana cherry durian", "cherry"} {
				got.Search(q, 10)
				if _, err := got.Score(q, []string{"a", "b", "c"}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(context.Background(), testBucket(t), testKey)
	if !errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), testKey) {
		t.Fatalf("err = %v, want ErrNotFound naming the key", err)
	}
}

func TestWriteCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bucket := testBucket(t)
	if err := Write(ctx, bucket, testKey, build(t, DefaultConfig(), tiny)); err == nil {
		t.Fatal("write with cancelled context succeeded")
	}
	if ok, _ := bucket.Exists(context.Background(), testKey); ok {
		t.Fatal("cancelled write left an object")
	}
}

func FuzzDecode(f *testing.F) {
	data := encode(f, build(f, DefaultConfig(), tiny))
	f.Add(data)
	f.Add(data[:headerSize])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Checksums would stop the fuzzer at the door; reseal so it
		// reaches the structural checks and Search.
		if len(b) >= headerSize+trailerSize {
			b = reseal(b)
		}
		ix, err := Decode(b)
		if err != nil {
			return
		}
		ix.Search("apple banana cherry durian", 5)
	})
}

// Write stores the index compressed: smaller than the format itself, read
// back equal; a damaged or truncated frame is ErrCorrupt naming the key,
// and an index stored bare (before compression) still loads.
func TestWriteCompressed(t *testing.T) {
	ctx := context.Background()
	bucket := testBucket(t)
	ix := build(t, DefaultConfig(), tiny)
	raw := encode(t, ix)
	if err := Write(ctx, bucket, testKey, ix); err != nil {
		t.Fatal(err)
	}
	stored, err := bucket.ReadAll(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, zstdMagic) || len(stored) >= len(raw) {
		t.Fatalf("stored %d bytes (zstd: %v) for a %d-byte index", len(stored), bytes.HasPrefix(stored, zstdMagic), len(raw))
	}
	got, err := Load(ctx, bucket, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, got), raw) {
		t.Fatal("the loaded index differs from the one written")
	}
	for name, bad := range map[string][]byte{
		"truncated":    stored[:len(stored)-3],
		"byte flipped": func() []byte { b := slices.Clone(stored); b[len(b)/2] ^= 0x40; return b }(),
	} {
		if err := bucket.WriteAll(ctx, testKey, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(ctx, bucket, testKey); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: %v; want ErrCorrupt naming %s", name, err, testKey)
		}
	}
	if err := bucket.WriteAll(ctx, testKey, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, bucket, testKey); err != nil {
		t.Fatalf("an index stored bare: %v", err)
	}
}
