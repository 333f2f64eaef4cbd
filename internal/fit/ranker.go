package fit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// Training the learned ranker is three steps, each a function of stored
// objects so that a workflow can run them as activities (and resume after
// any of them): StoreFeatures featurises one repository's records into a
// Parquet table, TrainModel trains one model on the tables (the fleet's,
// or all but one repository's for leave-one-repository-out validation),
// and PublishModels makes a run's models the fleet's and writes its report.

// FeaturesConfig is one repository's records to featurise.
type FeaturesConfig struct {
	Bucket *blob.Bucket
	Repo   schema.RepoName
	// GitDir is the repository's clone.
	GitDir string
	// Records are a triplets run's: commit and issue queries train;
	// benchmark instances (source "instance") are never trained on, only
	// described (candidate recall) and validated on.
	Records []triplets.Record
	Options Options
	// Progress, when set, is called as queries are featurised.
	Progress func(done, total int)
}

// RepoFeatures counts what became of one repository's records.
type RepoFeatures struct {
	Stats
	// Instances are the benchmark instances among the records (featurised,
	// not trained on).
	Instances int `json:"instances"`
	// Unlabelled counts featurised queries none of whose positives is a
	// candidate (a positive in vendored or test code, or one no retriever
	// finds): they teach nothing and are left out of training.
	Unlabelled int `json:"unlabelled"`
	// Candidates is the mean candidate set size, CandidateRecall the mean
	// share of a query's positives among its candidates (commit queries),
	// InstanceRecall the same over benchmark instances.
	Candidates      float64 `json:"candidates"`
	CandidateRecall float64 `json:"candidate_recall"`
	InstanceRecall  float64 `json:"instance_recall,omitempty"`
}

// FeaturesRef is one repository's stored features table.
type FeaturesRef struct {
	Repo schema.RepoName `json:"repo"`
	Ref  objio.Ref       `json:"ref"`
}

// FeaturesResult is what StoreFeatures did.
type FeaturesResult struct {
	FeaturesRef
	// Reused: the table was already stored (the same records, options and
	// feature version) and was not computed again.
	Reused bool         `json:"reused,omitempty"`
	Repo   RepoFeatures `json:"features"`
}

// FeaturesTotal is about how many queries StoreFeatures featurises of
// recs (every benchmark instance, a sample of the rest), for progress.
func FeaturesTotal(recs []triplets.Record, o Options) int {
	inst := 0
	for _, r := range recs {
		if r.Source == triplets.QueryInstance {
			inst++
		}
	}
	return inst + min(len(recs)-inst, o.withDefaults().Sample)
}

// StoreFeatures featurises c.Records (every benchmark instance, a sample
// of the other queries; see Features) into the table
// schema.RankFeaturesKey names. A table already stored for the same
// records, options and feature version is reused; a damaged one is
// computed again.
func StoreFeatures(ctx context.Context, c FeaturesConfig) (FeaturesResult, error) {
	key := featuresKey(c.Options, c.Records)
	res := FeaturesResult{FeaturesRef: FeaturesRef{Repo: c.Repo}}
	objKey := schema.RankFeaturesKey(c.Repo, key)
	qs, st, ref, err := readFeatures(ctx, c.Bucket, objio.Ref{Key: objKey}, key)
	switch {
	case err == nil:
		res.Reused = true
		if c.Progress != nil {
			c.Progress(st.Sampled, st.Sampled)
		}
	case ctx.Err() != nil:
		return res, ctx.Err()
	default:
		if !errors.Is(err, blob.ErrNotFound) {
			slog.Warn("stored features are computed again", "repo", c.Repo, "err", err)
		}
		if qs, st, err = computeFeatures(ctx, c); err != nil {
			return res, err
		}
		if ref, err = writeFeatures(ctx, c.Bucket, objKey, key, qs, st); err != nil {
			return res, err
		}
	}
	res.Ref = ref
	_, _, res.Repo = summarize(qs, st)
	return res, nil
}

// computeFeatures featurises a sample of the commit and issue queries and
// every benchmark instance.
func computeFeatures(ctx context.Context, c FeaturesConfig) ([]labelledQuery, Stats, error) {
	var inst, other []triplets.Record
	for _, r := range c.Records {
		if r.Source == triplets.QueryInstance {
			inst = append(inst, r)
		} else {
			other = append(other, r)
		}
	}
	total := FeaturesTotal(c.Records, c.Options)
	tick := func(base int) func(int, int) {
		return func(done, _ int) {
			if c.Progress != nil {
				c.Progress(base+done, total)
			}
		}
	}
	qs, st, err := Features(ctx, Config{Bucket: c.Bucket, Repo: c.Repo, GitDir: c.GitDir, Records: other, Options: c.Options,
		Progress: tick(0)})
	if err != nil {
		return nil, st, err
	}
	out := make([]labelledQuery, 0, len(qs)+len(inst))
	for _, q := range qs {
		out = append(out, labelledQuery{Query: q})
	}
	if len(inst) > 0 {
		io := c.Options
		io.Sample, io.MinWords = len(inst), 0
		iqs, ist, err := Features(ctx, Config{Bucket: c.Bucket, Repo: c.Repo, GitDir: c.GitDir, Records: inst, Options: io,
			Progress: tick(len(qs))})
		if err != nil {
			return nil, st, err
		}
		for _, q := range iqs {
			out = append(out, labelledQuery{Query: q, Instance: true})
		}
		st.Records += ist.Records
		st.Failed += ist.Failed
		st.FailedExamples = append(st.FailedExamples, ist.FailedExamples...)
	}
	return out, st, nil
}

// labelledQuery is a featurised query and whether it is a benchmark
// instance.
type labelledQuery struct {
	rank.Query
	Instance bool
}

// summarize splits qs into labelled training queries and benchmark
// instances and counts what became of them.
func summarize(qs []labelledQuery, st Stats) (train, instances []rank.Query, rf RepoFeatures) {
	rf.Stats = st
	var sumCands, sumRecall, sumInst float64
	var nCommit int
	for _, q := range qs {
		found := 0
		for _, cand := range q.Candidates {
			if q.Positive[cand.ID] {
				found++
			}
		}
		recall := float64(found) / float64(max(q.Gold, 1))
		if q.Instance {
			rf.Instances++
			sumInst += recall
			instances = append(instances, q.Query)
			continue
		}
		nCommit++
		sumCands += float64(len(q.Candidates))
		sumRecall += recall
		if !q.Labelled() {
			rf.Unlabelled++
			continue
		}
		train = append(train, q.Query)
	}
	if nCommit > 0 {
		rf.Candidates, rf.CandidateRecall = sumCands/float64(nCommit), sumRecall/float64(nCommit)
	}
	if rf.Instances > 0 {
		rf.InstanceRecall = sumInst / float64(rf.Instances)
	}
	return train, instances, rf
}

// featuresKey names what a features table is computed from: the feature
// version, the options and the records (query and parent).
func featuresKey(o Options, recs []triplets.Record) string {
	h := sha256.New()
	o = o.withDefaults()
	fmt.Fprintf(h, "v%d %d %d %d %d\n", rank.FeatureVersion, o.Sample, o.Fetch, o.MinWords, o.MemoryGap)
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.QueryID + " " + r.Parent + " " + r.Source
	}
	sort.Strings(ids)
	io.WriteString(h, strings.Join(ids, "\n"))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// featuresFormat is the features table's layout version.
var featuresFormat = objio.Format{Key: "locus.rank_features_layout", Version: 1}

// Key-value metadata of a features table.
const (
	metaFeaturesKey   = "locus.rank_features_key"
	metaFeatureNames  = "locus.rank_feature_names"
	metaFeaturesStats = "locus.rank_features_stats"
)

// featureRow is one candidate of one query; a query without candidates is
// one row with an empty Candidate, so that it is counted when read back.
type featureRow struct {
	Query     string    `parquet:"query"`
	Instance  bool      `parquet:"instance"`
	Gold      int32     `parquet:"gold"`
	Candidate string    `parquet:"candidate"`
	Positive  bool      `parquet:"positive"`
	X         []float64 `parquet:"x,list"`
	// Missed are the query's positives that are not candidates, on its
	// first row (they count in recall, never in training).
	Missed []string `parquet:"missed,list"`
}

// writeFeatures stores qs at objKey as a Parquet table recording key, the
// feature names and st.
func writeFeatures(ctx context.Context, b *blob.Bucket, objKey, key string, qs []labelledQuery, st Stats) (objio.Ref, error) {
	stats, err := json.Marshal(st)
	if err != nil {
		return objio.Ref{}, err
	}
	var rows []featureRow
	for _, q := range qs {
		first := len(rows)
		for _, c := range q.Candidates {
			rows = append(rows, featureRow{Query: q.ID, Instance: q.Instance, Gold: int32(q.Gold), Candidate: c.ID, Positive: q.Positive[c.ID], X: c.X})
		}
		if len(rows) == first {
			rows = append(rows, featureRow{Query: q.ID, Instance: q.Instance, Gold: int32(q.Gold)})
		}
		for id := range q.Positive {
			if !slices.ContainsFunc(q.Candidates, func(c rank.Candidate) bool { return c.ID == id }) {
				rows[first].Missed = append(rows[first].Missed, id)
			}
		}
		slices.Sort(rows[first].Missed)
	}
	ref, err := objio.WriteParquet(ctx, b, objKey, rows, featuresFormat,
		parquet.KeyValueMetadata(metaFeaturesKey, key),
		parquet.KeyValueMetadata(metaFeatureNames, strings.Join(rank.FeatureNames(), ",")),
		parquet.KeyValueMetadata(metaFeaturesStats, string(stats)))
	if err != nil {
		return objio.Ref{}, fmt.Errorf("features of %s: %w", st.Repo, err)
	}
	return ref, nil
}

// ErrFeatures: a features table was computed from other records, options
// or features than asked for.
var ErrFeatures = errors.New("features table of other records, options or features")

// readFeatures reads the features table ref names (checked against ref's
// size and SHA-256 when it records them); key "" accepts any records and
// options, never another feature set.
func readFeatures(ctx context.Context, b *blob.Bucket, ref objio.Ref, key string) ([]labelledQuery, Stats, objio.Ref, error) {
	var st Stats
	data, err := objio.ReadBlob(ctx, b, ref)
	if err != nil {
		return nil, st, ref, err
	}
	ref = objio.RefOf(ref.Key, data)
	pf, err := objio.ParseParquet(ref.Key, data, featuresFormat)
	if err != nil {
		return nil, st, ref, err
	}
	if k, _ := pf.Lookup(metaFeaturesKey); key != "" && k != key {
		return nil, st, ref, fmt.Errorf("%s: key %s, want %s: %w", ref.Key, k, key, ErrFeatures)
	}
	if names, _ := pf.Lookup(metaFeatureNames); names != strings.Join(rank.FeatureNames(), ",") {
		return nil, st, ref, fmt.Errorf("%s: features %q, this build's are version %d: %w", ref.Key, names, rank.FeatureVersion, ErrFeatures)
	}
	s, _ := pf.Lookup(metaFeaturesStats)
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return nil, st, ref, fmt.Errorf("%s: stats: %v: %w", ref.Key, err, blob.ErrCorrupt)
	}
	rows, err := objio.Rows[featureRow](ref.Key, pf)
	if err != nil {
		return nil, st, ref, err
	}
	var qs []labelledQuery
	for _, r := range rows {
		if len(qs) == 0 || qs[len(qs)-1].ID != r.Query {
			qs = append(qs, labelledQuery{Query: rank.Query{Repo: st.Repo, ID: r.Query, Gold: int(r.Gold), Positive: rank.Positives(r.Missed)}, Instance: r.Instance})
		}
		q := &qs[len(qs)-1]
		if r.Candidate == "" {
			continue
		}
		if len(r.X) != len(rank.Features) {
			return nil, st, ref, fmt.Errorf("%s: %s: %d features, want %d: %w", ref.Key, r.Candidate, len(r.X), len(rank.Features), blob.ErrCorrupt)
		}
		if r.Positive {
			q.Positive[r.Candidate] = true
		}
		q.Candidates = append(q.Candidates, rank.Candidate{ID: r.Candidate, X: r.X})
	}
	return qs, st, ref, nil
}

// ModelConfig is one model to train on stored features.
type ModelConfig struct {
	Bucket   *blob.Bucket
	Features []FeaturesRef
	// Without names the repository whose features are left out (its
	// benchmark instances then validate the model); "": none, the fleet's
	// model.
	Without schema.RepoName
	// Key is where the model is stored.
	Key   string
	Train rank.TrainConfig
	// K of the validation's metrics; default DefaultK.
	K int
}

// ModelResult is what TrainModel did.
type ModelResult struct {
	Key     string          `json:"key"`
	Without schema.RepoName `json:"without,omitempty"`
	// Queries trained on, from Repos.
	Queries    int                `json:"queries"`
	Repos      []string           `json:"repos"`
	Importance map[string]float64 `json:"importance"`
	// Validation: Without's benchmark instances ranked by the model, the
	// linear baseline trained on the same queries and the fusion (nil when
	// Without has none).
	Validation *Validation `json:"validation,omitempty"`
}

// ErrNoTrainingQueries: nothing to train on after the filters.
var ErrNoTrainingQueries = errors.New("no training queries")

// TrainModel trains a model (rank.Train) on every labelled commit or
// issue query of c.Features but Without's and stores it at c.Key.
func TrainModel(ctx context.Context, c ModelConfig) (ModelResult, error) {
	res := ModelResult{Key: c.Key, Without: c.Without}
	var train, held []rank.Query
	for _, f := range c.Features {
		qs, st, _, err := readFeatures(ctx, c.Bucket, f.Ref, "")
		if err != nil {
			return res, fmt.Errorf("train ranker: features of %s: %w", f.Repo, err)
		}
		tr, inst, _ := summarize(qs, st)
		if f.Repo == c.Without {
			held = inst
			continue
		}
		train = append(train, tr...)
		res.Repos = append(res.Repos, string(f.Repo))
	}
	if c.Without != "" && !slices.ContainsFunc(c.Features, func(f FeaturesRef) bool { return f.Repo == c.Without }) {
		return res, fmt.Errorf("train ranker: leave out %s: no features of it in the run", c.Without)
	}
	if len(train) == 0 {
		what := fmt.Sprintf("%d repositories", len(res.Repos))
		if c.Without != "" {
			what += " (without " + string(c.Without) + ")"
		}
		return res, fmt.Errorf("train ranker: %s: %w (every query was short, unlabelled or an instance)", what, ErrNoTrainingQueries)
	}
	res.Queries = len(train)
	tc := c.Train
	tc.Trained.Repos = res.Repos
	m, err := rank.Train(ctx, train, tc)
	if err != nil {
		if c.Without != "" {
			err = fmt.Errorf("train ranker without %s: %w", c.Without, err)
		}
		return res, err
	}
	res.Importance = m.File.Importance
	if len(held) > 0 {
		lin, err := rank.TrainLinear(train, rank.LinearConfig{})
		if err != nil {
			return res, fmt.Errorf("train the linear baseline without %s: %w", c.Without, err)
		}
		v, err := validate(string(c.Without), held, m, lin, cmp.Or(c.K, DefaultK))
		if err != nil {
			return res, err
		}
		res.Validation = &v
	}
	if err := c.Bucket.WriteAll(ctx, c.Key, m.Bytes()); err != nil {
		return res, fmt.Errorf("train ranker: store the model: %w", err)
	}
	return res, nil
}
