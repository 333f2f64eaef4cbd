// Package commitrun evaluates file-level search from commit history on a
// repository: it scrapes the history (cached), rebuilds each query's state and
// ranks files with the commit-message BM25 of the seed paper.
package commitrun

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/eval/commiteval"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// Result is one query's rankings.
type Result struct {
	Query  string   `json:"query"`
	Repo   string   `json:"repo"`
	Gold   []string `json:"gold"`
	Ranked []string `json:"ranked"` // BM25 over older commit messages, maxp
	// Files: BM25 over the contents of the files at the state.
	Files []string `json:"files"`
	// Fused: reciprocal-rank fusion (k=60) of Ranked and Files.
	Fused []string `json:"fused"`
	// Hybrid: Files fused with repository memory and the paths' BM25 (see
	// HybridWeights).
	Hybrid []string `json:"hybrid"`
	// Learned: the learned file ranker's order (RunOptions.Model; nil
	// without one).
	Learned []string `json:"learned,omitempty"`
	// Candidates are the learned file ranker's candidates and their
	// features (RunOptions.Candidates; FileCandidates).
	Candidates []rank.Candidate `json:"-"`
}

// RunOptions adjust RunWith.
type RunOptions struct {
	// Model, when set, is a learned file ranker (FileTable): each result
	// gets its order too.
	Model *rank.Model
	// Candidates: each result gets its candidates and their features
	// (training data).
	Candidates bool
	// GoldFromCommit takes each query's gold files from its commit's own
	// changes in the history (training queries mined from commits), in
	// place of the query's GoldFiles.
	GoldFromCommit bool
}

// HybridWeights weigh the rankings the hybrid method fuses (spider.Fuse:
// each ranking's scores divided by its best). Chosen on
// ../shared/bench/commits-dev.jsonl over a grid, both repositories
// together; docs/results.md has the grid, the ablation and the figures
// with one repository held out.
var HybridWeights = struct {
	Files, MaxP, Votes, Docs, Paths float64
}{
	Files: 1,    // BM25 over each file's path and content at the state
	MaxP:  0.5,  // each file's best older commit message (bm25-messages)
	Votes: 0.25, // the 100 best older commits vote, decayed by age and size
	Docs:  0.75, // BM25 over each file's document of older commit messages
	Paths: 0.4,  // BM25 over the paths alone
}

// Skip records a query that could not run.
type Skip struct {
	Query  string `json:"query"`
	Reason string `json:"reason"`
}

// Run evaluates the queries of one repository whose bare clone is gitDir.
func Run(ctx context.Context, b *blob.Bucket, gitDir, repo string, qs []dataset.CommitQuery) ([]Result, []Skip, error) {
	return RunWith(ctx, b, gitDir, repo, qs, RunOptions{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, b *blob.Bucket, gitDir, repo string, qs []dataset.CommitQuery, o RunOptions) ([]Result, []Skip, error) {
	head, err := gitrepo.Resolve(gitDir, "")
	if err != nil {
		return nil, nil, err
	}
	name := schema.RepoName("evalc/" + strings.ReplaceAll(strings.ToLower(repo), "/", "-"))
	m, err := manifest.Read(ctx, b, name)
	if err != nil {
		return nil, nil, err
	}
	if m == nil || m.Head != head.String() {
		res, err := commits.Scrape(ctx, commits.Config{Bucket: b, Repo: name, GitDir: gitDir, Head: head.String(), Prev: m, NoFunctions: true})
		if err != nil {
			return nil, nil, err
		}
		sr := schema.ScrapeResult{Head: res.Head, NewCommits: res.NewCommits, Rows: res.Rows, Parts: res.Parts, FileIDs: res.FileIDsKey}
		if m != nil {
			sr.BaseHead = m.Head
		}
		if m, err = manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: name}, Head: res.Head, Scrape: sr}); err != nil {
			return nil, nil, err
		}
	}
	// Commits with their file changes, oldest first.
	byID := map[string]*commiteval.Commit{}
	var order []*commiteval.Commit
	err = commits.ReadAll(ctx, b, m, func(r *schema.CommitFile) error {
		c := byID[r.CommitID]
		if c == nil {
			c = &commiteval.Commit{ID: r.CommitID, Time: r.CommitTime / 1000, Message: r.Message}
			byID[r.CommitID] = c
			order = append(order, c)
		}
		if r.Status != schema.StatusEmpty {
			c.Files = append(c.Files, commiteval.FileChange{Path: r.Path, FileID: r.FileID, Status: r.Status})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	all := make([]commiteval.Commit, len(order))
	for i, c := range order {
		all[i] = *c
	}
	eng, err := commiteval.New(all, commiteval.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	// The path → file id map as of each query's date: replay changes of
	// strictly older commits, in date order.
	byTime := append([]*commiteval.Commit(nil), order...)
	sort.SliceStable(byTime, func(i, j int) bool { return byTime[i].Time < byTime[j].Time })
	sorted := append([]dataset.CommitQuery(nil), qs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].CommitDate < sorted[j].CommitDate })
	ids := map[string]string{}
	next := 0
	var queries []commiteval.Query
	var kept []dataset.CommitQuery
	var skips []Skip
	fx, px := newFileIndex(), newFileIndex()
	px.pathOnly = true
	var fileRanks, pathRanks [][]spider.Scored
	for _, q := range sorted {
		if o.GoldFromCommit {
			c := byID[q.CommitID]
			if c == nil {
				skips = append(skips, Skip{q.QueryID, fmt.Sprintf("commit %s is not in the history", q.CommitID)})
				continue
			}
			q.GoldFiles = nil
			for _, f := range c.Files {
				q.GoldFiles = append(q.GoldFiles, f.Path)
			}
		}
		for ; next < len(byTime) && byTime[next].Time < q.CommitDate; next++ {
			for _, f := range byTime[next].Files {
				switch f.Status {
				case schema.StatusDeleted:
					delete(ids, f.Path)
				default:
					ids[f.Path] = f.FileID
				}
			}
		}
		parent, err := gitrepo.Resolve(gitDir, q.CommitID+"^")
		if err != nil {
			skips = append(skips, Skip{q.QueryID, fmt.Sprintf("first parent of %s: %v", q.CommitID, err)})
			continue
		}
		snap, err := gitrepo.OpenSnapshot(ctx, gitDir, "", parent)
		if err != nil {
			skips = append(skips, Skip{q.QueryID, err.Error()})
			continue
		}
		var files []string
		var docs, pdocs []*fileDoc
		var readErr error
		for _, f := range snap.Files() {
			if !f.IsRegular() {
				continue
			}
			files = append(files, string(f.Path))
			d, err := fx.doc(f.Blob, string(f.Path), func() ([]byte, error) {
				data, err := snap.ReadBlob(f.Blob)
				if gitrepo.IsMissingObject(err) {
					// A blob the clone lacks (a mirror without its largest
					// files): the file is searched by its path alone.
					return nil, nil
				}
				return data, err
			})
			if err != nil {
				readErr = err
				break
			}
			docs = append(docs, d)
			pd, _ := px.doc(f.Blob, string(f.Path), nil) // a path document reads no blob: no error
			pdocs = append(pdocs, pd)
		}
		snap.Close()
		if readErr != nil {
			skips = append(skips, Skip{q.QueryID, readErr.Error()})
			continue
		}
		fileRanks = append(fileRanks, fx.search(q.Query, files, docs, commiteval.DefaultOptions().MaxFiles))
		pathRanks = append(pathRanks, px.search(q.Query, files, pdocs, commiteval.DefaultOptions().MaxFiles))
		snapshotIDs := make(map[string]string, len(files))
		for _, f := range files {
			if id, ok := ids[f]; ok {
				snapshotIDs[f] = id
			}
		}
		queries = append(queries, commiteval.Query{Text: q.Query, Time: q.CommitDate,
			State: commiteval.NewStateFromIDs(files, func(p string) (string, bool) { id, ok := snapshotIDs[p]; return id, ok })})
		kept = append(kept, q)
	}
	// kept is in date order, so the engine's exact index of older commits
	// grows incrementally from one query to the next.
	out := make([]Result, len(kept))
	for i, q := range kept {
		files := scoredIDs(fileRanks[i])
		mem, err := eng.Memory(queries[i], commiteval.MemoryOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("query %s: %w", q.QueryID, err)
		}
		ranked := scoredIDs(mem.MaxP)
		w := HybridWeights
		hybrid := spider.Fuse([][]spider.Scored{fileRanks[i], mem.MaxP, mem.Votes, mem.Docs, pathRanks[i]},
			[]float64{w.Files, w.MaxP, w.Votes, w.Docs, w.Paths}) // sorted
		hybrid = hybrid[:min(len(hybrid), commiteval.DefaultOptions().MaxFiles)]
		out[i] = Result{Query: q.QueryID, Repo: repo, Gold: q.GoldFiles, Ranked: ranked, Files: files,
			Fused: fuse(ranked, files, commiteval.DefaultOptions().MaxFiles), Hybrid: scoredIDs(hybrid)}
		rk := Rankings{Files: fileRanks[i], MaxP: mem.MaxP, Votes: mem.Votes, Docs: mem.Docs, Paths: pathRanks[i], Hybrid: hybrid}
		if o.Model != nil {
			if out[i].Learned, err = LearnedFiles(o.Model, q.Query, rk, commiteval.DefaultOptions().MaxFiles); err != nil {
				return nil, nil, fmt.Errorf("query %s: %w", q.QueryID, err)
			}
		}
		if o.Candidates {
			out[i].Candidates = FileCandidates(q.Query, rk)
		}
	}
	return out, skips, nil
}

func scoredIDs(s []spider.Scored) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.ID
	}
	return out
}

// fuse is reciprocal-rank fusion of two file rankings.
func fuse(a, b []string, max int) []string {
	toScored := func(xs []string) []spider.Scored {
		out := make([]spider.Scored, len(xs))
		for i, x := range xs {
			out[i] = spider.Scored{ID: x, Score: float64(len(xs) - i)}
		}
		return out
	}
	f, err := spider.RRF([][]spider.Scored{toScored(a), toScored(b)}, 0)
	if err != nil {
		return a
	}
	out := make([]string, 0, min(len(f), max))
	for _, s := range f {
		if len(out) == max {
			break
		}
		out = append(out, s.ID)
	}
	return out
}
