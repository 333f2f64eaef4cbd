package objio

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
)

type row struct {
	Name string   `parquet:"name"`
	Tags []string `parquet:"tags,list"`
}

func bucket(t *testing.T) *blob.Bucket {
	t.Helper()
	b, err := blob.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestReadBlob(t *testing.T) {
	ctx := context.Background()
	b := bucket(t)
	ref, err := WriteBlob(ctx, b, "a/x.bin", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	const sum = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" // sha256("hello")
	if want := (Ref{Key: "a/x.bin", Size: 5, SHA256: sum}); ref != want {
		t.Fatalf("WriteBlob = %+v, want %+v", ref, want)
	}
	for _, tc := range []struct {
		name string
		ref  Ref
		want error  // nil: reads "hello"
		msg  string // in the error
	}{
		{"intact", ref, nil, ""},
		{"nothing recorded", Ref{Key: "a/x.bin"}, nil, ""},
		{"size", Ref{Key: "a/x.bin", Size: 4}, blob.ErrCorrupt, "5 bytes, the manifest recorded 4 (truncated or replaced)"},
		{"sum", Ref{Key: "a/x.bin", SHA256: strings.Repeat("0", 64)}, blob.ErrCorrupt, "SHA-256 " + sum},
		{"missing", Ref{Key: "a/none", Size: 5, SHA256: sum}, blob.ErrNotFound, "a/none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadBlob(ctx, b, tc.ref)
			if tc.want == nil {
				if err != nil || string(data) != "hello" {
					t.Fatalf("ReadBlob = %q, %v", data, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.ref.Key) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ReadBlob error = %v; want %v naming %s and saying %q", err, tc.want, tc.ref.Key, tc.msg)
			}
			if tc.want == blob.ErrCorrupt && !strings.Contains(err.Error(), "stored object is damaged") {
				t.Errorf("error %v does not say the object is damaged", err)
			}
		})
	}
}

func TestParquet(t *testing.T) {
	ctx := context.Background()
	b := bucket(t)
	f := Format{Key: "locus.test_version", Version: 2}
	rows := make([]row, 5000) // more than one write chunk and one read batch
	for i := range rows {
		rows[i] = row{Name: strings.Repeat("n", i%7), Tags: []string{"a", strings.Repeat("b", i%3)}}
	}
	ref, err := WriteParquet(ctx, b, "t/rows.parquet", rows, f, parquet.KeyValueMetadata("locus.extra", "x"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.ReadAll(ctx, ref.Key)
	if err != nil || RefOf(ref.Key, data) != ref {
		t.Fatalf("Ref %+v is not that of the stored bytes (%v)", ref, err)
	}
	// A table's bytes do not depend on how its rows were handed over:
	// WriteParquet writes in chunks, EncodeParquet in one Write.
	if enc, err := EncodeParquet(rows, f, parquet.KeyValueMetadata("locus.extra", "x")); err != nil || RefOf(ref.Key, enc) != ref {
		t.Fatalf("EncodeParquet gives other bytes than WriteParquet (%v)", err)
	}
	pf, err := OpenParquet(ctx, b, ref, f)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := pf.Lookup("locus.extra"); v != "x" {
		t.Errorf("extra metadata %q", v)
	}
	got, err := ReadParquet[row](ctx, b, ref, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if got[i].Name != rows[i].Name || strings.Join(got[i].Tags, ",") != strings.Join(rows[i].Tags, ",") {
			t.Fatalf("row %d = %+v, want %+v", i, got[i], rows[i])
		}
	}
	if _, err := ReadParquet[row](ctx, b, Ref{Key: ref.Key}, Format{}); err != nil {
		t.Errorf("unchecked read: %v", err)
	}

	garbage, err := WriteBlob(ctx, b, "t/garbage.parquet", []byte("not parquet at all"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ref  Ref
		f    Format
		msg  string
	}{
		{"other version", ref, Format{Key: f.Key, Version: 3}, `layout version "2", want 3`},
		{"no version", ref, Format{Key: "locus.other_version", Version: 2}, `layout version "", want 2`},
		{"garbage", garbage, f, "not a readable Parquet file"},
		{"truncated", Ref{Key: ref.Key, Size: ref.Size + 1}, f, "the manifest recorded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadParquet[row](ctx, b, tc.ref, tc.f)
			if !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), tc.ref.Key) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ReadParquet error = %v; want ErrCorrupt naming %s and saying %q", err, tc.ref.Key, tc.msg)
			}
		})
	}
}

// TestParquetAbort: an aborted or failed table leaves the previous object.
func TestParquetAbort(t *testing.T) {
	ctx := context.Background()
	b := bucket(t)
	old, err := WriteParquet(ctx, b, "t/x.parquet", []row{{Name: "old"}}, Format{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewParquetWriter[row](ctx, b, "t/x.parquet", Format{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]row{{Name: "new"}}); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	got, err := ReadParquet[row](ctx, b, old, Format{})
	if err != nil || len(got) != 1 || got[0].Name != "old" {
		t.Fatalf("after Abort: %+v, %v", got, err)
	}
}
