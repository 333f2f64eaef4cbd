package memory

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// renamesKey holds a table's renames (JSON) in its Parquet file's metadata;
// tables written before renames were kept lack it and have none.
const renamesKey = "locus.memory_renames"

// format is the layout version a table records.
var format = objio.Format{Key: "locus.memory_version", Version: schema.MemoryVersion}

// Write stores t at key as one Parquet file (zstd) and describes it.
func Write(ctx context.Context, b *blob.Bucket, key string, t *Table) (schema.MemoryInfo, error) {
	renames, err := json.Marshal(t.renames)
	if err != nil {
		return schema.MemoryInfo{}, fmt.Errorf("memory %s: %w", key, err)
	}
	ref, err := objio.WriteParquet(ctx, b, key, t.commits, format, parquet.KeyValueMetadata(renamesKey, string(renames)))
	if err != nil {
		return schema.MemoryInfo{}, fmt.Errorf("memory: %w", err)
	}
	return schema.MemoryInfo{Key: key, Commits: t.Len(), Bytes: ref.Size, SHA256: ref.SHA256, Layout: schema.MemoryLayout}, nil
}

// Read loads the table info describes; a damaged one (size, SHA-256, not
// Parquet of this layout) wraps blob.ErrCorrupt and names the key.
func Read(ctx context.Context, b *blob.Bucket, info schema.MemoryInfo) (*Table, error) {
	f, err := objio.OpenParquet(ctx, b, objio.Ref{Key: info.Key, Size: info.Bytes, SHA256: info.SHA256}, format)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	commits, err := objio.Rows[Commit](info.Key, f)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	t, err := New(commits)
	if err != nil {
		return nil, fmt.Errorf("memory %s: %v: %w", info.Key, err, blob.ErrCorrupt)
	}
	if v, ok := f.Lookup(renamesKey); ok {
		if err := json.Unmarshal([]byte(v), &t.renames); err != nil {
			return nil, fmt.Errorf("memory %s: renames: %v: %w", info.Key, err, blob.ErrCorrupt)
		}
	}
	return t, nil
}
