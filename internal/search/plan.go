package search

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/schema"
)

// functionItems reads the graph and returns its function nodes with the items
// (content key, document) to embed, in the same order. With a Summarizer,
// each document ends with its function's stored summary, when it has one.
func functionItems(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo) ([]codegraph.Node, []embed.Item, error) {
	if d.Summarizer != nil { // summaries may change under one graph
		return readFunctionItems(ctx, d, repo, info)
	}
	fi, err := functionDocs.get(ctx, keyOf(d.Bucket, info), func() (*graphFunctions, error) {
		fns, items, err := readFunctionItems(ctx, d, repo, info)
		return &graphFunctions{fns, items}, err
	})
	if err != nil {
		return nil, nil, err
	}
	return fi.fns, fi.items, nil
}

// functionDocs shares a published graph's functions and documents between
// the activities of one index that a process runs (PlanEmbed, then
// FinishIndex): the graph is read and the documents made once. Callers
// must not change what they get.
var functionDocs = &onceLRU[graphKey, *graphFunctions]{size: 2}

type graphFunctions struct {
	fns   []codegraph.Node
	items []embed.Item
}

// readFunctionItems reads the graph info describes and makes its functions'
// documents.
func readFunctionItems(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo) ([]codegraph.Node, []embed.Item, error) {
	g, err := graphstore.Read(ctx, d.Bucket, info)
	if err != nil {
		return nil, nil, err
	}
	classes := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Type == codegraph.TypeClass {
			classes[n.ID] = true
		}
	}
	var sums Summaries
	if d.Summarizer != nil {
		if sums, err = ReadSummaries(ctx, d.Bucket, repo, d.Summarizer.Name()); err != nil {
			return nil, nil, err
		}
	}
	var fns []codegraph.Node
	var items []embed.Item
	for _, n := range g.Nodes {
		if n.Type != codegraph.TypeFunction {
			continue
		}
		doc := Document(n, classes)
		if s := sums[n.ContentHash]; s != "" {
			doc += "\nSummary: " + s
		}
		fns = append(fns, n)
		items = append(items, EmbedItem(n, doc))
	}
	return fns, items, nil
}

// PlanEmbed finds the functions whose documents neither the vector store
// nor the cache has a vector for and stores them as batches of at most
// batchSize; it returns the batch keys.
// Each batch is then embedded by its own retried activity.
func PlanEmbed(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo, batchSize int) ([]string, error) {
	d.defaults()
	if batchSize <= 0 {
		batchSize = 256
	}
	fns, items, err := functionItems(ctx, d, repo, info)
	if err != nil {
		return nil, fmt.Errorf("plan embeddings of %s: %w", repo, err)
	}
	// Functions the vector store holds as they are need no vector (as
	// FinishIndex's IndexRepo).
	stored, err := d.Vectors.IDs(ctx, string(repo))
	if err != nil {
		return nil, fmt.Errorf("plan embeddings of %s: %w", repo, err)
	}
	missing, err := embed.Missing(ctx, d.Embedder.Dim(), &embed.Cache{Bucket: d.Bucket, Repo: repo, Model: d.Embedder.Name()}, unstored(fns, items, stored))
	if err != nil {
		return nil, err
	}
	var keys []string
	prefix := repo.EmbedPendingPrefix(d.Embedder.Name(), info.Commit)
	for i := 0; i < len(missing); i += batchSize {
		data, err := json.Marshal(missing[i:min(i+batchSize, len(missing))])
		if err != nil {
			return nil, err
		}
		key := fmt.Sprintf("%sbatch-%05d.json", prefix, i/batchSize)
		if err := d.Bucket.WriteAll(ctx, key, data); err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// EmbedBatch embeds one planned batch into the cache and returns how many
// texts it embedded (0 when a previous attempt already did).
func EmbedBatch(ctx context.Context, d Deps, repo schema.RepoName, key string) (int, error) {
	d.defaults()
	data, err := d.Bucket.ReadAll(ctx, key)
	if err != nil {
		return 0, err
	}
	var items []embed.Item
	if err := json.Unmarshal(data, &items); err != nil {
		return 0, fmt.Errorf("embedding batch %s: %w", key, err)
	}
	_, n, err := embed.EmbedCached(ctx, d.Embedder, &embed.Cache{Bucket: d.Bucket, Repo: repo, Model: d.Embedder.Name()}, items)
	return n, err
}

// FinishIndex upserts the vectors (now all cached), deletes vanished ones,
// writes the BM25 index and removes the planned batches.
func FinishIndex(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo) (*IndexResult, error) {
	d.defaults()
	res, err := IndexRepo(ctx, d, repo, info)
	if err != nil {
		return nil, err
	}
	objs, err := d.Bucket.List(ctx, repo.EmbedPendingPrefix(d.Embedder.Name(), info.Commit))
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		d.Bucket.Delete(ctx, o.Key)
	}
	return res, nil
}

// EmbedItem is function n with its document doc as the embedding cache keys
// it: by code and document, so an index, a snapshot and a miner embedding
// the same function share one vector.
func EmbedItem(n codegraph.Node, doc string) embed.Item {
	return embed.Item{Hash: n.ContentHash + ":" + contentKey(doc), Text: doc}
}
