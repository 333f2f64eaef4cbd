package vectors

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// Local is an exact (brute-force cosine) index kept in the object store, one
// object per repository and model, loaded lazily and cached in memory. Exact
// search over the functions of one repository (tens of thousands) takes
// milliseconds, and needs no server. A cached repository is checked against
// its object's ETag on every use (one stat or HEAD), so a Local shared by a
// process sees what another process wrote; at most localCachedRepos stay in
// memory.
type Local struct {
	bucket *blob.Bucket
	model  string
	dim    int

	mu    sync.Mutex
	repos map[string]*localRepo
	order []string // cached repositories, most recently used first
}

// localCachedRepos bounds the repositories one Local keeps decoded.
const localCachedRepos = 8

type localRepo struct {
	// etag is the ETag of the object the vectors were read from or
	// written to, "" when there was none; atomic because save sets it
	// under mu while repo reads it under Local.mu.
	etag   atomic.Value
	mu     sync.RWMutex
	ids    []string
	hashes []string
	commit []string
	vecs   []float32 // len(ids)*dim, each vector normalised
	index  map[string]int
}

// NewLocal opens the local index of one embedding model.
func NewLocal(b *blob.Bucket, model string, dim int) *Local {
	return &Local{bucket: b, model: model, dim: dim, repos: map[string]*localRepo{}}
}

func (l *Local) key(repo string) string {
	return schema.RepoName(repo).VectorsKey(l.model)
}

func (l *Local) repo(ctx context.Context, repo string) (*localRepo, error) {
	if _, err := schema.ParseRepoName(repo); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.repos[repo]; ok {
		etag := ""
		a, err := l.bucket.Attributes(ctx, l.key(repo))
		switch {
		case err == nil:
			etag = a.ETag
		case !errors.Is(err, blob.ErrNotFound):
			return nil, fmt.Errorf("vector index %s: %w", l.key(repo), err)
		}
		if etag == r.getETag() {
			l.touch(repo)
			return r, nil
		}
	}
	r, err := l.load(ctx, repo)
	if err != nil {
		l.forget(repo)
		return nil, err
	}
	l.repos[repo] = r
	l.touch(repo)
	return r, nil
}

// touch marks repo most recently used and evicts beyond localCachedRepos;
// l.mu is held.
func (l *Local) touch(repo string) {
	for i, x := range l.order {
		if x == repo {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	l.order = append([]string{repo}, l.order...)
	for len(l.order) > localCachedRepos {
		delete(l.repos, l.order[len(l.order)-1])
		l.order = l.order[:len(l.order)-1]
	}
}

// forget drops repo from the cache; l.mu is held.
func (l *Local) forget(repo string) {
	delete(l.repos, repo)
	for i, x := range l.order {
		if x == repo {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
}

const localMagic = "LOCUSVEC1"

// load reads the repository's vectors; a missing object is an empty index.
func (l *Local) load(ctx context.Context, repo string) (*localRepo, error) {
	r := &localRepo{index: map[string]int{}}
	key := l.key(repo)
	// The ETag is taken before the read: if the object is replaced in
	// between, the next use sees a different ETag and reads again.
	a, err := l.bucket.Attributes(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	r.etag.Store(a.ETag)
	data, err := l.bucket.ReadAll(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		r.etag.Store("")
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) < len(localMagic)+4 || string(data[:len(localMagic)]) != localMagic {
		return nil, fmt.Errorf("vector index %s: not a locus vector file", key)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("vector index %s: checksum mismatch (truncated or corrupt)", key)
	}
	rd := bytes.NewReader(body[len(localMagic):])
	var dim, n uint32
	if err := binary.Read(rd, binary.LittleEndian, &dim); err != nil {
		return nil, fmt.Errorf("vector index %s: %w", key, err)
	}
	if int(dim) != l.dim {
		return nil, fmt.Errorf("vector index %s: dimension %d, model %s has %d: %w", key, dim, l.model, l.dim, ErrDimension)
	}
	if err := binary.Read(rd, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("vector index %s: %w", key, err)
	}
	str := func() (string, error) {
		var ln uint32
		if err := binary.Read(rd, binary.LittleEndian, &ln); err != nil {
			return "", err
		}
		b := make([]byte, ln)
		_, err := io.ReadFull(rd, b)
		return string(b), err
	}
	r.vecs = make([]float32, int(n)*l.dim)
	for i := 0; i < int(n); i++ {
		id, err := str()
		if err == nil {
			var h, c string
			if h, err = str(); err == nil {
				if c, err = str(); err == nil {
					r.index[id] = len(r.ids)
					r.ids, r.hashes, r.commit = append(r.ids, id), append(r.hashes, h), append(r.commit, c)
					err = binary.Read(rd, binary.LittleEndian, r.vecs[i*l.dim:(i+1)*l.dim])
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("vector index %s: record %d: %w", key, i, err)
		}
	}
	return r, nil
}

// save writes the repository's vectors atomically.
func (l *Local) save(ctx context.Context, repo string, r *localRepo) error {
	var buf bytes.Buffer
	buf.WriteString(localMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(l.dim))
	binary.Write(&buf, binary.LittleEndian, uint32(len(r.ids)))
	put := func(s string) {
		binary.Write(&buf, binary.LittleEndian, uint32(len(s)))
		buf.WriteString(s)
	}
	for i, id := range r.ids {
		put(id)
		put(r.hashes[i])
		put(r.commit[i])
		binary.Write(&buf, binary.LittleEndian, r.vecs[i*l.dim:(i+1)*l.dim])
	}
	binary.Write(&buf, binary.LittleEndian, crc32.ChecksumIEEE(buf.Bytes()))
	if err := l.bucket.WriteAll(ctx, l.key(repo), buf.Bytes()); err != nil {
		l.drop(repo) // memory no longer matches the store
		return err
	}
	a, err := l.bucket.Attributes(ctx, l.key(repo))
	if err != nil {
		l.drop(repo)
		return err
	}
	r.etag.Store(a.ETag)
	return nil
}

func (r *localRepo) getETag() string {
	s, _ := r.etag.Load().(string)
	return s
}

// drop forgets repo's cached vectors.
func (l *Local) drop(repo string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(repo)
}

// Normalise returns v scaled to unit length (a zero vector stays zero).
func Normalise(v []float32) []float32 {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(n))
	for i, f := range v {
		out[i] = f * inv
	}
	return out
}

// Exact ranks ids by the cosine of their unit vectors (unit holds dim
// floats per id, in order) with query: best first, ties by id, at most k
// (all when k < 0). The local index and snapshot queries both search this way.
func Exact(ids []string, unit []float32, dim int, query []float32, k int) []Hit {
	q := Normalise(query)
	hits := make([]Hit, len(ids))
	for i, id := range ids {
		var dot float32
		v := unit[i*dim : (i+1)*dim]
		for j := range q {
			dot += q[j] * v[j]
		}
		hits[i] = Hit{id, float64(dot)}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].NodeID < hits[j].NodeID
	})
	if k >= 0 && k < len(hits) {
		hits = hits[:k]
	}
	return hits
}

// Upsert implements Index.
func (l *Local) Upsert(ctx context.Context, repo string, recs []Record) error {
	r, err := l.repo(ctx, repo)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if len(rec.Vector) != l.dim {
			return fmt.Errorf("upsert %s %s: %d dimensions, index has %d: %w", repo, rec.NodeID, len(rec.Vector), l.dim, ErrDimension)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		v := Normalise(rec.Vector)
		if i, ok := r.index[rec.NodeID]; ok {
			copy(r.vecs[i*l.dim:], v)
			r.hashes[i], r.commit[i] = rec.ContentHash, rec.Commit
			continue
		}
		r.index[rec.NodeID] = len(r.ids)
		r.ids, r.hashes, r.commit = append(r.ids, rec.NodeID), append(r.hashes, rec.ContentHash), append(r.commit, rec.Commit)
		r.vecs = append(r.vecs, v...)
	}
	return l.save(ctx, repo, r)
}

// Delete implements Index.
func (l *Local) Delete(ctx context.Context, repo string, nodeIDs []string) error {
	r, err := l.repo(ctx, repo)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	drop := map[string]bool{}
	for _, id := range nodeIDs {
		if _, ok := r.index[id]; ok {
			drop[id] = true
		}
	}
	if len(drop) == 0 {
		return nil
	}
	keep := &localRepo{index: map[string]int{}}
	for i, id := range r.ids {
		if drop[id] {
			continue
		}
		keep.index[id] = len(keep.ids)
		keep.ids, keep.hashes, keep.commit = append(keep.ids, id), append(keep.hashes, r.hashes[i]), append(keep.commit, r.commit[i])
		keep.vecs = append(keep.vecs, r.vecs[i*l.dim:(i+1)*l.dim]...)
	}
	r.ids, r.hashes, r.commit, r.vecs, r.index = keep.ids, keep.hashes, keep.commit, keep.vecs, keep.index
	return l.save(ctx, repo, r)
}

// Search implements Index: exact cosine over every vector of the repository.
func (l *Local) Search(ctx context.Context, repo string, query []float32, k int) ([]Hit, error) {
	if len(query) != l.dim {
		return nil, fmt.Errorf("search %s: query has %d dimensions, index has %d: %w", repo, len(query), l.dim, ErrDimension)
	}
	r, err := l.repo(ctx, repo)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return Exact(r.ids, r.vecs, l.dim, query, k), nil
}

// IDs implements Index.
func (l *Local) IDs(ctx context.Context, repo string) (map[string]string, error) {
	r, err := l.repo(ctx, repo)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[string]string, len(r.ids))
	for i, id := range r.ids {
		out[id] = r.hashes[i]
	}
	return out, nil
}

// Close drops the in-memory cache.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.repos = map[string]*localRepo{}
	l.order = nil
	return nil
}
