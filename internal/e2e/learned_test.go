package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/trainertest"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// TestLearnedRanking closes the loop on a real indexed repository: its
// mined triplets are featurised at their parents (nothing of a query's own
// commit or later in its features), a model is trained on them, and the
// learned method ranks a query with it through the query path; a model of
// another feature version, or a missing one, is an error naming the file.
func TestLearnedRanking(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	fx := indexedTripletsRepo(ctx, t, "fleet-learned")
	c, b, dataDir, name := fx.c, fx.b, fx.dataDir, fx.name
	st, err := jobs.StartTriplets(ctx, c, jobs.TripletsRun{Repos: []schema.RepoName{name}, Options: workflows.TripletsOptions{Mine: triplets.Options{Negatives: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	_, col := collectRun(ctx, t, b, st)
	if len(col.Records) != 4 {
		t.Fatalf("%d records, want 4", len(col.Records))
	}
	gitDir, err := activities.ClonePath(workers.CloneDir(dataDir), name)
	if err != nil {
		t.Fatal(err)
	}
	qs, fst, err := fit.Features(ctx, fit.Config{Bucket: b, Repo: name, GitDir: gitDir, Records: col.Records})
	if err != nil || len(qs) != 4 || fst.Failed != 0 {
		t.Fatalf("features: %d queries, %+v, %v", len(qs), fst, err)
	}
	// Each fix at its parent: memory holds the commits strictly before
	// the parent, never the fix's own commit or a later one. The get fix is
	// the second commit: at its parent (the initial layout) memory is
	// empty; the evict fix, the last, sees Cache.get changed twice (the
	// layout, which created every function, and the get fix) and
	// Cache.evict once.
	col2 := map[string]int{}
	for i, f := range rank.Features {
		col2[f.Name] = i
	}
	want := map[string]map[string]float64{
		"pkg/cache.py:Cache.get":   {"pkg/cache.py:Cache.get": 0, "pkg/cache.py:Cache.evict": 0},
		"pkg/cache.py:Cache.evict": {"pkg/cache.py:Cache.get": 2, "pkg/cache.py:Cache.evict": 1},
	}
	seen := 0
	for _, q := range qs {
		for positive, counts := range want {
			if !q.Positive[positive] {
				continue
			}
			seen++
			if !q.Labelled() {
				t.Errorf("%s: its positive is not among its %d candidates", q.ID, len(q.Candidates))
			}
			for _, cand := range q.Candidates {
				if n, ok := counts[cand.ID]; ok && cand.X[col2["memory_commits"]] != n {
					t.Errorf("the %s fix: %s memory_commits %v, want %v: a commit at or after the query's informed its features", positive, cand.ID, cand.X[col2["memory_commits"]], n)
				}
				if codegraph.IsTestID(cand.ID) {
					t.Errorf("a test function is a candidate: %s", cand.ID)
				}
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d of the get and evict fixes among %d queries", seen, len(qs))
	}

	py := trainertest.Need(t, func() (string, error) { return rank.FindPython(ctx) })
	mdir := t.TempDir()
	m, err := rank.Train(ctx, qs, rank.TrainConfig{Python: py, Dir: mdir, Rounds: 10, Params: map[string]any{
		"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "min_child_weight": 0, "seed": 1, "nthread": 1}})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(mdir, "model.json")
	d := search.Deps{Bucket: b}
	res, err := search.Retrieve(ctx, d, name, "evicting a key raises KeyError from the cache", search.Params{Method: search.MethodLearned, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.TopK) == 0 || res.Expansion != nil {
		t.Fatalf("learned ranking: %+v", res)
	}
	for _, s := range res.TopK {
		if codegraph.IsTestID(s.ID) || !strings.HasPrefix(s.ID, "pkg/") {
			t.Errorf("ranked %s", s.ID)
		}
	}
	for i := 1; i < len(res.TopK); i++ {
		if res.TopK[i].Score > res.TopK[i-1].Score {
			t.Errorf("not best first at %d: %+v", i, res.TopK)
		}
	}
	if m.File.Trained.Queries != 4 {
		t.Errorf("manifest %+v", m.File.Trained)
	}
	// A directory of per-repository models: the repository's own file.
	loo := t.TempDir()
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loo, "acme+widgets.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := search.Retrieve(ctx, d, name, "evicting a key raises KeyError from the cache", search.Params{Method: search.MethodLearned, Model: loo})
	if err != nil || len(again.TopK) != len(res.TopK) || again.TopK[0] != res.TopK[0] {
		t.Errorf("from a model directory: %+v, %v", again, err)
	}
	// Models that cannot rank.
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	f["feature_version"] = rank.FeatureVersion + 1
	old, _ := json.Marshal(f)
	oldPath := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(oldPath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ model, want string }{
		{oldPath, "old.json: trained on feature version"},
		{filepath.Join(t.TempDir(), "absent.json"), "absent.json"},
		{t.TempDir(), "acme+widgets.json"},
	} {
		_, err := search.Retrieve(ctx, d, name, "cache eviction", search.Params{Method: search.MethodLearned, Model: tc.model})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("model %q: %v, want an error saying %q", tc.model, err, tc.want)
		}
	}
	// No model: the shipped default.
	if def, err := search.Retrieve(ctx, d, name, "evicting a key raises KeyError from the cache", search.Params{Method: search.MethodLearned}); err != nil || len(def.TopK) == 0 {
		t.Errorf("the shipped default model: %+v, %v", def, err)
	}
	if _, err := search.Retrieve(ctx, d, name, "cache eviction", search.Params{Method: search.MethodLearned, Model: oldPath}); !errors.Is(err, rank.ErrBadModel) {
		t.Errorf("an old model: %v, want ErrBadModel", err)
	}
}

// TestRankTrainWorkflow trains the same model through the TrainRanker
// workflow (features stored as Parquet on the repository's host, the
// model trained and published as a fleet's) and ranks by it from the
// store; the same run again reuses the stored features; a run that leaves
// out its only repository fails, saying there is nothing to train on.
func TestRankTrainWorkflow(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	fx := indexedTripletsRepo(ctx, t, "fleet-rank-train")
	c, b, name := fx.c, fx.b, fx.name
	st, err := jobs.StartTriplets(ctx, c, jobs.TripletsRun{Repos: []schema.RepoName{name}, Options: workflows.TripletsOptions{Mine: triplets.Options{Negatives: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	_, col := collectRun(ctx, t, b, st)
	trainertest.Need(t, func() (string, error) { return rank.FindPython(ctx) })
	params := map[string]any{"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "min_child_weight": 0, "seed": 1, "nthread": 1}
	in := jobs.RankTraining{Fleet: "acme", Records: col.Records, Train: rank.TrainConfig{Rounds: 10, Params: params}}
	train := func(in jobs.RankTraining, history string) (fit.RankerResult, error) {
		t.Helper()
		st, err := jobs.StartRankTraining(ctx, c, b, in)
		if err != nil {
			t.Fatal(err)
		}
		var res fit.RankerResult
		err = st.Run.Get(ctx, &res)
		if *update && history != "" {
			writeHistory(ctx, t, c, history, st.ID, "")
		}
		return res, err
	}
	res, err := train(in, "rank-trained.json")
	if err != nil {
		t.Fatal(err)
	}
	if res.Queries != 4 || len(res.Repos) != 1 || res.Repos[0].Sampled != 4 || res.Reused != 0 ||
		res.Model != schema.RankModelKey("acme", "model.json") || len(res.Report) != 3 {
		t.Fatalf("result %+v", res)
	}
	md, err := b.ReadAll(ctx, schema.RankModelKey("acme", "report.md"))
	if err != nil || !strings.Contains(string(md), "Feature importance") || !strings.Contains(string(md), "| acme/widgets | 4 |") {
		t.Errorf("report.md: %v\n%s", err, md)
	}
	// The features are a Parquet table in the store.
	feats, err := b.List(ctx, "rank/features/acme+widgets/")
	if err != nil || len(feats) != 1 || !strings.HasSuffix(feats[0].Key, ".parquet") {
		t.Errorf("stored features %+v, %v", feats, err)
	}

	// The stored model ranks as a model file trained on the same queries
	// with the same settings does.
	gitDir, err := activities.ClonePath(workers.CloneDir(fx.dataDir), name)
	if err != nil {
		t.Fatal(err)
	}
	qs, _, err := fit.Features(ctx, fit.Config{Bucket: b, Repo: name, GitDir: gitDir, Records: col.Records})
	if err != nil {
		t.Fatal(err)
	}
	mdir := t.TempDir()
	if _, err := rank.Train(ctx, qs, rank.TrainConfig{Dir: mdir, Rounds: 10, Params: params}); err != nil {
		t.Fatal(err)
	}
	d := search.Deps{Bucket: b}
	issue := "evicting a key raises KeyError from the cache"
	want, err := search.Retrieve(ctx, d, name, issue, search.Params{Method: search.MethodLearned, Model: filepath.Join(mdir, "model.json")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := search.Retrieve(ctx, d, name, issue, search.Params{Method: search.MethodLearned, Model: "fleet:acme"})
	if err != nil || len(got.TopK) == 0 || len(got.TopK) != len(want.TopK) {
		t.Fatalf("fleet:acme: %+v, %v; want %+v", got, err, want)
	}
	for i := range want.TopK {
		if got.TopK[i] != want.TopK[i] {
			t.Errorf("fleet:acme ranks %+v at %d, the model file %+v", got.TopK[i], i, want.TopK[i])
		}
	}
	for _, tc := range []struct{ model, want string }{
		{"fleet:nobody", "rank/models/nobody/model.json"},
		{"fleet:acme/loo", "rank/models/acme/loo/acme+widgets.json"},
		{"fleet:../x", "fleet:NAME"},
	} {
		_, err := search.Retrieve(ctx, d, name, issue, search.Params{Method: search.MethodLearned, Model: tc.model})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("model %q: %v, want an error saying %q", tc.model, err, tc.want)
		}
	}

	// Again: the stored features are reused.
	res, err = train(in, "")
	if err != nil || res.Reused != 1 || res.Queries != 4 {
		t.Errorf("again: %+v, %v", res, err)
	}
	// Leaving out the only repository leaves nothing to train the
	// leave-one-out model on.
	in.LeaveOut = []schema.RepoName{name}
	if _, err := train(in, "rank-failed.json"); err == nil || !strings.Contains(err.Error(), "without acme/widgets") || !strings.Contains(err.Error(), "no training queries") {
		t.Errorf("leave out the only repository: %v", err)
	}
	if _, err := b.ReadAll(ctx, schema.RankModelKey("acme", "loo/acme+widgets.json")); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a failed run published a model: %v", err)
	}
}
