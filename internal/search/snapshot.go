package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/schema"
)

// ReadSnapshot returns the snapshot manifest of repo at commit (a full
// commit id), or nil when none is published.
func ReadSnapshot(ctx context.Context, b *blob.Bucket, repo schema.RepoName, commit string) (*schema.SnapshotManifest, error) {
	if h, ok := gitrepo.ParseHash(commit); !ok || h.String() != commit {
		return nil, fmt.Errorf("snapshot of %s: %q is not a full lower-case commit id: %w", repo, commit, ErrBadQuery)
	}
	key := repo.SnapshotManifestKey(commit)
	data, err := b.ReadAll(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot manifest %s: %w", key, err)
	}
	var m schema.SnapshotManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("snapshot manifest %s: %v: %w", key, err, blob.ErrCorrupt)
	}
	if m.Version > schema.SnapshotVersion {
		return nil, fmt.Errorf("snapshot manifest %s: version %d is newer than this locus understands (%d)", key, m.Version, schema.SnapshotVersion)
	}
	if m.Repo != repo || m.Commit != commit || m.Graph.Commit != commit {
		return nil, fmt.Errorf("snapshot manifest %s names %s@%s: %w", key, m.Repo, m.Commit, blob.ErrCorrupt)
	}
	return &m, nil
}

// VerifySnapshot reports whether every object the snapshot manifest names
// reads back with the recorded size and SHA-256.
func VerifySnapshot(ctx context.Context, b *blob.Bucket, m *schema.SnapshotManifest) error {
	if err := graphstore.Verify(ctx, b, m.Graph); err != nil {
		return err
	}
	if m.Search.SparseKey == "" || m.Search.SparseSHA256 == "" {
		return fmt.Errorf("snapshot %s@%s: no BM25 index recorded: %w", m.Repo, m.Commit, blob.ErrCorrupt)
	}
	_, err := sparse.LoadVerified(ctx, b, m.Search.SparseKey, m.Search.SparseBytes, m.Search.SparseSHA256)
	return err
}

// PublishSnapshot writes the snapshot manifest, last: readers see a snapshot
// only once everything it names is stored. Concurrent builds of one snapshot
// write the same keys with equivalent content, each object atomically.
func PublishSnapshot(ctx context.Context, b *blob.Bucket, m *schema.SnapshotManifest) error {
	m.Version = schema.SnapshotVersion
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return b.WriteAll(ctx, m.Repo.SnapshotManifestKey(m.Commit), append(data, '\n'))
}

// IndexSnapshot embeds the functions of a snapshot's graph into the
// repository's embedding cache (only content not embedded before, by any
// snapshot or the head) and writes the snapshot's BM25 index with its
// documents' hashes. Unlike IndexRepo it touches no vector index: the
// head's vectors stay as they are, and dense queries of the snapshot read
// the cache (see snapshotVectors). With a base (the BM25 index of the head
// or of another snapshot), documents unchanged since are taken over, not
// tokenized, and when the base's vectors are the embedder's, not looked up
// in the cache either; the index is the one a build without it writes.
func IndexSnapshot(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo, base *SparseBase) (*IndexResult, error) {
	d.defaults()
	key := repo.SnapshotSparseKey(info.Commit)
	ef, err := embedFunctions(ctx, d, repo, info, key, fmt.Sprintf("index snapshot %s@%s", repo, info.Commit), base, nil, false)
	if err != nil {
		return nil, err
	}
	ef.res.SparseDocsKey = key + ".docs"
	return ef.writeSparse(ctx, d)
}

// snapVecs keeps the decoded vectors of a few snapshots per process:
// loading reads the embedding cache shards of the repository, and a backlog
// asks one snapshot many times.
var snapVecs = &onceLRU[snapVecKey, *snapVectors]{size: graphCacheSize}

// snapVecKey names one snapshot's vectors: its store, repository, graph
// (by its nodes' digest) and embedder.
type snapVecKey struct {
	bucket *blob.Bucket
	repo   schema.RepoName
	nodes  string
	model  string
}

// snapVectors are a snapshot's function ids, their documents' hashes and
// their unit vectors, dim floats each.
type snapVectors struct {
	ids    []string
	hashes []string
	unit   []float32
	dim    int
}

// getSnapVectors returns the vectors of the snapshot graph info describes.
func getSnapVectors(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo) (*snapVectors, error) {
	key := snapVecKey{d.Bucket, repo, info.NodesSHA256, d.Embedder.Name()}
	return snapVecs.get(ctx, key, func() (*snapVectors, error) {
		e := &snapVectors{}
		donors := snapVecs.ready(func(k snapVecKey) bool {
			return k.bucket == key.bucket && k.repo == key.repo && k.model == key.model && k.nodes != key.nodes
		})
		return e, e.load(ctx, d, repo, info, donors)
	})
}

// load reads the vectors of the snapshot's functions. Those whose
// documents donors (other snapshots of the repository loaded with the same
// embedder) hold are taken from them; only the others are looked up in the
// embedding cache. Snapshots of one repository share most of their
// functions, and the cache's shards hold a part for every snapshot built: a
// backlog or an eval over many base commits read them all once per
// snapshot before (sympy: 63% of a dense eval's time).
func (e *snapVectors) load(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo, donors []*snapVectors) error {
	fns, items, err := functionItems(ctx, d, repo, info)
	if err != nil {
		return err
	}
	e.dim = d.Embedder.Dim()
	type at struct {
		donor *snapVectors
		i     int
	}
	known := map[string]at{} // document hash → its vector in a donor
	for _, dn := range donors {
		if dn.dim != e.dim {
			continue
		}
		for i, h := range dn.hashes {
			if _, ok := known[h]; !ok {
				known[h] = at{dn, i}
			}
		}
	}
	var missing []embed.Item
	for _, it := range items {
		if _, ok := known[it.Hash]; !ok {
			missing = append(missing, it)
		}
	}
	snapLookups.Add(int64(len(missing)))
	vecs, err := snapshotMissing(ctx, d, repo, missing)
	if err != nil {
		return err
	}
	for i, n := range fns {
		h := items[i].Hash
		if k, ok := known[h]; ok {
			e.add(n.ID, h, k.donor.unit[k.i*e.dim:(k.i+1)*e.dim])
			continue
		}
		v := vecs[h]
		if len(v) != e.dim {
			continue // matches no query of the embedder's dimension
		}
		e.add(n.ID, h, vectors.Normalise(v))
	}
	return nil
}

// snapshotMissing are the vectors of the documents no donor held. The
// lexical embedder computes them (36 µs a document) rather than reading
// the cache parts that hold them, which costs more than that. For a model,
// everything was embedded when the snapshot was built; a cache part lost
// since is embedded again (and stored) rather than failing the query.
func snapshotMissing(ctx context.Context, d Deps, repo schema.RepoName, missing []embed.Item) (map[string][]float32, error) {
	if _, lexical := d.Embedder.(*embed.Lexical); lexical {
		vs, err := embed.EmbedItems(ctx, d.Embedder, missing)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]float32, len(missing))
		for i, it := range missing {
			out[it.Hash] = vs[i]
		}
		return out, nil
	}
	vecs, _, err := embed.EmbedCached(ctx, d.Embedder, &embed.Cache{Bucket: d.Bucket, Repo: repo, Model: d.Embedder.Name()}, missing)
	return vecs, err
}

// snapLookups counts the documents snapshot loads found in no donor
// (tests read it).
var snapLookups atomic.Int64

func (e *snapVectors) add(id, hash string, unit []float32) {
	e.ids = append(e.ids, id)
	e.hashes = append(e.hashes, hash)
	e.unit = append(e.unit, unit...)
}

// search is exact cosine search, best first, ties by id, as vectors.Local
// searches; a query of another dimension matches nothing.
func (e *snapVectors) search(q []float32, k int) []vectors.Hit {
	if len(q) != e.dim {
		return nil
	}
	return vectors.Exact(e.ids, e.unit, e.dim, q, k)
}
