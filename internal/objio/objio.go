// Package objio is locus's one path for writing and reading stored objects
// that a manifest records: it writes blobs and versioned, zstd-compressed
// Parquet tables to a blob.Bucket and returns a Ref (key, size, SHA-256), and
// it reads them back checked against that Ref.
//
// A stored object that is not what its writer recorded (wrong size or
// SHA-256, not readable Parquet, another layout version) is an error that
// names its key and wraps blob.ErrCorrupt ("stored object is damaged"):
// retrying cannot help, rewriting it can. A missing object wraps
// blob.ErrNotFound.
package objio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/locus-dev/locus/internal/blob"
)

// Ref is what a writer records about a stored object: its key, size in
// bytes and hex SHA-256. A zero Size or empty SHA256 leaves that check out
// when reading (manifests written before they were recorded).
type Ref struct {
	Key    string `json:"key"`
	Size   int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// WriteBlob stores data under key, replacing what is there, and returns its Ref.
func WriteBlob(ctx context.Context, b *blob.Bucket, key string, data []byte) (Ref, error) {
	if err := b.WriteAll(ctx, key, data); err != nil {
		return Ref{}, err
	}
	return RefOf(key, data), nil
}

// RefOf is the Ref of data stored under key.
func RefOf(key string, data []byte) Ref {
	sum := sha256.Sum256(data)
	return Ref{Key: key, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// ReadBlob returns the object ref names, checked against its recorded size
// and SHA-256.
func ReadBlob(ctx context.Context, b *blob.Bucket, ref Ref) ([]byte, error) {
	data, err := b.ReadAll(ctx, ref.Key)
	if err != nil {
		return nil, err
	}
	if err := Check(ref, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Check reports whether data is the object ref records; a mismatch names
// the key and wraps blob.ErrCorrupt.
func Check(ref Ref, data []byte) error {
	if ref.Size > 0 && int64(len(data)) != ref.Size {
		return fmt.Errorf("%s: %d bytes, the manifest recorded %d (truncated or replaced): %w", ref.Key, len(data), ref.Size, blob.ErrCorrupt)
	}
	if ref.SHA256 != "" {
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != ref.SHA256 {
			return fmt.Errorf("%s: SHA-256 %x, the manifest recorded %s: %w", ref.Key, h, ref.SHA256, blob.ErrCorrupt)
		}
	}
	return nil
}

// Format is the layout version a Parquet table records in its key-value
// metadata, e.g. {"locus.memory_version", 1}. The zero Format records and
// checks nothing.
type Format struct {
	Key     string
	Version int
}

// ParquetWriter streams rows of T as one zstd-compressed Parquet object.
// Nothing is visible until Close returns nil.
type ParquetWriter[T any] struct {
	key string
	w   *blob.Writer
	cw  *countingWriter
	pw  *parquet.GenericWriter[T]
}

// NewParquetWriter starts writing key. The table records f (unless zero);
// opts add writer options such as more key-value metadata or page sizes.
// Call Close or Abort exactly once.
func NewParquetWriter[T any](ctx context.Context, b *blob.Bucket, key string, f Format, opts ...parquet.WriterOption) (*ParquetWriter[T], error) {
	w, err := b.NewWriter(ctx, key)
	if err != nil {
		return nil, err
	}
	cw := &countingWriter{w: w, h: sha256.New()}
	return &ParquetWriter[T]{key: key, w: w, cw: cw, pw: parquet.NewGenericWriter[T](cw, writerOptions(f, opts)...)}, nil
}

// writerOptions are the options of every table: zstd, f recorded (unless
// zero), then opts.
func writerOptions(f Format, opts []parquet.WriterOption) []parquet.WriterOption {
	all := []parquet.WriterOption{parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault})}
	if f.Key != "" {
		all = append(all, parquet.KeyValueMetadata(f.Key, strconv.Itoa(f.Version)))
	}
	return append(all, opts...)
}

// EncodeParquet returns rows as the bytes WriteParquet stores, for objects
// whose key depends on their content (store them with WriteBlob).
func EncodeParquet[T any](rows []T, f Format, opts ...parquet.WriterOption) ([]byte, error) {
	var buf bytes.Buffer
	pw := parquet.NewGenericWriter[T](&buf, writerOptions(f, opts)...)
	if _, err := pw.Write(rows); err != nil {
		return nil, err
	}
	if err := pw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write appends rows.
func (p *ParquetWriter[T]) Write(rows []T) error {
	if _, err := p.pw.Write(rows); err != nil {
		return fmt.Errorf("write %s: %w", p.key, err)
	}
	return nil
}

// Flush ends the current row group.
func (p *ParquetWriter[T]) Flush() error {
	if err := p.pw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", p.key, err)
	}
	return nil
}

// Close finishes the table, publishes it and returns its Ref. On an error
// nothing was published.
func (p *ParquetWriter[T]) Close() (Ref, error) {
	if err := p.pw.Close(); err != nil {
		_ = p.w.Abort()
		return Ref{}, fmt.Errorf("write %s: %w", p.key, err)
	}
	if err := p.w.Close(); err != nil {
		return Ref{}, err
	}
	return Ref{Key: p.key, Size: p.cw.n, SHA256: hex.EncodeToString(p.cw.h.Sum(nil))}, nil
}

// Abort discards the table; after Close it does nothing.
func (p *ParquetWriter[T]) Abort() { _ = p.w.Abort() }

// WriteParquet stores rows at key as one Parquet table (see NewParquetWriter)
// and returns its Ref.
func WriteParquet[T any](ctx context.Context, b *blob.Bucket, key string, rows []T, f Format, opts ...parquet.WriterOption) (Ref, error) {
	w, err := NewParquetWriter[T](ctx, b, key, f, opts...)
	if err != nil {
		return Ref{}, err
	}
	for i := 0; i < len(rows); i += 4096 {
		if err := w.Write(rows[i:min(i+4096, len(rows))]); err != nil {
			w.Abort()
			return Ref{}, err
		}
	}
	return w.Close()
}

// OpenParquet reads the table ref names, checks it against ref (see
// ReadBlob) and that it is readable Parquet recording f (unless zero).
func OpenParquet(ctx context.Context, b *blob.Bucket, ref Ref, f Format) (*parquet.File, error) {
	data, err := ReadBlob(ctx, b, ref)
	if err != nil {
		return nil, err
	}
	return ParseParquet(ref.Key, data, f)
}

// ParseParquet opens data, the table stored at key, and checks that it is
// readable Parquet recording f (unless zero).
func ParseParquet(key string, data []byte, f Format) (*parquet.File, error) {
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file (%v): %w", key, err, blob.ErrCorrupt)
	}
	if f.Key != "" {
		if v, ok := pf.Lookup(f.Key); !ok || v != strconv.Itoa(f.Version) {
			return nil, fmt.Errorf("%s: layout version %q, want %d: %w", key, v, f.Version, blob.ErrCorrupt)
		}
	}
	return pf, nil
}

// Rows decodes every row of pf, the table stored at key; an undecodable
// row names key and wraps blob.ErrCorrupt.
func Rows[T any](key string, pf *parquet.File) ([]T, error) {
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	out := make([]T, 0, pf.NumRows())
	buf := make([]T, 1024)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		clear(buf[:n]) // the rows keep their slices; the reader must not reuse them
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v: %w", key, err, blob.ErrCorrupt)
		}
	}
}

// ReadParquet reads every row of the table ref names (see OpenParquet).
func ReadParquet[T any](ctx context.Context, b *blob.Bucket, ref Ref, f Format) ([]T, error) {
	pf, err := OpenParquet(ctx, b, ref, f)
	if err != nil {
		return nil, err
	}
	return Rows[T](ref.Key, pf)
}

// countingWriter counts and hashes what reaches the store.
type countingWriter struct {
	w io.Writer
	n int64
	h hash.Hash
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.h.Write(b[:n])
	return n, err
}
