package triplets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// Version is the layout version of a stored part.
const Version = 1

// PartKey is where part n of a run's records of repo (owner/name) live:
// triplets/<run>/repo=<owner+name>/part-00000.parquet ("+" cannot occur in
// a repository name, so two names never share a key).
func PartKey(run string, repo schema.RepoName, n int) string {
	return fmt.Sprintf("triplets/%s/repo=%s/part-%05d.parquet", schema.SafeKeySegment(run), strings.Replace(string(repo), "/", "+", 1), n)
}

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
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[Record](&buf, parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.KeyValueMetadata("locus.triplets_version", strconv.Itoa(Version)))
	if _, err := w.Write(records); err != nil {
		return PartInfo{}, fmt.Errorf("triplets part %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return PartInfo{}, fmt.Errorf("triplets part %s: %w", key, err)
	}
	if err := b.WriteAll(ctx, key, buf.Bytes()); err != nil {
		return PartInfo{}, fmt.Errorf("triplets part %s: %w", key, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return PartInfo{Key: key, Records: len(records), Bytes: int64(buf.Len()), SHA256: hex.EncodeToString(sum[:])}, nil
}

// ReadPart reads a part back, checked against p's size and SHA-256 when
// recorded; a damaged or truncated one names its key and wraps
// blob.ErrCorrupt.
func ReadPart(ctx context.Context, b *blob.Bucket, p PartInfo) ([]Record, error) {
	data, err := b.ReadVerified(ctx, p.Key, p.Bytes, p.SHA256)
	if err != nil {
		return nil, fmt.Errorf("triplets part: %w", err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("triplets part %s: not a readable Parquet file (%v): %w", p.Key, err, blob.ErrCorrupt)
	}
	if v, ok := f.Lookup("locus.triplets_version"); !ok || v != strconv.Itoa(Version) {
		return nil, fmt.Errorf("triplets part %s: layout version %q, want %d: %w", p.Key, v, Version, blob.ErrCorrupt)
	}
	r := parquet.NewGenericReader[Record](f)
	defer r.Close()
	out := make([]Record, 0, r.NumRows())
	for {
		buf := make([]Record, 64) // fresh: the records keep their slices
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("triplets part %s: %v: %w", p.Key, err, blob.ErrCorrupt)
		}
	}
	return out, nil
}
