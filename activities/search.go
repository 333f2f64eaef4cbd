package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/metrics"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/schema"
)

// Search holds the retrieval backends: the store, the embedder and the vector index.
type Search struct {
	Deps search.Deps
}

// IndexSearch embeds the graph's functions (cached by content), upserts their
// vectors, deletes vanished ones and writes the BM25 index. Embedding-server
// failures are retried by Temporal; 4xx answers are not.
func (a *Search) IndexSearch(ctx context.Context, in schema.IndexSearchInput) (schema.SearchInfo, error) {
	stop := Heartbeat(ctx, nil)
	defer stop()
	res, err := search.IndexRepo(ctx, a.Deps, in.Repo, in.Graph)
	if err != nil {
		if errors.Is(err, blob.ErrCorrupt) {
			return schema.SearchInfo{}, damaged(err)
		}
		if embed.IsRetryable(err) {
			return schema.SearchInfo{}, err
		}
		return schema.SearchInfo{}, permanent(err)
	}
	metrics.FunctionsEmbedded.Add(float64(res.Embedded))
	return a.searchInfo(ctx, in, res)
}

// searchInfo is what the manifest records of an index run, with the BM25
// index's digest; it counts the vectors upserted.
func (a *Search) searchInfo(ctx context.Context, in schema.IndexSearchInput, res *search.IndexResult) (schema.SearchInfo, error) {
	metrics.VectorsUpserted.Add(float64(res.Upserted))
	dim := 0
	if a.Deps.Embedder != nil {
		dim = a.Deps.Embedder.Dim()
	}
	info := schema.SearchInfo{Commit: in.Graph.Commit, Model: res.Model, Dim: dim, Functions: res.Functions,
		Embedded: res.Embedded, SparseKey: res.SparseKey, Vectors: vectorStore(a.Deps.Vectors),
		SparseDocsKey: res.SparseDocsKey, Upserted: res.Upserted, Deleted: res.Deleted, SparseReused: res.SparseReused}
	return a.withSparseDigest(ctx, info)
}

// PlanEmbedOutput lists the batches to embed.
type PlanEmbedOutput struct {
	Batches []string `json:"batches"`
}

// PlanEmbed stores the functions the embedding cache lacks as batches.
func (a *Search) PlanEmbed(ctx context.Context, in schema.IndexSearchInput) (PlanEmbedOutput, error) {
	stop := Heartbeat(ctx, nil)
	defer stop()
	keys, err := search.PlanEmbed(ctx, a.Deps, in.Repo, in.Graph, 0)
	if err != nil {
		return PlanEmbedOutput{}, damaged(err)
	}
	return PlanEmbedOutput{Batches: keys}, nil
}

// EmbedBatchInput names one planned batch.
type EmbedBatchInput struct {
	Repo schema.RepoName `json:"repo"`
	Key  string          `json:"key"`
}

// EmbedBatch embeds one batch into the cache; embedding-server failures are
// retried (after the server's Retry-After), 4xx answers are not, and the
// errors name the server (see embedFailure).
func (a *Search) EmbedBatch(ctx context.Context, in EmbedBatchInput) (int, error) {
	stop := Heartbeat(ctx, nil)
	defer stop()
	n, err := search.EmbedBatch(ctx, a.Deps, in.Repo, in.Key)
	if err != nil {
		return 0, a.embedFailure(ctx, in, err)
	}
	metrics.FunctionsEmbedded.Add(float64(n))
	return n, nil
}

// FinishIndex upserts vectors, deletes vanished ones and writes BM25.
func (a *Search) FinishIndex(ctx context.Context, in schema.IndexSearchInput) (schema.SearchInfo, error) {
	stop := Heartbeat(ctx, nil)
	defer stop()
	res, err := search.FinishIndex(ctx, a.Deps, in.Repo, in.Graph)
	if err != nil {
		return schema.SearchInfo{}, damaged(err)
	}
	return a.searchInfo(ctx, in, res)
}

// ErrTypeDamaged marks a stored object that is damaged (blob.ErrCorrupt):
// reading it again cannot help, so it is not retried; the next index run
// rebuilds it.
const ErrTypeDamaged = "StoreDamaged"

// damaged makes an error about a damaged stored object non-retryable.
func damaged(err error) error {
	if err == nil || !errors.Is(err, blob.ErrCorrupt) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeDamaged, err)
}

// withSparseDigest records the size and SHA-256 of the BM25 index just
// written, read back and decoded, so that readers can tell damage from a
// valid index and the next index run rebuilds a damaged one.
func (a *Search) withSparseDigest(ctx context.Context, info schema.SearchInfo) (schema.SearchInfo, error) {
	if info.SparseKey == "" {
		return info, nil
	}
	size, sum, err := sparse.Digest(ctx, a.Deps.Bucket, info.SparseKey)
	if err != nil {
		// Damaged right after writing: retrying rewrites it.
		return schema.SearchInfo{}, err
	}
	info.SparseBytes, info.SparseSHA256 = size, sum
	return info, nil
}
