package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/search"
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
	stop := heartbeatEvery(ctx, 10*time.Second, nil)
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
	dim := 0
	if a.Deps.Embedder != nil {
		dim = a.Deps.Embedder.Dim()
	}
	return schema.SearchInfo{Commit: in.Graph.Commit, Model: res.Model, Dim: dim, Functions: res.Functions,
		Embedded: res.Embedded, SparseKey: res.SparseKey, Vectors: vectorStore(a.Deps.Vectors)}, nil
}

// PlanEmbedOutput lists the batches to embed.
type PlanEmbedOutput struct {
	Batches []string `json:"batches"`
}

// PlanEmbed stores the functions the embedding cache lacks as batches.
func (a *Search) PlanEmbed(ctx context.Context, in schema.IndexSearchInput) (PlanEmbedOutput, error) {
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
	stop := heartbeatEvery(ctx, 10*time.Second, nil)
	defer stop()
	n, err := search.EmbedBatch(ctx, a.Deps, in.Repo, in.Key)
	if err != nil {
		return 0, a.embedFailure(ctx, in, err)
	}
	return n, nil
}

// FinishIndex upserts vectors, deletes vanished ones and writes BM25.
func (a *Search) FinishIndex(ctx context.Context, in schema.IndexSearchInput) (schema.SearchInfo, error) {
	stop := heartbeatEvery(ctx, 10*time.Second, nil)
	defer stop()
	res, err := search.FinishIndex(ctx, a.Deps, in.Repo, in.Graph)
	if err != nil {
		return schema.SearchInfo{}, damaged(err)
	}
	dim := 0
	if a.Deps.Embedder != nil {
		dim = a.Deps.Embedder.Dim()
	}
	return schema.SearchInfo{Commit: in.Graph.Commit, Model: res.Model, Dim: dim, Functions: res.Functions,
		Embedded: res.Embedded, SparseKey: res.SparseKey, Vectors: vectorStore(a.Deps.Vectors)}, nil
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
