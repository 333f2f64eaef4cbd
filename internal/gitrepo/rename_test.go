package gitrepo

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// randomText makes a file from a small vocabulary of lines, so that two
// files share some lines: line endings CRLF or LF (or mixed), some lines over
// 64 bytes, sometimes no final newline, sometimes a NUL (binary).
func randomText(rng *rand.Rand, vocab []string) string {
	var b strings.Builder
	eol := []string{"\n", "\r\n"}[rng.Intn(2)]
	mixed := rng.Intn(4) == 0
	for i, n := 0, 3+rng.Intn(40); i < n; i++ {
		b.WriteString(vocab[rng.Intn(len(vocab))])
		if mixed {
			eol = []string{"\n", "\r\n", "\r"}[rng.Intn(3)]
		}
		b.WriteString(eol)
	}
	s := b.String()
	if rng.Intn(5) == 0 {
		s = strings.TrimRight(s, "\r\n") // no final newline
	}
	if rng.Intn(8) == 0 {
		s = "bin\x00" + s
	}
	return s
}

// TestRenameScoreMatchesGit scores 80 random pairs of files and compares each
// with the similarity git prints for the rename (git log -M1% --raw).
func TestRenameScoreMatchesGit(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	vocab := []string{"", "x", "short line", "    return nil", "}", "{",
		strings.Repeat("long line with more than sixty-four bytes in it ", 2),
		strings.Repeat("abcdefgh", 8), strings.Repeat("abcdefgh", 16)}
	for i := 0; i < 30; i++ {
		vocab = append(vocab, fmt.Sprintf("line %d of the vocabulary", i))
	}
	r := gitfixture.New(t)
	type pair struct{ a, b string }
	var pairs []pair
	for i := 0; i < 80; i++ {
		p := pair{a: randomText(rng, vocab)}
		// The new file: the old one with some lines replaced, added or
		// re-ended, so that most pairs land near or above 1%.
		lines := strings.SplitAfter(p.a, "\n")
		for j := range lines {
			switch rng.Intn(6) {
			case 0:
				lines[j] = vocab[rng.Intn(len(vocab))] + "\n"
			case 1:
				lines[j] = strings.Replace(lines[j], "\r\n", "\n", 1)
			case 2:
				lines[j] = strings.Replace(lines[j], "\n", "\r\n", 1)
			}
		}
		p.b = strings.Join(lines, "")
		if rng.Intn(3) == 0 {
			p.b += randomText(rng, vocab)
		}
		pairs = append(pairs, p)
		r.WriteBytes(fmt.Sprintf("old%d", i), []byte(p.a))
		r.Commit(fmt.Sprintf("add %d", i))
		if err := os.Remove(filepath.Join(r.Dir, fmt.Sprintf("old%d", i))); err != nil {
			t.Fatal(err)
		}
		r.WriteBytes(fmt.Sprintf("new%d", i), []byte(p.b))
		r.Commit(fmt.Sprintf("rename %d", i))
	}
	out := r.Git("log", "-M1%", "--raw", "--no-abbrev", "--format=C %s")
	scores := map[int]int{}
	var cur int
	for _, line := range strings.Split(out, "\n") {
		if msg, ok := strings.CutPrefix(line, "C rename "); ok {
			cur, _ = strconv.Atoi(msg)
			continue
		}
		if f := strings.Fields(line); len(f) == 7 && strings.HasPrefix(f[4], "R") {
			scores[cur], _ = strconv.Atoi(f[4][1:])
		}
	}
	renamed := 0
	for i, p := range pairs {
		a, b := []byte(p.a), []byte(p.b)
		src := &change{oldMode: 0o100644}
		dst := &change{newMode: 0o100644, newHash: Hash{1}}
		files := map[Hash][]byte{{}: a, {1}: b}
		sc := &renameScorer{load: func(h Hash) ([]byte, error) { return files[h], nil }, files: map[Hash]*renameFile{}, minScore: maxScore / 100}
		score, err := sc.score(src, dst)
		if err != nil {
			t.Fatal(err)
		}
		got := score * 100 / maxScore
		want, ok := scores[i]
		if !ok {
			// git found no rename at 1%: ours must be under 1% too.
			if score >= maxScore/100 {
				t.Errorf("pair %d: locus scores %d%%, git found no rename at 1%%", i, got)
			}
			continue
		}
		renamed++
		if got != want {
			t.Errorf("pair %d: locus scores %d%%, git %d%%\nold %q\nnew %q", i, got, want, p.a, p.b)
		}
	}
	if renamed < 60 {
		t.Errorf("git renamed only %d of 80 pairs: the fixture should mostly make renames", renamed)
	}
}
