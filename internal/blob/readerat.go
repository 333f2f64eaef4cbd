package blob

import (
	"context"
	"fmt"
	"io"
)

// ReaderAt gives random access to one object through ranged reads, for
// formats such as Parquet that need io.ReaderAt plus a size. It is safe for
// parallel ReadAt calls.
type ReaderAt struct {
	b     *Bucket
	ctx   context.Context
	key   string
	attrs Attrs
}

var _ io.ReaderAt = (*ReaderAt)(nil)

// OpenReaderAt fixes the object's size and ETag now; every ReadAt uses ctx
// and fails with ErrChanged if the object was replaced in the meantime.
func (b *Bucket) OpenReaderAt(ctx context.Context, key string) (*ReaderAt, error) {
	attrs, err := b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &ReaderAt{b: b, ctx: ctx, key: key, attrs: attrs}, nil
}

// Size is the object's size when it was opened.
func (ra *ReaderAt) Size() int64 { return ra.attrs.Size }

// Attrs describes the object when it was opened.
func (ra *ReaderAt) Attrs() Attrs { return ra.attrs }

// ReadAt implements io.ReaderAt: it returns io.EOF with a short count when p
// reaches past the end.
func (ra *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("blob read %s: negative offset %d", ra.key, off)
	}
	if off >= ra.attrs.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), ra.attrs.Size-off))
	if n == 0 {
		return 0, nil
	}
	r, err := ra.b.d.NewRangeReader(ra.ctx, ra.key, off, int64(n))
	if err != nil {
		return 0, fmt.Errorf("blob read %s: %w", ra.key, err)
	}
	defer r.Close()
	if got := r.Attrs(); got.ETag != ra.attrs.ETag || got.Size != ra.attrs.Size {
		return 0, fmt.Errorf("blob read %s: %w", ra.key, ErrChanged)
	}
	if m, err := io.ReadFull(r, p[:n]); err != nil {
		return m, fmt.Errorf("blob read %s at %d: %w", ra.key, off, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close exists so callers can treat a ReaderAt like a file; it holds no resources.
func (ra *ReaderAt) Close() error { return nil }
