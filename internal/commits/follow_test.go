package commits

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// TestFileIDsFollowLikeGit follows files through a rename that also converts
// CRLF to LF, a copy then edit, and a delete then re-add, and compares the
// commits carrying each file's id with `git log --follow`:
//   - the rename and the re-add: the same commits;
//   - the copy: git's --follow also looks for copies (it turns on
//     --find-copies-harder), so it continues into the original's history
//     before the copy; locus, like git log -M, tracks renames only and keeps
//     that history under the original's id. The copy's id carries exactly
//     the commits from the copy on, and the original's id the commits
//     --follow adds.
func TestFileIDsFollowLikeGit(t *testing.T) {
	r := gitfixture.New(t)
	body := func(tag string, n int, eol string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "def %s_%d():  return %d%s", tag, i, i, eol)
		}
		return b.String()
	}
	commit := map[string]string{} // message -> id
	c := func(msg string) { commit[msg] = r.Commit(msg) }
	r.Write(map[string]string{"a.py": body("a", 30, "\r\n"), "other.txt": "other\n"})
	c("c1 add a.py (CRLF)")
	r.Write(map[string]string{"a.py": body("a", 31, "\r\n")})
	c("c2 edit a.py")
	if err := os.Remove(filepath.Join(r.Dir, "a.py")); err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"lib/a.py": body("a", 31, "\n")})
	c("c3 rename a.py to lib/a.py, CRLF to LF")
	r.Write(map[string]string{"lib/a.py": body("a", 32, "\n")})
	c("c4 edit lib/a.py")
	r.Write(map[string]string{"lib/b.py": body("a", 32, "\n") + "def copied(): pass\n"})
	c("c5 copy lib/a.py to lib/b.py, edited")
	r.Write(map[string]string{"lib/b.py": body("a", 32, "\n") + "def copied(): pass\ndef more(): pass\n"})
	c("c6 edit lib/b.py")
	if err := os.Remove(filepath.Join(r.Dir, "lib/a.py")); err != nil {
		t.Fatal(err)
	}
	c("c7 delete lib/a.py")
	r.Write(map[string]string{"other.txt": "other\nchanged\n"})
	c("c8 unrelated")
	r.Write(map[string]string{"lib/a.py": "print('a new file at the old path')\n"})
	c("c9 re-add lib/a.py")
	r.Write(map[string]string{"lib/a.py": "print('a new file at the old path')\nprint(2)\n"})
	c("c10 edit lib/a.py")

	b := blobtest.Bucket(t)
	_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{})
	rows := readRows(t, b, m)
	byID := map[string][]string{} // file id -> commits, oldest first
	idAt := map[string]string{}   // "commit path" -> file id
	for _, row := range rows {
		if row.FileID != "" {
			byID[row.FileID] = append(byID[row.FileID], row.CommitID)
			idAt[row.CommitID+" "+row.Path] = row.FileID
		}
	}
	follow := func(path string) []string {
		out := strings.Fields(r.Git("log", "--follow", "--format=%H", "--", path))
		slices.Reverse(out)
		return out
	}
	ids := func(msgs ...string) []string {
		var out []string
		for _, m := range msgs {
			out = append(out, commit[m])
		}
		return out
	}

	// lib/a.py: through the CRLF-converting rename, the delete and the re-add.
	aID := idAt[commit["c10 edit lib/a.py"]+" lib/a.py"]
	want := ids("c1 add a.py (CRLF)", "c2 edit a.py", "c3 rename a.py to lib/a.py, CRLF to LF", "c4 edit lib/a.py",
		"c7 delete lib/a.py", "c9 re-add lib/a.py", "c10 edit lib/a.py")
	if got := follow("lib/a.py"); !slices.Equal(got, want) {
		t.Fatalf("git log --follow lib/a.py: %v, want %v (the fixture changed?)", got, want)
	}
	if got := byID[aID]; !slices.Equal(got, want) {
		t.Errorf("commits with lib/a.py's file id: %v\nwant git log --follow's %v", got, want)
	}
	if idAt[commit["c1 add a.py (CRLF)"]+" a.py"] != aID {
		t.Error("a.py before the CRLF-converting rename has another file id: the rename was not found")
	}

	// lib/b.py: the copy has its own id from the copy on; what --follow
	// adds before it is the original's, under the original's id.
	bID := idAt[commit["c6 edit lib/b.py"]+" lib/b.py"]
	gitB := follow("lib/b.py")
	fromCopy := ids("c5 copy lib/a.py to lib/b.py, edited", "c6 edit lib/b.py")
	before := ids("c1 add a.py (CRLF)", "c2 edit a.py", "c3 rename a.py to lib/a.py, CRLF to LF", "c4 edit lib/a.py")
	if !slices.Equal(gitB, append(slices.Clone(before), fromCopy...)) {
		t.Fatalf("git log --follow lib/b.py: %v, want the original's %v then %v", gitB, before, fromCopy)
	}
	if got := byID[bID]; !slices.Equal(got, fromCopy) {
		t.Errorf("commits with lib/b.py's file id: %v, want %v", got, fromCopy)
	}
	for _, id := range before {
		found := false
		for p, fid := range idAt {
			if strings.HasPrefix(p, id+" ") && fid == aID {
				found = true
			}
		}
		if !found {
			t.Errorf("commit %.10s, which --follow lib/b.py lists before the copy, has no row with the original's id", id)
		}
	}
}
