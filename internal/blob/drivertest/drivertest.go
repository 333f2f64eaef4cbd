// Package drivertest is the conformance suite that every blob driver must pass.
package drivertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
)

// RunConformanceTests runs the suite. newBucket must return an empty bucket
// for each call and arrange its own cleanup (t.Cleanup).
func RunConformanceTests(t *testing.T, newBucket func(t *testing.T) *blob.Bucket) {
	tests := []struct {
		name string
		fn   func(*testing.T, *blob.Bucket)
	}{
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"RangeRead", testRangeRead},
		{"ReaderAt", testReaderAt},
		{"List", testList},
		{"ListMany", testListMany},
		{"ListDirs", testListDirs},
		{"Delete", testDelete},
		{"NotFound", testNotFound},
		{"InvalidKeys", testInvalidKeys},
		{"AtomicReplace", testAtomicReplace},
		{"Abort", testAbort},
		{"BigObject", testBigObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newBucket(t)) })
	}
}

func mustWrite(t *testing.T, b *blob.Bucket, key string, data []byte) {
	t.Helper()
	if err := b.WriteAll(t.Context(), key, data); err != nil {
		t.Fatalf("WriteAll(%q): %v", key, err)
	}
}

func mustRead(t *testing.T, b *blob.Bucket, key string) []byte {
	t.Helper()
	data, err := b.ReadAll(t.Context(), key)
	if err != nil {
		t.Fatalf("ReadAll(%q): %v", key, err)
	}
	return data
}

func exists(t *testing.T, b *blob.Bucket, key string) bool {
	t.Helper()
	ok, err := b.Exists(t.Context(), key)
	if err != nil {
		t.Fatalf("Exists(%q): %v", key, err)
	}
	return ok
}

func listKeys(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	objs, err := b.List(t.Context(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return keys
}

// pattern is deterministic, non-repeating at short periods, and covers all byte values.
func pattern(n int, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*7 + seed*13 + i/251) % 256)
	}
	return b
}

// checkModTime allows for second-granular servers and modest clock skew.
func checkModTime(t *testing.T, key string, got, start time.Time) {
	t.Helper()
	if got.Before(start.Add(-time.Minute)) || got.After(time.Now().Add(time.Minute)) {
		t.Errorf("%s: ModTime %v not near write time %v", key, got, start)
	}
}

func testRoundTrip(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	all := make([]byte, 3*256)
	for i := range all {
		all[i] = byte(i)
	}
	objects := map[string][]byte{
		"empty":                              {},
		"text.txt":                           []byte("hello, locus\n"),
		"dir/binary.bin":                     all,
		"deep/a/b/c/d/e.json":                []byte(`{"k":1}`),
		"unicode/ünï cödé ☃.txt":             []byte("snow"),
		"odd/a+b=c&d?e#f%20g@h!$'(),;:~.txt": []byte("odd"),
		".hidden/x..y":                       []byte("dots"),
	}
	start := time.Now()
	for key, data := range objects {
		mustWrite(t, b, key, data)
	}
	for key, want := range objects {
		if got := mustRead(t, b, key); !bytes.Equal(got, want) {
			t.Errorf("ReadAll(%q) = %d bytes %q, want %d bytes", key, len(got), truncate(got), len(want))
		}
		a, err := b.Attributes(ctx, key)
		if err != nil {
			t.Fatalf("Attributes(%q): %v", key, err)
		}
		if a.Size != int64(len(want)) {
			t.Errorf("Attributes(%q).Size = %d, want %d", key, a.Size, len(want))
		}
		if a.ETag == "" {
			t.Errorf("Attributes(%q).ETag is empty", key)
		}
		checkModTime(t, key, a.ModTime, start)
		r, err := b.NewReader(ctx, key)
		if err != nil {
			t.Fatalf("NewReader(%q): %v", key, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) || r.Size() != int64(len(want)) {
			t.Errorf("NewReader(%q): got %d bytes, Size %d, err %v; want %d bytes", key, len(got), r.Size(), err, len(want))
		}
		if !exists(t, b, key) {
			t.Errorf("Exists(%q) = false after write", key)
		}
	}
	if exists(t, b, "missing") {
		t.Error(`Exists("missing") = true`)
	}

	// Many small writes make one object.
	w, err := b.NewWriter(ctx, "chunks")
	if err != nil {
		t.Fatal(err)
	}
	want := pattern(100_000, 1)
	for chunk := range slices.Chunk(want, 777) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, b, "chunks"); !bytes.Equal(got, want) {
		t.Errorf("chunked write read back %d bytes, want %d", len(got), len(want))
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Close: %v", err)
	}
}

func truncate(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

func testOverwrite(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	mustWrite(t, b, "k", pattern(1000, 1))
	a1, err := b.Attributes(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	want := pattern(300, 2)
	mustWrite(t, b, "k", want)
	if got := mustRead(t, b, "k"); !bytes.Equal(got, want) {
		t.Fatalf("after overwrite read %d bytes, want %d", len(got), len(want))
	}
	a2, err := b.Attributes(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if a2.Size != 300 {
		t.Errorf("Size after overwrite = %d, want 300", a2.Size)
	}
	if a1.ETag == a2.ETag {
		t.Errorf("ETag unchanged by overwrite: %q", a1.ETag)
	}
	if keys := listKeys(t, b, ""); !slices.Equal(keys, []string{"k"}) {
		t.Errorf("List after overwrite = %q, want [k]", keys)
	}
}

func testRangeRead(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	data := pattern(1000, 3)
	mustWrite(t, b, "r", data)
	mustWrite(t, b, "empty", nil)
	cases := []struct {
		key            string
		offset, length int64
		want           []byte
	}{
		{"r", 0, -1, data},
		{"r", 0, 10, data[:10]},
		{"r", 10, 20, data[10:30]},
		{"r", 500, 1, data[500:501]},
		{"r", 990, -1, data[990:]},
		{"r", 999, 1, data[999:]},
		{"r", 995, 100, data[995:]},
		{"r", 0, 5000, data},
		{"r", 100, 0, nil},
		{"r", 1000, -1, nil},
		{"r", 1000, 10, nil},
		{"r", 5000, 10, nil},
		{"empty", 0, -1, nil},
		{"empty", 0, 10, nil},
		{"empty", 5, -1, nil},
	}
	for _, c := range cases {
		r, err := b.NewRangeReader(ctx, c.key, c.offset, c.length)
		if err != nil {
			t.Errorf("NewRangeReader(%q, %d, %d): %v", c.key, c.offset, c.length, err)
			continue
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Errorf("NewRangeReader(%q, %d, %d): read: %v", c.key, c.offset, c.length, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("NewRangeReader(%q, %d, %d) = %d bytes, want %d", c.key, c.offset, c.length, len(got), len(c.want))
		}
		wantSize := int64(len(data))
		if c.key == "empty" {
			wantSize = 0
		}
		if r.Size() != wantSize {
			t.Errorf("NewRangeReader(%q, %d, %d).Size() = %d, want object size %d", c.key, c.offset, c.length, r.Size(), wantSize)
		}
	}
	for _, bad := range [][2]int64{{-1, 10}, {0, -2}} {
		if _, err := b.NewRangeReader(ctx, "r", bad[0], bad[1]); err == nil || errors.Is(err, blob.ErrNotFound) {
			t.Errorf("NewRangeReader(r, %d, %d) error = %v, want a range error", bad[0], bad[1], err)
		}
	}
}

func testReaderAt(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	data := pattern(10_000, 4)
	mustWrite(t, b, "ra", data)
	ra, err := b.OpenReaderAt(ctx, "ra")
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	if ra.Size() != int64(len(data)) {
		t.Fatalf("Size = %d, want %d", ra.Size(), len(data))
	}
	cases := []struct {
		off     int64
		n       int
		wantN   int
		wantEOF bool
	}{
		{0, 100, 100, false},
		{5000, 1234, 1234, false},
		{9990, 10, 10, false},
		{9995, 10, 5, true},
		{10_000, 1, 0, true},
		{20_000, 1, 0, true},
		{0, 0, 0, false},
	}
	for _, c := range cases {
		p := make([]byte, c.n)
		n, err := ra.ReadAt(p, c.off)
		if n != c.wantN || (err == io.EOF) != c.wantEOF || (err != nil && err != io.EOF) {
			t.Errorf("ReadAt(len %d, off %d) = %d, %v; want %d, EOF=%v", c.n, c.off, n, err, c.wantN, c.wantEOF)
			continue
		}
		if n > 0 && !bytes.Equal(p[:n], data[c.off:c.off+int64(n)]) {
			t.Errorf("ReadAt(len %d, off %d): wrong bytes", c.n, c.off)
		}
	}
	if _, err := ra.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at -1 succeeded")
	}
	// io.ReaderAt allows parallel calls; parquet readers make them.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 10 {
				off := rng.IntN(len(data))
				p := make([]byte, rng.IntN(2000)+1)
				n, err := ra.ReadAt(p, int64(off))
				if (err != nil && err != io.EOF) || !bytes.Equal(p[:n], data[off:min(off+len(p), len(data))]) {
					t.Errorf("parallel ReadAt(off %d, len %d) = %d, %v", off, len(p), n, err)
				}
			}
		})
	}
	wg.Wait()
	all, err := io.ReadAll(io.NewSectionReader(ra, 0, ra.Size()))
	if err != nil || !bytes.Equal(all, data) {
		t.Errorf("SectionReader over ReaderAt: %d bytes, %v", len(all), err)
	}

	mustWrite(t, b, "ra", pattern(10_000, 5))
	if _, err := ra.ReadAt(make([]byte, 10), 0); !errors.Is(err, blob.ErrChanged) {
		t.Errorf("ReadAt after replace: err = %v, want ErrChanged", err)
	}

	mustWrite(t, b, "ra-empty", nil)
	ra0, err := b.OpenReaderAt(ctx, "ra-empty")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ra0.ReadAt(make([]byte, 4), 0); n != 0 || err != io.EOF || ra0.Size() != 0 {
		t.Errorf("empty object: ReadAt = %d, %v; Size %d", n, err, ra0.Size())
	}
}

func testList(t *testing.T, b *blob.Bucket) {
	keys := []string{"a-c", "a/b/c", "a/b/d", "a/b/e/f", "a/bb", "b", "ba/x", "z/y/x/w"}
	start := time.Now()
	for i, k := range keys {
		mustWrite(t, b, k, pattern(i+1, i))
	}
	cases := map[string][]string{
		"":          keys,
		"a":         {"a-c", "a/b/c", "a/b/d", "a/b/e/f", "a/bb"},
		"a/":        {"a/b/c", "a/b/d", "a/b/e/f", "a/bb"},
		"a/b":       {"a/b/c", "a/b/d", "a/b/e/f", "a/bb"},
		"a/b/":      {"a/b/c", "a/b/d", "a/b/e/f"},
		"a/b/e/f":   {"a/b/e/f"},
		"b":         {"b", "ba/x"},
		"z/y/":      {"z/y/x/w"},
		"nothing":   {},
		"nothing/":  {},
		"a/b/c/d/":  {},
		"a/b/c/":    {},
		"z/y/x/w/v": {},
	}
	for prefix, want := range cases {
		if got := listKeys(t, b, prefix); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
	objs, err := b.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range objs {
		if o.Size != int64(i+1) {
			t.Errorf("List: %s Size = %d, want %d", o.Key, o.Size, i+1)
		}
		checkModTime(t, o.Key, o.ModTime, start)
	}
	for _, bad := range []string{"/a", "../", "a//", "a\\b", "./a", "a/../b"} {
		if _, err := b.List(t.Context(), bad); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List(%q) error = %v, want ErrInvalidKey", bad, err)
		}
	}
}

// testListMany crosses S3's 1,000-entry page size, for keys and, since
// each key is in a directory of its own, for ListDirs' common prefixes.
func testListMany(t *testing.T, b *blob.Bucket) {
	const n = 1100
	var want, wantDirs []string
	for i := range n {
		want = append(want, fmt.Sprintf("many/k%05d/o", i))
		wantDirs = append(wantDirs, fmt.Sprintf("many/k%05d/", i))
	}
	keys := make(chan string)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for k := range keys {
				if err := b.WriteAll(t.Context(), k, []byte(k)); err != nil {
					errs <- err
				}
			}
		})
	}
	// Out of order, so sorting is the bucket's job.
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		keys <- want[i]
	}
	close(keys)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustWrite(t, b, "many2", []byte("x"))
	if got := listKeys(t, b, "many/"); !slices.Equal(got, want) {
		t.Errorf("List(many/) returned %d keys (sorted: %v), want %d", len(got), slices.IsSorted(got), n)
	}
	if got := listKeys(t, b, "many/k001"); !slices.Equal(got, want[100:200]) {
		t.Errorf("List(many/k001) returned %d keys, want 100", len(got))
	}
	if got := listKeys(t, b, ""); len(got) != n+1 || got[n] != "many2" {
		t.Errorf("List(\"\") returned %d keys, want %d ending with many2", len(got), n+1)
	}
	if got := listDirs(t, b, "many/"); !slices.Equal(got, wantDirs) {
		t.Errorf("ListDirs(many/) returned %d dirs (sorted: %v), want %d", len(got), slices.IsSorted(got), n)
	}
	if got := listDirs(t, b, ""); !slices.Equal(got, []string{"many/"}) {
		t.Errorf("ListDirs(\"\") = %q, want [many/]", got)
	}
}

func listDirs(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	dirs, err := b.ListDirs(t.Context(), prefix)
	if err != nil {
		t.Fatalf("ListDirs(%q): %v", prefix, err)
	}
	return dirs
}

func testListDirs(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	keys := []string{
		"a-c", "a/b/c", "a/b/d", "a/b/e/f", "a/bb", "b", "ba/x", "z/y/x/w",
		"deep/1/2/3/4/5", "odd/ünï cödé/x", "odd/a+b=c/y", ".hidden/x",
	}
	for i, k := range keys {
		mustWrite(t, b, k, pattern(i+1, i))
	}
	cases := map[string][]string{
		"":              {".hidden/", "a/", "ba/", "deep/", "odd/", "z/"},
		"a/":            {"a/b/"},
		"a/b/":          {"a/b/e/"},
		"a/b/e/":        nil, // only an object
		"z/":            {"z/y/"},
		"z/y/":          {"z/y/x/"},
		"deep/1/2/":     {"deep/1/2/3/"},
		"deep/1/2/3/4/": nil,
		"odd/":          {"odd/a+b=c/", "odd/ünï cödé/"},
		"nothing/":      nil,
		"b/":            nil, // an object, not a directory
		"a/b/c/":        nil,
		"a-c/":          nil,
		"a/b/c/d/":      nil, // below an object
	}
	for prefix, want := range cases {
		if got := listDirs(t, b, prefix); !slices.Equal(got, want) {
			t.Errorf("ListDirs(%q) = %q, want %q", prefix, got, want)
		}
	}
	// Dirs disappear with their last object.
	for _, k := range []string{"z/y/x/w", "a/b/e/f", "deep/1/2/3/4/5"} {
		if err := b.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := listDirs(t, b, ""), []string{".hidden/", "a/", "ba/", "odd/"}; !slices.Equal(got, want) {
		t.Errorf("after deletes ListDirs(\"\") = %q, want %q", got, want)
	}
	if got := listDirs(t, b, "a/b/"); len(got) != 0 {
		t.Errorf("after deletes ListDirs(a/b/) = %q, want none", got)
	}
	for _, bad := range []string{"a", "a/b", "/a/", "../", "a//", "a\\b/", "./a/", "a/../b/"} {
		if _, err := b.ListDirs(ctx, bad); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("ListDirs(%q) error = %v, want ErrInvalidKey", bad, err)
		}
	}
}

func testDelete(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	mustWrite(t, b, "del/a/b/c", []byte("1"))
	mustWrite(t, b, "del/a/x", []byte("2"))
	if err := b.Delete(ctx, "del/a/b/c"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if exists(t, b, "del/a/b/c") {
		t.Error("deleted key still exists")
	}
	if _, err := b.ReadAll(ctx, "del/a/b/c"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("ReadAll after Delete: %v, want ErrNotFound", err)
	}
	if got := listKeys(t, b, "del/"); !slices.Equal(got, []string{"del/a/x"}) {
		t.Errorf("List after Delete = %q", got)
	}
	if err := b.Delete(ctx, "del/a/b/c"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	// A prefix of existing keys is not an object.
	if err := b.Delete(ctx, "del/a"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Delete of a prefix: %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx, "del/a/x"); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, b, ""); len(got) != 0 {
		t.Errorf("List after deleting everything = %q", got)
	}
	mustWrite(t, b, "del/a/b/c", []byte("3"))
	if got := mustRead(t, b, "del/a/b/c"); string(got) != "3" {
		t.Errorf("rewrite after Delete read %q", got)
	}
}

func testNotFound(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	mustWrite(t, b, "nf/file", []byte("x"))
	for _, key := range []string{"missing", "no/such/dir/key", "nf/file/child", "nf"} {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("%s(%q) error = %v, want ErrNotFound", op, key, err)
			} else if !strings.Contains(err.Error(), key) {
				t.Errorf("%s(%q) error %q does not name the key", op, key, err)
			}
		}
		_, err := b.ReadAll(ctx, key)
		check("ReadAll", err)
		_, err = b.NewReader(ctx, key)
		check("NewReader", err)
		_, err = b.NewRangeReader(ctx, key, 0, 10)
		check("NewRangeReader", err)
		_, err = b.NewRangeReader(ctx, key, 5, 0)
		check("NewRangeReader(len 0)", err)
		_, err = b.NewRangeReader(ctx, key, 100, -1)
		check("NewRangeReader(past end)", err)
		_, err = b.Attributes(ctx, key)
		check("Attributes", err)
		_, err = b.OpenReaderAt(ctx, key)
		check("OpenReaderAt", err)
		check("Delete", b.Delete(ctx, key))
		if exists(t, b, key) {
			t.Errorf("Exists(%q) = true", key)
		}
	}
}

func testInvalidKeys(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	bad := []string{
		"", "../x", "/abs", "a//b", "a/./b", "a\\b", "a/", ".", "..", "a/..", "./a",
		"x\x00y", "x\ny", "\xff\xfe", strings.Repeat("a", blob.MaxKeyLen+1),
	}
	for _, key := range bad {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("%s(%q) error = %v, want ErrInvalidKey", op, key, err)
			} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
				t.Errorf("%s(%q) error %q does not name the key", op, key, err)
			}
		}
		check("WriteAll", b.WriteAll(ctx, key, []byte("x")))
		_, err := b.NewWriter(ctx, key)
		check("NewWriter", err)
		_, err = b.ReadAll(ctx, key)
		check("ReadAll", err)
		_, err = b.NewRangeReader(ctx, key, 0, 1)
		check("NewRangeReader", err)
		_, err = b.Attributes(ctx, key)
		check("Attributes", err)
		_, err = b.Exists(ctx, key)
		check("Exists", err)
		_, err = b.OpenReaderAt(ctx, key)
		check("OpenReaderAt", err)
		check("Delete", b.Delete(ctx, key))
	}
	if got := listKeys(t, b, ""); len(got) != 0 {
		t.Errorf("invalid writes left objects: %q", got)
	}
	seg := strings.Repeat("s", 200)
	longest := strings.Repeat(seg+"/", 5)
	longest += strings.Repeat("t", blob.MaxKeyLen-len(longest))
	for _, key := range []string{"a..b", "...", ".a/b.", "a b/c", longest} {
		mustWrite(t, b, key, []byte(key))
		if got := mustRead(t, b, key); string(got) != key {
			t.Errorf("valid key %q read back %q", key, got)
		}
	}
}

// Each 8-byte word of a version object is (version, word index), so any
// aligned range shows whether it came from one complete version.
const baseWords = 16 << 10

func versionObject(v uint32) []byte {
	words := baseWords + int(v)*97
	b := make([]byte, words*8)
	for i := range words {
		binary.LittleEndian.PutUint32(b[i*8:], v)
		binary.LittleEndian.PutUint32(b[i*8+4:], uint32(i))
	}
	return b
}

// checkWords verifies data as words firstWord… of one version and returns it.
func checkWords(data []byte, firstWord int) (uint32, error) {
	if len(data) == 0 || len(data)%8 != 0 {
		return 0, fmt.Errorf("length %d is not a positive multiple of 8", len(data))
	}
	v := binary.LittleEndian.Uint32(data)
	for i := 0; i < len(data)/8; i++ {
		gv, gi := binary.LittleEndian.Uint32(data[i*8:]), binary.LittleEndian.Uint32(data[i*8+4:])
		if gv != v || gi != uint32(firstWord+i) {
			return 0, fmt.Errorf("word %d is (v%d, #%d), want (v%d, #%d): mixed or torn object", firstWord+i, gv, gi, v, firstWord+i)
		}
	}
	return v, nil
}

func testAtomicReplace(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	const key, versions = "atomic/obj", 30
	mustWrite(t, b, key, versionObject(0))
	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for !done.Load() {
				if rng.IntN(2) == 0 {
					data, err := b.ReadAll(ctx, key)
					if err != nil {
						t.Errorf("ReadAll during replace: %v", err)
						return
					}
					v, err := checkWords(data, 0)
					if err == nil && len(data) != (baseWords+int(v)*97)*8 {
						err = fmt.Errorf("version %d has %d bytes, want %d", v, len(data), (baseWords+int(v)*97)*8)
					}
					if err != nil {
						t.Errorf("ReadAll during replace: %v", err)
						return
					}
				} else {
					word := rng.IntN(baseWords - 512)
					r, err := b.NewRangeReader(ctx, key, int64(word)*8, 4096)
					if err != nil {
						t.Errorf("NewRangeReader during replace: %v", err)
						return
					}
					data, err := io.ReadAll(r)
					r.Close()
					if err == nil {
						_, err = checkWords(data, word)
					}
					if err != nil {
						t.Errorf("ranged read during replace: %v", err)
						return
					}
				}
				reads.Add(1)
			}
		})
	}
	for v := uint32(1); v <= versions; v++ {
		w, err := b.NewWriter(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		// Small writes keep a half-written object around as long as possible.
		for chunk := range slices.Chunk(versionObject(v), 4096) {
			if _, err := w.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	if v, err := checkWords(mustRead(t, b, key), 0); err != nil || v != versions {
		t.Errorf("final object: version %d, %v; want %d", v, err, versions)
	}
	if reads.Load() == 0 {
		t.Error("readers made no reads while the key was being replaced")
	}
	t.Logf("%d reads during %d replacements", reads.Load(), versions)
}

func testAbort(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	invisible := func(key string) {
		t.Helper()
		if exists(t, b, key) {
			t.Errorf("%s is visible", key)
		}
		if got := listKeys(t, b, key); slices.Contains(got, key) {
			t.Errorf("List(%q) = %q, want no %s", key, got, key)
		}
	}

	t.Run("Abort", func(t *testing.T) {
		w, err := b.NewWriter(ctx, "abort/new")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(1000, 1)); err != nil {
			t.Fatal(err)
		}
		invisible("abort/new") // not before Close either
		if err := w.Abort(); err != nil {
			t.Fatalf("Abort: %v", err)
		}
		invisible("abort/new")
		if _, err := w.Write([]byte("x")); err == nil {
			t.Error("Write after Abort succeeded")
		}
		if err := w.Close(); err == nil {
			t.Error("Close after Abort succeeded")
		}
		invisible("abort/new")
	})

	t.Run("AbortKeepsOld", func(t *testing.T) {
		old := pattern(500, 2)
		mustWrite(t, b, "abort/old", old)
		w, err := b.NewWriter(ctx, "abort/old")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(pattern(800, 3)); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, b, "abort/old"); !bytes.Equal(got, old) {
			t.Errorf("aborted overwrite changed the object (%d bytes)", len(got))
		}
	})

	t.Run("CancelBeforeClose", func(t *testing.T) {
		old := pattern(500, 4)
		mustWrite(t, b, "abort/cancel-old", old)
		for _, key := range []string{"abort/cancel", "abort/cancel-old"} {
			cctx, cancel := context.WithCancel(ctx)
			w, err := b.NewWriter(cctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(pattern(1000, 5)); err != nil {
				t.Fatal(err)
			}
			cancel()
			if err := w.Close(); !errors.Is(err, context.Canceled) {
				t.Errorf("Close after cancel: %v, want context.Canceled", err)
			}
		}
		invisible("abort/cancel")
		if got := mustRead(t, b, "abort/cancel-old"); !bytes.Equal(got, old) {
			t.Errorf("cancelled overwrite changed the object (%d bytes)", len(got))
		}
	})

	// Past the S3 driver's part size, so a multipart upload has begun.
	big := pattern(20<<20, 6)
	t.Run("AbortLarge", func(t *testing.T) {
		w, err := b.NewWriter(ctx, "abort/large")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(big); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		invisible("abort/large")
	})
	t.Run("CancelLarge", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		w, err := b.NewWriter(cctx, "abort/cancel-large")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(big); err != nil {
			t.Fatal(err)
		}
		cancel()
		// Write may fail or not, depending on how far the driver got.
		_, _ = w.Write(big[:1000])
		if err := w.Close(); err == nil {
			t.Error("Close after cancel succeeded")
		}
		invisible("abort/cancel-large")
	})
	if got := listKeys(t, b, ""); !slices.Equal(got, []string{"abort/cancel-old", "abort/old"}) {
		t.Errorf("after aborts List = %q", got)
	}
}

// bigSize is past 100 MiB and not a multiple of any part or buffer size.
const bigSize = 100<<20 + 12345

// heapLimit bounds heap growth while a bigSize object streams through; a
// driver that buffered the object would need more than bigSize.
const heapLimit = 64 << 20

func bigSource() io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{'l', 'o', 'c', 'u', 's'}), bigSize)
}

// heapWatch samples HeapAlloc until stopped and reports the peak. The GC
// target is lowered so that HeapAlloc tracks live memory instead of garbage
// awaiting collection, which would otherwise dominate the reading.
func heapWatch() (stop func() (base, peak uint64)) {
	oldGC := debug.SetGCPercent(10)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(quit)
		<-finished
		debug.SetGCPercent(oldGC)
		return base, peak.Load()
	}
}

func testBigObject(t *testing.T, b *blob.Bucket) {
	ctx := t.Context()
	const key = "big/object.bin"
	buf := make([]byte, 256<<10)

	start := time.Now()
	stop := heapWatch()
	wantHash := sha256.New()
	w, err := b.NewWriter(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyBuffer(w, io.TeeReader(bigSource(), wantHash), buf); err != nil {
		_ = w.Abort()
		t.Fatalf("streaming write: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	base, peak := stop()
	t.Logf("wrote %d bytes in %v; heap %d MiB -> peak %d MiB", bigSize, time.Since(start).Round(time.Millisecond), base>>20, peak>>20)
	if peak > base+heapLimit {
		t.Errorf("heap grew by %d MiB during a streaming write, limit %d MiB", (peak-base)>>20, heapLimit>>20)
	}

	if a, err := b.Attributes(ctx, key); err != nil || a.Size != bigSize {
		t.Fatalf("Attributes = %+v, %v; want Size %d", a, err, bigSize)
	}

	start = time.Now()
	stop = heapWatch()
	r, err := b.NewReader(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	gotHash := sha256.New()
	n, err := io.CopyBuffer(gotHash, r, buf)
	r.Close()
	base, peak = stop()
	t.Logf("read %d bytes in %v; heap %d MiB -> peak %d MiB", n, time.Since(start).Round(time.Millisecond), base>>20, peak>>20)
	if err != nil || n != bigSize || r.Size() != bigSize {
		t.Fatalf("streaming read: %d bytes (Size %d), %v; want %d", n, r.Size(), err, bigSize)
	}
	if !bytes.Equal(gotHash.Sum(nil), wantHash.Sum(nil)) {
		t.Fatal("big object read back with different content")
	}
	if peak > base+heapLimit {
		t.Errorf("heap grew by %d MiB during a streaming read, limit %d MiB", (peak-base)>>20, heapLimit>>20)
	}

	// A range deep inside the object, against the regenerated source.
	const off, length = 77<<20 + 3, 1 << 20
	want := make([]byte, length)
	src := bigSource()
	if _, err := io.CopyN(io.Discard, src, off); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(src, want); err != nil {
		t.Fatal(err)
	}
	rr, err := b.NewRangeReader(ctx, key, off, length)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rr)
	rr.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("range [%d, +%d) of big object: %d bytes, %v, equal=%v", off, length, len(got), err, bytes.Equal(got, want))
	}
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
}
