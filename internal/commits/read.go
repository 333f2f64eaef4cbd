package commits

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// parquetMagic opens and ends every Parquet file.
var parquetMagic = []byte("PAR1")

// ReadPart calls fn for every row of one commits part, in order. A part that is
// not valid Parquet (truncated, corrupt, or of another schema) is an error that
// names the key and wraps blob.ErrCorrupt.
func ReadPart(ctx context.Context, b *blob.Bucket, key string, fn func(*schema.CommitFile) error) error {
	return readPart(ctx, b, schema.Part{Key: key}, fn)
}

// ReadPartOf is ReadPart for a part the manifest lists: its size must also be
// the one recorded when it was written.
func ReadPartOf(ctx context.Context, b *blob.Bucket, p schema.Part, fn func(*schema.CommitFile) error) error {
	return readPart(ctx, b, p, fn)
}

// CommitKey is a commits-table row's commit and commit time: what
// ReadKeysOf reads, without the paths, messages and diffs.
type CommitKey struct {
	CommitID   string `parquet:"commit_id"`
	CommitTime int64  `parquet:"commit_time,timestamp(millisecond)"`
}

// ReadKeysOf is ReadPartOf reading only the commit id and time columns
// (about 1% of a part's bytes), for an index of the history.
func ReadKeysOf(ctx context.Context, b *blob.Bucket, p schema.Part, fn func(*CommitKey) error) error {
	return readColumns(ctx, b, p, fn)
}

func readPart(ctx context.Context, b *blob.Bucket, p schema.Part, fn func(*schema.CommitFile) error) error {
	return readColumns(ctx, b, p, fn)
}

// readColumns reads part p's rows as T (a struct of some of its columns).
func readColumns[T any](ctx context.Context, b *blob.Bucket, p schema.Part, fn func(*T) error) error {
	key := p.Key
	ra, err := b.OpenReaderAt(ctx, key)
	if err != nil {
		return fmt.Errorf("commits part %s: %w", key, err)
	}
	defer ra.Close()
	if p.Bytes > 0 && ra.Size() != p.Bytes {
		return fmt.Errorf("commits part %s: %d bytes, the manifest recorded %d (truncated or replaced): %w", key, ra.Size(), p.Bytes, blob.ErrCorrupt)
	}
	f, err := parquet.OpenFile(ra, ra.Size())
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("commits part %s: %w", key, err)
		}
		return fmt.Errorf("commits part %s: not a readable Parquet file (%v): %w", key, err, blob.ErrCorrupt)
	}
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	buf := make([]T, 256)
	for {
		n, err := r.Read(buf)
		for i := 0; i < n; i++ {
			if ferr := fn(&buf[i]); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, blob.ErrChanged) {
				return fmt.Errorf("commits part %s: %w", key, err)
			}
			return fmt.Errorf("commits part %s: %v: %w", key, err, blob.ErrCorrupt)
		}
	}
}

// ReadAll calls fn for every row of every part the manifest lists, oldest first.
func ReadAll(ctx context.Context, b *blob.Bucket, m *schema.Manifest, fn func(*schema.CommitFile) error) error {
	for _, p := range m.Parts {
		if err := ReadPartOf(ctx, b, p, fn); err != nil {
			return err
		}
	}
	return nil
}

// VerifyPart checks one part against what the manifest recorded: its size and
// the Parquet magic at both ends always, its SHA-256 too when full is set
// (which reads the whole part). A damaged part is an error naming its key and
// wrapping blob.ErrCorrupt; a missing one wraps blob.ErrNotFound.
func VerifyPart(ctx context.Context, b *blob.Bucket, p schema.Part, full bool) error {
	ra, err := b.OpenReaderAt(ctx, p.Key)
	if err != nil {
		return fmt.Errorf("commits part %s: %w", p.Key, err)
	}
	defer ra.Close()
	size := ra.Size()
	if p.Bytes > 0 && size != p.Bytes {
		return fmt.Errorf("commits part %s: %d bytes, the manifest recorded %d (truncated or replaced): %w", p.Key, size, p.Bytes, blob.ErrCorrupt)
	}
	if size < 12 { // magic, footer length, magic
		return fmt.Errorf("commits part %s: %d bytes is too short for Parquet: %w", p.Key, size, blob.ErrCorrupt)
	}
	head, tail := make([]byte, 4), make([]byte, 4)
	if _, err := ra.ReadAt(head, 0); err != nil {
		return fmt.Errorf("commits part %s: %w", p.Key, err)
	}
	if _, err := ra.ReadAt(tail, size-4); err != nil {
		return fmt.Errorf("commits part %s: %w", p.Key, err)
	}
	if !bytes.Equal(head, parquetMagic) || !bytes.Equal(tail, parquetMagic) {
		return fmt.Errorf("commits part %s: no Parquet magic at start or end: %w", p.Key, blob.ErrCorrupt)
	}
	if !full || p.SHA256 == "" {
		return nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(ra, 0, size)); err != nil {
		return fmt.Errorf("commits part %s: %w", p.Key, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.SHA256 {
		return fmt.Errorf("commits part %s: SHA-256 %s, the manifest recorded %s: %w", p.Key, got, p.SHA256, blob.ErrCorrupt)
	}
	return nil
}

// VerifyParts runs VerifyPart on every part of m (and checks that the file-id
// map exists) and returns every problem found, joined; nil when all is well.
func VerifyParts(ctx context.Context, b *blob.Bucket, m *schema.Manifest, full bool) error {
	var errs []error
	for _, p := range m.Parts {
		if err := VerifyPart(ctx, b, p, full); err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
		}
	}
	if m.FileIDs != "" {
		if _, err := b.Attributes(ctx, m.FileIDs); err != nil {
			errs = append(errs, fmt.Errorf("file-id map %s: %w", m.FileIDs, err))
		}
	}
	return errors.Join(errs...)
}
