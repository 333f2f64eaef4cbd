package historycheck

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// pyFile is a file of n distinct lines ending in eol.
func pyFile(tag string, n int, eol string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "def %s_%d(x):  # line %d of %s%s", tag, i, i, tag, eol)
	}
	return b.String()
}

// buildEdgeCases makes a repository with every kind of change the issue
// names: renames that convert CRLF to LF (the psf/requests case, many files
// at once, some also edited), mixed line endings, a rename with a mode
// change, a symbolic link turned into a file, a submodule pointer change, a
// case-only rename, copy-then-edit, delete-then-re-add, identical files
// renamed apart, binary files renamed, and a diff long enough to be cut.
func buildEdgeCases(t *testing.T) *gitfixture.Repo {
	r := gitfixture.New(t)
	files := map[string]string{
		"Readme.md":     "# readme\n",
		"mixed.txt":     "one\r\ntwo\nthree\r\nfour\nfive\r\n",
		"tool.sh":       "#!/bin/sh\necho tool\n",
		"orig.py":       pyFile("orig", 30, "\n"),
		"gone.py":       pyFile("gone", 10, "\n"),
		"same/a.txt":    pyFile("same", 12, "\n"),
		"same/b.txt":    pyFile("same", 12, "\n"),
		"img/logo.bin":  "PNG\x00\r\n\x01\x02" + strings.Repeat("\r\npixels", 40),
		"long/text.txt": pyFile("long", 20000, "\n"),
	}
	// Twelve CRLF files, as a vendored package that is renamed and
	// converted to LF in one commit.
	for i := 0; i < 12; i++ {
		files[fmt.Sprintf("pkg/charade/mod%02d.py", i)] = pyFile(fmt.Sprintf("mod%02d", i), 40+i, "\r\n")
	}
	r.Write(files)
	r.Symlink("tool.sh", "link")
	sub := gitfixture.NewAt(t, filepath.Join(r.Dir, "sub"))
	sub.Write(map[string]string{"s.txt": "s\n"})
	sub.Commit("sub one")
	r.Commit("initial")

	// The vendored package moves and goes from CRLF to LF; two files are
	// also edited (one a little, one by about half).
	for i := 0; i < 12; i++ {
		old := fmt.Sprintf("pkg/charade/mod%02d.py", i)
		content := pyFile(fmt.Sprintf("mod%02d", i), 40+i, "\n")
		switch i {
		case 3:
			content += "def added(): pass\n"
		case 7:
			content = pyFile(fmt.Sprintf("mod%02d", i), 20+i/2, "\n") + pyFile("other", 20, "\n")
		}
		if err := os.Remove(filepath.Join(r.Dir, old)); err != nil {
			t.Fatal(err)
		}
		r.Write(map[string]string{fmt.Sprintf("pkg/chardet/mod%02d.py", i): content})
	}
	r.Commit("rename charade to chardet, CRLF to LF")

	r.Write(map[string]string{"mixed.txt": "one\ntwo\r\nthree\r\nfour\nfive\r\nsix\n"})
	r.Commit("mixed line endings")

	r.Git("mv", "tool.sh", "bin.sh")
	if err := os.Chmod(filepath.Join(r.Dir, "bin.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Commit("rename with a mode change")

	if err := os.Remove(filepath.Join(r.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"link": "now a file\n"})
	r.Commit("symlink to file")

	sub.Write(map[string]string{"s.txt": "s\nt\n"})
	sub.Commit("sub two")
	r.Commit("submodule pointer")

	r.Git("mv", "Readme.md", "README.md")
	r.Commit("case-only rename")

	orig, err := os.ReadFile(filepath.Join(r.Dir, "orig.py"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"copy.py": string(orig) + "def copied(): pass\n"})
	r.Commit("copy then edit")

	if err := os.Remove(filepath.Join(r.Dir, "gone.py")); err != nil {
		t.Fatal(err)
	}
	r.Commit("delete")
	r.Write(map[string]string{"gone.py": pyFile("gone", 10, "\n") + "def back(): pass\n"})
	r.Commit("re-add")

	// Identical files renamed apart: git pairs each with the source of the
	// same file name.
	for _, d := range []string{"x", "y"} {
		if err := os.MkdirAll(filepath.Join(r.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.Git("mv", "same/a.txt", "x/a.txt")
	r.Git("mv", "same/b.txt", "y/b.txt")
	r.Git("mv", "img/logo.bin", "img/brand.bin")
	r.Commit("identical files and a binary file renamed")

	// Many-to-many: ten files deleted and ten added, from shared lines, so
	// that several sources score above 50% for several destinations (some
	// with the same file name): git's order of candidates decides.
	rng := rand.New(rand.NewSource(3))
	vocab := make([]string, 24)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("shared line %d with some words\n", i)
	}
	mixFile := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(vocab[rng.Intn(len(vocab))])
		}
		return b.String()
	}
	olds := map[string]string{}
	var oldPaths []string
	for i := 0; i < 10; i++ {
		p := fmt.Sprintf("many/old/f%d.txt", i)
		olds[p] = mixFile(30)
		oldPaths = append(oldPaths, p)
	}
	r.Write(olds)
	r.Commit("many files")
	news := map[string]string{}
	for i, p := range oldPaths {
		content := olds[p]
		if err := os.Remove(filepath.Join(r.Dir, p)); err != nil {
			t.Fatal(err)
		}
		ls := strings.SplitAfter(content, "\n")
		for j := range ls {
			if rng.Intn(3) == 0 && ls[j] != "" {
				ls[j] = vocab[rng.Intn(len(vocab))]
			}
		}
		name := fmt.Sprintf("many/new/g%d.txt", i)
		if i%3 == 0 {
			name = "many/new/" + filepath.Base(p)
		}
		news[name] = strings.Join(ls, "")
	}
	r.Write(news)
	r.Commit("many renames")

	// Same file name first: new/util.py is closer to old/helpers.py, but
	// old/util.py is over 75% like it and has the same name, so git pairs
	// those two before it scores every pair.
	lines := func(tag string, n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%s line %d\n", tag, i)
		}
		return b.String()
	}
	shared := lines("shared", 40)
	r.Write(map[string]string{"names/old/util.py": shared + lines("util", 8), "names/old/helpers.py": shared + lines("helpers", 8)})
	r.Commit("two similar files")
	for _, p := range []string{"names/old/util.py", "names/old/helpers.py"} {
		if err := os.Remove(filepath.Join(r.Dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	r.Write(map[string]string{"names/new/util.py": shared + lines("helpers", 7)})
	r.Commit("same file name wins")

	// Four best candidates per destination: d0 is over 50% like each of
	// s1..s5, but s5 is not among its four best, and d1..d4 take s1..s4.
	base := lines("base", 40)
	cands := map[string]string{}
	for i := 1; i <= 5; i++ {
		n := 4
		if i == 5 {
			n = 8
		}
		cands[fmt.Sprintf("cand/s%d.txt", i)] = base + lines(fmt.Sprintf("s%d", i), n)
	}
	r.Write(cands)
	r.Commit("five candidates")
	for i := 1; i <= 5; i++ {
		if err := os.Remove(filepath.Join(r.Dir, fmt.Sprintf("cand/s%d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	dsts := map[string]string{"cand2/d0.txt": base + lines("d0", 2)}
	for i := 1; i <= 4; i++ {
		dsts[fmt.Sprintf("cand2/d%d.txt", i)] = cands[fmt.Sprintf("cand/s%d.txt", i)] + "extra\n"
	}
	r.Write(dsts)
	r.Commit("four candidates kept")

	// Every other line changed in a long file: a diff far over the cap.
	long := strings.SplitAfter(pyFile("long", 20000, "\n"), "\n")
	for i := 0; i < len(long); i += 2 {
		long[i] = strings.Replace(long[i], "def ", "async def ", 1)
	}
	r.Write(map[string]string{"long/text.txt": strings.Join(long, "")})
	r.Commit("long diff")
	r.Commit("") // empty
	return r
}

func TestCheckEdgeCasesMatchGit(t *testing.T) {
	r := buildEdgeCases(t)
	res, err := Check(context.Background(), Config{GitDir: filepath.Join(r.Dir, ".git"),
		Diff: gitrepo.DiffOptions{MaxDiffBytes: 64 << 10}, Diffs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.String())
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if !res.DiffsChecked || res.Diffs < 40 {
		t.Errorf("%d stored diffs found equal to git log -p's; the fixture has over 40", res.Diffs)
	}
	if res.ByClass[ClassEmptyRow] != 1 {
		t.Errorf("empty commit rows: %d, want 1", res.ByClass[ClassEmptyRow])
	}
	// Only the commits after a base, as an incremental scrape reads them.
	inc, err := Check(context.Background(), Config{GitDir: filepath.Join(r.Dir, ".git"), Base: "HEAD~5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := inc.Err(); err != nil || inc.Commits != 5 {
		t.Errorf("after HEAD~5: %d commits (want 5), %v", inc.Commits, err)
	}
	// 11 package files (mod07, half rewritten, falls below 50%), bin.sh,
	// README.md, x/a.txt, y/b.txt, img/brand.bin, the ten many-to-many,
	// util.py and d1..d4.
	if res.Renames != 31 {
		t.Errorf("git reported %d renames, want the fixture's 31", res.Renames)
	}
}

// TestCheckFindsDifferences feeds the comparison wrong rows: each kind of
// error lands in an unexplained class and fails the check.
func TestCheckFindsDifferences(t *testing.T) {
	r := buildEdgeCases(t)
	gitDir := filepath.Join(r.Dir, ".git")
	var commits []*GitCommit
	if err := GitLog(context.Background(), gitDir, r.Head(), GitLogOptions{}, func(c *GitCommit) error {
		commits = append(commits, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// locus's rows as git says they should be.
	right := map[string][]Row{}
	var renameCommit string
	for _, c := range commits {
		if len(c.Files) == 0 {
			right[c.ID] = []Row{{CommitID: c.ID, Status: "empty"}}
		}
		for _, f := range c.Files {
			row := Row{CommitID: c.ID, Path: f.Path, PrevPath: f.Path, OldBlob: f.OldBlob, NewBlob: f.NewBlob,
				OldMode: f.OldMode, NewMode: f.NewMode, Additions: f.Additions, Deletions: f.Deletions, Binary: f.Binary}
			switch f.Status {
			case 'A':
				row.Status, row.PrevPath = "added", ""
			case 'D':
				row.Status = "deleted"
			case 'R':
				row.Status, row.PrevPath = "renamed", f.OldPath
				if strings.HasPrefix(f.Path, "pkg/") {
					renameCommit = c.ID
				}
			default:
				row.Status = "modified"
			}
			right[c.ID] = append(right[c.ID], row)
		}
	}
	rep, err := Compare(context.Background(), gitDir, r.Head(), right, GitLogOptions{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unexplained() != 0 {
		t.Fatalf("rows built from git itself: %v", rep.Err())
	}
	breakRows := func(f func(rows []Row) []Row) map[string][]Row {
		m := map[string][]Row{}
		for id, rows := range right {
			m[id] = append([]Row(nil), rows...)
		}
		m[renameCommit] = f(m[renameCommit])
		return m
	}
	cases := []struct {
		name  string
		rows  map[string][]Row
		want  Class
		diffs bool
	}{
		{"no diffs stored", breakRows(func(rows []Row) []Row { return rows }), ClassDiffMissing, true},
		{"a diff not git's", breakRows(func(rows []Row) []Row {
			rows[3].HasDiff, rows[3].DiffHash = true, 42
			return rows
		}), ClassDiffText, true},
		{"rename read as add and delete", breakRows(func(rows []Row) []Row {
			rows[0].Status, rows[0].PrevPath = "added", ""
			return rows
		}), ClassStatus, false},
		{"a file left out", breakRows(func(rows []Row) []Row { return rows[1:] }), ClassMissingFile, false},
		{"a file too many", breakRows(func(rows []Row) []Row {
			return append(rows, Row{CommitID: renameCommit, Status: "deleted", Path: "pkg/charade/mod00.py"})
		}), ClassExtraFile, false},
		{"counts", breakRows(func(rows []Row) []Row { rows[3].Additions++; return rows }), ClassCounts, false},
		{"binary", breakRows(func(rows []Row) []Row { rows[0].Binary = true; return rows }), ClassBinary, false},
		{"blob", breakRows(func(rows []Row) []Row { rows[0].NewBlob = "0123"; return rows }), ClassObjects, false},
		{"commit missing", breakRows(func([]Row) []Row { return nil }), ClassMissingCommit, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == ClassMissingCommit {
				delete(c.rows, renameCommit)
			}
			rep, err := Compare(context.Background(), gitDir, r.Head(), c.rows, GitLogOptions{}, c.diffs)
			if err != nil {
				t.Fatal(err)
			}
			if rep.ByClass[c.want] == 0 || rep.Err() == nil {
				t.Errorf("want a %q difference and a failed check, got %v", c.want, rep)
			}
		})
	}
}

// TestCheckOwnHistory runs the check on this repository's own history, a
// small real one, when the tests run in a clone (as CI's do).
func TestCheckOwnHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	out, err := exec.Command("git", "rev-parse", "--git-common-dir").Output()
	if err != nil {
		t.Fatalf("the tests run outside a git clone of locus (%v): this check needs its history", err)
	}
	gitDir, err := filepath.Abs(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(context.Background(), Config{GitDir: gitDir, Diffs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.String())
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if res.Commits < 100 {
		t.Errorf("checked %d commits; a clone of locus has hundreds", res.Commits)
	}
}

// TestCheckBigTextFile: a 50 MB text file (1,483,128 lines, over the 32 MiB
// above which no diff is stored) added, edited and deleted. Its rows keep
// git's counts although their diffs are not stored.
func TestCheckBigTextFile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes 100 MB")
	}
	const lines = 1483128
	var b strings.Builder
	b.Grow(52 << 20)
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "row %09d of the generated table\n", i) // 35 bytes
	}
	big := b.String()
	r := gitfixture.New(t)
	r.Write(map[string]string{"data/table.txt": big, "small.txt": "s\n"})
	r.Commit("add a 50 MB table")
	edited := strings.Replace(big, "row 000700000 of", "row 000700000 (edited) of", 1) + "one more row\n"
	r.Write(map[string]string{"data/table.txt": edited})
	r.Commit("edit one row, append one")
	if err := os.Remove(filepath.Join(r.Dir, "data/table.txt")); err != nil {
		t.Fatal(err)
	}
	r.Commit("delete the table")

	// The go-git backend takes the same path for big blobs
	// (gitrepo's TestBigBlobCountsMatchGit runs both with a small limit).
	for _, backend := range []gitrepo.Backend{gitrepo.BackendCatFile} {
		t.Run(string(backend), func(t *testing.T) {
			res, err := Check(context.Background(), Config{GitDir: filepath.Join(r.Dir, ".git"), Diff: gitrepo.DiffOptions{Backend: backend}})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res.String())
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			if res.GitFiles != 4 {
				t.Errorf("git listed %d files, want 4", res.GitFiles)
			}
		})
	}
}

// TestCheckRenameLimit: with diff.renameLimit 2, two files renamed with
// edits (2×2 pairs) are renames, three (3×3 > 2²) are not, and one among
// four added (1×4) is, in git and in locus alike.
func TestCheckRenameLimit(t *testing.T) {
	r := gitfixture.New(t)
	write := func(prefix string, n int, edit string) {
		files := map[string]string{}
		for i := 0; i < n; i++ {
			files[fmt.Sprintf("%s%d.txt", prefix, i)] = pyFile(fmt.Sprintf("f%d", i), 20, "\n") + edit
		}
		r.Write(files)
	}
	remove := func(prefix string, n int) {
		for i := 0; i < n; i++ {
			if err := os.Remove(filepath.Join(r.Dir, fmt.Sprintf("%s%d.txt", prefix, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("two/a", 2, "")
	write("three/a", 3, "")
	r.Commit("add")
	remove("two/a", 2)
	write("two/b", 2, "edited\n")
	r.Commit("two renamed: within the limit")
	remove("three/a", 3)
	write("three/b", 3, "edited\n")
	r.Commit("three renamed: over the limit")
	// One deleted and four added: 1×4 is within 2², though one side is
	// over 2.
	write("one/a", 1, "")
	r.Commit("add one")
	remove("one/a", 1)
	write("one/b", 4, "edited\n")
	r.Commit("one renamed among four added")
	res, err := Check(context.Background(), Config{GitDir: filepath.Join(r.Dir, ".git"),
		Diff: gitrepo.DiffOptions{RenameLimit: 2}, Diffs: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if res.Renames != 3 {
		t.Errorf("%d renames, want the 3 within the limit", res.Renames)
	}
}
