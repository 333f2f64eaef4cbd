// Package driver defines the interface that object store backends implement for package blob.
package driver

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned (possibly wrapped) when an object does not exist.
// Package blob re-exports it as blob.ErrNotFound.
var ErrNotFound = errors.New("object not found")

// ErrInvalidKey is returned (wrapped) for a key or prefix the store cannot address.
// Package blob re-exports it as blob.ErrInvalidKey.
var ErrInvalidKey = errors.New("invalid blob key")

// Attrs describes one stored object.
type Attrs struct {
	Size    int64
	ModTime time.Time
	// ETag is opaque; it changes whenever the object is replaced.
	ETag string
}

// ObjectInfo is one entry of a listing.
type ObjectInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Bucket is implemented by each backend. Keys and prefixes reaching a driver
// have already been validated by package blob, so drivers only reject keys
// that collide with their own bookkeeping.
type Bucket interface {
	// NewWriter starts an object that becomes visible only on Writer.Commit.
	NewWriter(ctx context.Context, key string) (Writer, error)
	// NewRangeReader reads length bytes (-1: to the end) from offset; an offset at
	// or past the end yields an empty reader, not an error.
	NewRangeReader(ctx context.Context, key string, offset, length int64) (Reader, error)
	Attributes(ctx context.Context, key string) (Attrs, error)
	// List returns every object whose key starts with prefix, in any order.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// ListDirs returns, in any order, the distinct "directories" directly
	// under prefix ("" or ending with "/"): each prefix+seg+"/" such that at
	// least one object's key starts with it (S3's CommonPrefixes with
	// Delimiter "/"). It must not look at the objects below them.
	ListDirs(ctx context.Context, prefix string) ([]string, error)
	// Delete returns ErrNotFound when the key does not exist.
	Delete(ctx context.Context, key string) error
	Close() error
}

// Writer streams one object. Exactly one of Commit or Abort is called.
type Writer interface {
	io.Writer
	// Commit publishes the object atomically, replacing any previous one.
	Commit() error
	// Abort discards everything written; nothing becomes visible.
	Abort() error
}

// Reader streams (part of) one object.
type Reader interface {
	io.ReadCloser
	// Attrs describes the whole object being read (not just the range), as it
	// was when the reader was opened.
	Attrs() Attrs
}
