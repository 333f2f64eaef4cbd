package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
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

func syncTo(t *testing.T, dir, url, ref string) (SyncResult, error) {
	t.Helper()
	return Sync(context.Background(), SyncOptions{Dir: dir, URL: url, Ref: ref})
}

// bothFetchers runs test with the git CLI fetching (when installed) and
// with go-git alone, as on a machine without git.
func bothFetchers(t *testing.T, test func(t *testing.T)) {
	t.Run("git CLI", func(t *testing.T) {
		if gitBinary() == "" {
			t.Skip("git is not installed")
		}
		test(t)
	})
	t.Run("go-git alone", func(t *testing.T) {
		saved := gitBinary
		gitBinary = func() string { return "" }
		t.Cleanup(func() { gitBinary = saved })
		test(t)
	})
}

func TestSyncCloneAndFetch(t *testing.T) { bothFetchers(t, testSyncCloneAndFetch) }

func testSyncCloneAndFetch(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n"})
	first := r.Commit("one")
	r.Git("tag", "-a", "v1", "-m", "release 1")
	clone := filepath.Join(t.TempDir(), "clones", "acme", "a.git")
	res, err := syncTo(t, clone, r.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Head.String() != first || res.Empty || res.Shallow {
		t.Fatalf("first sync = %+v, want head %s", res, first)
	}
	r.Write(map[string]string{"a.txt": "a\nb\n"})
	second := r.Commit("two")
	if res, err = syncTo(t, clone, r.Dir, ""); err != nil || res.Head.String() != second {
		t.Fatalf("fetch: %+v %v, want head %s", res, err, second)
	}
	// Tags (annotated, peeled), branches, full and abbreviated commit ids.
	for ref, want := range map[string]string{"v1": first, "refs/tags/v1": first, "main": second, first: first, first[:10]: first} {
		res, err := syncTo(t, clone, r.Dir, ref)
		if err != nil || res.Head.String() != want {
			t.Errorf("ref %q: %v %v, want %s", ref, res.Head, err, want)
		}
	}
	// Pull-request refs are not fetched unless asked for by full name.
	r.Git("update-ref", "refs/pull/1/head", first)
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(clone, "refs", "pull")); !os.IsNotExist(err) {
		t.Errorf("refs/pull fetched by default (stat: %v)", err)
	}
	if res, err := syncTo(t, clone, r.Dir, "refs/pull/1/head"); err != nil || res.Head.String() != first {
		t.Errorf("refs/pull/1/head: %v %v, want %s", res.Head, err, first)
	}
	if _, err := syncTo(t, clone, r.Dir, "no-such-branch"); !errors.Is(err, ErrPermanent) {
		t.Errorf("unknown ref: err = %v, want ErrPermanent", err)
	}
}

func TestSyncBareAndDetached(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n"})
	r.Commit("one")
	r.Write(map[string]string{"a.txt": "b\n"})
	head := r.Commit("two")
	bare := filepath.Join(t.TempDir(), "src.git")
	r.Git("clone", "-q", "--bare", r.Dir, bare)
	// A detached HEAD in the source working copy.
	r.Git("checkout", "-q", "--detach", "HEAD~1")
	for name, url := range map[string]string{"bare": bare, "file-url": "file://" + bare, "detached": r.Dir} {
		res, err := syncTo(t, filepath.Join(t.TempDir(), "c.git"), url, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := head
		if name == "detached" {
			want = strings.TrimSpace(r.Git("rev-parse", "HEAD"))
		}
		if res.Head.String() != want {
			t.Errorf("%s: head %s, want %s", name, res.Head, want)
		}
	}
}

func TestSyncEmptyRepository(t *testing.T) { bothFetchers(t, testSyncEmptyRepository) }

func testSyncEmptyRepository(t *testing.T) {
	r := gitfixture.New(t)
	clone := filepath.Join(t.TempDir(), "e.git")
	res, err := syncTo(t, clone, r.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Empty {
		t.Fatalf("empty repository: %+v", res)
	}
	// The first commit arrives with the next sync.
	r.Write(map[string]string{"a.txt": "a\n"})
	head := r.Commit("first")
	res, err = syncTo(t, clone, r.Dir, "")
	if err != nil || res.Empty || res.Head.String() != head {
		t.Fatalf("after first commit: %+v %v", res, err)
	}
	// Every branch deleted: the remote is empty again, whatever the clone
	// still holds.
	r.Git("update-ref", "-d", "refs/heads/main")
	if res, err = syncTo(t, clone, r.Dir, ""); err != nil || !res.Empty {
		t.Fatalf("after deleting every branch: %+v %v, want empty", res, err)
	}
}

// TestSyncFromAnotherURLReclones: a clone made from one URL is never fetched
// into from another, which would mix two repositories' refs and objects.
func TestSyncFromAnotherURLReclones(t *testing.T) {
	a := gitfixture.New(t)
	a.Write(map[string]string{"a.txt": "a\n"})
	a.Commit("a")
	a.Git("branch", "only-in-a")
	b := gitfixture.New(t)
	b.Write(map[string]string{"b.txt": "b\n"})
	b.Commit("b")
	clone := filepath.Join(t.TempDir(), "repo.git")
	if res, err := syncTo(t, clone, a.Dir, ""); err != nil || res.Head.String() != a.Head() {
		t.Fatalf("sync a: %+v %v", res, err)
	}
	res, err := syncTo(t, clone, b.Dir, "")
	if err != nil || res.Head.String() != b.Head() {
		t.Fatalf("sync b into a's clone: %+v %v, want head %s", res, err, b.Head())
	}
	if _, err := Resolve(clone, "only-in-a"); err == nil {
		t.Errorf("a's branch is still in the clone after syncing b")
	}
	if _, err := Resolve(clone, a.Head()); err == nil {
		t.Errorf("a's commit is still in the clone after syncing b")
	}
}

func TestSyncShallowSource(t *testing.T) {
	r := gitfixture.New(t)
	for i := 0; i < 4; i++ {
		r.Write(map[string]string{"a.txt": strings.Repeat("a\n", i+1)})
		r.Commit("c")
	}
	shallow := filepath.Join(t.TempDir(), "shallow")
	r.Git("clone", "-q", "--depth", "2", "file://"+r.Dir, shallow)
	// Indexing it would record a history that starts at the shallow boundary
	// (every file "added" there, a root that changes once unshallowed): refused,
	// saying why and what to do, and nothing is left in the clone directory.
	for _, url := range []string{shallow, "file://" + shallow, filepath.Join(shallow, ".git")} {
		clone := filepath.Join(t.TempDir(), "s.git")
		_, err := syncTo(t, clone, url, "")
		if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "shallow clone") ||
			!strings.Contains(err.Error(), "git fetch --unshallow") || !strings.Contains(err.Error(), shallow) {
			t.Errorf("sync of shallow %s: err = %v, want a permanent error naming it, saying shallow and --unshallow", url, err)
		}
		if _, err := os.Stat(clone); !os.IsNotExist(err) {
			t.Errorf("sync of shallow %s left %s behind", url, clone)
		}
	}
	// Unshallowed, the same source indexes in full.
	exec.Command("git", "-C", shallow, "fetch", "-q", "--unshallow").Run()
	res, err := syncTo(t, filepath.Join(t.TempDir(), "s.git"), shallow, "")
	if err != nil || res.Head.String() != r.Head() || res.Shallow {
		t.Fatalf("after --unshallow: %+v %v, want head %s", res, err, r.Head())
	}
	// Reading a shallow history directly lists only what it has.
	shallow2 := filepath.Join(t.TempDir(), "shallow2")
	r.Git("clone", "-q", "--depth", "2", "file://"+r.Dir, shallow2)
	commits, err := ListCommits(context.Background(), filepath.Join(shallow2, ".git"), BackendAuto, res.Head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 2 {
		t.Fatalf("shallow source lists %d commits, want 2", len(commits))
	}
	err = DiffCommits(context.Background(), filepath.Join(shallow2, ".git"), commits, DiffOptions{}, func(*CommitDiff) error { return nil })
	if err != nil {
		t.Fatalf("diffing a shallow history: %v", err)
	}
}

// TestSyncFetchesWithGitCLIFirst: with git installed, the CLI clones and
// fetches and go-git is not asked; when the CLI fails, go-git fetches and
// its typed error is the one returned, naming the CLI's.
func TestSyncFetchesWithGitCLIFirst(t *testing.T) {
	if gitBinary() == "" {
		t.Skip("git is not installed")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n"})
	r.Commit("one")
	var goGitCalls, cliCalls atomic.Int32
	goGitFetch = func(ctx context.Context, repo *git.Repository, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
		goGitCalls.Add(1)
		return fetch(ctx, repo, u, ref, auth, progress)
	}
	cliFetchFn = func(ctx context.Context, dir, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
		cliCalls.Add(1)
		return cliFetch(ctx, dir, u, ref, auth, progress)
	}
	t.Cleanup(func() { goGitFetch, cliFetchFn = fetch, cliFetch })

	clone := filepath.Join(t.TempDir(), "c.git")
	res, err := syncTo(t, clone, r.Dir, "")
	if err != nil || res.Head.String() != r.Head() {
		t.Fatalf("clone: %+v %v, want head %s", res, err, r.Head())
	}
	r.Write(map[string]string{"a.txt": "b\n"})
	r.Commit("two")
	r.Git("tag", "v2")
	// git's progress reaches the caller's writer, as go-git's does.
	var progress bytes.Buffer
	if res, err = Sync(context.Background(), SyncOptions{Dir: clone, URL: r.Dir, Ref: "v2", Progress: &progress}); err != nil || res.Head.String() != r.Head() {
		t.Fatalf("fetch: %+v %v, want head %s", res, err, r.Head())
	}
	if !strings.Contains(progress.String(), "objects") {
		t.Errorf("no progress from git fetch: %q", progress.String())
	}
	if goGitCalls.Load() != 0 || cliCalls.Load() != 2 {
		t.Errorf("git fetched %d times and go-git %d, want 2 and 0", cliCalls.Load(), goGitCalls.Load())
	}

	// The CLI failing: go-git fetches.
	cliFetchFn = func(context.Context, string, string, string, transport.AuthMethod, io.Writer) error {
		return errors.New("git fetch: exit status 128: fatal: something git-specific")
	}
	r.Write(map[string]string{"a.txt": "c\n"})
	r.Commit("three")
	if res, err = syncTo(t, clone, r.Dir, ""); err != nil || res.Head.String() != r.Head() {
		t.Fatalf("fetch with the CLI failing: %+v %v, want head %s", res, err, r.Head())
	}
	if goGitCalls.Load() != 1 {
		t.Errorf("go-git fetched %d times after the CLI failed, want 1", goGitCalls.Load())
	}
	// Both failing: go-git's typed error, naming the CLI's failure.
	goGitFetch = func(context.Context, *git.Repository, string, string, transport.AuthMethod, io.Writer) error {
		return fmt.Errorf("fetch x: %w", transport.ErrRepositoryNotFound)
	}
	_, err = syncTo(t, filepath.Join(t.TempDir(), "d.git"), r.Dir, "")
	if !errors.Is(err, transport.ErrRepositoryNotFound) || !strings.Contains(err.Error(), "something git-specific") {
		t.Errorf("both failing: err = %v, want go-git's error naming the CLI's", err)
	}
	// Unreachable: go-git's error too, retryable and naming the URL.
	goGitFetch, cliFetchFn = fetch, cliFetch
	_, err = syncTo(t, filepath.Join(t.TempDir(), "e.git"), "http://127.0.0.1:1/nothing.git", "")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1/nothing.git") || !strings.Contains(err.Error(), "connection refused") || errors.Is(err, ErrPermanent) {
		t.Errorf("unreachable: err = %v, want a retryable error naming the URL and the refused connection", err)
	}
}

// TestSyncRepairsPackedRefs: go-git's prune of a tag that git packed
// leaves the tag's peeled line in packed-refs, and git then refuses every
// command that reads refs. The next sync drops such lines and fetches.
func TestSyncRepairsPackedRefs(t *testing.T) {
	if gitBinary() == "" {
		t.Skip("git is not installed")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n"})
	r.Commit("one")
	r.Git("tag", "-a", "-m", "annotated", "v1")
	r.Git("tag", "-a", "-m", "annotated", "v0")
	clone := filepath.Join(t.TempDir(), "c.git")
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	refs := func() (string, error) {
		out, err := exec.Command("git", "--git-dir", clone, "for-each-ref").CombinedOutput()
		return string(out), err
	}
	if out, err := refs(); err != nil || !strings.Contains(out, "refs/tags/v1") {
		t.Fatalf("after the clone: %v %s", err, out)
	}
	packed, _ := os.ReadFile(filepath.Join(clone, "packed-refs"))
	if !strings.Contains(string(packed), "\n^") {
		t.Fatalf("the clone's packed-refs has no peeled line to test with:\n%s", packed)
	}
	// go-git fetches (the CLI failing) after a packed tag went away.
	r.Git("tag", "-d", "v1")
	cliFetchFn = func(context.Context, string, string, string, transport.AuthMethod, io.Writer) error {
		return errors.New("git fetch: exit status 128: fatal: made to fail")
	}
	t.Cleanup(func() { cliFetchFn = cliFetch })
	if _, err := syncTo(t, clone, r.Dir, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := refs(); err == nil {
		t.Logf("go-git left packed-refs readable this time (%s); the repair is still checked below", strings.TrimSpace(out))
	}
	// Whatever go-git left, a peeled line without its ref is dropped.
	bad := "# pack-refs with: peeled fully-peeled sorted \n^" + r.Head() + "\n" + string(packed[strings.Index(string(packed), "\n")+1:])
	if err := os.WriteFile(filepath.Join(clone, "packed-refs"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := refs(); err == nil {
		t.Fatal("git read a packed-refs with a peeled line that follows no ref; the test needs it refused")
	}
	cliFetchFn = cliFetch
	r.Write(map[string]string{"a.txt": "b\n"})
	r.Commit("two")
	res, err := syncTo(t, clone, r.Dir, "")
	if err != nil || res.Head.String() != r.Head() {
		t.Fatalf("sync after the damage: %+v %v, want head %s", res, err, r.Head())
	}
	out, err := refs()
	if err != nil || !strings.Contains(out, "refs/tags/v0") || strings.Contains(out, "refs/tags/v1") {
		t.Fatalf("refs after the repair: %v\n%s", err, out)
	}
}

func TestSyncBadInput(t *testing.T) {
	notRepo := t.TempDir()
	os.WriteFile(filepath.Join(notRepo, "x"), []byte("x"), 0o644)
	file := filepath.Join(notRepo, "x")
	for name, url := range map[string]string{
		"not a repository": notRepo,
		"missing path":     filepath.Join(notRepo, "missing"),
		"a file":           file,
		"empty":            "",
		"unreachable":      "http://127.0.0.1:1/nothing.git",
	} {
		_, err := syncTo(t, filepath.Join(t.TempDir(), "c.git"), url, "")
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if url != "" && !strings.Contains(err.Error(), url) && !strings.Contains(err.Error(), strings.TrimPrefix(url, "http://")) {
			t.Errorf("%s: error %q does not name the input", name, err)
		}
		if permanent := errors.Is(err, ErrPermanent); permanent == (name == "unreachable") {
			t.Errorf("%s: permanent=%v: %v", name, permanent, err)
		}
	}
}

// TestSyncOverHTTP clones and fetches over git's smart HTTP protocol, served by
// the real git-http-backend behind net/http/cgi, with a token sent as basic auth.
func TestSyncOverHTTP(t *testing.T) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git is not installed")
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not found at %s", backend)
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n"})
	r.Commit("one")
	root := t.TempDir()
	r.Git("clone", "-q", "--bare", r.Dir, filepath.Join(root, "acme.git"))
	var gotAuth atomic.Value
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, pass, ok := req.BasicAuth(); ok {
			gotAuth.Store(pass)
		}
		h.ServeHTTP(w, req)
	}))
	defer srv.Close()
	t.Setenv("LOCUS_GIT_TOKEN", "s3cret")

	clone := filepath.Join(t.TempDir(), "c.git")
	res, err := syncTo(t, clone, srv.URL+"/acme.git", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Head.String() != r.Head() {
		t.Fatalf("head %s, want %s", res.Head, r.Head())
	}
	if gotAuth.Load() != "s3cret" {
		t.Errorf("token not sent as basic auth: %v", gotAuth.Load())
	}
	// A new commit on the server arrives with the next sync.
	r.Write(map[string]string{"a.txt": "a\nb\n"})
	r.Commit("two")
	r.Git("push", "-q", filepath.Join(root, "acme.git"), "main")
	if res, err = syncTo(t, clone, srv.URL+"/acme.git", ""); err != nil || res.Head.String() != r.Head() {
		t.Fatalf("fetch over http: %v %v, want %s", res.Head, err, r.Head())
	}
	// A repository the server does not have is a permanent error.
	if _, err := syncTo(t, filepath.Join(t.TempDir(), "d.git"), srv.URL+"/missing.git", ""); !errors.Is(err, ErrPermanent) {
		t.Errorf("missing repository over http: err = %v, want ErrPermanent", err)
	}
}

func TestCleanMessage(t *testing.T) {
	for in, want := range map[string]string{
		"sync a/b: no such branch, tag or commit: permanent":  "sync a/b: no such branch, tag or commit",
		"sync a/b: repository not found (permanent)":          "sync a/b: repository not found",
		"sync a/b: x: permanent: more":                        "sync a/b: x: more",
		"sync a/b: object 1234: corrupt git object: bad size": "sync a/b: object 1234: corrupt git object: bad size",
		"a permanent failure of the permanently broken":       "a permanent failure of the permanently broken",
		"fetch f: unexpected error: aborting due to possible repository corruption on the remote side.\x00 (permanent)": "fetch f: unexpected error: aborting due to possible repository corruption on the remote side.",
		"git fetch: exit status 128: error: a\nremote: fatal: b        \n\nfatal: early EOF":                            "git fetch: exit status 128: error: a; remote: fatal: b; fatal: early EOF",
	} {
		if got := CleanMessage(in); got != want {
			t.Errorf("CleanMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSyncLocalSourceMissingABlob: a local source that lacks an object no
// commit walk needs (a mirror without its largest files) still clones, by
// hard-linking its object files, where the transport refuses it as corrupt.
func TestSyncLocalSourceMissingABlob(t *testing.T) {
	if gitBinary() == "" {
		t.Fatal("git is not installed: the local clone needs it")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a\n", "big.bin": "pretend this is 4 MiB\n"})
	r.Commit("one")
	r.Write(map[string]string{"a.txt": "a\nb\n"})
	head := r.Commit("two")
	blob := strings.TrimSpace(r.Git("rev-parse", "HEAD:big.bin"))
	if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clones", "acme", "a.git")
	res, err := syncTo(t, clone, r.Dir, "")
	if err != nil {
		t.Fatalf("sync of a source missing a blob: %v", err)
	}
	if res.Head.String() != head {
		t.Fatalf("head %s, want %s", res.Head, head)
	}
	// Later commits arrive by fetch as before. The third drops big.bin: a
	// tree that still listed it could not be written without its blob (git
	// passes only when it happens to hash the file again, as racily clean).
	r.Write(map[string]string{"a.txt": "a\nb\nc\n"})
	if err := os.Remove(filepath.Join(r.Dir, "big.bin")); err != nil {
		t.Fatal(err)
	}
	third := r.Commit("three")
	if res, err = syncTo(t, clone, r.Dir, ""); err != nil || res.Head.String() != third {
		t.Fatalf("fetch after the local clone: %+v %v, want %s", res, err, third)
	}
}

// TestWithoutProgress: a failed fetch's message keeps what git said, not
// its progress meter.
func TestWithoutProgress(t *testing.T) {
	for in, want := range map[string]string{
		"fatal: repository 'x' not found\n": "fatal: repository 'x' not found",
		"remote: Enumerating objects: 5, done.\nremote: Counting objects:  20% (1/5)\rremote: Counting objects: 100% (5/5), done.\nReceiving objects:  40% (2/5)\rerror: RPC failed\nfatal: early EOF\n": "error: RPC failed\nfatal: early EOF",
		"": "",
	} {
		if got := withoutProgress(in); got != want {
			t.Errorf("withoutProgress(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsSSHURL(t *testing.T) {
	for u, want := range map[string]bool{
		"ssh://host/r.git": true, "git+ssh://host/r": true, "git@github.com:o/r.git": true, "host:path/r": true,
		"https://host/r.git": false, "file:///srv/r.git": false, "/srv/r.git": false, "./dir:x/r": false, "r.git": false,
	} {
		if got := isSSHURL(u); got != want {
			t.Errorf("isSSHURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestCLIFetchSSHBatchMode: git's ssh runs in batch mode (no prompt for a
// host key or a passphrase) unless the user chose the ssh command. A fake
// ssh on PATH records what git runs it with.
func TestCLIFetchSSHBatchMode(t *testing.T) {
	if gitBinary() == "" {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "ssh.log")
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\nexit 255\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_SSH_COMMAND", "")
	t.Setenv("GIT_SSH", "")
	os.Unsetenv("GIT_SSH_COMMAND")
	os.Unsetenv("GIT_SSH")
	ctx := context.Background()
	for _, tc := range []struct {
		name, env, config, want, not string
	}{
		{name: "default", want: "BatchMode=yes"},
		{name: "GIT_SSH_COMMAND", env: "ssh -o ConnectTimeout=7", want: "ConnectTimeout=7", not: "BatchMode"},
		{name: "core.sshCommand", config: "ssh -o ConnectTimeout=9", want: "ConnectTimeout=9", not: "BatchMode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(log)
			dir := filepath.Join(t.TempDir(), "c.git")
			if out, err := exec.Command("git", "init", "--quiet", "--bare", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			if tc.config != "" {
				if out, err := exec.Command("git", "--git-dir", dir, "config", "core.sshCommand", tc.config).CombinedOutput(); err != nil {
					t.Fatalf("git config: %v: %s", err, out)
				}
			}
			if tc.env != "" {
				t.Setenv("GIT_SSH_COMMAND", tc.env)
			}
			if err := cliFetch(ctx, dir, "ssh://git.example.invalid/r.git", "", nil, nil); err == nil {
				t.Fatal("fetch over a failing ssh succeeded")
			}
			args, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("git never ran ssh: %v", err)
			}
			if !strings.Contains(string(args), tc.want) || tc.not != "" && strings.Contains(string(args), tc.not) {
				t.Errorf("ssh ran with %q, want %q in it and not %q", args, tc.want, tc.not)
			}
		})
	}
}
