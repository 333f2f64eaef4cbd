package fit

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/eval/commitrun"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// FilesConfig is one repository's records to rank as file-level queries.
type FilesConfig struct {
	Bucket  *blob.Bucket
	Repo    schema.RepoName
	GitDir  string
	Records []triplets.Record
	// Sample and MinWords as in Options (Sample default DefaultSample).
	Sample, MinWords int
}

// FileQueries ranks a sample of c's commit queries (benchmark instances
// are left out) the way commit-history file search ranks a commits-dev
// query — at the commit's first parent, with memory of the strictly older
// commits (commitrun) — and returns each with the learned file ranker's
// candidates and features (commitrun.FileTable); a query's gold files are
// the files its commit changed.
func FileQueries(ctx context.Context, c FilesConfig) ([]rank.Query, Stats, error) {
	st := Stats{Repo: string(c.Repo), Records: len(c.Records)}
	commits := slices.DeleteFunc(slices.Clone(c.Records), func(r triplets.Record) bool { return r.Source == triplets.QueryInstance })
	var sample []triplets.Record
	sample, st.Short = sampleLong(commits, c.MinWords, Options{Sample: c.Sample}.withDefaults().Sample)
	st.Sampled = len(sample)
	qs := make([]dataset.CommitQuery, len(sample))
	for i, r := range sample {
		qs[i] = dataset.CommitQuery{QueryID: r.QueryID, Repo: string(c.Repo), CommitID: r.Commit, CommitDate: r.Time / 1000, Query: r.Query}
	}
	res, skips, err := commitrun.RunWith(ctx, c.Bucket, c.GitDir, string(c.Repo), qs, commitrun.RunOptions{Candidates: true, GoldFromCommit: true})
	if err != nil {
		return nil, st, fmt.Errorf("file queries of %s: %w", c.Repo, err)
	}
	st.Failed = len(skips)
	for _, s := range skips[:min(len(skips), 5)] {
		st.FailedExamples = append(st.FailedExamples, s.Query+": "+s.Reason)
	}
	out := make([]rank.Query, 0, len(res))
	for _, r := range res {
		out = append(out, rank.Query{Repo: string(c.Repo), ID: r.Query, Candidates: r.Candidates, Positive: rank.Positives(r.Gold), Gold: len(r.Gold)})
	}
	st.Ranked = len(out)
	return out, st, nil
}

// FilesTraining trains the learned file ranker on a fleet's records.
type FilesTraining struct {
	Bucket *blob.Bucket
	// GitDir is where a repository's clone is.
	GitDir  func(repo schema.RepoName) (string, error)
	Records []triplets.Record
	// Sample and MinWords as in FilesConfig; Jobs repositories are ranked
	// at once (default 2).
	Sample, MinWords, Jobs int
	Train                  rank.TrainConfig
	// Progress, when set, is called as repositories are ranked.
	Progress func(done, total int)
}

// TrainFiles ranks each repository's sampled commit queries (FileQueries)
// and trains a model of commitrun.FileTable on them; it returns the model
// and each repository's counts.
func TrainFiles(ctx context.Context, c FilesTraining) (*rank.Model, []Stats, error) {
	byRepo := map[schema.RepoName][]triplets.Record{}
	for _, r := range c.Records {
		byRepo[schema.RepoName(r.Repo)] = append(byRepo[schema.RepoName(r.Repo)], r)
	}
	repos := slices.Sorted(maps.Keys(byRepo))
	if len(repos) == 0 {
		return nil, nil, fmt.Errorf("train file ranker: %w", ErrNoTrainingQueries)
	}
	qs := make([][]rank.Query, len(repos))
	stats := make([]Stats, len(repos))
	var done atomic.Int64
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(cmp.Or(max(c.Jobs, 0), 2))
	for i, r := range repos {
		eg.Go(func() error {
			gitDir, err := c.GitDir(r)
			if err != nil {
				return err
			}
			qs[i], stats[i], err = FileQueries(gctx, FilesConfig{Bucket: c.Bucket, Repo: r, GitDir: gitDir, Records: byRepo[r], Sample: c.Sample, MinWords: c.MinWords})
			if c.Progress != nil {
				c.Progress(int(done.Add(1)), len(repos))
			}
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, stats, err
	}
	var all []rank.Query
	for _, q := range qs {
		all = append(all, q...)
	}
	tc := c.Train
	tc.Table = &commitrun.FileTable
	for _, r := range repos {
		tc.Trained.Repos = append(tc.Trained.Repos, string(r))
	}
	m, err := rank.Train(ctx, all, tc)
	if err != nil {
		return nil, stats, fmt.Errorf("train file ranker: %w", err)
	}
	return m, stats, nil
}
