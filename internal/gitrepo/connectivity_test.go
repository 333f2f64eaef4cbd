package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// removeObjects deletes every object file of the bare clone at dir (packs
// and loose objects), leaving its refs: a clone that lacks what its refs
// reach.
func removeObjects(t *testing.T, dir string) {
	t.Helper()
	objects := filepath.Join(dir, "objects")
	err := filepath.WalkDir(objects, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(objects, p); strings.HasPrefix(rel, "info") {
			return nil
		}
		return os.Remove(p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// removeObject deletes one object of the bare clone at dir, unpacking
// its packs first if it is packed: a clone whose refs and commits are
// there but not all their trees and blobs.
func removeObject(t *testing.T, dir, id string) {
	t.Helper()
	loose := filepath.Join(dir, "objects", id[:2], id[2:])
	if _, err := os.Stat(loose); err != nil {
		packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
		for _, p := range packs {
			moved := filepath.Join(t.TempDir(), filepath.Base(p))
			if err := os.Rename(p, moved); err != nil {
				t.Fatal(err)
			}
			os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
			f, err := os.Open(moved)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "--git-dir", dir, "unpack-objects", "-q")
			cmd.Stdin = f
			out, err := cmd.CombinedOutput()
			f.Close()
			if err != nil {
				t.Fatalf("unpack %s: %v: %s", p, err, out)
			}
		}
	}
	if err := os.Remove(loose); err != nil {
		t.Fatalf("remove object %s: %v", id, err)
	}
}

// connected fails the test unless git finds every object the clone's refs
// reach.
func connected(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "rev-list", "--objects", "--all", "--quiet", "--missing=allow-promisor").CombinedOutput()
	if err != nil {
		t.Fatalf("clone %s lacks objects: %v: %s", dir, err, out)
	}
}

// TestSyncRepairsDamagedClone: a clone that lacks objects its refs reach
// (a failed fetch's fallback wrote refs without their objects; a clone
// damaged before the check existed; objects removed by hand) is found at
// the next sync and cloned afresh, so the head resolves and every object
// is there instead of each later scrape failing with "object not found".
func TestSyncRepairsDamagedClone(t *testing.T) {
	if gitBinary() == "" {
		t.Fatal("git is not installed: the connectivity check needs it")
	}
	cases := []struct {
		name string
		// before damages the clone before the sync under test.
		before func(t *testing.T, clone string)
		// newCommit: the source gets a commit before the sync under test.
		newCommit bool
		// cliFails makes git fetch fail and go-git's fetch leave the refs
		// it wrote without their objects, as a fetch falling back to go-git
		// on a full disk did.
		cliFails bool
	}{
		{name: "fallback fetch left objects out", newCommit: true, cliFails: true},
		{name: "damaged before the check existed", before: func(t *testing.T, clone string) {
			removeObject(t, clone, blobID(t, clone, "lib/b.py"))
			if err := os.Remove(filepath.Join(clone, connectivityFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a blob removed by hand, then a new commit", newCommit: true, before: func(t *testing.T, clone string) {
			removeObject(t, clone, blobID(t, clone, "lib/b.py"))
		}},
	}
	for _, c := range cases {
		test := func(t *testing.T) { testRepairsDamagedClone(t, c.before, c.newCommit, c.cliFails) }
		if c.cliFails { // go-git alone has no fallback to fail
			t.Run(c.name, test)
			continue
		}
		t.Run(c.name, func(t *testing.T) { bothFetchers(t, test) })
	}
}

func testRepairsDamagedClone(t *testing.T, before func(t *testing.T, clone string), newCommit, cliFails bool) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n", "lib/b.py": "def b():\n    return 1\n"})
	r.Commit("one")
	clone := filepath.Join(t.TempDir(), "c.git")
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(t, clone)
	}
	if newCommit {
		r.Write(map[string]string{"a.txt": "a\nb\n", "lib/c.py": "def c():\n    return 2\n"})
		r.Commit("two")
	}
	var goGitCalls atomic.Int32
	if cliFails {
		cliFetchFn = func(context.Context, string, string, string, transport.AuthMethod, io.Writer) error {
			return errors.New("git fetch: exit status 128: fatal: the remote end hung up unexpectedly")
		}
		goGitFetch = func(ctx context.Context, repo *git.Repository, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
			if goGitCalls.Add(1) > 1 {
				return fetch(ctx, repo, u, ref, auth, progress) // the fresh clone's
			}
			err := fetch(ctx, repo, u, ref, auth, progress)
			removeObjects(t, clone)
			return err
		}
		t.Cleanup(func() { goGitFetch, cliFetchFn = fetch, cliFetch })
	}
	res, err := syncTo(t, clone, r.Dir, "")
	if err != nil {
		t.Fatalf("sync of the damaged clone: %v", err)
	}
	if res.Head.String() != r.Head() {
		t.Errorf("head %s, want %s", res.Head, r.Head())
	}
	connected(t, clone)
	if cliFails && goGitCalls.Load() < 1 {
		t.Errorf("go-git never fetched after git fetch failed")
	}
	// And the next sync leaves the repaired clone as it is.
	if res, err := syncTo(t, clone, r.Dir, ""); err != nil || res.Head.String() != r.Head() {
		t.Errorf("sync after the repair: %+v %v, want head %s", res, err, r.Head())
	}
}

// TestAfterMissingObject: an object removed after the clone's last check,
// with its refs unchanged since, is not looked for by a sync (the check
// runs when refs change); a read that misses it makes the next sync check
// the clone and clone it afresh.
func TestAfterMissingObject(t *testing.T) {
	if gitBinary() == "" {
		t.Fatal("git is not installed: the connectivity check needs it")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n", "lib/b.py": "def b():\n    return 1\n"})
	r.Commit("one")
	clone := filepath.Join(t.TempDir(), "c.git")
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	removeObject(t, clone, blobID(t, clone, "lib/b.py"))
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	if exec.Command("git", "--git-dir", clone, "rev-list", "--objects", "--all", "--quiet").Run() == nil {
		t.Fatal("the sync with unchanged refs repaired the clone: the case below needs it still damaged")
	}
	other := errors.New("scrape: disk quota exceeded")
	if got := AfterMissingObject(clone, other); got != other {
		t.Errorf("another error came back as %v", got)
	}
	missing := fmt.Errorf("scrape: object %s: %w", blobID(t, clone, "lib/b.py"), plumbing.ErrObjectNotFound)
	got := AfterMissingObject(clone, missing)
	if !errors.Is(got, plumbing.ErrObjectNotFound) || !strings.Contains(got.Error(), "clones it afresh") {
		t.Errorf("AfterMissingObject = %v, want the error saying the next index clones afresh", got)
	}
	if res, err := syncTo(t, clone, r.Dir, ""); err != nil || res.Head.String() != r.Head() {
		t.Fatalf("sync after the missing object: %+v %v", res, err)
	}
	connected(t, clone)
}

// blobID is the id of path's blob at the remote HEAD the clone fetched.
func blobID(t *testing.T, dir, path string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "rev-parse", string(remoteHead)+":"+path).Output()
	if err != nil {
		t.Fatalf("rev-parse HEAD:%s: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}

// TestSyncDiskFull: git fetch failing for want of space is not followed by
// go-git's fetch (which would write into the same full disk and, failing
// half-way, leave refs to objects it never wrote); the error says the disk
// is full, names the clone, and leaves the clone whole.
func TestSyncDiskFull(t *testing.T) {
	if gitBinary() == "" {
		t.Fatal("git is not installed: this test fails git fetch")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n"})
	first := r.Commit("one")
	clone := filepath.Join(t.TempDir(), "c.git")
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	r.Write(map[string]string{"a.txt": "a\nb\n"})
	r.Commit("two")
	var goGitCalls atomic.Int32
	cliFetchFn = func(context.Context, string, string, string, transport.AuthMethod, io.Writer) error {
		return errors.New("fetch x: git fetch: exit status 128: fatal: unable to write loose object file: No space left on device\nfatal: unpack-objects failed")
	}
	goGitFetch = func(ctx context.Context, repo *git.Repository, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
		goGitCalls.Add(1)
		return fetch(ctx, repo, u, ref, auth, progress)
	}
	t.Cleanup(func() { goGitFetch, cliFetchFn = fetch, cliFetch })
	_, err := syncTo(t, clone, r.Dir, "")
	if !errors.Is(err, ErrDiskFull) || !IsDiskFull(err) {
		t.Fatalf("err = %v, want ErrDiskFull", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "the disk holding "+clone+" is full") || !strings.Contains(msg, "No space left on device") {
		t.Errorf("err = %q, want it to say the disk holding the clone is full and keep git's words", msg)
	}
	if n := goGitCalls.Load(); n != 0 {
		t.Errorf("go-git fetched %d times after git ran out of space, want 0", n)
	}
	connected(t, clone)
	if h, err := Resolve(clone, ""); err != nil || h.String() != first {
		t.Errorf("clone's head %s %v, want the last fetched %s", h, err, first)
	}
}

func TestIsDiskFull(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"ENOSPC in a path error", fmt.Errorf("write part: %w", &fs.PathError{Op: "write", Path: "/d/x", Err: syscall.ENOSPC}), true},
		{"EDQUOT", &os.SyscallError{Syscall: "write", Err: syscall.EDQUOT}, true},
		{"ErrDiskFull", diskFull("/d/c.git", errors.New("git fetch failed")), true},
		{"git's words", errors.New("fatal: unable to write loose object file: No space left on device"), true},
		{"SQLite's words", errors.New("update shard: database or disk is full (13)"), true},
		{"another errno", &fs.PathError{Op: "open", Path: "/d/x", Err: syscall.EACCES}, false},
		{"a failed fetch", errors.New("fatal: the remote end hung up unexpectedly"), false},
	} {
		if got := IsDiskFull(c.err); got != c.want {
			t.Errorf("%s: IsDiskFull(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestCloneDamagePartialClone: the blobs a partial clone's filter left out
// are not damage (and the check fetches none of them); objects missing
// from it otherwise are.
func TestCloneDamagePartialClone(t *testing.T) {
	if gitBinary() == "" {
		t.Fatal("git is not installed: partial clones need it")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"small.txt": "a\n", "big.txt": strings.Repeat("big blob line\n", 200)})
	r.Commit("one")
	pc := filepath.Join(t.TempDir(), "pc.git")
	if out, err := exec.Command("git", "-c", "uploadpack.allowFilter=true", "-C", r.Dir, "config", "uploadpack.allowFilter", "true").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := exec.Command("git", "clone", "--quiet", "--bare", "--filter=blob:limit=1k", "file://"+r.Dir, pc).CombinedOutput(); err != nil {
		t.Fatalf("partial clone: %v: %s", err, out)
	}
	missingBlobs := func() string {
		out, err := exec.Command("git", "--git-dir", pc, "rev-list", "--objects", "--all", "--missing=print").Output()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range strings.Fields(string(out)) {
			if strings.HasPrefix(l, "?") {
				ids = append(ids, l)
			}
		}
		return strings.Join(ids, " ")
	}
	left := missingBlobs()
	if left == "" {
		t.Fatal("the partial clone holds every blob: the filter was not applied")
	}
	damage, err := cloneDamage(context.Background(), pc)
	if err != nil || damage != "" {
		t.Fatalf("partial clone: damage %q, err %v; want none", damage, err)
	}
	if now := missingBlobs(); now != left {
		t.Errorf("the check fetched filtered blobs: missing %q before, %q after", left, now)
	}
	// A fetch of a larger blob, from the remote named by the source's URL
	// that a blob size limit configures as the promisor, leaves that blob
	// out too, and that is no damage either.
	u := "file://" + r.Dir
	for _, kv := range [][2]string{{"remote." + u + ".promisor", "true"}, {"remote." + u + ".partialclonefilter", "blob:limit=1k"}} {
		if out, err := exec.Command("git", "--git-dir", pc, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	r.Write(map[string]string{"big2.txt": strings.Repeat("another big blob line\n", 200)})
	r.Commit("two")
	if out, err := exec.Command("git", "--git-dir", pc, "fetch", "--quiet", u, "+refs/heads/*:refs/heads/*").CombinedOutput(); err != nil {
		t.Fatalf("fetch into the partial clone: %v: %s", err, out)
	}
	if now := missingBlobs(); len(strings.Fields(now)) != len(strings.Fields(left))+1 {
		t.Fatalf("after the fetch the clone lacks %q, want the blob before (%q) and the new one", now, left)
	}
	if damage, err := cloneDamage(context.Background(), pc); err != nil || damage != "" {
		t.Fatalf("partial clone after a filtered fetch: damage %q, err %v; want none", damage, err)
	}

	// The same refs are not checked twice: damage the clone and forget
	// the check.
	removeObjects(t, pc)
	if err := os.Remove(filepath.Join(pc, connectivityFile)); err != nil {
		t.Fatal(err)
	}
	if damage, err := cloneDamage(context.Background(), pc); err != nil || damage == "" {
		t.Errorf("partial clone without its packs: damage %q, err %v; want damage", damage, err)
	}
}
