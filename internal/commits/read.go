package commits

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// ReadPart calls fn for every row of one commits part, in order. A part that is
// not valid Parquet (truncated, corrupt, or of another schema) is an error that
// names the key.
func ReadPart(ctx context.Context, b *blob.Bucket, key string, fn func(*schema.CommitFile) error) error {
	ra, err := b.OpenReaderAt(ctx, key)
	if err != nil {
		return err
	}
	defer ra.Close()
	f, err := parquet.OpenFile(ra, ra.Size())
	if err != nil {
		return fmt.Errorf("commits part %s: %w", key, err)
	}
	r := parquet.NewGenericReader[schema.CommitFile](f)
	defer r.Close()
	buf := make([]schema.CommitFile, 256)
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
			return fmt.Errorf("commits part %s: %w", key, err)
		}
	}
}

// ReadAll calls fn for every row of every part the manifest lists, oldest first.
func ReadAll(ctx context.Context, b *blob.Bucket, m *schema.Manifest, fn func(*schema.CommitFile) error) error {
	for _, p := range m.Parts {
		if err := ReadPart(ctx, b, p.Key, fn); err != nil {
			return err
		}
	}
	return nil
}
