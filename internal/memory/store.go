package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// Version is the layout version of a stored table.
const Version = 1

// Key is where the memory of repo at head is stored.
func Key(repo schema.RepoName, head string) string {
	return "repos/" + string(repo) + "/memory/" + head + ".parquet"
}

// Layout is the schema.MemoryInfo.Layout of tables written now: they keep
// the files their commits moved.
const Layout = 1

// renamesKey holds a table's renames (JSON) in its Parquet file's metadata;
// tables written before renames were kept lack it and have none.
const renamesKey = "locus.memory_renames"

// Write stores t at key as one Parquet file (zstd) and describes it.
func Write(ctx context.Context, b *blob.Bucket, key string, t *Table) (schema.MemoryInfo, error) {
	var buf bytes.Buffer
	renames, err := json.Marshal(t.renames)
	if err != nil {
		return schema.MemoryInfo{}, fmt.Errorf("memory %s: %w", key, err)
	}
	w := parquet.NewGenericWriter[Commit](&buf, parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.KeyValueMetadata("locus.memory_version", strconv.Itoa(Version)),
		parquet.KeyValueMetadata(renamesKey, string(renames)))
	if _, err := w.Write(t.commits); err != nil {
		return schema.MemoryInfo{}, fmt.Errorf("memory %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return schema.MemoryInfo{}, fmt.Errorf("memory %s: %w", key, err)
	}
	if err := b.WriteAll(ctx, key, buf.Bytes()); err != nil {
		return schema.MemoryInfo{}, fmt.Errorf("memory %s: %w", key, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return schema.MemoryInfo{Key: key, Commits: t.Len(), Bytes: int64(buf.Len()), SHA256: hex.EncodeToString(sum[:]), Layout: Layout}, nil
}

// Read loads the table info describes; a damaged one (size, SHA-256, not
// Parquet of this layout) wraps blob.ErrCorrupt and names the key.
func Read(ctx context.Context, b *blob.Bucket, info schema.MemoryInfo) (*Table, error) {
	data, err := b.ReadAll(ctx, info.Key)
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", info.Key, err)
	}
	if info.Bytes > 0 && int64(len(data)) != info.Bytes {
		return nil, fmt.Errorf("memory %s: %d bytes, %d were written: %w", info.Key, len(data), info.Bytes, blob.ErrCorrupt)
	}
	if info.SHA256 != "" {
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != info.SHA256 {
			return nil, fmt.Errorf("memory %s: SHA-256 differs from what was written: %w", info.Key, blob.ErrCorrupt)
		}
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("memory %s: not a readable Parquet file (%v): %w", info.Key, err, blob.ErrCorrupt)
	}
	if v, ok := f.Lookup("locus.memory_version"); !ok || v != strconv.Itoa(Version) {
		return nil, fmt.Errorf("memory %s: layout version %q, want %d: %w", info.Key, v, Version, blob.ErrCorrupt)
	}
	r := parquet.NewGenericReader[Commit](f)
	defer r.Close()
	commits := make([]Commit, 0, r.NumRows())
	buf := make([]Commit, 256)
	for {
		n, err := r.Read(buf)
		commits = append(commits, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("memory %s: %v: %w", info.Key, err, blob.ErrCorrupt)
		}
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
