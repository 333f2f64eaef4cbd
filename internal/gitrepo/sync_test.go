package gitrepo

import (
	"context"
	"errors"
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

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

func syncTo(t *testing.T, dir, url, ref string) (SyncResult, error) {
	t.Helper()
	return Sync(context.Background(), SyncOptions{Dir: dir, URL: url, Ref: ref})
}

func TestSyncCloneAndFetch(t *testing.T) {
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

func TestSyncEmptyRepository(t *testing.T) {
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
}

func TestSyncShallowSource(t *testing.T) {
	r := gitfixture.New(t)
	for i := 0; i < 4; i++ {
		r.Write(map[string]string{"a.txt": strings.Repeat("a\n", i+1)})
		r.Commit("c")
	}
	shallow := filepath.Join(t.TempDir(), "shallow")
	r.Git("clone", "-q", "--depth", "2", "file://"+r.Dir, shallow)
	res, err := syncTo(t, filepath.Join(t.TempDir(), "s.git"), shallow, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Head.String() != r.Head() {
		t.Fatalf("head %s, want %s", res.Head, r.Head())
	}
	// The source itself is shallow: reading it lists only what it has.
	commits, err := ListCommits(context.Background(), filepath.Join(shallow, ".git"), BackendAuto, res.Head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 2 {
		t.Fatalf("shallow source lists %d commits, want 2", len(commits))
	}
	err = DiffCommits(context.Background(), filepath.Join(shallow, ".git"), commits, DiffOptions{}, func(*CommitDiff) error { return nil })
	if err != nil {
		t.Fatalf("diffing a shallow history: %v", err)
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
