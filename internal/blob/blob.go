// Package blob is locus's portable object store: one Bucket type over file and S3 drivers.
//
// Buckets are opened by URL with Open:
//
//	file:///abs/dir         a directory (created if missing); also file://./rel/dir,
//	/abs/dir or rel/dir     or a plain path
//	s3://bucket/prefix?...  an S3 bucket; objects live under the optional prefix
//
// S3 URL query parameters (all optional):
//
//	endpoint=URL      S3 endpoint, e.g. http://127.0.0.1:9000 (default: AWS for the region)
//	region=NAME       signing region (default: AWS_REGION / shared config, else us-east-1)
//	path_style=BOOL   path-style addressing, needed by most non-AWS servers (default false)
//
// S3 credentials come from the AWS default chain (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, shared config, instance roles); they are never read
// from the URL so that URLs can be logged.
//
// Keys are validated here for every driver (see ValidateKey). Objects become
// visible atomically when a Writer is closed; readers see the old or the new
// object, never a mix. A missing object yields an error wrapping ErrNotFound.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/blob/driver"
)

var (
	// ErrNotFound is wrapped by every error about a missing object.
	ErrNotFound = driver.ErrNotFound
	// ErrInvalidKey is wrapped by every error about a malformed key or prefix.
	ErrInvalidKey = driver.ErrInvalidKey
	// ErrChanged is returned by ReaderAt.ReadAt when the object was replaced
	// after OpenReaderAt; mixing bytes of two versions would corrupt readers.
	ErrChanged = errors.New("object changed while reading")
	// ErrCorrupt is wrapped by every error about a stored object that is not
	// what its writer recorded (wrong size or checksum, not the format it
	// should be): retrying the read cannot help, rewriting it can.
	ErrCorrupt = errors.New("stored object is damaged")
)

type (
	// Attrs describes one object: Size, ModTime and an opaque ETag that
	// changes whenever the object is replaced.
	Attrs = driver.Attrs
	// ObjectInfo is one List entry: Key, Size and ModTime.
	ObjectInfo = driver.ObjectInfo
)

// Bucket is a portable handle on an object store. It is safe for concurrent use.
type Bucket struct {
	d driver.Bucket
	// base is where keys live for a person or another tool: an absolute
	// directory for a file bucket, s3://bucket/prefix for S3; "" for a
	// bucket made by NewBucket.
	base string
}

// NewBucket wraps a driver; most callers use Open, OpenFile or OpenS3 instead.
func NewBucket(d driver.Bucket) *Bucket { return &Bucket{d: d} }

// Location is where key can be opened outside locus: an absolute file path
// for a file bucket, the s3:// URL for S3, the key itself for a bucket made
// by NewBucket.
func (b *Bucket) Location(key string) string {
	switch {
	case b.base == "":
		return key
	case strings.HasPrefix(b.base, "s3://"):
		return strings.TrimSuffix(b.base, "/") + "/" + key
	}
	return filepath.Join(b.base, filepath.FromSlash(key))
}

// Close releases the driver's resources.
func (b *Bucket) Close() error { return b.d.Close() }

// NewWriter starts writing key. Nothing is visible until Close returns nil;
// Abort, a failed Close, or cancelling ctx before Close leaves the previous
// object (if any) untouched. Call Close or Abort exactly once.
func (b *Bucket) NewWriter(ctx context.Context, key string) (*Writer, error) {
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("blob write: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob write %s: %w", key, err)
	}
	w, err := b.d.NewWriter(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("blob write %s: %w", key, err)
	}
	return &Writer{ctx: ctx, key: key, w: w}, nil
}

// WriteAll stores data under key atomically.
func (b *Bucket) WriteAll(ctx context.Context, key string, data []byte) error {
	w, err := b.NewWriter(ctx, key)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort()
		return err
	}
	return w.Close()
}

// ReadAll returns the whole object.
func (b *Bucket) ReadAll(ctx context.Context, key string) ([]byte, error) {
	r, err := b.NewReader(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// Sized from the reader's own attributes, so this is exact even if the
	// object is replaced concurrently.
	data := make([]byte, r.Size())
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	var extra [1]byte
	switch _, err := io.ReadFull(r, extra[:]); err {
	case io.EOF:
		return data, nil
	case nil:
		return nil, fmt.Errorf("blob read %s: object longer than its size %d", key, len(data))
	default:
		return nil, err
	}
}

// NewReader streams the whole object.
func (b *Bucket) NewReader(ctx context.Context, key string) (*Reader, error) {
	return b.NewRangeReader(ctx, key, 0, -1)
}

// NewRangeReader streams length bytes starting at offset; length -1 reads to
// the end. A range reaching past the end is cut at the end, so an offset at or
// beyond the end yields an empty reader. Reader.Size is the whole object's size.
func (b *Bucket) NewRangeReader(ctx context.Context, key string, offset, length int64) (*Reader, error) {
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("blob read: %w", err)
	}
	if offset < 0 || length < -1 {
		return nil, fmt.Errorf("blob read %s: invalid range offset=%d length=%d", key, offset, length)
	}
	r, err := b.d.NewRangeReader(ctx, key, offset, length)
	if err != nil {
		return nil, fmt.Errorf("blob read %s: %w", key, err)
	}
	attrs := r.Attrs()
	want := max(attrs.Size-offset, 0)
	if length >= 0 {
		want = min(want, length)
	}
	return &Reader{r: r, key: key, attrs: attrs, remaining: want}, nil
}

// Attributes describes the object.
func (b *Bucket) Attributes(ctx context.Context, key string) (Attrs, error) {
	if err := ValidateKey(key); err != nil {
		return Attrs{}, fmt.Errorf("blob attributes: %w", err)
	}
	a, err := b.d.Attributes(ctx, key)
	if err != nil {
		return Attrs{}, fmt.Errorf("blob attributes %s: %w", key, err)
	}
	return a, nil
}

// Exists reports whether the object exists; errors other than not-found are returned.
func (b *Bucket) Exists(ctx context.Context, key string) (bool, error) {
	_, err := b.Attributes(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

// List returns every object whose key starts with prefix ("" for all),
// sorted by key. The prefix need not end at a "/".
func (b *Bucket) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("blob list: %w", err)
	}
	objs, err := b.d.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("blob list %q: %w", prefix, err)
	}
	slices.SortFunc(objs, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return objs, nil
}

// ListDirs returns the "directories" directly under prefix, sorted: each
// distinct prefix+seg+"/" under which at least one object is stored, where
// seg contains no "/" (S3's CommonPrefixes with Delimiter "/"). prefix must be
// "" or end with "/". Unlike List it does not enumerate the objects below
// them: the file driver reads one directory, S3 pages through common
// prefixes. A prefix that names an object, or nothing, has no directories.
func (b *Bucket) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("blob list dirs: %w", err)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("blob list dirs: %w %q: a directory prefix must end with \"/\"", ErrInvalidKey, prefix)
	}
	dirs, err := b.d.ListDirs(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("blob list dirs %q: %w", prefix, err)
	}
	slices.Sort(dirs)
	return slices.Compact(dirs), nil
}

// Delete removes the object; a missing key yields an error wrapping ErrNotFound.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("blob delete: %w", err)
	}
	if err := b.d.Delete(ctx, key); err != nil {
		return fmt.Errorf("blob delete %s: %w", key, err)
	}
	return nil
}

// Writer streams one object into a Bucket. It is not safe for concurrent use.
type Writer struct {
	ctx  context.Context
	key  string
	w    driver.Writer
	done bool
}

// Write appends p to the pending object.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("blob write %s: writer already closed", w.key)
	}
	if err := w.ctx.Err(); err != nil {
		return 0, fmt.Errorf("blob write %s: %w", w.key, err)
	}
	n, err := w.w.Write(p)
	if err != nil {
		return n, fmt.Errorf("blob write %s: %w", w.key, err)
	}
	return n, nil
}

// Close publishes the object. If it returns an error, nothing was published.
func (w *Writer) Close() error {
	if w.done {
		return fmt.Errorf("blob write %s: writer already closed", w.key)
	}
	w.done = true
	if err := w.ctx.Err(); err != nil {
		_ = w.w.Abort()
		return fmt.Errorf("blob write %s: %w", w.key, err)
	}
	if err := w.w.Commit(); err != nil {
		return fmt.Errorf("blob write %s: %w", w.key, err)
	}
	return nil
}

// Abort discards the pending object. After Close it does nothing, so
// `defer w.Abort()` is a safe guard on error paths.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.w.Abort(); err != nil {
		return fmt.Errorf("blob abort %s: %w", w.key, err)
	}
	return nil
}

// Reader streams (part of) an object.
type Reader struct {
	r         driver.Reader
	key       string
	attrs     Attrs
	remaining int64
}

// Read reads the next bytes; a body cut short by the store is reported as
// io.ErrUnexpectedEOF rather than a silent short read.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.remaining -= int64(n)
	switch {
	case err == io.EOF && r.remaining > 0:
		return n, fmt.Errorf("blob read %s: %w (%d bytes missing)", r.key, io.ErrUnexpectedEOF, r.remaining)
	case err != nil && err != io.EOF:
		return n, fmt.Errorf("blob read %s: %w", r.key, err)
	}
	return n, err
}

// Close releases the underlying stream.
func (r *Reader) Close() error { return r.r.Close() }

// Size is the size of the whole object, even for a range reader.
func (r *Reader) Size() int64 { return r.attrs.Size }

// Attrs describes the object as it was when the reader was opened.
func (r *Reader) Attrs() Attrs { return r.attrs }
