package triplets

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/dataset"
)

// Exclusion keeps training data apart from evaluation: every commit a
// benchmark file names (a SWE instance's base commit, a commit query's
// commit) is excluded, and so is every commit of that repository from the
// earliest named one on, so that no record overlaps what an evaluation
// asks about or knows.
type Exclusion struct {
	repos map[string]*benchRepo // by lower-case owner/name
}

type benchRepo struct {
	named map[string]bool // commit ids, lower case
	// earliest is the earliest named commit's time (unix ms) when a
	// benchmark gives it (commit queries do); 0: find it from the history.
	earliest int64
}

// LoadExclusion reads benchmark files in the ../shared/bench formats
// (swe-dev or commits-dev JSON Lines).
func LoadExclusion(paths ...string) (*Exclusion, error) {
	x := &Exclusion{repos: map[string]*benchRepo{}}
	for _, p := range paths {
		commits, err := dataset.IsCommitFile(p)
		if err != nil {
			return nil, fmt.Errorf("exclude %s: %w", p, err)
		}
		if commits {
			qs, err := dataset.LoadCommits(p)
			if err != nil {
				return nil, fmt.Errorf("exclude %s: %w", p, err)
			}
			for _, q := range qs {
				x.add(q.Repo, q.CommitID, q.CommitDate*1000)
			}
			continue
		}
		is, err := dataset.LoadSWE(p)
		if err != nil {
			return nil, fmt.Errorf("exclude %s: %w", p, err)
		}
		for _, in := range is {
			x.add(in.Repo, in.BaseCommit, 0)
		}
	}
	return x, nil
}

// Named is one commit a benchmark names, with its time when the benchmark
// gives it (unix ms; 0 when not).
type Named struct {
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
	TimeMs int64  `json:"time_ms,omitempty"`
}

// Entries lists what x excludes, to pass it on (see NewExclusion).
func (x *Exclusion) Entries() []Named {
	var out []Named
	if x == nil {
		return nil
	}
	for repo, r := range x.repos {
		for c := range r.named {
			out = append(out, Named{Repo: repo, Commit: c})
		}
		if r.earliest > 0 {
			out = append(out, Named{Repo: repo, TimeMs: r.earliest})
		}
	}
	slices.SortFunc(out, func(a, b Named) int {
		return cmp.Or(cmp.Compare(a.Repo, b.Repo), cmp.Compare(a.Commit, b.Commit), cmp.Compare(a.TimeMs, b.TimeMs))
	})
	return out
}

// NewExclusion is the exclusion of entries (from Entries).
func NewExclusion(entries []Named) *Exclusion {
	x := &Exclusion{repos: map[string]*benchRepo{}}
	for _, e := range entries {
		x.add(e.Repo, e.Commit, e.TimeMs)
	}
	return x
}

func (x *Exclusion) add(repo, commit string, timeMs int64) {
	k := strings.ToLower(repo)
	r, ok := x.repos[k]
	if !ok {
		r = &benchRepo{named: map[string]bool{}}
		x.repos[k] = r
	}
	if commit != "" {
		r.named[strings.ToLower(commit)] = true
	}
	if timeMs > 0 && (r.earliest == 0 || timeMs < r.earliest) {
		r.earliest = timeMs
	}
}

// Repo is the exclusion of one repository: Cut is the time from which its
// commits are excluded (unix ms; 0 when no benchmark names it).
type Repo struct {
	named map[string]bool
	Cut   int64
}

// ForRepo is the exclusion of repo, its cut found with commitTime (the
// commit time of an id in the repository's history, ok false when the
// history lacks it). A benchmark commit the history lacks cannot place the
// cut: that is an error naming it, since mining on would risk the overlap
// the exclusion exists to prevent.
func (x *Exclusion) ForRepo(repo string, commitTime func(id string) (int64, bool)) (Repo, error) {
	if x == nil {
		return Repo{}, nil
	}
	r, ok := x.repos[strings.ToLower(repo)]
	if !ok {
		return Repo{}, nil
	}
	out := Repo{named: r.named, Cut: r.earliest}
	for id := range r.named {
		t, ok := commitTime(id)
		if !ok {
			if r.earliest > 0 {
				continue // the benchmark gave the time
			}
			return Repo{}, fmt.Errorf("exclude %s: benchmark commit %s is neither in its indexed history nor in its clone: its time is unknown, so the history after it cannot be left out", repo, id)
		}
		if out.Cut == 0 || t < out.Cut {
			out.Cut = t
		}
	}
	return out, nil
}

// Excluded reports whether a commit of the repository (its id and commit
// time, unix ms) must not yield a record.
func (r Repo) Excluded(commit string, timeMs int64) bool {
	return r.named[strings.ToLower(commit)] || r.Cut > 0 && timeMs >= r.Cut
}
