package activities

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// RankHostsInput is RankHosts's argument.
type RankHostsInput struct {
	Repos []schema.RepoName `json:"repos"`
}

// RankHosts returns the task queue of the host with each repository's
// clone (its manifest's), where its training queries are featurised. A
// repository that is not indexed fails for good, naming it.
func (a *Store) RankHosts(ctx context.Context, in RankHostsInput) ([]string, error) {
	out := make([]string, len(in.Repos))
	for i, r := range in.Repos {
		m, err := manifest.Read(ctx, a.Bucket, r)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, badInput(fmt.Errorf("train ranker: %s is not indexed (locus index it first)", r))
		}
		out[i] = m.HostQueue
		if out[i] == "" || a.OnlyHost {
			out[i] = a.HostQueue
		}
	}
	return out, nil
}

// RankFeaturesInput is RankFeatures's argument: one repository's records
// (a part stored by the command that started the run).
type RankFeaturesInput struct {
	Run     string            `json:"run"`
	Repo    schema.RepoName   `json:"repo"`
	Records triplets.PartInfo `json:"records"`
	Options fit.Options       `json:"options"`
}

// RankFeatures featurises one repository's training queries on this host's
// clone into a stored table (fit.StoreFeatures: one already stored for the
// same records is reused), heartbeating "done/total queries".
func (a *Git) RankFeatures(ctx context.Context, in RankFeaturesInput) (fit.FeaturesResult, error) {
	dir, err := a.clonePath(in.Repo)
	if err != nil {
		return fit.FeaturesResult{}, badInput(err)
	}
	recs, err := triplets.ReadPart(ctx, a.Bucket, in.Records)
	if err != nil {
		return fit.FeaturesResult{}, damaged(fmt.Errorf("train ranker: records of %s: %w", in.Repo, err))
	}
	var done, total atomic.Int64
	stop := Heartbeat(ctx, func() any { return fmt.Sprintf("%d/%d queries", done.Load(), total.Load()) })
	defer stop()
	res, err := fit.StoreFeatures(ctx, fit.FeaturesConfig{Bucket: a.Bucket, Repo: in.Repo, GitDir: dir, Records: recs, Options: in.Options,
		Progress: func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) }})
	return res, permanent(damaged(err))
}

// RankModelInput is TrainRankModel's argument.
type RankModelInput struct {
	Run      string            `json:"run"`
	Features []fit.FeaturesRef `json:"features"`
	Without  schema.RepoName   `json:"without,omitempty"`
	Train    rank.TrainConfig  `json:"train"`
}

// RankModelKey is where a run stores the model trained without repo (""
// the fleet's model) before it is published.
func RankModelKey(run string, without schema.RepoName) string {
	if without == "" {
		return schema.RankRunKey(run, "model.json")
	}
	return schema.RankRunKey(run, "loo/"+without.FileName()+".json")
}

// TrainRankModel trains one model on the run's stored features
// (fit.TrainModel) and stores it in the run. Nothing to train on, no
// trainer on this worker, and damaged features fail for good.
func (a *Store) TrainRankModel(ctx context.Context, in RankModelInput) (fit.ModelResult, error) {
	stop := Heartbeat(ctx, nil)
	defer stop()
	res, err := fit.TrainModel(ctx, fit.ModelConfig{Bucket: a.Bucket, Features: in.Features, Without: in.Without,
		Key: RankModelKey(in.Run, in.Without), Train: in.Train})
	if err != nil && ctx.Err() == nil && (errors.Is(err, fit.ErrNoTrainingQueries) || errors.Is(err, rank.ErrNoPositives) ||
		errors.Is(err, rank.ErrNoTrainer) || errors.Is(err, fit.ErrFeatures)) {
		return res, badInput(err)
	}
	return res, damaged(err)
}

// PublishRankModels makes a finished run's models its fleet's and stores
// the report (fit.PublishModels).
func (a *Store) PublishRankModels(ctx context.Context, res fit.RankerResult) (fit.RankerResult, error) {
	return fit.PublishModels(ctx, a.Bucket, res)
}
