// Package parquetcol reads one column of a Parquet file without the
// others: an index (content hashes, say) is read before deciding which
// rows are worth decoding whole, or instead of them.
package parquetcol

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// ErrNoColumn: the file has no column of that name.
var ErrNoColumn = errors.New("no such column")

// Bytes calls each with the row number and value of every row of the
// byte-array column named column, in row order. The value is valid only
// during the call. A column whose values do not number the file's rows is
// an error.
func Bytes(f *parquet.File, column string, each func(row int64, value []byte)) error {
	col, ok := f.Schema().Lookup(column)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoColumn, column)
	}
	vals := make([]parquet.Value, 512)
	var row int64
	for _, rg := range f.RowGroups() {
		start := row
		if err := pagesOf(rg.ColumnChunks()[col.ColumnIndex], vals, func(v []parquet.Value) {
			for _, x := range v {
				each(row, x.ByteArray())
				row++
			}
		}); err != nil {
			return err
		}
		if row-start != rg.NumRows() {
			return fmt.Errorf("column %s: %d values in a row group of %d rows", column, row-start, rg.NumRows())
		}
	}
	return nil
}

// pagesOf hands fn the values of each page of chunk, vals at a time.
func pagesOf(chunk parquet.ColumnChunk, vals []parquet.Value, fn func([]parquet.Value)) error {
	pages := chunk.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = valuesOf(p, vals, fn)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}

func valuesOf(p parquet.Page, vals []parquet.Value, fn func([]parquet.Value)) error {
	r := p.Values()
	for {
		n, err := r.ReadValues(vals)
		fn(vals[:n])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
