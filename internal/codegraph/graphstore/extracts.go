package graphstore

import (
	"context"
	"fmt"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// WriteExtractsSegment puts e in the repository's extraction store, under
// a key named by the SHA-256 of its bytes.
func WriteExtractsSegment(ctx context.Context, b *blob.Bucket, repo schema.RepoName, e *codegraph.Extracts) (schema.ExtractsSegment, error) {
	data, err := encodeExtracts(e)
	if err != nil {
		return schema.ExtractsSegment{}, err
	}
	return putExtractsSegment(ctx, b, repo, data, len(e.Files))
}

// ShareExtracts puts the extractions a graph kept (the indexed head's,
// under its graph prefix, which publishing the next head sweeps) in the
// repository's extraction store, where snapshots derived from them can
// name them for good. It returns the segment and the extractions.
func ShareExtracts(ctx context.Context, b *blob.Bucket, repo schema.RepoName, info schema.GraphInfo) (schema.ExtractsSegment, *codegraph.Extracts, error) {
	if info.ExtractsKey == "" {
		return schema.ExtractsSegment{}, nil, fmt.Errorf("graph of %s@%s kept no extractions", repo, info.Commit)
	}
	data, err := objio.ReadBlob(ctx, b, objio.Ref{Key: info.ExtractsKey, Size: info.ExtractsBytes, SHA256: info.ExtractsSHA256})
	if err != nil {
		return schema.ExtractsSegment{}, nil, err
	}
	e, err := decodeExtracts(info.ExtractsKey, data)
	if err != nil {
		return schema.ExtractsSegment{}, nil, err
	}
	seg, err := putExtractsSegment(ctx, b, repo, data, len(e.Files))
	return seg, e, err
}

func putExtractsSegment(ctx context.Context, b *blob.Bucket, repo schema.RepoName, data []byte, files int) (schema.ExtractsSegment, error) {
	ref := objio.RefOf("", data)
	key := repo.ExtractsSegmentKey(ref.SHA256)
	seg := schema.ExtractsSegment{Key: key, Bytes: ref.Size, SHA256: ref.SHA256, Files: files}
	// Written even when there: equal bytes replace equal bytes, and a
	// damaged copy is mended.
	if _, err := objio.WriteBlob(ctx, b, key, data); err != nil {
		return schema.ExtractsSegment{}, fmt.Errorf("extraction segment of %s: %w", repo, err)
	}
	return seg, nil
}

// ReadExtractsSegment reads a segment of the extraction store, checked
// against its recorded size and SHA-256: a damaged one is an error naming it.
func ReadExtractsSegment(ctx context.Context, b *blob.Bucket, seg schema.ExtractsSegment) (*codegraph.Extracts, error) {
	data, err := objio.ReadBlob(ctx, b, objio.Ref{Key: seg.Key, Size: seg.Bytes, SHA256: seg.SHA256})
	if err != nil {
		return nil, err
	}
	return decodeExtracts(seg.Key, data)
}
