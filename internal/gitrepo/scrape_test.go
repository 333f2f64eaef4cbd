package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// buildHistory makes a repository exercising every kind of change the scraper
// must handle.
func buildHistory(t *testing.T) *gitfixture.Repo {
	r := gitfixture.New(t)
	body := func(n int, tag string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%s line %d with some text to make it long enough\n", tag, i)
		}
		return b.String()
	}
	r.Write(map[string]string{"README.md": "hello\n", "src/a.c": body(40, "a"), "src/b.c": body(30, "b"), "docs/x.txt": "x\n"})
	r.Commit("initial import")
	r.Write(map[string]string{"src/a.c": body(40, "a") + "int extra;\n"})
	r.Commit("modify a")
	os.MkdirAll(filepath.Join(r.Dir, "lib"), 0o755)
	r.Git("mv", "src/b.c", "lib/b.c")
	r.Commit("exact rename b")
	r.Git("mv", "src/a.c", "lib/a2.c")
	r.Write(map[string]string{"lib/a2.c": body(40, "a") + "int extra;\nint more;\n"})
	r.Commit("rename a with edits")
	r.Git("rm", "-q", "docs/x.txt")
	r.Commit("delete x")
	r.Write(map[string]string{"img.bin": "PNG\x00\x01\x02binary"})
	r.Commit("add binary")
	r.Commit("") // empty commit, empty message
	// A side branch merged back: the merge is diffed against its first parent.
	r.Git("checkout", "-q", "-b", "side")
	r.Write(map[string]string{"side.txt": "side\n"})
	r.Commit("side work")
	r.Git("checkout", "-q", "main")
	r.Write(map[string]string{"README.md": "hello\nworld\n"})
	r.Commit("main work")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "-m", "merge side", "side")
	// Non-UTF-8 path and message.
	r.Write(map[string]string{"caf\xe9.txt": "latin-1 name\n"})
	r.Tick()
	r.Git("add", "-A")
	// A legacy encoding header makes git store the message bytes as given.
	r.Git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-m", "message in latin-1: caf\xe9")
	return r
}

type fileStat struct {
	path, old  string
	adds, dels int
	binary     bool
}

// gitStats is `git log --numstat` for the same commits, diffing merges against
// their first parent, as locus does.
func gitStats(t *testing.T, r *gitfixture.Repo) map[string][]fileStat {
	out := r.Git("-c", "core.quotepath=false", "log", "--numstat", "-z", "--diff-merges=first-parent", "-M", "--format=%x00C %H")
	stats := map[string][]fileStat{}
	var cur string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := strings.TrimLeft(fields[i], "\n")
		if strings.HasPrefix(f, "C ") {
			cur = strings.TrimSpace(f[2:])
			if _, ok := stats[cur]; !ok {
				stats[cur] = nil // a commit with no numstat lines still counts
			}
			continue
		}
		if f == "" {
			continue
		}
		parts := strings.SplitN(f, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("numstat line %q", f)
		}
		fs := fileStat{}
		if parts[0] == "-" {
			fs.binary = true
		} else {
			fmt.Sscan(parts[0], &fs.adds)
			fmt.Sscan(parts[1], &fs.dels)
		}
		if parts[2] == "" { // rename: old and new paths follow as separate fields
			fs.old, fs.path = fields[i+1], fields[i+2]
			i += 2
		} else {
			fs.path = parts[2]
		}
		stats[cur] = append(stats[cur], fs)
	}
	for _, v := range stats {
		sort.Slice(v, func(i, j int) bool { return v[i].path < v[j].path })
	}
	return stats
}

func TestScrapeMatchesGit(t *testing.T) {
	r := buildHistory(t)
	want := gitStats(t, r)
	gitDir := filepath.Join(r.Dir, ".git")
	head, _ := parseHex([]byte(r.Head()))
	for _, backend := range []Backend{BackendGoGit, BackendCatFile, "cat-file --batch"} {
		t.Run(string(backend), func(t *testing.T) {
			if backend == "cat-file --batch" { // as with git before 2.36
				saved := catFileCommands
				catFileCommands = func() bool { return false }
				defer func() { catFileCommands = saved }()
				backend = BackendCatFile
			}
			commits, err := ListCommits(context.Background(), gitDir, backend, head, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(commits) != len(want) {
				t.Fatalf("listed %d commits, git log has %d", len(commits), len(want))
			}
			seen := map[Hash]bool{}
			var sawMerge, sawEmpty, sawRename, sawBinary, sawLatin1 bool
			err = DiffCommits(context.Background(), gitDir, commits, DiffOptions{Backend: backend, Workers: 2}, func(cd *CommitDiff) error {
				for _, p := range cd.Parents {
					if !seen[p] {
						t.Errorf("commit %s emitted before its parent %s", cd.ID, p)
					}
				}
				seen[cd.ID] = true
				var got []fileStat
				for _, f := range cd.Files {
					fs := fileStat{path: string(f.Path()), adds: f.Additions, dels: f.Deletions, binary: f.Binary}
					if f.Status == "renamed" {
						fs.old = string(f.OldPath)
						sawRename = true
					}
					sawBinary = sawBinary || f.Binary
					got = append(got, fs)
				}
				sawMerge = sawMerge || len(cd.Parents) > 1
				sawEmpty = sawEmpty || len(cd.Files) == 0
				sawLatin1 = sawLatin1 || strings.Contains(string(cd.Message), "caf\xe9")
				w := want[cd.ID.String()]
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("commit %s (%q):\n got %v\nwant %v", cd.ID, cd.Message, got, w)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !sawMerge || !sawEmpty || !sawRename || !sawBinary || !sawLatin1 {
				t.Errorf("fixture did not exercise everything: merge=%v empty=%v rename=%v binary=%v latin1=%v", sawMerge, sawEmpty, sawRename, sawBinary, sawLatin1)
			}
		})
	}
}

func TestListCommitsIncremental(t *testing.T) {
	r := buildHistory(t)
	gitDir := filepath.Join(r.Dir, ".git")
	old, _ := parseHex([]byte(r.Head()))
	r.Write(map[string]string{"new.txt": "n\n"})
	r.Commit("one more")
	r.Write(map[string]string{"new.txt": "n\nm\n"})
	r.Commit("and another")
	head, _ := parseHex([]byte(r.Head()))
	got, err := ListCommits(context.Background(), gitDir, BackendAuto, head, []Hash{old})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != head {
		t.Fatalf("incremental walk = %v, want the 2 new commits ending at head", got)
	}
}

// TestRevListMatchesWalker: with git as the backend, ListCommits and
// Parents ask `git rev-list` and order its answer themselves; they must give
// what the walker gives reading each commit (go-git), with and without
// excluded history, across merges of two branches.
func TestRevListMatchesWalker(t *testing.T) {
	r := buildHistory(t)
	gitDir := filepath.Join(r.Dir, ".git")
	mid, _ := parseHex([]byte(r.Head()))
	// A second merge whose side branch forked before mid.
	r.Git("checkout", "-q", "-b", "late", "HEAD~3")
	r.Write(map[string]string{"late.txt": "late\n"})
	r.Commit("late work")
	r.Git("checkout", "-q", "main")
	r.Write(map[string]string{"main.txt": "m\n"})
	r.Commit("more main work")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "-m", "merge late", "late")
	head, _ := parseHex([]byte(r.Head()))
	ctx := context.Background()
	for _, exclude := range [][]Hash{nil, {mid}, {head}} {
		var lists [2][]Hash
		var parents [2]map[Hash][]Hash
		for i, b := range []Backend{BackendCatFile, BackendGoGit} {
			var err error
			if lists[i], err = ListCommits(ctx, gitDir, b, head, exclude); err != nil {
				t.Fatal(err)
			}
			if parents[i], err = Parents(ctx, gitDir, b, head, exclude); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(lists[0], lists[1]) {
			t.Errorf("exclude %v: rev-list lists %v, the walker %v", exclude, lists[0], lists[1])
		}
		if fmt.Sprint(parents[0]) != fmt.Sprint(parents[1]) || len(parents[0]) != len(lists[0]) {
			t.Errorf("exclude %v: rev-list's parents %v, the walker's %v (%d commits listed)", exclude, parents[0], parents[1], len(lists[0]))
		}
	}
	if got, _ := ListCommits(ctx, gitDir, BackendCatFile, head, []Hash{mid}); len(got) != 3 {
		t.Errorf("after mid: %d commits, want the 3 new ones", len(got))
	}
}

func TestCorruptObjectIsAnError(t *testing.T) {
	r := buildHistory(t)
	gitDir := filepath.Join(r.Dir, ".git")
	head, _ := parseHex([]byte(r.Head()))
	// Corrupt one loose object (the fixture has no packs).
	var victim string
	filepath.Walk(filepath.Join(gitDir, "objects"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && len(filepath.Base(filepath.Dir(p))) == 2 && victim == "" {
			victim = p
		}
		return nil
	})
	if victim == "" {
		t.Fatal("no loose object found")
	}
	os.Chmod(victim, 0o644)
	if err := os.WriteFile(victim, []byte("not zlib at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []Backend{BackendGoGit, BackendCatFile} {
		commits, err := ListCommits(context.Background(), gitDir, backend, head, nil)
		if err == nil {
			err = DiffCommits(context.Background(), gitDir, commits, DiffOptions{Backend: backend}, func(*CommitDiff) error { return nil })
		}
		if err == nil {
			t.Errorf("%s: a corrupt object went unnoticed", backend)
			continue
		}
		t.Logf("%s: %v", backend, err)
	}
}

// TestBigBlobCountsMatchGit: files over MaxBlobBytes keep no diff, but their
// additions and deletions must still be git's (a 50 MB file once got 0).
func TestBigBlobCountsMatchGit(t *testing.T) {
	const maxBlob = 16 << 10
	lines := func(n int, tag string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d of the %s file\n", i, tag)
		}
		return b.String()
	}
	big := lines(2000, "big") // about 45 KiB, well over maxBlob
	r := gitfixture.New(t)
	r.Write(map[string]string{"big.txt": big, "small.txt": "s\n"})
	r.Commit("add a big file")
	// Replace 10 lines in the middle, append 7, and delete the first 3.
	edited := strings.Split(big, "\n")
	for i := 1000; i < 1010; i++ {
		edited[i] = "changed " + edited[i]
	}
	edited = edited[3:]
	r.Write(map[string]string{"big.txt": strings.Join(edited, "\n") + lines(7, "appended"), "nonl.txt": strings.TrimSuffix(lines(1500, "unterminated"), "\n")})
	r.Commit("edit the big file, add one without a final newline")
	if err := os.Remove(filepath.Join(r.Dir, "big.txt")); err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"small.txt": "s\nt\n"})
	r.Commit("delete the big file")

	want := gitStats(t, r)
	gitDir := filepath.Join(r.Dir, ".git")
	head, _ := parseHex([]byte(r.Head()))
	for _, backend := range []Backend{BackendGoGit, BackendCatFile, "cat-file --batch"} {
		t.Run(string(backend), func(t *testing.T) {
			if backend == "cat-file --batch" { // as with git before 2.36
				saved := catFileCommands
				catFileCommands = func() bool { return false }
				defer func() { catFileCommands = saved }()
				backend = BackendCatFile
			}
			commits, err := ListCommits(context.Background(), gitDir, backend, head, nil)
			if err != nil {
				t.Fatal(err)
			}
			bigSeen := 0
			err = DiffCommits(context.Background(), gitDir, commits, DiffOptions{Backend: backend, MaxBlobBytes: maxBlob, Workers: 1}, func(cd *CommitDiff) error {
				var got []fileStat
				for _, f := range cd.Files {
					got = append(got, fileStat{path: string(f.Path()), adds: f.Additions, dels: f.Deletions, binary: f.Binary})
					isBig := f.Path()[0] != 's'
					if isBig {
						bigSeen++
					}
					if isBig != f.Truncated || (isBig && f.Diff != nil) {
						t.Errorf("commit %.10s %s: truncated=%v diff %d bytes, want truncated (and no diff) exactly for files over %d bytes",
							cd.ID, f.Path(), f.Truncated, len(f.Diff), maxBlob)
					}
				}
				if w := want[cd.ID.String()]; fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("commit %.10s (%q):\n got %v\nwant %v (git log --numstat)", cd.ID, cd.Message, got, w)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if bigSeen != 4 {
				t.Errorf("saw %d changes of big files, want 4 (add, edit, add without newline, delete)", bigSeen)
			}
		})
	}
}

// TestExpectInCommitOrder: with several workers, Expect is called once per
// commit in the order of the commits, with both sides of each content
// change, before the commit's Functions calls, which get its claim; release
// follows them.
func TestExpectInCommitOrder(t *testing.T) {
	r := buildHistory(t)
	gitDir := filepath.Join(r.Dir, ".git")
	head, _ := parseHex([]byte(r.Head()))
	commits, err := ListCommits(context.Background(), gitDir, BackendCatFile, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	type claim struct {
		n        int // the claim's place in the order of Expect calls
		versions []Version
		mapped   []string // the changes Functions mapped, "old new"
		released bool
	}
	var mu sync.Mutex
	var claims []*claim
	opts := DiffOptions{Backend: BackendCatFile, Workers: 4,
		Expect: func(vs []Version) (any, func()) {
			mu.Lock()
			defer mu.Unlock()
			c := &claim{n: len(claims), versions: vs}
			claims = append(claims, c)
			return c, func() {
				mu.Lock()
				defer mu.Unlock()
				c.released = true
			}
		},
		Functions: func(lc *LineChanges) []string {
			mu.Lock()
			defer mu.Unlock()
			c, ok := lc.Claim.(*claim)
			switch {
			case !ok:
				t.Errorf("Functions(%s → %s) got claim %v", lc.OldPath, lc.NewPath, lc.Claim)
			case c.released:
				t.Errorf("Functions(%s → %s) after its commit's release", lc.OldPath, lc.NewPath)
			default:
				c.mapped = append(c.mapped, versionName(lc.OldPath, lc.OldBlob)+" "+versionName(lc.NewPath, lc.NewBlob))
			}
			return nil
		}}
	n := 0
	err = DiffCommits(context.Background(), gitDir, commits, opts, func(cd *CommitDiff) error {
		mu.Lock()
		defer mu.Unlock()
		if n >= len(claims) {
			t.Fatalf("commit %d emitted with %d Expect calls", n, len(claims))
		}
		// The n-th Expect call was for the n-th commit.
		c := claims[n]
		n++
		if !c.released {
			t.Errorf("commit %s emitted before its claim was released", cd.ID)
		}
		var want, expected []string
		for _, f := range cd.Files {
			if f.OldBlob == f.NewBlob {
				continue
			}
			var sides []string
			for _, s := range []struct {
				path []byte
				blob Hash
			}{{f.OldPath, f.OldBlob}, {f.NewPath, f.NewBlob}} {
				side := versionName(string(s.path), s.blob)
				if side != "" {
					expected = append(expected, side)
				}
				sides = append(sides, side)
			}
			if !f.Binary {
				want = append(want, strings.Join(sides, " "))
			}
		}
		var got []string
		for _, v := range c.versions {
			got = append(got, versionName(v.Path, v.Blob))
		}
		if !slices.Equal(got, expected) {
			t.Errorf("commit %s: Expect got %v, want %v", cd.ID, got, expected)
		}
		if !slices.Equal(c.mapped, want) {
			t.Errorf("commit %s: Functions mapped %v under its claim, want %v", cd.ID, c.mapped, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(commits) || len(claims) != len(commits) {
		t.Errorf("%d commits emitted, %d Expect calls, want %d", n, len(claims), len(commits))
	}
}

// versionName names a side of a change in TestExpectInCommitOrder; "" for
// none.
func versionName(path string, blob Hash) string {
	if blob == ZeroHash {
		return ""
	}
	return path + "@" + blob.String()[:7]
}

// countingSource counts the blobs read through it.
type countingSource struct {
	objectSource
	blobs int
}

func (s *countingSource) next(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error) {
	if want == plumbing.BlobObject {
		s.blobs++
	}
	return s.objectSource.next(h, want, buf)
}

// TestKeptBlobsServeTheNextCommit: the new version of a file one commit
// reads is the old version the next commit to change it reads from the
// kept copies, not from git again; the diffs are the same either way, and
// a commit holding one old version twice reads it once.
func TestKeptBlobsServeTheNextCommit(t *testing.T) {
	r := gitfixture.New(t)
	for i, v := range []string{"one\n", "one\ntwo\n", "one\ntwo\nthree\n"} {
		r.Write(map[string]string{"a.txt": v, "b.txt": v, "c.txt": fmt.Sprint(i)})
		r.Commit(fmt.Sprintf("v%d", i))
	}
	gitDir := filepath.Join(r.Dir, ".git")
	commits, err := ListCommits(context.Background(), gitDir, BackendCatFile, mustHash(t, r.Head()), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff := func(keep int) ([]string, int) {
		src, err := openSource(context.Background(), gitDir, BackendCatFile)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		cs := &countingSource{objectSource: src}
		c := newCommitDiffer(cs, DiffOptions{})
		c.opts.defaults()
		c.kept = newBlobCache(keep)
		var out []string
		for _, h := range commits {
			cd, err := c.diffCommit(context.Background(), h, ZeroHash, expectTurn{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range cd.Files {
				out = append(out, fmt.Sprintf("%s +%d -%d %q", f.Path(), f.Additions, f.Deletions, f.Diff))
			}
		}
		return out, cs.blobs
	}
	without, readWithout := diff(1) // keeps nothing: every blob is larger than a quarter of a byte
	with, readWith := diff(0)
	if !slices.Equal(with, without) {
		t.Errorf("diffs with kept blobs:\n%q\nwithout:\n%q", with, without)
	}
	// Each commit reads the new versions of a, b (the same blob) and c;
	// v1 and v2 read the three old versions too, without kept blobs.
	if readWithout != 3+2*6 || readWith != 3+2*3 {
		t.Errorf("blobs read: %d with kept copies, %d without; want 9 and 15", readWith, readWithout)
	}
}
