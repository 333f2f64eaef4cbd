package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// DefaultRankWindow is how many repositories TrainRanker featurises at once.
const DefaultRankWindow = 2

// RankRepo is one repository's training records in a TrainRanker run.
type RankRepo struct {
	Repo    schema.RepoName   `json:"repo"`
	Records triplets.PartInfo `json:"records"`
	// Queries is about how many of them are featurised (fit.FeaturesTotal),
	// for progress.
	Queries int `json:"queries"`
}

// TrainRankerInput is TrainRanker's argument.
type TrainRankerInput struct {
	Run string `json:"run"`
	// Fleet names the published model (schema.RankModelKey).
	Fleet   string      `json:"fleet"`
	Repos   []RankRepo  `json:"repos"`
	Options fit.Options `json:"options"`
	// LeaveOut are repositories to also train a model without, for
	// leave-one-repository-out validation on their benchmark instances.
	LeaveOut []schema.RepoName `json:"leave_out,omitempty"`
	Train    rank.TrainConfig  `json:"train"`
	// Window is the repositories featurised at once; default
	// DefaultRankWindow.
	Window int `json:"window,omitempty"`
}

// Phases of a TrainRanker run, as its progress names them.
const (
	RankPhaseFeatures = "features"
	RankPhaseModels   = "models"
	RankPhasePublish  = "publish"
)

// RankProgress is what the progress query of TrainRanker answers.
type RankProgress struct {
	Phase string `json:"phase"`
	Repos int    `json:"repos"`
	// ReposDone have their features; Running are being featurised.
	ReposDone int `json:"repos_done"`
	Running   int `json:"running"`
	// Queries is about how many queries all repositories featurise,
	// QueriesDone those of ReposDone.
	Queries     int       `json:"queries"`
	QueriesDone int       `json:"queries_done"`
	Models      int       `json:"models"`
	ModelsDone  int       `json:"models_done"`
	Started     time.Time `json:"started"`
}

// FeaturesActivityID is the activity id of a repository's featurising in
// a TrainRanker run, so that progress can read its heartbeat.
func FeaturesActivityID(repo schema.RepoName) string { return "features/" + string(repo) }

// TrainRanker trains a fleet's learned ranker: it featurises each
// repository's records on the host with its clone (a sliding window of
// activities; tables already stored for the same records are reused),
// trains the fleet's model and one model per left-out repository, one
// activity each, and publishes them with the report. A repository whose
// features fail fails the run, naming it; running it again resumes from
// the stored features.
func TrainRanker(ctx workflow.Context, in TrainRankerInput) (fit.RankerResult, error) {
	if err := checkInput(ctx, func() error { return validateRankInput(in) }); err != nil {
		return fit.RankerResult{}, err
	}
	prog := RankProgress{Phase: RankPhaseFeatures, Repos: len(in.Repos), Models: 1 + len(in.LeaveOut), Started: workflow.Now(ctx)}
	for _, r := range in.Repos {
		prog.Queries += r.Queries
	}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RankProgress, error) { return prog, nil }); err != nil {
		return fit.RankerResult{}, err
	}
	storeCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeDamaged}},
	})
	repos := make([]schema.RepoName, len(in.Repos))
	for i, r := range in.Repos {
		repos[i] = r.Repo
	}
	var hosts []string
	if err := workflow.ExecuteActivity(storeCtx, store.RankHosts, activities.RankHostsInput{Repos: repos}).Get(ctx, &hosts); err != nil {
		return fit.RankerResult{}, err
	}
	feats := make([]fit.FeaturesResult, len(in.Repos))
	var failed error
	sel := workflow.NewSelector(ctx)
	running, next := 0, 0
	for next < len(in.Repos) && failed == nil || running > 0 {
		for running < cmpOr(in.Window, DefaultRankWindow) && next < len(in.Repos) && failed == nil {
			i := next
			next++
			running++
			prog.Running = running
			opts := workflow.GetActivityOptions(onHost(ctx, hosts[i], DefaultHostWait, 6*time.Hour))
			opts.ActivityID = FeaturesActivityID(in.Repos[i].Repo)
			hostCtx := workflow.WithActivityOptions(ctx, opts)
			f := workflow.ExecuteActivity(hostCtx, git.RankFeatures, activities.RankFeaturesInput{Run: in.Run, Repo: in.Repos[i].Repo,
				Records: in.Repos[i].Records, Options: in.Options})
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				prog.Running = running
				if err := f.Get(ctx, &feats[i]); err != nil {
					failed = errors.Join(failed, fmt.Errorf("features of %s: %w", in.Repos[i].Repo, err))
					return
				}
				prog.ReposDone++
				prog.QueriesDone += in.Repos[i].Queries
			})
		}
		sel.Select(ctx)
	}
	if failed != nil {
		return fit.RankerResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train ranker: %v", failed), "RankFailed", nil)
	}
	res := fit.RankerResult{Run: in.Run, Fleet: in.Fleet, Command: in.Train.Trained.Command, LeaveOut: map[string]string{}}
	refs := make([]fit.FeaturesRef, len(feats))
	for i, f := range feats {
		refs[i] = f.FeaturesRef
		res.Repos = append(res.Repos, f.Repo)
		if f.Reused {
			res.Reused++
		}
	}
	prog.Phase = RankPhaseModels
	modelCtx := workflow.WithActivityOptions(storeCtx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeDamaged}},
	})
	for _, without := range append([]schema.RepoName{""}, in.LeaveOut...) {
		var mr fit.ModelResult
		err := workflow.ExecuteActivity(modelCtx, store.TrainRankModel, activities.RankModelInput{Run: in.Run, Features: refs,
			Without: without, Train: in.Train}).Get(ctx, &mr)
		if err != nil {
			return res, err
		}
		prog.ModelsDone++
		if without == "" {
			res.Model, res.Queries, res.Importance = mr.Key, mr.Queries, mr.Importance
			continue
		}
		res.LeaveOut[string(without)] = mr.Key
		if mr.Validation != nil {
			res.Validation = append(res.Validation, *mr.Validation)
		}
	}
	prog.Phase = RankPhasePublish
	var out fit.RankerResult
	if err := workflow.ExecuteActivity(storeCtx, store.PublishRankModels, res).Get(ctx, &out); err != nil {
		return res, err
	}
	return out, nil
}

// validateRankInput refuses a TrainRanker input that cannot train.
func validateRankInput(in TrainRankerInput) error {
	if in.Fleet == "" || schema.SafeKeySegment(in.Fleet) != in.Fleet {
		return fmt.Errorf("train ranker: fleet name %q: want letters, digits, '-', '_' or '.'", in.Fleet)
	}
	if len(in.Repos) == 0 {
		return errors.New("train ranker: no repositories")
	}
	seen := map[schema.RepoName]bool{}
	for _, r := range in.Repos {
		if _, err := schema.ParseRepoName(string(r.Repo)); err != nil {
			return fmt.Errorf("train ranker: %w", err)
		}
		if seen[r.Repo] {
			return fmt.Errorf("train ranker: %s given twice", r.Repo)
		}
		seen[r.Repo] = true
	}
	for _, r := range in.LeaveOut {
		if !seen[r] {
			return fmt.Errorf("train ranker: leave out %s: no records of it in the run", r)
		}
	}
	if slices.ContainsFunc(in.LeaveOut, func(r schema.RepoName) bool { return r == "" }) {
		return errors.New("train ranker: an empty repository to leave out")
	}
	return nil
}
