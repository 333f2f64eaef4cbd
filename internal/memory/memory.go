// Package memory is repository memory: what the commit history says about
// where a new issue lives. Its table keeps, per commit of the indexed
// history, the commit id, its parents, its commit time, its message and the
// graph ids of the functions it changed (from the commits table's
// changed_functions). It is built while a repository is indexed, from the
// Parquet history, and stored beside it.
//
// Episodic memory ranks functions for an issue: BM25 over the messages of
// the commits that precede the query's base commit (its ancestors, strictly
// older than it: never the base itself, never a commit of a branch merged
// later, so the fix an issue asks for cannot leak in), each hit voting for
// the functions its commit changed that exist at the base commit. A vote
// decays with the commit's age at the base commit and with the number of
// functions the commit touched (a 200-file refactor says little about any
// one of them).
package memory

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// Commit is what memory keeps of one commit.
type Commit struct {
	ID      string   `parquet:"commit_id"`
	Parents []string `parquet:"parents,list"`
	// Time is the commit time, unix milliseconds (as in the commits table).
	Time      int64    `parquet:"commit_time"`
	Message   string   `parquet:"message"`
	Functions []string `parquet:"functions,list"`
}

// Table is a repository's memory: its commits in time order.
type Table struct {
	commits []Commit // sorted by (Time, ID)
	renames []Rename // files the commits moved
	row     map[string]int32
	parents [][]int32 // rows of each row's parents that are in the table
}

// New makes a table of commits (any order; ids must be non-empty and
// unique). Parents that are not in the table (beyond a shallow boundary)
// are kept in Commit.Parents but end ancestry walks.
func New(commits []Commit) (*Table, error) {
	t := &Table{commits: slices.Clone(commits), row: make(map[string]int32, len(commits))}
	slices.SortStableFunc(t.commits, func(a, b Commit) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.ID, b.ID))
	})
	for i, c := range t.commits {
		if c.ID == "" {
			return nil, errors.New("memory: a commit with an empty id")
		}
		if _, dup := t.row[c.ID]; dup {
			return nil, fmt.Errorf("memory: commit %s appears twice", c.ID)
		}
		t.row[c.ID] = int32(i)
	}
	t.parents = make([][]int32, len(t.commits))
	for i, c := range t.commits {
		for _, p := range c.Parents {
			if r, ok := t.row[p]; ok {
				t.parents[i] = append(t.parents[i], r)
			}
		}
	}
	return t, nil
}

// Len is the number of commits.
func (t *Table) Len() int { return len(t.commits) }

// Commits returns the commits in time order (shared; do not modify).
func (t *Table) Commits() []Commit { return t.commits }

// Renames returns the files the commits moved (shared; do not modify).
func (t *Table) Renames() []Rename { return t.renames }

// WithRenames is t knowing that its commits moved files as rs says, so
// that a function changed before its file moved gets its vote under the
// path it has at a query's base. Renames of commits not in t are ignored.
func (t *Table) WithRenames(rs []Rename) *Table {
	c := *t
	c.renames = slices.Clone(rs)
	return &c
}

// ErrUnknownBase is returned for a base commit the table does not hold.
var ErrUnknownBase = errors.New("base commit is not in the indexed history")

// Before reports, per row, whether the commit may inform a query at base: an
// ancestor of base (through every parent) whose commit time is strictly
// older than base's. base itself never may.
func (t *Table) Before(base string) ([]bool, error) {
	b, ok := t.row[base]
	if !ok {
		return nil, fmt.Errorf("memory: %s: %w", base, ErrUnknownBase)
	}
	limit := t.commits[b].Time
	ok2 := make([]bool, len(t.commits))
	seen := make([]bool, len(t.commits))
	stack := []int32{b}
	seen[b] = true
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range t.parents[r] {
			if seen[p] {
				continue
			}
			seen[p] = true
			ok2[p] = t.commits[p].Time < limit
			stack = append(stack, p)
		}
	}
	return ok2, nil
}

// Back is the first-parent ancestor of base (base included) whose commit
// time is at least gapMs older than base's: where a query about base takes
// its memory from when base may sit inside the work the query describes
// (a commit in the middle of a pull request's commits, whose siblings are
// its ancestors). The walk stops at the oldest commit it reaches.
func (t *Table) Back(base string, gapMs int64) (string, error) {
	r, ok := t.row[base]
	if !ok {
		return "", fmt.Errorf("memory: %s: %w", base, ErrUnknownBase)
	}
	limit := t.commits[r].Time - gapMs
	for t.commits[r].Time > limit {
		ps := t.commits[r].Parents
		if len(ps) == 0 {
			break
		}
		p, ok := t.row[ps[0]]
		if !ok {
			break // a shallow boundary
		}
		r = p
	}
	return t.commits[r].ID, nil
}

// Options tune episodic memory. Zero fields take the defaults written next
// to them.
type Options struct {
	// Commits is how many best-matching commits vote; default 100.
	Commits int
	// HalfLifeDays is the age at which a commit's vote halves; default 730.
	HalfLifeDays float64
	// BM25 ranks the messages; default k1 = 0.9, b = 0.4 (the commit-search
	// paper's settings).
	BM25 sparse.Config
}

func (o Options) withDefaults() Options {
	if o.Commits <= 0 {
		o.Commits = 100
	}
	if o.HalfLifeDays <= 0 {
		o.HalfLifeDays = 730
	}
	if o.BM25 == (sparse.Config{}) {
		o.BM25 = sparse.Config{K1: 0.9, B: 0.4}
	}
	return o
}

// Episodic is episodic memory for queries at one base commit: a BM25 index
// of the messages of the commits Before(base) allows. Safe for concurrent
// use.
type Episodic struct {
	t        *Table
	opt      Options
	baseTime int64
	ix       *sparse.Index
	allowed  int
	rows     []int32 // the allowed rows
	// moved holds, for the allowed rows that changed a function of a file
	// a later allowed commit moved, their functions under their ids at the
	// base (see functions).
	moved map[int32][]string

	hotOnce sync.Once
	hot     map[string]float64

	histOnce sync.Once
	hist     map[string]Changes

	coOnce sync.Once
	co     map[string][]int32 // the allowed rows that changed each function with others
}

// Episodic builds episodic memory for queries at base.
func (t *Table) Episodic(base string, o Options) (*Episodic, error) {
	o = o.withDefaults()
	allowed, err := t.Before(base)
	if err != nil {
		return nil, err
	}
	b := sparse.NewBuilder(o.BM25)
	e := &Episodic{t: t, opt: o, baseTime: t.commits[t.row[base]].Time}
	mv := t.movesAt(allowed)
	for i, ok := range allowed {
		c := &t.commits[i]
		if !ok || len(c.Functions) == 0 {
			continue
		}
		e.rows = append(e.rows, int32(i))
		e.resolve(mv, int32(i))
		if c.Message == "" {
			continue
		}
		if err := b.Add(strconv.Itoa(i), c.Message); err != nil {
			return nil, fmt.Errorf("memory: commit %s: %w", c.ID, err)
		}
		e.allowed++
	}
	if e.allowed > 0 {
		if e.ix, err = b.Build(); err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
	}
	return e, nil
}

// resolve records the functions of row r under their ids at the base when
// mv moves any of their files after r's commit.
func (e *Episodic) resolve(mv moves, r int32) {
	if len(mv) == 0 {
		return
	}
	c := &e.t.commits[r]
	var ids []string
	for i, f := range c.Functions {
		g := mv.resolve(f, c.Time)
		if g != f && ids == nil {
			ids = slices.Clone(c.Functions)
			if e.moved == nil {
				e.moved = map[int32][]string{}
			}
			e.moved[r] = ids
		}
		if ids != nil {
			ids[i] = g
		}
	}
}

// functions are the functions row r's commit changed, under their ids at
// the base: every reader of the allowed rows (Rank, Hotspots, CoChanged)
// sees a moved file's functions where the base has them.
func (e *Episodic) functions(r int32) []string {
	if ids, ok := e.moved[r]; ok {
		return ids
	}
	return e.t.commits[r].Functions
}

// Commits is how many commits this memory searches.
func (e *Episodic) Commits() int { return e.allowed }

// Rank ranks functions for text: each of the best-matching commits votes
// its BM25 score, halved every HalfLifeDays of age and divided by the square
// root of the number of functions it changed, for each of those functions
// that exists (exists nil: all), named by its file's path at the base (a
// file moved by a later commit of the base's history is followed). Best
// first, ties by id.
func (e *Episodic) Rank(text string, exists func(id string) bool) []spider.Scored {
	if e.ix == nil {
		return nil
	}
	votes := map[string]float64{}
	for _, h := range e.ix.Search(text, e.opt.Commits) {
		r, err := strconv.Atoi(h.DocID)
		if err != nil || r < 0 || r >= len(e.t.commits) {
			continue
		}
		c := &e.t.commits[r]
		w := Vote(h.Score, e.baseTime-c.Time, e.opt.HalfLifeDays, len(c.Functions))
		for _, f := range e.functions(int32(r)) {
			if exists == nil || exists(f) {
				votes[f] += w
			}
		}
	}
	out := make([]spider.Scored, 0, len(votes))
	for id, v := range votes {
		out = append(out, spider.Scored{ID: id, Score: v})
	}
	slices.SortFunc(out, spider.Compare)
	return out
}

// Hotspots scores every function the allowed commits changed by how often
// and how recently: each commit adds 2^(−age/HalfLifeDays) divided by the
// square root of the functions it changed, under their ids at the base (as
// in Rank). Computed once; shared, do not modify.
func (e *Episodic) Hotspots() map[string]float64 {
	e.hotOnce.Do(func() {
		e.hot = map[string]float64{}
		for _, r := range e.rows {
			c := &e.t.commits[r]
			w := Vote(1, e.baseTime-c.Time, e.opt.HalfLifeDays, len(c.Functions))
			for _, f := range e.functions(r) {
				e.hot[f] += w
			}
		}
	})
	return e.hot
}

// Changes is what a memory's commits did to one function: how many
// changed it and the age, in days before the base, of the newest of them.
type Changes struct {
	Commits     int
	LastAgeDays float64
}

// History is Changes for every function the allowed commits changed, under
// their ids at the base (as in Rank). Computed once; shared, do not modify.
func (e *Episodic) History() map[string]Changes {
	e.histOnce.Do(func() {
		const dayMs = 24 * 60 * 60 * 1000
		e.hist = map[string]Changes{}
		for _, r := range e.rows {
			c := &e.t.commits[r]
			age := float64(max(0, e.baseTime-c.Time)) / dayMs
			for _, f := range e.functions(r) {
				h, seen := e.hist[f]
				if !seen || age < h.LastAgeDays {
					h.LastAgeDays = age
				}
				h.Commits++
				e.hist[f] = h
			}
		}
	})
	return e.hist
}

// Vote is what one past commit says about each of the n things (functions,
// files) it changed: its match score, halved for every halfLifeDays of its
// age (milliseconds; a negative age counts as 0), divided by √n, so a
// commit that touched 200 things says little about any one of them.
func Vote(score float64, ageMs int64, halfLifeDays float64, n int) float64 {
	const dayMs = 24 * 60 * 60 * 1000
	age := float64(max(0, ageMs)) / dayMs
	return score * math.Exp2(-age/halfLifeDays) / math.Sqrt(float64(max(n, 1)))
}

// FromRows groups commits-table rows (any number per commit, in any order)
// into memory commits: a commit's functions once each, in the order first
// seen, in linear time however many it touched. parents gives every
// commit's full parent list (the table stores only the first), nil to keep
// the first parent only.
type FromRows struct {
	byID    map[string]*Commit
	renames []Rename
	seen    map[string]map[string]struct{} // functions already in each commit
	order   []string
	parents map[string][]string
}

// NewFromRows starts grouping rows.
func NewFromRows(parents map[string][]string) *FromRows {
	return &FromRows{byID: map[string]*Commit{}, seen: map[string]map[string]struct{}{}, parents: parents}
}

// Add adds one commits-table row.
func (f *FromRows) Add(r *schema.CommitFile) {
	c, ok := f.byID[r.CommitID]
	if !ok {
		c = &Commit{ID: r.CommitID, Time: r.CommitTime, Message: r.Message}
		if ps, ok := f.parents[r.CommitID]; ok {
			c.Parents = slices.Clone(ps)
		} else if r.ParentID != "" {
			c.Parents = []string{r.ParentID}
		}
		f.byID[r.CommitID] = c
		f.seen[r.CommitID] = map[string]struct{}{}
		f.order = append(f.order, r.CommitID)
	}
	if rn, ok := renameOf(r); ok {
		f.renames = append(f.renames, rn)
	}
	seen := f.seen[r.CommitID]
	for _, fn := range r.ChangedFunctions {
		if _, dup := seen[fn]; !dup {
			seen[fn] = struct{}{}
			c.Functions = append(c.Functions, fn)
		}
	}
}

// Renames returns the files the rows moved, in the order seen.
func (f *FromRows) Renames() []Rename { return f.renames }

// Commits returns the grouped commits in the order first seen.
func (f *FromRows) Commits() []Commit {
	out := make([]Commit, len(f.order))
	for i, id := range f.order {
		out[i] = *f.byID[id]
	}
	return out
}
