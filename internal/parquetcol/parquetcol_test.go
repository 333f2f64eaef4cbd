package parquetcol

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type row struct {
	Hash string  `parquet:"hash"`
	Vec  []int32 `parquet:"vec,list"`
}

// TestBytes: every row's value, in order, across row groups and pages; a
// missing column is ErrNoColumn.
func TestBytes(t *testing.T) {
	for _, n := range []int{0, 1, 700, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var buf bytes.Buffer
			// Small pages and row groups: the values span several of each.
			w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(1000))
			rows := make([]row, n)
			for i := range rows {
				rows[i] = row{Hash: fmt.Sprintf("h%05d", i), Vec: []int32{int32(i)}}
			}
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if n >= 5000 && len(f.RowGroups()) < 2 {
				t.Fatalf("%d row groups: the test wants several", len(f.RowGroups()))
			}
			var got []string
			err = Bytes(f, "hash", func(r int64, v []byte) {
				if r != int64(len(got)) {
					t.Fatalf("row %d after %d values", r, len(got))
				}
				got = append(got, string(v))
			})
			if err != nil || len(got) != n {
				t.Fatalf("%d values, %v; want %d", len(got), err, n)
			}
			for i, h := range got {
				if h != rows[i].Hash {
					t.Fatalf("row %d: %q, want %q", i, h, rows[i].Hash)
				}
			}
			if err := Bytes(f, "nope", func(int64, []byte) {}); !errors.Is(err, ErrNoColumn) {
				t.Errorf("missing column: %v", err)
			}
		})
	}
}
