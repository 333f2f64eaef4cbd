package fit

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// RankerConfig configures TrainRanker; zero fields take the defaults
// written next to them.
type RankerConfig struct {
	Bucket *blob.Bucket
	// GitDir is where a repository's clone is.
	GitDir func(repo schema.RepoName) (string, error)
	// Records are a triplets run's: commit and issue queries train;
	// benchmark instances (source "instance") are never trained on, only
	// described (candidate recall).
	Records []triplets.Record
	Options Options
	// Jobs is how many repositories are featurised at once; default 2.
	Jobs int
	// Out receives features/ (one file per repository, reused by a later
	// run with the same records and options), model.json, loo/ and
	// train.json.
	Out string
	// LeaveOut lists repositories to train a model without: loo/<owner>+<name>.json
	// ranks that repository's queries with nothing of its own history.
	LeaveOut []string
	Train    rank.TrainConfig
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

// RankerResult is what TrainRanker did.
type RankerResult struct {
	Repos      []RepoFeatures     `json:"repos"`
	Queries    int                `json:"queries"` // trained on
	Model      string             `json:"model"`
	LeaveOut   map[string]string  `json:"leave_out,omitempty"` // repository → model file
	Importance map[string]float64 `json:"importance"`
	// Validation: each LeaveOut repository's benchmark instances ranked by
	// its model, from the features training computes (the figures of
	// record come from locus eval, through the query path).
	Validation []Validation `json:"validation,omitempty"`
}

// ErrNoTrainingQueries: nothing to train on after the filters.
var ErrNoTrainingQueries = errors.New("no training queries")

// TrainRanker featurises c.Records per repository (features cached under
// Out/features), trains the model on every labelled commit or issue query
// and one model per LeaveOut repository without it, and writes train.json.
func TrainRanker(ctx context.Context, c RankerConfig) (*RankerResult, error) {
	byRepo := map[string][]triplets.Record{}
	for _, r := range c.Records {
		byRepo[r.Repo] = append(byRepo[r.Repo], r)
	}
	repos := make([]string, 0, len(byRepo))
	for r := range byRepo {
		repos = append(repos, r)
	}
	slices.Sort(repos)
	for _, r := range c.LeaveOut {
		if _, ok := byRepo[r]; !ok {
			return nil, fmt.Errorf("train ranker: leave out %s: no records of it in the run", r)
		}
	}
	if err := os.MkdirAll(filepath.Join(c.Out, "features"), 0o755); err != nil {
		return nil, err
	}
	res := &RankerResult{Repos: make([]RepoFeatures, len(repos))}
	train, instances := make([][]rank.Query, len(repos)), make([][]rank.Query, len(repos))
	var mu sync.Mutex
	done, total := 0, 0
	for _, r := range repos {
		total += min(len(byRepo[r]), cmp.Or(max(c.Options.Sample, 0), DefaultSample))
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(cmp.Or(max(c.Jobs, 0), 2))
	for i, r := range repos {
		eg.Go(func() error {
			qs, inst, rf, err := c.repoFeatures(gctx, schema.RepoName(r), byRepo[r], func() {
				mu.Lock()
				done++
				d, t := done, total
				mu.Unlock()
				if c.Progress != nil {
					c.Progress(d, t)
				}
			})
			if err != nil {
				return err
			}
			res.Repos[i], train[i], instances[i] = rf, qs, inst
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	all := func(skip string) []rank.Query {
		var out []rank.Query
		for i, r := range repos {
			if r != skip {
				out = append(out, train[i]...)
			}
		}
		return out
	}
	qs := all("")
	if len(qs) == 0 {
		return nil, fmt.Errorf("train ranker: %d records of %d repositories: %w (every query was short, unlabelled or an instance)", len(c.Records), len(repos), ErrNoTrainingQueries)
	}
	res.Queries = len(qs)
	tc := c.Train
	tc.Trained.Repos = repos
	tc.Dir = filepath.Join(c.Out, "trainer")
	m, err := rank.Train(ctx, qs, tc)
	if err != nil {
		return nil, err
	}
	res.Model = filepath.Join(c.Out, "model.json")
	if err := copyFile(filepath.Join(tc.Dir, "model.json"), res.Model); err != nil {
		return nil, err
	}
	res.Importance = m.File.Importance
	for _, r := range c.LeaveOut {
		lc := c.Train
		lc.Trained.Repos = slices.DeleteFunc(slices.Clone(repos), func(s string) bool { return s == r })
		lc.Dir = filepath.Join(c.Out, "trainer-loo", schema.RepoName(r).FileName())
		lm, err := rank.Train(ctx, all(r), lc)
		if err != nil {
			return nil, fmt.Errorf("train ranker without %s: %w", r, err)
		}
		if inst := instances[slices.Index(repos, r)]; len(inst) > 0 {
			lin, err := rank.TrainLinear(all(r), rank.LinearConfig{})
			if err != nil {
				return nil, fmt.Errorf("train the linear baseline without %s: %w", r, err)
			}
			v, err := validate(r, inst, lm, lin, DefaultK)
			if err != nil {
				return nil, err
			}
			res.Validation = append(res.Validation, v)
		}
		if res.LeaveOut == nil {
			res.LeaveOut = map[string]string{}
		}
		res.LeaveOut[r] = filepath.Join(c.Out, "loo", schema.RepoName(r).FileName()+".json")
		if err := os.MkdirAll(filepath.Dir(res.LeaveOut[r]), 0o755); err != nil {
			return nil, err
		}
		if err := copyFile(filepath.Join(lc.Dir, "model.json"), res.LeaveOut[r]); err != nil {
			return nil, err
		}
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	return res, os.WriteFile(filepath.Join(c.Out, "train.json"), append(data, '\n'), 0o644)
}

// repoFeatures featurises one repository's records, from the cache when
// it holds them; it returns the labelled training queries and the
// benchmark instances.
func (c RankerConfig) repoFeatures(ctx context.Context, repo schema.RepoName, recs []triplets.Record, tick func()) (train, instances []rank.Query, rf RepoFeatures, err error) {
	cache := filepath.Join(c.Out, "features", repo.FileName()+".jsonl.gz")
	key := c.cacheKey(recs)
	qs, st, err := readFeatures(cache, key)
	if err == nil {
		// Cached: counted as done, as progress counts queries.
		for range st.Sampled {
			tick()
		}
	} else {
		gitDir, err := c.GitDir(repo)
		if err != nil {
			return nil, nil, rf, err
		}
		// Every benchmark instance, and a sample of the other queries.
		var inst, other []triplets.Record
		for _, r := range recs {
			if r.Source == triplets.QueryInstance {
				inst = append(inst, r)
			} else {
				other = append(other, r)
			}
		}
		qs, st, err = Features(ctx, Config{Bucket: c.Bucket, Repo: repo, GitDir: gitDir, Records: other, Options: c.Options,
			Progress: func(int, int) { tick() }})
		if err != nil {
			return nil, nil, rf, err
		}
		if len(inst) > 0 {
			io := c.Options
			io.Sample, io.MinWords = len(inst), 0
			iqs, ist, err := Features(ctx, Config{Bucket: c.Bucket, Repo: repo, GitDir: gitDir, Records: inst, Options: io})
			if err != nil {
				return nil, nil, rf, err
			}
			qs = append(qs, iqs...)
			st.Records += ist.Records
			st.Failed += ist.Failed
			st.FailedExamples = append(st.FailedExamples, ist.FailedExamples...)
		}
		if err := writeFeatures(cache, key, qs, st); err != nil {
			return nil, nil, rf, err
		}
	}
	rf.Stats = st
	instance := map[string]bool{}
	for _, r := range recs {
		if r.Source == triplets.QueryInstance {
			instance[r.QueryID] = true
		}
	}
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
		if instance[q.ID] {
			rf.Instances++
			sumInst += recall
			instances = append(instances, q)
			continue
		}
		nCommit++
		sumCands += float64(len(q.Candidates))
		sumRecall += recall
		if !q.Labelled() {
			rf.Unlabelled++
			continue
		}
		train = append(train, q)
	}
	if nCommit > 0 {
		rf.Candidates, rf.CandidateRecall = sumCands/float64(nCommit), sumRecall/float64(nCommit)
	}
	if rf.Instances > 0 {
		rf.InstanceRecall = sumInst / float64(rf.Instances)
	}
	return train, instances, rf, nil
}

// cacheKey names what a features file was computed from.
func (c RankerConfig) cacheKey(recs []triplets.Record) string {
	h := sha256.New()
	o := c.Options.withDefaults()
	fmt.Fprintf(h, "v%d %d %d %d %d\n", rank.FeatureVersion, o.Sample, o.Fetch, o.MinWords, o.MemoryGap)
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.QueryID + " " + r.Parent
	}
	sort.Strings(ids)
	io.WriteString(h, strings.Join(ids, "\n"))
	return hex.EncodeToString(h.Sum(nil))
}

type featuresHeader struct {
	Key   string `json:"key"`
	Stats Stats  `json:"stats"`
}

type featuresLine struct {
	ID       string      `json:"id"`
	Repo     string      `json:"repo"`
	Gold     int         `json:"gold"`
	Positive []string    `json:"positive"`
	IDs      []string    `json:"ids"`
	X        [][]float64 `json:"x"`
}

// writeFeatures writes qs as gzip'd JSON Lines: a header with the key and
// stats, then one query per line.
func writeFeatures(path, key string, qs []rank.Query, st Stats) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	enc := json.NewEncoder(zw)
	err = enc.Encode(featuresHeader{Key: key, Stats: st})
	for _, q := range qs {
		if err != nil {
			break
		}
		l := featuresLine{ID: q.ID, Repo: q.Repo, Gold: q.Gold}
		for id := range q.Positive {
			l.Positive = append(l.Positive, id)
		}
		slices.Sort(l.Positive)
		for _, cand := range q.Candidates {
			l.IDs, l.X = append(l.IDs, cand.ID), append(l.X, cand.X)
		}
		err = enc.Encode(l)
	}
	err = errors.Join(err, zw.Close(), f.Close())
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("features %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// readFeatures reads a features file written for key; any error (absent,
// another key, damaged) means it is computed again.
func readFeatures(path, key string) ([]rank.Query, Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stats{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, Stats{}, err
	}
	dec := json.NewDecoder(zr)
	var h featuresHeader
	if err := dec.Decode(&h); err != nil {
		return nil, Stats{}, err
	}
	if h.Key != key {
		return nil, Stats{}, errors.New("features of other records or options")
	}
	var qs []rank.Query
	for {
		var l featuresLine
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, Stats{}, err
		}
		q := rank.Query{ID: l.ID, Repo: l.Repo, Gold: l.Gold, Positive: rank.Positives(l.Positive)}
		for i, id := range l.IDs {
			if len(l.X[i]) != len(rank.Features) {
				return nil, Stats{}, fmt.Errorf("%s: %d features", id, len(l.X[i]))
			}
			q.Candidates = append(q.Candidates, rank.Candidate{ID: id, X: l.X[i]})
		}
		qs = append(qs, q)
	}
	return qs, h.Stats, nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}
