// Package milvus is the vectors.Index driver for a Milvus server: one collection per embedding model, the repository as partition key.
package milvus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"

	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/schema"
)

// Field names of a locus collection.
const (
	FieldPK          = "pk"           // INT64 primary key: vectors.PrimaryKey(repo, node id)
	FieldRepo        = "repo"         // VARCHAR partition key
	FieldNodeID      = "node_id"      // VARCHAR graph node id
	FieldCommit      = "commit"       // VARCHAR commit the node was indexed at
	FieldContentHash = "content_hash" // VARCHAR hash of the node's code
	FieldVector      = "vector"       // FLOAT_VECTOR(dim)
)

// VARCHAR limits of the schema, in bytes. Milvus allows up to 65,535.
const (
	MaxRepoLen   = 512
	MaxNodeIDLen = 8192
	MaxCommitLen = 128
	MaxHashLen   = 128
)

// Defaults for Options fields left zero.
const (
	DefaultNumPartitions  = 64   // partition-key buckets; Milvus' own default is 16, its maximum 1,024
	DefaultM              = 16   // HNSW graph degree
	DefaultEfConstruction = 200  // HNSW build-time candidate list
	DefaultSearchEf       = 64   // HNSW search-time candidate list, raised to the number of hits asked for
	DefaultBatchSize      = 1000 // rows per Upsert / ids per Delete / rows per Query page
	DefaultBatchBytes     = 16 << 20
	DefaultConnectTimeout = 30 * time.Second
)

// MaxTopK is the largest number of hits one Milvus search returns
// (its quota setting quotaAndLimits.limits.topK).
const MaxTopK = 16384

// Options configure Open. Address and Dim are required, and Model or Collection.
type Options struct {
	// Address of the Milvus proxy: "host:19530"; "https://host[:port]" for TLS.
	Address string
	// Collection name; default CollectionName(Model).
	Collection string
	// Model is the embedding model whose vectors the collection holds;
	// recorded in the collection's description and checked on open.
	Model string
	// Dim is the model's vector dimension.
	Dim int
	// Username and Password, or Token (an API key or "user:password"),
	// when the server has authentication on; Token wins.
	Username, Password, Token string
	// DB is the Milvus database; default the server's "default".
	DB string

	NumPartitions  int64         // default DefaultNumPartitions; used when creating the collection
	M              int           // default DefaultM; used when creating the index
	EfConstruction int           // default DefaultEfConstruction; used when creating the index
	SearchEf       int           // default DefaultSearchEf
	BatchSize      int           // default DefaultBatchSize
	BatchBytes     int           // default DefaultBatchBytes: an Upsert batch is also cut at this size
	ConnectTimeout time.Duration // default DefaultConnectTimeout: bounds dialling the server in Open
}

// Index is a vectors.Index stored in one Milvus collection. Reads use strong
// consistency, so a search sees every upsert that returned before it.
type Index struct {
	client *milvusclient.Client
	coll   string
	model  string
	dim    int
	opts   Options
}

var _ vectors.Index = (*Index)(nil)

// CollectionName derives a collection name from a model name under Milvus'
// rules (letters, digits and underscores, not starting with a digit, at most
// 255 characters): "locus_" + the name with other characters replaced by
// "_", plus a short hash of the model name when anything had to be replaced,
// so that "a-b" and "a.b" get different collections.
func CollectionName(model string) string {
	var b strings.Builder
	b.WriteString("locus_")
	lossy := false
	for _, r := range model {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			lossy = true
		}
	}
	name := b.String()
	const max = 255
	if len(name) > max-9 {
		name, lossy = name[:max-9], true
	}
	if lossy {
		h := sha256.Sum256([]byte(model))
		name += "_" + hex.EncodeToString(h[:4])
	}
	return name
}

// validName reports why name is not a valid Milvus collection name.
func validName(name string) error {
	if name == "" {
		return errors.New("empty")
	}
	if len(name) > 255 {
		return errors.New("longer than 255 characters")
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return fmt.Errorf("character %q at %d: only letters, digits and underscores, not starting with a digit", r, i)
		}
	}
	return nil
}

// Quote renders s as a string literal of a Milvus filter expression.
// Milvus reads literals with Go's unquoting rules, so strconv.Quote escapes
// quotes, backslashes and control characters the way it expects.
func Quote(s string) string { return strconv.Quote(s) }

func repoFilter(repo string) string { return FieldRepo + " == " + Quote(repo) }

const descPrefix = "locus function embeddings; model="

// Open connects to Milvus and makes sure the collection exists with the
// expected schema, has its HNSW (COSINE) index, and is loaded. An existing
// collection of another dimension fails with vectors.ErrDimension.
func Open(ctx context.Context, o Options) (*Index, error) {
	if o.Address == "" {
		return nil, errors.New("milvus: no address (want host:19530)")
	}
	if o.Dim <= 0 {
		return nil, fmt.Errorf("milvus %s: dimension %d: want a positive model dimension", o.Address, o.Dim)
	}
	if o.Collection == "" {
		if o.Model == "" {
			return nil, fmt.Errorf("milvus %s: neither a model nor a collection name given", o.Address)
		}
		o.Collection = CollectionName(o.Model)
	} else if err := validName(o.Collection); err != nil {
		return nil, fmt.Errorf("milvus %s: collection name %q: %v", o.Address, o.Collection, err)
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.M, DefaultM)
	def(&o.EfConstruction, DefaultEfConstruction)
	def(&o.SearchEf, DefaultSearchEf)
	def(&o.BatchSize, DefaultBatchSize)
	def(&o.BatchBytes, DefaultBatchBytes)
	if o.NumPartitions <= 0 {
		o.NumPartitions = DefaultNumPartitions
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}

	cfg := &milvusclient.ClientConfig{Address: o.Address, Username: o.Username, Password: o.Password, APIKey: o.Token, DBName: o.DB}
	dialCtx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	c, err := milvusclient.New(dialCtx, cfg)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("milvus %s: connect: %w", o.Address, err)
	}
	ix := &Index{client: c, coll: o.Collection, model: o.Model, dim: o.Dim, opts: o}
	if err := ix.prepare(ctx); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("milvus %s collection %s: %w", o.Address, o.Collection, err)
	}
	return ix, nil
}

// Collection is the name of the collection the index uses.
func (ix *Index) Collection() string { return ix.coll }

func (ix *Index) newSchema() *entity.Schema {
	return entity.NewSchema().
		WithName(ix.coll).
		WithDescription(descPrefix + ix.model).
		WithAutoID(false).
		WithDynamicFieldEnabled(false).
		WithField(entity.NewField().WithName(FieldPK).WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true).WithIsAutoID(false)).
		WithField(entity.NewField().WithName(FieldRepo).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxRepoLen).WithIsPartitionKey(true)).
		WithField(entity.NewField().WithName(FieldNodeID).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxNodeIDLen)).
		WithField(entity.NewField().WithName(FieldCommit).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxCommitLen)).
		WithField(entity.NewField().WithName(FieldContentHash).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxHashLen)).
		WithField(entity.NewField().WithName(FieldVector).WithDataType(entity.FieldTypeFloatVector).WithDim(int64(ix.dim)))
}

func (ix *Index) prepare(ctx context.Context) error {
	has, err := ix.client.HasCollection(ctx, milvusclient.NewHasCollectionOption(ix.coll))
	if err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	if !has {
		opt := milvusclient.NewCreateCollectionOption(ix.coll, ix.newSchema()).
			WithNumPartitions(ix.opts.NumPartitions).
			WithConsistencyLevel(entity.ClStrong)
		if err := ix.client.CreateCollection(ctx, opt); err != nil {
			// Another worker may have created it meanwhile; the schema check
			// below decides whether that one is usable.
			if again, herr := ix.client.HasCollection(ctx, milvusclient.NewHasCollectionOption(ix.coll)); herr != nil || !again {
				return fmt.Errorf("create: %w", err)
			}
		}
	}
	coll, err := ix.client.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(ix.coll))
	if err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	if err := ix.checkSchema(coll.Schema); err != nil {
		return err
	}
	if err := ix.ensureIndex(ctx); err != nil {
		return err
	}
	task, err := ix.client.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(ix.coll))
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if err := task.Await(ctx); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}

// checkSchema refuses a collection that is not laid out as newSchema, so a
// wrong name or model fails at open rather than on the first upsert.
func (ix *Index) checkSchema(s *entity.Schema) error {
	if s == nil {
		return errors.New("no schema returned")
	}
	if strings.HasPrefix(s.Description, descPrefix) && ix.model != "" {
		if m := strings.TrimPrefix(s.Description, descPrefix); m != ix.model {
			return fmt.Errorf("holds vectors of model %q, not %q", m, ix.model)
		}
	}
	want := map[string]entity.FieldType{
		FieldPK: entity.FieldTypeInt64, FieldRepo: entity.FieldTypeVarChar, FieldNodeID: entity.FieldTypeVarChar,
		FieldCommit: entity.FieldTypeVarChar, FieldContentHash: entity.FieldTypeVarChar, FieldVector: entity.FieldTypeFloatVector,
	}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		t, ok := want[f.Name]
		if !ok {
			if f.AutoID || f.Nullable || f.DefaultValue != nil {
				continue // an extra optional field does not hurt
			}
			return fmt.Errorf("has field %q that locus does not write (not a locus collection?)", f.Name)
		}
		seen[f.Name] = true
		if f.DataType != t {
			return fmt.Errorf("field %q is %v, want %v (not a locus collection?)", f.Name, f.DataType, t)
		}
		switch f.Name {
		case FieldPK:
			if !f.PrimaryKey || f.AutoID {
				return fmt.Errorf("field %q must be the primary key without auto id", f.Name)
			}
		case FieldVector:
			d, err := f.GetDim()
			if err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
			if int(d) != ix.dim {
				return fmt.Errorf("vectors have %d dimensions, model %q has %d: %w", d, ix.model, ix.dim, vectors.ErrDimension)
			}
		case FieldRepo:
			if !f.IsPartitionKey {
				return fmt.Errorf("field %q is not the partition key", f.Name)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			return fmt.Errorf("has no field %q (not a locus collection?)", name)
		}
	}
	return nil
}

func (ix *Index) ensureIndex(ctx context.Context) error {
	names, err := ix.client.ListIndexes(ctx, milvusclient.NewListIndexOption(ix.coll).WithFieldName(FieldVector))
	if err != nil && !errors.Is(err, merr.ErrIndexNotFound) {
		return fmt.Errorf("list indexes: %w", err)
	}
	if len(names) == 0 {
		idx := index.NewHNSWIndex(entity.COSINE, ix.opts.M, ix.opts.EfConstruction)
		task, err := ix.client.CreateIndex(ctx, milvusclient.NewCreateIndexOption(ix.coll, FieldVector, idx).WithIndexName(FieldVector))
		if err != nil {
			return fmt.Errorf("create HNSW index on %s: %w", FieldVector, err)
		}
		if err := task.Await(ctx); err != nil {
			return fmt.Errorf("create HNSW index on %s: %w", FieldVector, err)
		}
		names = []string{FieldVector}
	}
	desc, err := ix.client.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(ix.coll, names[0]))
	if err != nil {
		return fmt.Errorf("describe index %s: %w", names[0], err)
	}
	if m := desc.Params()[index.MetricTypeKey]; !strings.EqualFold(m, string(entity.COSINE)) {
		return fmt.Errorf("index %s on %s uses metric %q; locus scores are cosine similarities and need COSINE", names[0], FieldVector, m)
	}
	return nil
}

func checkRepo(op, repo string) error {
	if _, err := schema.ParseRepoName(repo); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if len(repo) > MaxRepoLen {
		return fmt.Errorf("%s %s: repository name longer than %d bytes", op, repo, MaxRepoLen)
	}
	return nil
}

func (ix *Index) checkRecord(repo string, r *vectors.Record) error {
	if len(r.Vector) != ix.dim {
		return fmt.Errorf("upsert %s %s: %d dimensions, index has %d: %w", repo, r.NodeID, len(r.Vector), ix.dim, vectors.ErrDimension)
	}
	for i, f := range r.Vector {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("upsert %s %s: component %d is %v", repo, r.NodeID, i, f)
		}
	}
	for _, s := range []struct {
		name, v string
		max     int
	}{{"node id", r.NodeID, MaxNodeIDLen}, {"commit", r.Commit, MaxCommitLen}, {"content hash", r.ContentHash, MaxHashLen}} {
		if len(s.v) > s.max {
			return fmt.Errorf("upsert %s %.80q: %s is %d bytes, the collection allows %d", repo, r.NodeID, s.name, len(s.v), s.max)
		}
	}
	return nil
}

// Upsert implements vectors.Index. Records are sent in batches of BatchSize
// rows (or BatchBytes); a later record with the same node id wins. A failed
// batch leaves the earlier ones written: re-running the call is safe.
func (ix *Index) Upsert(ctx context.Context, repo string, recs []vectors.Record) error {
	if err := checkRepo("upsert", repo); err != nil {
		return err
	}
	last := make(map[string]int, len(recs))
	for i := range recs {
		if err := ix.checkRecord(repo, &recs[i]); err != nil {
			return err
		}
		last[recs[i].NodeID] = i
	}
	// Milvus rejects a batch that repeats a primary key.
	keep := make([]int, 0, len(last))
	for i := range recs {
		if last[recs[i].NodeID] == i {
			keep = append(keep, i)
		}
	}
	for start := 0; start < len(keep); {
		end, size := start, 0
		for end < len(keep) && end-start < ix.opts.BatchSize {
			r := &recs[keep[end]]
			n := 4*ix.dim + len(repo) + len(r.NodeID) + len(r.Commit) + len(r.ContentHash) + 8
			if end > start && size+n > ix.opts.BatchBytes {
				break
			}
			size += n
			end++
		}
		if err := ix.upsertBatch(ctx, repo, recs, keep[start:end]); err != nil {
			return fmt.Errorf("upsert %s into milvus collection %s (records %d-%d of %d): %w", repo, ix.coll, start, end-1, len(keep), err)
		}
		start = end
	}
	return nil
}

func (ix *Index) upsertBatch(ctx context.Context, repo string, recs []vectors.Record, rows []int) error {
	n := len(rows)
	pks, repos, ids, commits, hashes := make([]int64, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	vecs := make([][]float32, n)
	for j, i := range rows {
		r := &recs[i]
		pks[j], repos[j], ids[j], commits[j], hashes[j], vecs[j] = vectors.PrimaryKey(repo, r.NodeID), repo, r.NodeID, r.Commit, r.ContentHash, r.Vector
	}
	opt := milvusclient.NewColumnBasedInsertOption(ix.coll).
		WithInt64Column(FieldPK, pks).
		WithVarcharColumn(FieldRepo, repos).
		WithVarcharColumn(FieldNodeID, ids).
		WithVarcharColumn(FieldCommit, commits).
		WithVarcharColumn(FieldContentHash, hashes).
		WithFloatVectorColumn(FieldVector, ix.dim, vecs)
	res, err := ix.client.Upsert(ctx, opt)
	if err != nil {
		return err
	}
	if res.UpsertCount != int64(n) {
		return fmt.Errorf("server upserted %d of %d rows", res.UpsertCount, n)
	}
	return nil
}

// Delete implements vectors.Index: by primary key, BatchSize ids per request.
func (ix *Index) Delete(ctx context.Context, repo string, nodeIDs []string) error {
	if err := checkRepo("delete", repo); err != nil {
		return err
	}
	seen := make(map[int64]bool, len(nodeIDs))
	pks := make([]int64, 0, len(nodeIDs))
	for _, id := range nodeIDs {
		pk := vectors.PrimaryKey(repo, id)
		if !seen[pk] {
			seen[pk] = true
			pks = append(pks, pk)
		}
	}
	for start := 0; start < len(pks); start += ix.opts.BatchSize {
		end := min(start+ix.opts.BatchSize, len(pks))
		var b strings.Builder
		b.WriteString(FieldPK + " in [")
		for i, pk := range pks[start:end] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(pk, 10))
		}
		b.WriteByte(']')
		if _, err := ix.client.Delete(ctx, milvusclient.NewDeleteOption(ix.coll).WithExpr(b.String())); err != nil {
			return fmt.Errorf("delete %d ids of %s from milvus collection %s: %w", end-start, repo, ix.coll, err)
		}
	}
	return nil
}

// Search implements vectors.Index. k may be at most MaxTopK. Milvus orders
// equal scores arbitrarily, so the search asks for more hits until the
// score after the k-th differs, and sorts ties by node id here.
func (ix *Index) Search(ctx context.Context, repo string, query []float32, k int) ([]vectors.Hit, error) {
	if len(query) != ix.dim {
		return nil, fmt.Errorf("search %s: query has %d dimensions, index has %d: %w", repo, len(query), ix.dim, vectors.ErrDimension)
	}
	if err := checkRepo("search", repo); err != nil {
		return nil, err
	}
	if k < 0 || k > MaxTopK {
		return nil, fmt.Errorf("search %s: k=%d, Milvus returns between 0 and %d hits", repo, k, MaxTopK)
	}
	if k == 0 {
		return nil, nil
	}
	limit := min(k+1, MaxTopK)
	for {
		hits, err := ix.search(ctx, repo, query, limit)
		if err != nil {
			return nil, fmt.Errorf("search %s in milvus collection %s: %w", repo, ix.coll, err)
		}
		sort.Slice(hits, func(i, j int) bool {
			if hits[i].Score != hits[j].Score {
				return hits[i].Score > hits[j].Score
			}
			return hits[i].NodeID < hits[j].NodeID
		})
		if len(hits) <= k {
			return hits, nil
		}
		// A tie across the cut can only be ordered when all its members are
		// here: the repository is exhausted or a lower score follows.
		if len(hits) < limit || hits[len(hits)-1].Score != hits[k-1].Score || limit == MaxTopK {
			return hits[:k], nil
		}
		limit = min(2*limit, MaxTopK)
	}
}

func (ix *Index) search(ctx context.Context, repo string, query []float32, limit int) ([]vectors.Hit, error) {
	opt := milvusclient.NewSearchOption(ix.coll, limit, []entity.Vector{entity.FloatVector(query)}).
		WithANNSField(FieldVector).
		WithFilter(repoFilter(repo)).
		WithOutputFields(FieldNodeID).
		WithConsistencyLevel(entity.ClStrong).
		WithAnnParam(index.NewHNSWAnnParam(max(ix.opts.SearchEf, limit)))
	rss, err := ix.client.Search(ctx, opt)
	if err != nil {
		return nil, err
	}
	if len(rss) != 1 {
		return nil, fmt.Errorf("%d result sets for one query", len(rss))
	}
	rs := rss[0]
	if rs.Err != nil {
		return nil, rs.Err
	}
	if rs.ResultCount == 0 {
		return nil, nil
	}
	ids, err := stringColumn(rs, FieldNodeID)
	if err != nil {
		return nil, err
	}
	if len(ids) != rs.ResultCount || len(rs.Scores) != rs.ResultCount {
		return nil, fmt.Errorf("malformed result: %d hits, %d node ids, %d scores", rs.ResultCount, len(ids), len(rs.Scores))
	}
	hits := make([]vectors.Hit, len(ids))
	for i, id := range ids {
		hits[i] = vectors.Hit{NodeID: id, Score: float64(rs.Scores[i])}
	}
	return hits, nil
}

func stringColumn(rs milvusclient.ResultSet, name string) ([]string, error) {
	col := rs.GetColumn(name)
	if col == nil {
		return nil, fmt.Errorf("result has no %s column", name)
	}
	vc, ok := col.(*column.ColumnVarChar)
	if !ok {
		return nil, fmt.Errorf("result column %s is %v, want VarChar", name, col.Type())
	}
	return vc.Data(), nil
}

// IDs implements vectors.Index, paging through the repository with a query
// iterator (BatchSize rows per request) so that no single result exceeds
// Milvus' query window.
func (ix *Index) IDs(ctx context.Context, repo string) (map[string]string, error) {
	if err := checkRepo("ids", repo); err != nil {
		return nil, err
	}
	wrap := func(err error) error { return fmt.Errorf("ids of %s in milvus collection %s: %w", repo, ix.coll, err) }
	it, err := ix.client.QueryIterator(ctx, milvusclient.NewQueryIteratorOption(ix.coll).
		WithFilter(repoFilter(repo)).
		WithOutputFields(FieldNodeID, FieldContentHash).
		WithBatchSize(ix.opts.BatchSize).
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return nil, wrap(err)
	}
	out := map[string]string{}
	for {
		rs, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, wrap(err)
		}
		ids, err := stringColumn(rs, FieldNodeID)
		if err != nil {
			return nil, wrap(err)
		}
		hashes, err := stringColumn(rs, FieldContentHash)
		if err != nil {
			return nil, wrap(err)
		}
		if len(ids) != len(hashes) {
			return nil, wrap(fmt.Errorf("malformed page: %d node ids, %d hashes", len(ids), len(hashes)))
		}
		for i, id := range ids {
			out[id] = hashes[i]
		}
	}
}

// Close closes the connection; the collection stays loaded for other clients.
func (ix *Index) Close() error {
	return ix.client.Close(context.Background())
}
