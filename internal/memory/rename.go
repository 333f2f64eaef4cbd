package memory

import (
	"cmp"
	"slices"
	"strings"

	"github.com/locus-dev/locus/schema"
)

// Rename is a file a commit moved: function ids of older commits that name
// Old are followed to New (and on, through later renames) as long as the
// query's base has that commit in its history.
type Rename struct {
	Commit string `json:"commit"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// renameOf is the rename a commits-table row records, if any.
func renameOf(r *schema.CommitFile) (Rename, bool) {
	if r.PreviousPath == "" || r.PreviousPath == r.Path || r.Path == "" {
		return Rename{}, false
	}
	return Rename{Commit: r.CommitID, Old: r.PreviousPath, New: r.Path}, true
}

// moves are the renames one base's history holds, by old path, each list
// in time order.
type moves map[string][]move

type move struct {
	time int64
	to   string
}

// movesAt collects the renames of the allowed rows.
func (t *Table) movesAt(allowed []bool) moves {
	m := moves{}
	for _, rn := range t.renames {
		r, ok := t.row[rn.Commit]
		if !ok || !allowed[r] {
			continue
		}
		m[rn.Old] = append(m[rn.Old], move{time: t.commits[r].Time, to: rn.New})
	}
	for _, l := range m {
		slices.SortStableFunc(l, func(a, b move) int { return cmp.Compare(a.time, b.time) })
	}
	return m
}

// maxMoves bounds the renames followed for one id (a history that moves a
// file back and forth forever cannot loop).
const maxMoves = 32

// resolve is the id, as of the base, of function id changed by a commit at
// time: its file followed through every later rename of the base's
// history; id itself when the file never moved after.
func (m moves) resolve(id string, time int64) string {
	if len(m) == 0 {
		return id
	}
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return id
	}
	path, name := id[:i], id[i:]
	moved := false
	for range maxMoves {
		l := m[path]
		j, _ := slices.BinarySearchFunc(l, time+1, func(mv move, t int64) int { return cmp.Compare(mv.time, t) })
		if j == len(l) {
			break
		}
		path, time, moved = l[j].to, l[j].time, true
	}
	if !moved {
		return id
	}
	return path + name
}
