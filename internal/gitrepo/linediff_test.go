package gitrepo

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// applyUnified applies hunks (as produced by differ.unified with full context
// available) to old and returns the result; it fails the test on any mismatch.
func applyUnified(t *testing.T, old []byte, diff []byte) []byte {
	t.Helper()
	oldLines := splitLines(old, nil)
	var out []byte
	pos := 0
	lines := bytes.SplitAfter(diff, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if len(l) == 0 {
			continue
		}
		if bytes.HasPrefix(l, []byte("@@ -")) {
			f := strings.Fields(string(l))
			start, _, _ := strings.Cut(strings.TrimPrefix(f[1], "-"), ",")
			n, err := strconv.Atoi(start)
			if err != nil {
				t.Fatalf("bad hunk header %q", l)
			}
			if !strings.HasSuffix(f[1], ",0") {
				n-- // 1-based unless the range is empty
			}
			for pos < n {
				out = append(out, oldLines[pos]...)
				pos++
			}
			continue
		}
		body := l[1:]
		// "\ No newline at end of file" strips the newline of the previous line.
		if i+1 < len(lines) && bytes.HasPrefix(lines[i+1], []byte(`\ No newline`)) {
			body = bytes.TrimSuffix(body, []byte("\n"))
			i++
		}
		switch l[0] {
		case ' ':
			if !bytes.Equal(oldLines[pos], body) {
				t.Fatalf("context mismatch at old line %d: %q vs %q", pos+1, oldLines[pos], body)
			}
			out = append(out, body...)
			pos++
		case '-':
			if !bytes.Equal(oldLines[pos], body) {
				t.Fatalf("deletion mismatch at old line %d: %q vs %q", pos+1, oldLines[pos], body)
			}
			pos++
		case '+':
			out = append(out, body...)
		default:
			t.Fatalf("unexpected diff line %q", l)
		}
	}
	for ; pos < len(oldLines); pos++ {
		out = append(out, oldLines[pos]...)
	}
	return out
}

func TestDiffAppliesRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var d differ
	gen := func(n int) []byte {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d\n", rng.Intn(12))
		}
		if rng.Intn(4) == 0 && b.Len() > 0 {
			b.Truncate(b.Len() - 1) // no newline at end
		}
		return b.Bytes()
	}
	for i := 0; i < 2000; i++ {
		a, b := gen(rng.Intn(40)), gen(rng.Intn(40))
		if rng.Intn(2) == 0 { // mutate a instead of a fresh b
			b = append([]byte(nil), a...)
			b = append(b[:len(b)/2:len(b)/2], gen(rng.Intn(5))...)
			b = append(b, a[len(a)/2:]...)
		}
		r := d.diff(a, b, 3, 0, nil)
		got := applyUnified(t, a, r.Unified)
		if !bytes.Equal(got, b) {
			t.Fatalf("case %d: applying diff\n%s\nto %q gave %q, want %q", i, r.Unified, a, got, b)
		}
		if r.Additions == 0 && r.Deletions == 0 && len(r.Unified) != 0 {
			t.Fatalf("case %d: empty change with hunks %q", i, r.Unified)
		}
	}
}

// TestDiffMatchesGit compares hunks with `git diff --no-index` on cases where the
// minimal diff is unique.
func TestDiffMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cases := []struct{ name, a, b string }{
		{"append", "a\nb\nc\n", "a\nb\nc\nd\n"},
		{"prepend", "a\nb\n", "z\na\nb\n"},
		{"middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"},
		{"two hunks", strings.Repeat("x\n", 3) + "a\n" + strings.Repeat("y\n", 10) + "b\n", strings.Repeat("x\n", 3) + "A\n" + strings.Repeat("y\n", 10) + "B\n"},
		{"merged hunks", "a\n1\n2\n3\n4\n5\n6\nb\n", "A\n1\n2\n3\n4\n5\n6\nB\n"},
		{"no newline old", "a\nb", "a\nb\n"},
		{"no newline new", "a\nb\n", "a\nc"},
		{"from empty", "", "a\nb\n"},
		{"to empty", "a\nb\n", ""},
	}
	dir := t.TempDir()
	var d differ
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			os.WriteFile(pa, []byte(c.a), 0o644)
			os.WriteFile(pb, []byte(c.b), 0o644)
			out, _ := exec.Command("git", "diff", "--no-index", "--no-color", "-U3", pa, pb).Output()
			want := gitHunks(out)
			got := string(d.diff([]byte(c.a), []byte(c.b), 3, 0, nil).Unified)
			if got != want {
				t.Errorf("got\n%s\nwant (git)\n%s", got, want)
			}
		})
	}
}

func TestDiffTruncates(t *testing.T) {
	var d differ
	a := []byte(strings.Repeat("old line\n", 1000))
	b := []byte(strings.Repeat("new line\n", 1000))
	r := d.diff(a, b, 3, 1000, nil)
	if !r.Truncated || len(r.Unified) > 1000 || !bytes.HasSuffix(r.Unified, []byte("\n")) {
		t.Fatalf("truncated=%v len=%d", r.Truncated, len(r.Unified))
	}
	if r.Additions != 1000 || r.Deletions != 1000 {
		t.Fatalf("counts must cover the whole change: +%d -%d", r.Additions, r.Deletions)
	}
}

func TestIsBinary(t *testing.T) {
	if isBinary([]byte("text\n")) || !isBinary([]byte("a\x00b")) {
		t.Fatal("binary detection")
	}
	late := append(bytes.Repeat([]byte("x"), 9000), 0)
	if isBinary(late) {
		t.Fatal("a NUL after 8000 bytes does not make a file binary (as in git)")
	}
}

// TestCountsMatchGit compares additions and deletions with `git diff
// --no-index --numstat` on random pairs built to reach xdiff's heuristics:
// frequent lines (blank lines, braces) that it leaves out of the search,
// edit costs past 256 with long unchanged runs between (its snake
// heuristic), and past sqrt of the lengths (its cut-off).
func TestCountsMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed; this test compares with it")
	}
	rng := rand.New(rand.NewSource(11))
	common := []string{"\n", "}\n", "{\n", "\treturn nil\n", "\t}\n"}
	line := func(i int) string {
		if rng.Intn(4) == 0 {
			return common[rng.Intn(len(common))]
		}
		return fmt.Sprintf("line %d\n", i)
	}
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	var d differ
	for c := 0; c < 40; c++ {
		n := 50 + rng.Intn(4000)
		if c == 1 {
			// Over 32,768 lines a side: xdiff's cut-off is past cost 256,
			// so its snake heuristic gets to run first.
			n = 40000
		}
		var a, b strings.Builder
		editEvery := 1 + rng.Intn(30) // dense or sparse edits
		for i := 0; i < n; i++ {
			l := line(rng.Intn(n))
			a.WriteString(l)
			switch {
			case rng.Intn(editEvery) != 0:
				b.WriteString(l)
			case rng.Intn(3) == 0:
				// deleted
			case rng.Intn(2) == 0:
				b.WriteString(line(rng.Intn(n)))
			default:
				b.WriteString(l)
				b.WriteString(line(rng.Intn(n)))
			}
		}
		if c%2 == 1 {
			// Blocks of the old file moved about: every line matches
			// somewhere, the edit cost is high and runs of equal lines long.
			blocks := splitBlocks(a.String(), 10+rng.Intn(30))
			if c == 1 {
				blocks = splitBlocks(a.String(), 30)
			}
			rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
			b.Reset()
			for _, bl := range blocks {
				b.WriteString(bl)
			}
		}
		if err := os.WriteFile(pa, []byte(a.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pb, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command("git", "-c", "diff.algorithm=myers", "diff", "--no-index", "--numstat", pa, pb).Output()
		var wantAdd, wantDel int
		fmt.Sscan(string(out), &wantAdd, &wantDel)
		got := d.diff([]byte(a.String()), []byte(b.String()), 3, 0, nil)
		if got.Additions != wantAdd || got.Deletions != wantDel {
			t.Errorf("case %d (%d lines, edits about 1 in %d): locus +%d -%d, git +%d -%d", c, n, editEvery, got.Additions, got.Deletions, wantAdd, wantDel)
		}
		// The hunks too, after git's sliding of each group (indent heuristic).
		patch, _ := exec.Command("git", "-c", "diff.algorithm=myers", "diff", "--no-index", "--no-color", "-U3", pa, pb).Output()
		if want := gitHunks(patch); string(got.Unified) != want {
			t.Errorf("case %d (%d lines): hunks differ from git's; first difference at byte %d", c, n, firstDiff(string(got.Unified), want))
		}
	}
}

// splitBlocks cuts text into blocks of size lines.
func splitBlocks(text string, size int) []string {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	for i := 0; i < len(lines); i += size {
		out = append(out, strings.Join(lines[i:min(i+size, len(lines))], ""))
	}
	return out
}

// gitHunks is a git patch without its header lines and without the section
// heading git appends after a hunk's second "@@".
func gitHunks(patch []byte) string {
	i := bytes.Index(patch, []byte("\n@@ "))
	if i < 0 {
		return ""
	}
	return regexp.MustCompile(`(?m)^(@@ [^@]* @@).*$`).ReplaceAllString(string(patch[i+1:]), "$1")
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
