package gitrepo

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// bigText is n bytes of text lines, over a 1 KiB blob filter when n is.
func bigText(tag string, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(tag + " a line of text that makes the file large\n")
	}
	return b.String()
}

// missingHistory is a repository with a large file changed twice and a
// small one, whose clone with a 1 KiB blob filter lacks the large versions.
func missingHistory(t *testing.T) (*gitfixture.Repo, []Hash) {
	r := gitfixture.New(t)
	r.Git("config", "uploadpack.allowFilter", "true")
	r.Write(map[string]string{"big.txt": bigText("one", 4000), "small.go": "package a\n"})
	r.Commit("add")
	r.Write(map[string]string{"big.txt": bigText("two", 4000), "small.go": "package a\n\nfunc F() {}\n"})
	r.Commit("change both")
	r.Git("mv", "big.txt", "large.txt")
	r.Commit("rename the big one")
	var hs []Hash
	for _, s := range strings.Fields(r.Git("rev-list", "--reverse", "HEAD")) {
		h, _ := ParseHash(s)
		hs = append(hs, h)
	}
	return r, hs
}

func diffAll(t *testing.T, gitDir string, backend Backend, hs []Hash) ([]*CommitDiff, error) {
	var out []*CommitDiff
	err := DiffCommits(context.Background(), gitDir, hs, DiffOptions{Backend: backend, Workers: 2}, func(cd *CommitDiff) error {
		out = append(out, cd)
		return nil
	})
	return out, err
}

// TestMissingBlobs: a blob the repository lacks (filtered out of a partial
// clone, or deleted from the object store) makes its row Missing with
// unknown counts; the scrape goes on and never fetches it.
func TestMissingBlobs(t *testing.T) {
	for _, backend := range []Backend{BackendCatFile, BackendGoGit} {
		for _, how := range []string{"partial clone", "deleted object"} {
			t.Run(string(backend)+"/"+how, func(t *testing.T) {
				r, hs := missingHistory(t)
				bigs := map[string]bool{}
				for _, rev := range []string{hs[0].String() + ":big.txt", hs[1].String() + ":big.txt"} {
					bigs[strings.TrimSpace(r.Git("rev-parse", rev))] = true
				}
				gitDir := filepath.Join(t.TempDir(), "clone.git")
				switch how {
				case "partial clone":
					out, err := exec.Command("git", "clone", "-q", "--bare", "--filter=blob:limit=1k", "file://"+r.Dir, gitDir).CombinedOutput()
					if err != nil {
						t.Fatalf("partial clone: %v: %s", err, out)
					}
					// Were git to fetch what the clone lacks, it would fail now.
					if err := os.RemoveAll(r.Dir); err != nil {
						t.Fatal(err)
					}
				case "deleted object":
					gitDir = filepath.Join(r.Dir, ".git")
					id := hs[0].String() + ":big.txt"
					blob := strings.TrimSpace(r.Git("rev-parse", id))
					if err := os.Remove(filepath.Join(gitDir, "objects", blob[:2], blob[2:])); err != nil {
						t.Fatal(err)
					}
					delete(bigs, strings.TrimSpace(r.Git("rev-parse", hs[1].String()+":big.txt")))
				}
				cds, err := diffAll(t, gitDir, backend, hs)
				if err != nil {
					t.Fatalf("DiffCommits: %v", err)
				}
				missing := 0
				for _, cd := range cds {
					for _, f := range cd.Files {
						lacks := bigs[f.OldBlob.String()] || bigs[f.NewBlob.String()]
						if f.Missing != lacks {
							t.Errorf("commit %s %s: Missing %v, want %v", cd.ID, f.Path(), f.Missing, lacks)
						}
						switch {
						case f.Missing && f.OldBlob == f.NewBlob:
							if f.Additions != 0 || f.Deletions != 0 {
								t.Errorf("commit %s %s: pure rename of a missing blob counts +%d -%d, want 0 0", cd.ID, f.Path(), f.Additions, f.Deletions)
							}
						case f.Missing:
							if f.Additions != -1 || f.Deletions != -1 || f.Diff != nil {
								t.Errorf("commit %s %s: missing blob counts +%d -%d, diff %q; want -1 -1 and none", cd.ID, f.Path(), f.Additions, f.Deletions, f.Diff)
							}
							missing++
						case string(f.Path()) == "small.go" && f.Additions <= 0:
							t.Errorf("commit %s %s: +%d, want the lines counted", cd.ID, f.Path(), f.Additions)
						}
					}
				}
				if missing == 0 {
					t.Fatal("no row was flagged missing")
				}
				// The partial clone still lacks the blobs: nothing was fetched.
				snap, err := OpenSnapshot(context.Background(), gitDir, backend, hs[len(hs)-1])
				if err != nil {
					t.Fatal(err)
				}
				defer snap.Close()
				for _, f := range snap.Files() {
					_, err := snap.ReadBlob(f.Blob)
					if got, want := IsMissingObject(err), bigs[f.Blob.String()]; got != want {
						t.Errorf("%s: ReadBlob error %v, missing %v, want %v", f.Path, err, got, want)
					}
				}
			})
		}
	}
}

// TestMissingTree: a tree the repository lacks is an error naming it, not
// a missing row.
func TestMissingTree(t *testing.T) {
	for _, backend := range []Backend{BackendCatFile, BackendGoGit} {
		t.Run(string(backend), func(t *testing.T) {
			r := gitfixture.New(t)
			r.Write(map[string]string{"dir/a.go": "package a\n"})
			r.Commit("add")
			r.Write(map[string]string{"dir/a.go": "package a\n\nfunc F() {}\n"})
			head := r.Commit("change")
			tree := strings.TrimSpace(r.Git("rev-parse", head+":dir"))
			if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", tree[:2], tree[2:])); err != nil {
				t.Fatal(err)
			}
			h, _ := ParseHash(head)
			_, err := diffAll(t, filepath.Join(r.Dir, ".git"), backend, []Hash{h})
			if err == nil || !strings.Contains(err.Error(), tree) {
				t.Fatalf("DiffCommits: %v, want an error naming tree %s", err, tree)
			}
		})
	}
}

// TestSyncMaxBlobSize: a sync with MaxBlobSize makes a partial clone, even
// of a local repository, and the next fetch keeps its filter.
func TestSyncMaxBlobSize(t *testing.T) {
	r, hs := missingHistory(t)
	dir := filepath.Join(t.TempDir(), "clone.git")
	missingAt := func(head string) (missing, present []string) {
		t.Helper()
		h, _ := ParseHash(head)
		snap, err := OpenSnapshot(context.Background(), dir, BackendCatFile, h)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		for _, f := range snap.Files() {
			_, err := snap.ReadBlob(f.Blob)
			switch {
			case IsMissingObject(err):
				missing = append(missing, string(f.Path))
			case err != nil:
				t.Fatal(err)
			default:
				present = append(present, string(f.Path))
			}
		}
		return missing, present
	}
	res, err := Sync(context.Background(), SyncOptions{Dir: dir, URL: r.Dir, MaxBlobSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if res.Head != hs[len(hs)-1] {
		t.Fatalf("head %s, want %s", res.Head, hs[len(hs)-1])
	}
	if m, p := missingAt(res.Head.String()); strings.Join(m, ",") != "large.txt" || strings.Join(p, ",") != "small.go" {
		t.Fatalf("after the clone: missing %v, present %v; want large.txt missing, small.go present", m, p)
	}
	r.Write(map[string]string{"other.txt": bigText("three", 3000), "tiny.txt": "tiny\n"})
	head := r.Commit("more")
	if res, err = Sync(context.Background(), SyncOptions{Dir: dir, URL: r.Dir}); err != nil {
		t.Fatal(err)
	}
	if m, p := missingAt(head); strings.Join(m, ",") != "large.txt,other.txt" || strings.Join(p, ",") != "small.go,tiny.txt" {
		t.Fatalf("after a fetch: missing %v, present %v; want the two large files missing", m, p)
	}

	// git failing: go-git, which knows no filter, must not fetch instead.
	var goGitCalls atomic.Int32
	goGitFetch = func(ctx context.Context, repo *git.Repository, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
		goGitCalls.Add(1)
		return fetch(ctx, repo, u, ref, auth, progress)
	}
	cliFetchFn = func(context.Context, string, string, string, transport.AuthMethod, io.Writer) error {
		return errors.New("git fetch: exit status 128: fatal: something git-specific")
	}
	t.Cleanup(func() { goGitFetch, cliFetchFn = fetch, cliFetch })
	r.Write(map[string]string{"third.txt": bigText("four", 3000)})
	r.Commit("even more")
	_, err = Sync(context.Background(), SyncOptions{Dir: dir, URL: r.Dir})
	if err == nil || !strings.Contains(err.Error(), "something git-specific") || !strings.Contains(err.Error(), "blob:limit=1024") || goGitCalls.Load() != 0 {
		t.Errorf("git failing on a partial clone: err %v, go-git fetched %d times; want git's error naming the filter, no go-git fetch", err, goGitCalls.Load())
	}
	if m, _ := missingAt(head); strings.Join(m, ",") != "large.txt,other.txt" {
		t.Errorf("after the failed fetch: missing %v, want the two large files still missing", m)
	}
}
