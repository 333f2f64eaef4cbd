package historycheck

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/locus-dev/locus/schema"
)

// Row is the part of a commits-table row that git also reports.
type Row struct {
	CommitID         string
	Status           string
	Path, PrevPath   string // exact bytes (the _raw column where there is one)
	OldBlob, NewBlob string
	OldMode, NewMode uint32
	Additions        int
	Deletions        int
	Binary           bool
	HasDiff          bool   // the row stores hunks
	DiffHash         uint64 // HunksHash of them
	DiffTruncated    bool   // they were cut (or not stored for a big file)
}

// RowOf takes what Compare needs from a stored row.
func RowOf(r *schema.CommitFile) Row {
	row := Row{CommitID: r.CommitID, Status: r.Status, Path: r.Path, PrevPath: r.PreviousPath,
		OldBlob: r.OldBlobID, NewBlob: r.NewBlobID, OldMode: r.OldMode, NewMode: r.NewMode,
		Additions: int(r.Additions), Deletions: int(r.Deletions), Binary: r.IsBinary}
	if r.PathRaw != nil {
		row.Path = string(r.PathRaw)
	}
	if r.PrevPathRaw != nil {
		row.PrevPath = string(r.PrevPathRaw)
	}
	row.DiffTruncated = r.DiffTruncated
	if len(r.Diff) > 0 {
		row.HasDiff, row.DiffHash = true, HunksHash(r.Diff)
	}
	return row
}

// Class names a kind of difference between locus and git. Explained classes
// are expected (each documented in Classes); any other difference fails the
// check.
type Class string

const (
	// ClassEmptyRow: locus writes one row of status "empty" for a commit
	// that changes no file (an empty commit, or a merge identical to its
	// first parent), so the commit and its message are in the table; git
	// log prints no file for it.
	ClassEmptyRow Class = "empty commit row"
	// ClassTypeChangeDiff: for a change of file type (a symbolic link
	// turned into a file) git log -p prints two patches, a deletion and an
	// addition; locus stores one diff from the old content to the new.
	// The counts are the same.
	ClassTypeChangeDiff Class = "type change stored as one diff"

	// Unexplained classes.
	ClassMissingCommit Class = "commit missing from locus"
	ClassExtraCommit   Class = "commit only in locus"
	ClassMissingFile   Class = "file missing from locus"
	ClassExtraFile     Class = "file only in locus"
	ClassStatus        Class = "status or previous path differs"
	ClassCounts        Class = "additions/deletions differ"
	ClassBinary        Class = "binary flag differs"
	ClassObjects       Class = "modes or blob ids differ"
	ClassDiffText      Class = "stored diff differs from git log -p"
	ClassDiffMissing   Class = "diff in git log -p, none stored"
)

// Classes describes each explained class, for reports and documentation.
var Classes = map[Class]string{
	ClassEmptyRow: "locus writes one row of status \"empty\" for a commit that changes no file " +
		"(an empty commit, a merge equal to its first parent), so the commit is in the table; git log lists no file",
	ClassTypeChangeDiff: "for a change of file type (a symbolic link turned into a file) git log -p prints two patches, " +
		"a deletion and an addition; locus stores one diff from the old content to the new (the counts are the same)",
}

// Explained reports whether c is a documented, expected class.
func (c Class) Explained() bool { _, ok := Classes[c]; return ok }

// Difference is one disagreement, in one commit.
type Difference struct {
	Class  Class
	Commit string
	Path   string
	Detail string // what each side says
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: commit %.12s %s: %s", d.Class, d.Commit, d.Path, d.Detail)
}

// Report is the outcome of one comparison.
type Report struct {
	Commits  int // commits git log listed
	GitFiles int // file lines git printed
	Rows     int // locus rows compared
	// Renames counts git's renames (all of them matched when Unexplained is 0).
	Renames int
	// DiffsChecked says whether stored diffs were compared with git log -p;
	// Diffs counts those found equal.
	DiffsChecked bool
	Diffs        int
	ByClass      map[Class]int
	// Examples holds the first few differences of each class.
	Examples map[Class][]Difference
}

// Unexplained is the number of differences in no documented class.
func (r *Report) Unexplained() int {
	n := 0
	for c, k := range r.ByClass {
		if !c.Explained() {
			n += k
		}
	}
	return n
}

// Err is nil when every difference is explained; otherwise it lists the
// classes and their first examples.
func (r *Report) Err() error {
	if r.Unexplained() == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d differences from git in no documented class:", r.Unexplained())
	for _, c := range r.classes() {
		if c.Explained() {
			continue
		}
		fmt.Fprintf(&b, "\n  %s: %d", c, r.ByClass[c])
		for _, d := range r.Examples[c] {
			fmt.Fprintf(&b, "\n    %s", d)
		}
	}
	return fmt.Errorf("%s", b.String())
}

func (r *Report) classes() []Class {
	var cs []Class
	for c := range r.ByClass {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	return cs
}

// String is a one-line summary.
func (r *Report) String() string {
	var parts []string
	for _, c := range r.classes() {
		parts = append(parts, fmt.Sprintf("%s %d", c, r.ByClass[c]))
	}
	if len(parts) == 0 {
		parts = append(parts, "no differences")
	}
	return fmt.Sprintf("%d commits, %d git files, %d rows, %d renames: %s", r.Commits, r.GitFiles, r.Rows, r.Renames, strings.Join(parts, ", "))
}

const examplesPerClass = 5

func (r *Report) add(d Difference) {
	r.ByClass[d.Class]++
	if len(r.Examples[d.Class]) < examplesPerClass {
		r.Examples[d.Class] = append(r.Examples[d.Class], d)
	}
}

// Compare runs git log on gitDir from head and compares each commit with
// rows (locus's rows, grouped by commit id); with diffs, also each stored
// diff with git log -p's hunks.
func Compare(ctx context.Context, gitDir, head string, rows map[string][]Row, opts GitLogOptions, diffs bool) (*Report, error) {
	rep := &Report{ByClass: map[Class]int{}, Examples: map[Class][]Difference{}}
	var patches map[string][]uint64
	if diffs {
		patches = map[string][]uint64{}
		err := GitPatches(ctx, gitDir, head, opts, func(commit string, hunks []uint64) error {
			patches[commit] = hunks
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
		rep.DiffsChecked = true
	}
	seen := make(map[string]bool, len(rows))
	for _, rs := range rows {
		rep.Rows += len(rs)
	}
	err := GitLog(ctx, gitDir, head, opts, func(gc *GitCommit) error {
		rep.Commits++
		rep.GitFiles += len(gc.Files)
		seen[gc.ID] = true
		rs, ok := rows[gc.ID]
		if !ok {
			rep.add(Difference{Class: ClassMissingCommit, Commit: gc.ID, Detail: fmt.Sprintf("git lists %d files", len(gc.Files))})
			return nil
		}
		compareCommit(rep, gc, rs)
		if patches != nil {
			compareDiffs(rep, gc.ID, patches[gc.ID], rs)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	var extra []string
	for id := range rows {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	sort.Strings(extra)
	for _, id := range extra {
		rep.add(Difference{Class: ClassExtraCommit, Commit: id, Detail: fmt.Sprintf("%d rows", len(rows[id]))})
	}
	return rep, nil
}

// gitStatus is the --raw letter locus's row stands for.
func gitStatus(r *Row) byte {
	switch r.Status {
	case schema.StatusAdded:
		return 'A'
	case schema.StatusDeleted:
		return 'D'
	case schema.StatusRenamed:
		return 'R'
	case schema.StatusModified:
		if r.OldMode&0o170000 != r.NewMode&0o170000 {
			return 'T' // git calls a change of file type (file, link, submodule) T
		}
		return 'M'
	}
	return '?'
}

func compareCommit(rep *Report, gc *GitCommit, rs []Row) {
	if len(gc.Files) == 0 && len(rs) == 1 && rs[0].Status == schema.StatusEmpty {
		rep.add(Difference{Class: ClassEmptyRow, Commit: gc.ID})
		return
	}
	mine := make(map[string]*Row, len(rs))
	for i := range rs {
		mine[rs[i].Path] = &rs[i]
	}
	for i := range gc.Files {
		g := &gc.Files[i]
		if g.Status == 'R' {
			rep.Renames++
		}
		r, ok := mine[g.Path]
		if !ok {
			rep.add(Difference{Class: ClassMissingFile, Commit: gc.ID, Path: g.Path, Detail: describeGit(g)})
			continue
		}
		delete(mine, g.Path)
		st := gitStatus(r)
		switch {
		case st != g.Status || (g.Status == 'R' && r.PrevPath != g.OldPath):
			rep.add(Difference{Class: ClassStatus, Commit: gc.ID, Path: g.Path,
				Detail: fmt.Sprintf("git %s, locus %s", describeGit(g), describeRow(r))})
		case r.Binary != g.Binary:
			rep.add(Difference{Class: ClassBinary, Commit: gc.ID, Path: g.Path,
				Detail: fmt.Sprintf("git binary=%v, locus binary=%v", g.Binary, r.Binary)})
		case !g.Binary && (r.Additions != g.Additions || r.Deletions != g.Deletions):
			rep.add(Difference{Class: ClassCounts, Commit: gc.ID, Path: g.Path,
				Detail: fmt.Sprintf("git +%d -%d, locus +%d -%d", g.Additions, g.Deletions, r.Additions, r.Deletions)})
		case r.OldMode != g.OldMode || r.NewMode != g.NewMode || r.OldBlob != g.OldBlob || r.NewBlob != g.NewBlob:
			rep.add(Difference{Class: ClassObjects, Commit: gc.ID, Path: g.Path,
				Detail: fmt.Sprintf("git %o %o %.10s %.10s, locus %o %o %.10s %.10s",
					g.OldMode, g.NewMode, g.OldBlob, g.NewBlob, r.OldMode, r.NewMode, r.OldBlob, r.NewBlob)})
		}
	}
	var extra []string
	for p := range mine {
		extra = append(extra, p)
	}
	sort.Strings(extra)
	for _, p := range extra {
		rep.add(Difference{Class: ClassExtraFile, Commit: gc.ID, Path: p, Detail: describeRow(mine[p])})
	}
}

func describeGit(g *GitFile) string {
	if g.Status == 'R' {
		return fmt.Sprintf("R%03d %s -> %s", g.Score, g.OldPath, g.Path)
	}
	return fmt.Sprintf("%c %s", g.Status, g.Path)
}

func describeRow(r *Row) string {
	if r.Status == schema.StatusRenamed {
		return fmt.Sprintf("renamed %s -> %s", r.PrevPath, r.Path)
	}
	return r.Status + " " + r.Path
}

// compareDiffs matches the commit's stored diffs with git's hunks, as
// multisets of hashes: every diff stored whole must be one of git's, and
// git's left over must be files whose diff was cut or not stored.
func compareDiffs(rep *Report, commit string, hunks []uint64, rs []Row) {
	left := make(map[uint64]int, len(hunks))
	for _, h := range hunks {
		left[h]++
	}
	cut, differ := 0, 0
	for i := range rs {
		r := &rs[i]
		switch {
		case r.DiffTruncated:
			cut++
		case r.HasDiff && r.Status == schema.StatusModified && gitStatus(r) == 'T':
			cut += 2 // git's deletion and addition
			rep.add(Difference{Class: ClassTypeChangeDiff, Commit: commit, Path: r.Path})
		case !r.HasDiff:
		case left[r.DiffHash] > 0:
			left[r.DiffHash]--
			rep.Diffs++
		default:
			differ++
			rep.add(Difference{Class: ClassDiffText, Commit: commit, Path: r.Path, Detail: "no file of git log -p has these hunks"})
		}
	}
	n := 0
	for _, k := range left {
		n += k
	}
	if extra := n - cut - differ; extra > 0 {
		rep.add(Difference{Class: ClassDiffMissing, Commit: commit,
			Detail: fmt.Sprintf("%d files with hunks in git log -p have no stored diff", extra)})
	}
}
