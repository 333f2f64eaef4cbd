package activities

import (
	"context"
	"time"

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
		Embedded: res.Embedded, SparseKey: res.SparseKey}, nil
}
