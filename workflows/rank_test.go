package workflows

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/schema"
)

// TrainRanker featurises every repository, at most Window at once, trains
// the fleet's model and then one per left-out repository, and publishes;
// a repository whose features fail fails the run, naming it, before any
// model is trained.
func TestTrainRanker(t *testing.T) {
	repos := []RankRepo{{Repo: "acme/a", Queries: 10}, {Repo: "acme/b", Queries: 5}, {Repo: "acme/c", Queries: 7}}
	for _, tc := range []struct {
		name     string
		bad      schema.RepoName
		leaveOut []schema.RepoName
		want     string
	}{
		{name: "trained", leaveOut: []schema.RepoName{"acme/b"}},
		{name: "a repository fails", bad: "acme/c", want: "features of acme/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Git{})
			env.RegisterActivity(&activities.Store{})
			var mu sync.Mutex
			running, most := 0, 0
			var models []schema.RepoName
			env.OnActivity(store.RankHosts, mock.Anything, activities.RankHostsInput{Repos: []schema.RepoName{"acme/a", "acme/b", "acme/c"}}).Return([]string{"h1", "h1", "h2"}, nil)
			env.OnActivity(git.RankFeatures, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RankFeaturesInput) (fit.FeaturesResult, error) {
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				defer func() { mu.Lock(); running--; mu.Unlock() }()
				if in.Repo == tc.bad {
					return fit.FeaturesResult{}, errors.New("clone unreadable")
				}
				return fit.FeaturesResult{FeaturesRef: fit.FeaturesRef{Repo: in.Repo}, Reused: in.Repo == "acme/a",
					Repo: fit.RepoFeatures{Stats: fit.Stats{Repo: string(in.Repo)}}}, nil
			})
			env.OnActivity(store.TrainRankModel, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RankModelInput) (fit.ModelResult, error) {
				mu.Lock()
				models = append(models, in.Without)
				mu.Unlock()
				if len(in.Features) != 3 {
					t.Errorf("model without %q trained on %d tables", in.Without, len(in.Features))
				}
				res := fit.ModelResult{Key: activities.RankModelKey(in.Run, in.Without), Without: in.Without, Queries: 20}
				if in.Without != "" {
					res.Validation = &fit.Validation{Repo: string(in.Without), Instances: 3}
				}
				return res, nil
			})
			env.OnActivity(store.PublishRankModels, mock.Anything, mock.Anything).Return(func(_ context.Context, res fit.RankerResult) (fit.RankerResult, error) {
				res.Model = schema.RankModelKey(res.Fleet, "model.json")
				return res, nil
			})
			env.ExecuteWorkflow(TrainRanker, TrainRankerInput{Run: "rank-1", Fleet: "acme", Repos: repos, LeaveOut: tc.leaveOut, Window: 2})
			if !env.IsWorkflowCompleted() {
				t.Fatal("not completed")
			}
			err := env.GetWorkflowError()
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "clone unreadable") {
					t.Errorf("error %v, want one naming %q", err, tc.want)
				}
				if len(models) != 0 {
					t.Errorf("models trained after a repository failed: %v", models)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var res fit.RankerResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if len(res.Repos) != 3 || res.Reused != 1 || res.Queries != 20 || res.Model != "rank/models/acme/model.json" ||
				res.LeaveOut["acme/b"] != "rank/runs/rank-1/loo/acme+b.json" || len(res.Validation) != 1 {
				t.Errorf("result %+v", res)
			}
			if len(models) != 2 || models[0] != "" || models[1] != "acme/b" {
				t.Errorf("models trained %q, want the fleet's, then without acme/b", models)
			}
			if most > 2 {
				t.Errorf("%d repositories featurised at once, window 2", most)
			}
			v, err := env.QueryWorkflow(ProgressQuery)
			if err != nil {
				t.Fatal(err)
			}
			var p RankProgress
			if err := v.Get(&p); err != nil {
				t.Fatal(err)
			}
			if p.Phase != RankPhasePublish || p.Queries != 22 || p.QueriesDone != 22 || p.ReposDone != 3 || p.ModelsDone != 2 || p.Models != 2 {
				t.Errorf("progress %+v", p)
			}
		})
	}
}

func TestTrainRankerRejectsBadInput(t *testing.T) {
	ok := []RankRepo{{Repo: "acme/a"}}
	for _, tc := range []struct {
		name string
		in   TrainRankerInput
		want string
	}{
		{"no fleet", TrainRankerInput{Repos: ok}, `fleet name ""`},
		{"fleet with a slash", TrainRankerInput{Fleet: "a/b", Repos: ok}, `fleet name "a/b"`},
		{"no repositories", TrainRankerInput{Fleet: "f"}, "no repositories"},
		{"twice", TrainRankerInput{Fleet: "f", Repos: append(ok, ok[0])}, "acme/a given twice"},
		{"leave out a stranger", TrainRankerInput{Fleet: "f", Repos: ok, LeaveOut: []schema.RepoName{"acme/z"}}, "leave out acme/z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Git{})
			env.RegisterActivity(&activities.Store{})
			env.ExecuteWorkflow(TrainRanker, tc.in)
			wantBadInput(t, env.GetWorkflowError(), tc.want)
		})
	}
}
