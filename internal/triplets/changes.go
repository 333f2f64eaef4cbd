package triplets

import (
	"cmp"
	"slices"

	"github.com/locus-dev/locus/schema"
)

// Commits groups commits-table rows (any number per commit, any order)
// into the commits mining reads, in time order (ties by id).
type Commits struct {
	byID  map[string]*Commit
	order []string
}

// Add adds one row.
func (cs *Commits) Add(r *schema.CommitFile) {
	if cs.byID == nil {
		cs.byID = map[string]*Commit{}
	}
	c, ok := cs.byID[r.CommitID]
	if !ok {
		c = &Commit{Change: Change{Commit: r.CommitID, Message: r.Message, AuthorName: r.AuthorName, AuthorEmail: r.AuthorEmail,
			IsMerge: r.IsMerge || r.NumParents > 1}, Parent: r.ParentID, Time: r.CommitTime}
		cs.byID[r.CommitID] = c
		cs.order = append(cs.order, r.CommitID)
	}
	if r.Path == "" {
		return
	}
	c.Files = append(c.Files, FileChange{Path: r.Path, IsBinary: r.IsBinary, Diff: r.Diff, Functions: r.ChangedFunctions})
	if r.PreviousPath != "" && r.PreviousPath != r.Path {
		if c.PreviousPaths == nil {
			c.PreviousPaths = map[string]string{}
		}
		c.PreviousPaths[r.Path] = r.PreviousPath
	}
}

// List returns the commits in time order.
func (cs *Commits) List() []Commit {
	out := make([]Commit, 0, len(cs.order))
	for _, id := range cs.order {
		out = append(out, *cs.byID[id])
	}
	slices.SortStableFunc(out, func(a, b Commit) int { return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Commit, b.Commit)) })
	return out
}
