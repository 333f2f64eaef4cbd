package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// TripletsPlanInput is PlanTriplets's argument.
type TripletsPlanInput struct {
	Repo      schema.RepoName `json:"repo"`
	ChunkSize int             `json:"chunk_size,omitempty"`
}

// TripletsPlan is how one repository's history is mined: its chunks and
// the host whose clone reads the parents.
type TripletsPlan struct {
	Head      string `json:"head"`
	Commits   int    `json:"commits"`
	Chunks    int    `json:"chunks"`
	HostQueue string `json:"host_queue"`
	// URL and Ref are what the index was cloned from (the manifest's):
	// when HostQueue's host is gone, the repository is cloned again on a
	// live host from them.
	URL string `json:"url,omitempty"`
	Ref string `json:"ref,omitempty"`
}

// PlanTriplets reads the repository's indexed history and splits it into
// chunks. A repository without history in the store fails for good, with
// a message naming it.
func (a *Store) PlanTriplets(ctx context.Context, in TripletsPlanInput) (TripletsPlan, error) {
	defer Heartbeat(ctx, nil)() // a lost worker's attempt is retried after HeartbeatTimeout
	ix, err := triplets.ReadIndex(ctx, a.Bucket, in.Repo)
	if err != nil {
		if errors.Is(err, triplets.ErrNoHistory) {
			return TripletsPlan{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
		return TripletsPlan{}, err
	}
	p := TripletsPlan{Head: ix.Manifest.Head, Commits: len(ix.Keys), Chunks: triplets.Chunks(len(ix.Keys), in.ChunkSize), HostQueue: ix.Manifest.HostQueue,
		URL: ix.Manifest.URL, Ref: ix.Manifest.Ref}
	if p.HostQueue == "" || a.OnlyHost {
		p.HostQueue = a.HostQueue
	}
	return p, nil
}

// TripletsChunkInput is MineTripletsChunk's argument.
type TripletsChunkInput struct {
	Run       string           `json:"run"`
	Repo      schema.RepoName  `json:"repo"`
	Chunk     int              `json:"chunk"`
	ChunkSize int              `json:"chunk_size,omitempty"`
	Options   triplets.Options `json:"options"`
	Exclude   []triplets.Named `json:"exclude,omitempty"`
	// IssuesKey names stored issue texts (triplets.IssuesKey); "" none.
	IssuesKey string `json:"issues_key,omitempty"`
}

// MineTripletsChunk mines one chunk of a repository's history from this
// host's clone and stores it as one part (replaced on a retry, so rows are
// never duplicated), heartbeating "done/total commits".
func (a *Git) MineTripletsChunk(ctx context.Context, in TripletsChunkInput) (triplets.ChunkResult, error) {
	dir, err := a.clonePath(in.Repo)
	if err != nil {
		return triplets.ChunkResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	var done, total atomic.Int64
	stop := Heartbeat(ctx, func() any { return fmt.Sprintf("%d/%d commits", done.Load(), total.Load()) })
	defer stop()
	issues, err := triplets.ReadIssues(ctx, a.Bucket, in.IssuesKey)
	if err != nil {
		if errors.Is(err, triplets.ErrBadChunk) {
			return triplets.ChunkResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
		return triplets.ChunkResult{}, err
	}
	dense, err := a.dense(in.Repo, in.Options)
	if err != nil {
		return triplets.ChunkResult{}, err
	}
	res, err := triplets.MineChunk(ctx, triplets.ChunkConfig{Bucket: a.Bucket, GitDir: dir, Backend: a.Backend, Run: in.Run, Repo: in.Repo,
		Chunk: in.Chunk, Size: in.ChunkSize, Options: in.Options, Exclusion: triplets.NewExclusion(in.Exclude), Issues: issues, Dense: dense,
		Progress: func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) }})
	if err != nil && ctx.Err() == nil && errors.Is(err, triplets.ErrBadChunk) {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	return res, permanent(err)
}

// TripletsRepoResult is what mining one repository did.
type TripletsRepoResult struct {
	Repo    schema.RepoName     `json:"repo"`
	Head    string              `json:"head,omitempty"`
	Commits int                 `json:"commits"`
	Records int                 `json:"records"`
	Parts   []triplets.PartInfo `json:"parts,omitempty"`
	Stats   triplets.Stats      `json:"stats"`
	// Error says why the repository could not be mined (in full or in
	// part); "" when it was.
	Error string `json:"error,omitempty"`
}

// TripletsResultsInput is WriteTripletsResults's argument.
type TripletsResultsInput struct {
	Run     string               `json:"run"`
	Seq     int                  `json:"seq"`
	Results []TripletsRepoResult `json:"results"`
}

// WriteTripletsResults stores one run segment's per-repository results.
func (a *Store) WriteTripletsResults(ctx context.Context, in TripletsResultsInput) (string, error) {
	defer Heartbeat(ctx, nil)()
	key := schema.TripletsResultsKey(in.Run, in.Seq)
	return key, a.writeJSON(ctx, key, in.Results)
}

// ReadTripletsResults reads the per-repository results of a finished run.
func ReadTripletsResults(ctx context.Context, b *blob.Bucket, keys []string) ([]TripletsRepoResult, error) {
	var out []TripletsRepoResult
	for _, k := range keys {
		data, err := b.ReadAll(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("triplets results: %w", err)
		}
		var rs []TripletsRepoResult
		if err := json.Unmarshal(data, &rs); err != nil {
			return nil, fmt.Errorf("triplets results %s: %v: %w", k, err, blob.ErrCorrupt)
		}
		out = append(out, rs...)
	}
	return out, nil
}

// TripletsInstancesInput is MineTripletsInstances's argument.
type TripletsInstancesInput struct {
	Run     string           `json:"run"`
	Repo    schema.RepoName  `json:"repo"`
	Key     string           `json:"key"`
	Options triplets.Options `json:"options"`
}

// MineTripletsInstances mines the benchmark instances of one repository
// from the run's instance file (triplets.MineInstanceFile) on this host's
// clone, into the repository's instances part.
func (a *Git) MineTripletsInstances(ctx context.Context, in TripletsInstancesInput) (triplets.ChunkResult, error) {
	dir, err := a.clonePath(in.Repo)
	if err != nil {
		return triplets.ChunkResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	dense, err := a.dense(in.Repo, in.Options)
	if err != nil {
		return triplets.ChunkResult{}, err
	}
	stop := Heartbeat(ctx, nil)
	defer stop()
	res, err := triplets.MineInstanceFile(ctx, triplets.ChunkConfig{Bucket: a.Bucket, GitDir: dir, Backend: a.Backend, Run: in.Run,
		Repo: in.Repo, Options: in.Options, Dense: dense}, in.Key)
	if err != nil && ctx.Err() == nil && errors.Is(err, triplets.ErrBadChunk) {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	return res, permanent(err)
}

// dense is what mining repo embeds with when o takes dense negatives: this
// host's embedder and the repository's embedding cache; nil when o takes
// none. Without an embedder the chunk fails for good, naming why.
func (a *Git) dense(repo schema.RepoName, o triplets.Options) (*triplets.Dense, error) {
	if !o.NeedsEmbedder() {
		return nil, nil
	}
	if a.Embedder == nil {
		err := fmt.Errorf("triplets %s: %w: this worker has none (--embedder)", repo, triplets.ErrNoEmbedder)
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	return &triplets.Dense{Embedder: a.Embedder, Instruction: a.QueryInstruction,
		Cache: &embed.Cache{Bucket: a.Bucket, Repo: repo, Model: a.Embedder.Name()}}, nil
}
