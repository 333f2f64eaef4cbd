package triplets

import (
	"context"
	"fmt"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// format is the layout version a part records.
var format = objio.Format{Key: "locus.triplets_version", Version: schema.TripletsVersion}

// PartInfo describes one stored part.
type PartInfo struct {
	Key     string `json:"key"`
	Records int    `json:"records"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// WritePart stores records at key as one Parquet file (zstd, one row per
// record with list columns), replacing what is there.
func WritePart(ctx context.Context, b *blob.Bucket, key string, records []Record) (PartInfo, error) {
	ref, err := objio.WriteParquet(ctx, b, key, records, format)
	if err != nil {
		return PartInfo{}, fmt.Errorf("triplets part: %w", err)
	}
	return PartInfo{Key: key, Records: len(records), Bytes: ref.Size, SHA256: ref.SHA256}, nil
}

// ReadPart reads a part back, checked against p's size and SHA-256 when
// recorded; a damaged or truncated one names its key and wraps
// blob.ErrCorrupt.
func ReadPart(ctx context.Context, b *blob.Bucket, p PartInfo) ([]Record, error) {
	out, err := objio.ReadParquet[Record](ctx, b, objio.Ref{Key: p.Key, Size: p.Bytes, SHA256: p.SHA256}, format)
	if err != nil {
		return nil, fmt.Errorf("triplets part: %w", err)
	}
	return out, nil
}
