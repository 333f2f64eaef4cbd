// Package vectors stores function embeddings per repository and answers
// nearest-neighbour queries; drivers: an exact local index and Milvus.
package vectors

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
)

// Record is one stored vector.
type Record struct {
	NodeID      string // graph node id ("path/file.py:Class.method")
	Commit      string // commit the node was indexed at
	ContentHash string // of the node's code: unchanged code keeps its vector
	Vector      []float32
}

// Hit is a search result; Score is the cosine similarity.
type Hit struct {
	NodeID string
	Score  float64
}

// Index is a vector store partitioned by repository. Implementations are
// safe for concurrent use.
type Index interface {
	// Upsert inserts or replaces records by node id.
	Upsert(ctx context.Context, repo string, recs []Record) error
	// Delete removes node ids; unknown ids are ignored.
	Delete(ctx context.Context, repo string, nodeIDs []string) error
	// Search returns the k nearest records of repo to query, best first,
	// ties broken by node id.
	Search(ctx context.Context, repo string, query []float32, k int) ([]Hit, error)
	// IDs lists every node id stored for repo with its content hash.
	IDs(ctx context.Context, repo string) (map[string]string, error)
	Close() error
}

// ErrDimension is returned when a vector's size differs from the index's.
var ErrDimension = errors.New("vector dimension mismatch")

// PrimaryKey is the stable 63-bit key of (repo, node id), as stored in Milvus.
func PrimaryKey(repo, nodeID string) int64 {
	h := sha256.Sum256([]byte(repo + "\x00" + nodeID))
	return int64(binary.BigEndian.Uint64(h[:8]) >> 1)
}
