// Package graphstore writes code graphs to the store and reads them back:
// nodes and edges as Parquet tables, a report, the extractions a build
// kept, and the nodes' code in the repository's shared code store
// (codestore.go), every object checked against the size and SHA-256 the
// manifest records.
package graphstore

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	kzstd "github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// Write stores the graph of commit as nodes.parquet, edges.parquet and
// report.json under the repository's graph prefix, the extractions it kept
// (Options.KeepExtracts) beside them, and the code of its nodes in the
// repository's code store (see codestore.go). Each object is
// replaced atomically (code segments, named by content, are never
// replaced by other content); the manifest, written later, makes them visible.
func Write(ctx context.Context, b *blob.Bucket, repo schema.RepoName, commit string, g *codegraph.Graph) (schema.GraphInfo, error) {
	return WriteAt(ctx, b, repo, repo.GraphPrefix(commit), commit, g)
}

// WriteAt is Write with the tables under another prefix (a snapshot's, see
// schema.RepoName.SnapshotPrefix); the code goes to the same code store.
func WriteAt(ctx context.Context, b *blob.Bucket, repo schema.RepoName, prefix, commit string, g *codegraph.Graph) (schema.GraphInfo, error) {
	nodesKey, edgesKey, reportKey, extractsKey := schema.GraphTableKeys(prefix)
	info := schema.GraphInfo{Commit: commit, NodesKey: nodesKey, EdgesKey: edgesKey,
		ReportKey: reportKey, Nodes: len(g.Nodes), Edges: len(g.Edges), Files: g.Stats.Files,
		Languages: g.Stats.FilesByLang, Unresolved: g.Stats.Unresolved, CodeBytes: g.Stats.CodeBytes, MissingFiles: g.Stats.Missing}
	info.Warning = codegraph.LanguageWarning(&info)
	// The edges, and the extractions the build kept, are written beside
	// the code and the nodes, which need it.
	var beside errgroup.Group
	beside.Go(func() (err error) {
		info.EdgesBytes, info.EdgesSHA256, err = writeParquet(ctx, b, info.EdgesKey, validEdges(g.Edges))
		return err
	})
	if g.Extracts != nil {
		beside.Go(func() (err error) {
			if info.ExtractsBytes, info.ExtractsSHA256, err = writeExtracts(ctx, b, extractsKey, g.Extracts); err == nil {
				info.ExtractsKey = extractsKey
			}
			return err
		})
	}
	nodesBytes, nodesSHA, segs, stored, err := writeNodes(ctx, b, repo, info.NodesKey, g)
	if berr := beside.Wait(); err == nil && berr != nil {
		return info, berr
	}
	if err != nil {
		return info, fmt.Errorf("graph of %s@%s: %w", repo, commit, err)
	}
	info.NodesBytes, info.NodesSHA256, info.Code, info.CodeNodes = nodesBytes, nodesSHA, segs, stored
	rep, err := json.MarshalIndent(g.Stats, "", "  ")
	if err != nil {
		return info, err
	}
	if err := b.WriteAll(ctx, info.ReportKey, rep); err != nil {
		return info, err
	}
	return info, nil
}

// writeNodes puts g's code in the repository's code store and its nodes,
// their code cleared where the store holds it, at key.
func writeNodes(ctx context.Context, b *blob.Bucket, repo schema.RepoName, key string, g *codegraph.Graph) (size int64, sum string, segs []schema.CodeSegment, stored int, err error) {
	valid := validNodes(g.Nodes)
	// Build's hashes are of its nodes' code, as long as validNodes left
	// that code as it was (it always does: Build's code is valid UTF-8).
	hashed := g.CodeHashed() && (len(valid) == 0 || &valid[0] == &g.Nodes[0])
	nodes, segs, stored, err := storeCode(ctx, b, repo, valid, hashed)
	if err != nil {
		return 0, "", nil, 0, err
	}
	size, sum, err = writeParquet(ctx, b, key, nodes)
	return size, sum, segs, stored, err
}

// validNodes returns nodes with ids, paths and names made valid UTF-8 (the
// exact path bytes go to PathRaw), copying only when some are not: Parquet
// string columns must be UTF-8, and other readers (DuckDB) refuse them otherwise.
func validNodes(nodes []codegraph.Node) []codegraph.Node {
	i := slices.IndexFunc(nodes, func(n codegraph.Node) bool {
		return !utf8.ValidString(n.ID) || !utf8.ValidString(n.Path) || !utf8.ValidString(n.Name) ||
			!utf8.ValidString(n.Type) || !utf8.ValidString(n.Language) || !utf8.ValidString(n.Code)
	})
	if i < 0 {
		return nodes
	}
	out := slices.Clone(nodes)
	for j := i; j < len(out); j++ {
		n := &out[j]
		if !utf8.ValidString(n.Path) && n.PathRaw == nil {
			n.PathRaw = []byte(n.Path)
		}
		n.ID, n.Path, n.Name = schema.ValidUTF8(n.ID), schema.ValidUTF8(n.Path), schema.ValidUTF8(n.Name)
		n.Type, n.Language, n.Code = schema.ValidUTF8(n.Type), schema.ValidUTF8(n.Language), schema.ValidUTF8(n.Code)
	}
	return out
}

// validEdges is validNodes for edges, whose ends are node ids.
func validEdges(edges []codegraph.Edge) []codegraph.Edge {
	i := slices.IndexFunc(edges, func(e codegraph.Edge) bool {
		return !utf8.ValidString(e.Src) || !utf8.ValidString(e.Dst) || !utf8.ValidString(e.Type)
	})
	if i < 0 {
		return edges
	}
	out := slices.Clone(edges)
	for j := i; j < len(out); j++ {
		e := &out[j]
		e.Src, e.Dst, e.Type = schema.ValidUTF8(e.Src), schema.ValidUTF8(e.Dst), schema.ValidUTF8(e.Type)
	}
	return out
}

// graphFormat is the layout version graph tables and code segments record.
var graphFormat = objio.Format{Key: "locus.graph_version", Version: schema.GraphVersion}

// writeParquet stores rows at key and returns the object's size and hex SHA-256.
func writeParquet[T any](ctx context.Context, b *blob.Bucket, key string, rows []T) (int64, string, error) {
	ref, err := objio.WriteParquet(ctx, b, key, rows, graphFormat)
	if err != nil {
		return 0, "", fmt.Errorf("graph table: %w", err)
	}
	return ref.Size, ref.SHA256, nil
}

// Read loads a stored graph (nodes with their code, and edges; Stats only in
// part). Each table and code segment is checked against the size and
// SHA-256 the manifest recorded (when it did) and must be readable Parquet;
// one that is not is an error naming its key and wrapping blob.ErrCorrupt,
// which a retry cannot fix but a rebuild (IndexRepo's BuildGraph,
// snapshot.Ensure) does.
func Read(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) (*codegraph.Graph, error) {
	g := &codegraph.Graph{}
	var err error
	if g.Nodes, err = readParquet[codegraph.Node](ctx, b, info.NodesKey, info.NodesBytes, info.NodesSHA256); err != nil {
		return nil, err
	}
	if err := fillCode(ctx, b, info, g.Nodes); err != nil {
		return nil, err
	}
	if g.Edges, err = readParquet[codegraph.Edge](ctx, b, info.EdgesKey, info.EdgesBytes, info.EdgesSHA256); err != nil {
		return nil, err
	}
	g.Stats.Nodes = len(g.Nodes)
	return g, nil
}

// Verify reports whether the stored graph reads back intact (see Read).
func Verify(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) error {
	_, err := Read(ctx, b, info)
	return err
}

// readParquet reads a graph table checked against the size and SHA-256
// the manifest recorded (when it did). Its layout version is not checked:
// the manifest's GraphVersion is.
func readParquet[T any](ctx context.Context, b *blob.Bucket, key string, size int64, sum string) ([]T, error) {
	rows, err := objio.ReadParquet[T](ctx, b, objio.Ref{Key: key, Size: size, SHA256: sum}, objio.Format{})
	if err != nil {
		return nil, fmt.Errorf("graph table: %w", err)
	}
	return rows, nil
}

// writeExtracts keeps extractions at key (zstd-compressed gob) and returns
// the object's size and hex SHA-256.
func writeExtracts(ctx context.Context, b *blob.Bucket, key string, e *codegraph.Extracts) (int64, string, error) {
	data, err := encodeExtracts(e)
	if err != nil {
		return 0, "", err
	}
	ref, err := objio.WriteBlob(ctx, b, key, data)
	if err != nil {
		return 0, "", fmt.Errorf("keep extractions: %w", err)
	}
	return ref.Size, ref.SHA256, nil
}

// encodeExtracts is the stored form of e: zstd-compressed gob.
func encodeExtracts(e *codegraph.Extracts) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := kzstd.NewWriter(&buf, kzstd.WithEncoderLevel(kzstd.SpeedFastest))
	if err != nil {
		return nil, err
	}
	if err := gob.NewEncoder(zw).Encode(e); err != nil {
		zw.Close()
		return nil, fmt.Errorf("keep extractions: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeExtracts reads what encodeExtracts wrote; what does not decode is
// an ErrCorrupt error naming key.
func decodeExtracts(key string, data []byte) (*codegraph.Extracts, error) {
	zr, err := kzstd.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	defer zr.Close()
	var e codegraph.Extracts
	if err := gob.NewDecoder(zr).Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", key, err, blob.ErrCorrupt)
	}
	return &e, nil
}

// ReadExtracts reads the extraction results a graph kept (nil when it kept
// none). A damaged or unreadable object is an error naming it; callers
// build without them.
func ReadExtracts(ctx context.Context, b *blob.Bucket, info schema.GraphInfo) (*codegraph.Extracts, error) {
	if info.ExtractsKey == "" {
		return nil, nil
	}
	data, err := objio.ReadBlob(ctx, b, objio.Ref{Key: info.ExtractsKey, Size: info.ExtractsBytes, SHA256: info.ExtractsSHA256})
	if err != nil {
		return nil, err
	}
	return decodeExtracts(info.ExtractsKey, data)
}
