// Package commiteval is the commit-history file search of the seed paper on
// commit search, as an engine over plain Go data so it can be fed from git or
// from the Parquet commits table (schema.CommitFile rows grouped by commit;
// note that table stores times in unix milliseconds, this package in seconds).
//
// For a query written at time T against the repository state S (the query
// commit's first parent):
//
//  1. BM25 (k1 = 0.9, b = 0.4, Pyserini's settings in the paper) ranks the
//     messages of the commits strictly older than T;
//  2. each file is scored by its best commit (maxp): walking the commits in
//     score order, every file a commit touched is mapped through its file id
//     to its path at S (so a file renamed later is reported under its current
//     name), dropped if it does not exist at S, and kept at its first
//     occurrence;
//  3. at most MaxFiles (1,000) files are returned.
//
// The query commit itself is never searched (its time is not strictly older
// than T), so gold files it adds can never be retrieved.
//
// # Index construction
//
// By default the BM25 index is exact: it holds only the commits older than T,
// so document frequencies and average length are those of the searchable
// history, as with a per-query Pyserini index. Rebuilding it per query from
// scratch would re-tokenize the whole history every time; instead the engine
// keeps one incremental builder over the commits in time order, adds only
// the commits between the previous cutoff and the next, and calls Build —
// SearchAll visits queries in date order so each commit is tokenized once and
// a query costs one Build plus one search. With Options.SharedIndex the
// engine builds a single index over all commits and filters the hits by time:
// faster still (one Build for all queries) but the BM25 statistics then
// include future commits, a small departure from the paper's protocol.
package commiteval

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/locus-dev/locus/internal/sparse"
)

// FileChange is one file touched by a commit.
type FileChange struct {
	Path   string // path after the commit (for a deletion: the deleted path)
	FileID string // identity across renames; "" to match by Path alone
	Status string // schema.Status* ("added", "modified", "deleted", "renamed"); informational
}

// Commit is one commit of the repository's history.
type Commit struct {
	ID      string
	Time    int64 // unix seconds (commit time)
	Message string
	Files   []FileChange
}

// State is the repository as it was at the query commit's first parent.
type State struct {
	// Files is the set of paths that exist at the state.
	Files map[string]struct{}
	// PathOf maps a file id to the file's path at the state. When nil, a
	// change's own Path is used; when non-nil, a change whose FileID is not
	// in it is dropped (that file no longer exists), and a change without a
	// FileID falls back to its Path.
	PathOf map[string]string
}

// NewState builds a State from the paths existing at the state and a map
// from file id to path at the state (may be nil).
func NewState(files []string, pathOf map[string]string) State {
	s := State{Files: make(map[string]struct{}, len(files)), PathOf: pathOf}
	for _, f := range files {
		s.Files[f] = struct{}{}
	}
	return s
}

// NewStateFromIDs builds a State from the paths existing at the state and a
// lookup of each such path's file id at that state (for instance
// (*commits.FileIDs).Get of a map replayed up to the state).
func NewStateFromIDs(files []string, idOf func(path string) (string, bool)) State {
	s := State{Files: make(map[string]struct{}, len(files)), PathOf: make(map[string]string, len(files))}
	for _, f := range files {
		s.Files[f] = struct{}{}
		if id, ok := idOf(f); ok {
			s.PathOf[id] = f
		}
	}
	return s
}

// Resolve maps a change to its path at the state, or "" when it does not exist there.
func (s *State) Resolve(fc FileChange) string {
	p := fc.Path
	if fc.FileID != "" && s.PathOf != nil {
		var ok bool
		if p, ok = s.PathOf[fc.FileID]; !ok {
			return ""
		}
	}
	if p == "" {
		return ""
	}
	if _, ok := s.Files[p]; !ok {
		return ""
	}
	return p
}

// Query is one commit-history query.
type Query struct {
	Text  string
	Time  int64 // the query commit's date, unix seconds: only commits strictly older are used
	State State
}

// FileHit is one ranked file.
type FileHit struct {
	Path   string  // path at the query state
	Score  float64 // BM25 score of its best commit
	Commit string  // ID of that commit
}

// Options configures an Engine. Start from DefaultOptions.
type Options struct {
	BM25     sparse.Config // default k1 = 0.9, b = 0.4
	MaxFiles int           // files returned per query; default 1000
	// SharedIndex builds one index over all commits and filters hits by
	// time, instead of an exact index of the older commits (see the package doc).
	SharedIndex bool
}

// DefaultOptions returns the paper's settings.
func DefaultOptions() Options {
	return Options{BM25: sparse.Config{K1: 0.9, B: 0.4}, MaxFiles: 1000}
}

// Engine searches one repository's history. It is safe for concurrent use;
// searches are serialised when the exact index has to be (re)built.
type Engine struct {
	opt     Options
	commits []Commit // sorted by (Time, ID)
	byID    map[string]int

	mu      sync.Mutex
	builder *sparse.Builder // holds commits[:added]
	added   int
	built   *sparse.Index // index of commits[:builtN]
	builtN  int

	tokMu sync.Mutex
	toks  []*msgTokens // each commit's message tokens, on first use
}

// New makes an engine over commits (any order; the slice is copied, the
// commits themselves are shared and must not be modified). Commit IDs must be
// non-empty and unique.
func New(commits []Commit, opt Options) (*Engine, error) {
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = 1000
	}
	if err := opt.BM25.Validate(); err != nil {
		return nil, fmt.Errorf("commiteval: %w", err)
	}
	e := &Engine{opt: opt, commits: slices.Clone(commits), byID: make(map[string]int, len(commits)), builtN: -1}
	slices.SortStableFunc(e.commits, func(a, b Commit) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.ID, b.ID))
	})
	for i, c := range e.commits {
		if c.ID == "" {
			return nil, errors.New("commiteval: commit with an empty id")
		}
		if _, dup := e.byID[c.ID]; dup {
			return nil, fmt.Errorf("commiteval: duplicate commit %s", c.ID)
		}
		e.byID[c.ID] = i
	}
	if opt.SharedIndex {
		ix, err := e.buildPrefix(len(e.commits))
		if err != nil {
			return nil, err
		}
		e.built, e.builtN = ix, len(e.commits)
	}
	return e, nil
}

// Len is the number of commits.
func (e *Engine) Len() int { return len(e.commits) }

// before is the number of commits strictly older than t.
func (e *Engine) before(t int64) int {
	return sort.Search(len(e.commits), func(i int) bool { return e.commits[i].Time >= t })
}

// buildPrefix returns the index of commits[:n], growing the incremental
// builder or restarting it when n is below what it holds. Caller holds e.mu
// (or is New).
func (e *Engine) buildPrefix(n int) (*sparse.Index, error) {
	if e.builder == nil || n < e.added {
		e.builder, e.added = sparse.NewBuilder(e.opt.BM25), 0
	}
	for ; e.added < n; e.added++ {
		c := &e.commits[e.added]
		if err := e.builder.Add(c.ID, c.Message); err != nil {
			return nil, fmt.Errorf("commiteval: %w", err)
		}
	}
	ix, err := e.builder.Build()
	if err != nil {
		return nil, fmt.Errorf("commiteval: %w", err)
	}
	return ix, nil
}

// index returns an index to search for cutoff prefix n, and whether its hits
// must be filtered to commits[:n].
func (e *Engine) index(n int) (*sparse.Index, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opt.SharedIndex {
		return e.built, n < len(e.commits), nil
	}
	if n != e.builtN {
		ix, err := e.buildPrefix(n)
		if err != nil {
			return nil, false, err
		}
		e.built, e.builtN = ix, n
	}
	return e.built, false, nil
}

// CommitHit is one ranked commit.
type CommitHit struct {
	ID    string
	Time  int64
	Score float64
}

// Commits ranks the commits strictly older than before by BM25 of their
// message against text, best first (ties by commit ID). Only commits sharing
// a token with text are returned.
func (e *Engine) Commits(text string, before int64) ([]CommitHit, error) {
	n := e.before(before)
	if n == 0 {
		return nil, nil
	}
	ix, filter, err := e.index(n)
	if err != nil {
		return nil, err
	}
	hits := ix.Search(text, ix.Len())
	out := make([]CommitHit, 0, len(hits))
	for _, h := range hits {
		i := e.byID[h.DocID]
		if filter && i >= n {
			continue
		}
		out = append(out, CommitHit{ID: h.DocID, Time: e.commits[i].Time, Score: h.Score})
	}
	return out, nil
}

// Search ranks the files of q.State by their best commit (maxp), at most
// Options.MaxFiles of them. Within one commit, files keep the order of
// Commit.Files.
func (e *Engine) Search(q Query) ([]FileHit, error) {
	hits, err := e.Commits(q.Text, q.Time)
	if err != nil {
		return nil, err
	}
	return e.maxP(q.State, hits), nil
}

// maxP scores each file of st by the first of hits (best first) that
// changed it, at most Options.MaxFiles of them.
func (e *Engine) maxP(st State, hits []CommitHit) []FileHit {
	var out []FileHit
	seen := make(map[string]struct{})
	for _, h := range hits {
		for _, fc := range e.commits[e.byID[h.ID]].Files {
			p := st.Resolve(fc)
			if p == "" {
				continue
			}
			if _, dup := seen[p]; dup {
				continue
			}
			seen[p] = struct{}{}
			out = append(out, FileHit{Path: p, Score: h.Score, Commit: h.ID})
			if len(out) >= e.opt.MaxFiles {
				return out
			}
		}
	}
	return out
}

// SearchAll runs Search for every query and returns the results in the order
// of qs. Queries are visited in date order, so the exact index grows
// incrementally and each commit message is tokenized once.
func (e *Engine) SearchAll(qs []Query) ([][]FileHit, error) {
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(qs[a].Time, qs[b].Time) })
	out := make([][]FileHit, len(qs))
	for _, i := range order {
		r, err := e.Search(qs[i])
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		out[i] = r
	}
	return out, nil
}
