package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// repoIn makes a one-commit working copy at dir (a path under a temp dir, so
// the directory name is chosen by the test).
func repoIn(t *testing.T, dir string) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.Dir, dir); err != nil {
		t.Fatal(err)
	}
	r.Dir = dir
	r.Write(map[string]string{"a.txt": "a\n"})
	r.Commit("one")
	return r
}

func TestResolveSpec(t *testing.T) {
	base := t.TempDir()
	flask := repoIn(t, filepath.Join(base, "x", "flask", "repo"))
	flask.Git("remote", "add", "origin", "https://github.com/pallets/flask.git")
	requests := repoIn(t, filepath.Join(base, "y", "requests", "repo"))
	requests.Git("remote", "add", "origin", "git@github.com:psf/requests.git")
	plain := repoIn(t, filepath.Join(base, "z", "widgets"))
	localOrigin := repoIn(t, filepath.Join(base, "w", "checkout"))
	localOrigin.Git("remote", "add", "origin", filepath.Join(base, "srv", "gadgets.git"))
	bare := filepath.Join(base, "mirrors", "m.git")
	flask.Git("clone", "-q", "--bare", flask.Dir, bare)
	flask.Git("--git-dir", bare, "remote", "set-url", "origin", "https://example.com/team/mirrored")

	for _, tc := range []struct {
		in, name, url, ref string
	}{
		{in: flask.Dir, name: "pallets/flask", url: flask.Dir},
		{in: requests.Dir, name: "psf/requests", url: requests.Dir},
		{in: requests.Dir + "#main", name: "psf/requests", url: requests.Dir, ref: "main"},
		{in: plain.Dir, name: "widgets", url: plain.Dir},
		{in: localOrigin.Dir, name: "gadgets", url: localOrigin.Dir},
		{in: bare, name: "team/mirrored", url: bare},
		// An explicit name always wins over the origin.
		{in: "acme/fork=" + flask.Dir, name: "acme/fork", url: flask.Dir},
		{in: "https://github.com/redis/redis.git", name: "redis/redis", url: "https://github.com/redis/redis.git"},
		{in: "file://" + flask.Dir, name: "pallets/flask", url: "file://" + flask.Dir},
		// Not a repository: named after the directory; Sync reports the rest.
		{in: base, name: filepath.Base(base), url: base},
	} {
		got, err := ResolveSpec(tc.in)
		if err != nil || string(got.Name) != tc.name || got.URL != tc.url || got.Ref != tc.ref {
			t.Errorf("ResolveSpec(%q) = %+v, %v; want name %q url %q ref %q", tc.in, got, err, tc.name, tc.url, tc.ref)
		}
	}

	// "." and relative paths resolve from the working directory, to the same
	// name and an absolute URL.
	t.Chdir(filepath.Join(base, "y", "requests"))
	for _, in := range []string{"repo", "./repo", "repo/"} {
		if got, err := ResolveSpec(in); err != nil || got.Name != "psf/requests" || got.URL != requests.Dir {
			t.Errorf("ResolveSpec(%q) = %+v, %v; want psf/requests at %s", in, got, err, requests.Dir)
		}
	}
	t.Chdir(plain.Dir)
	if got, err := ResolveSpec("."); err != nil || got.Name != "widgets" || got.URL != plain.Dir {
		t.Errorf(`ResolveSpec(".") = %+v, %v; want widgets at %s`, got, err, plain.Dir)
	}

	for _, bad := range []string{"", "x=", "../evil=/srv/x", "https://example.com/a/b#"} {
		if got, err := ResolveSpec(bad); err == nil {
			t.Errorf("ResolveSpec(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestResolveRepoArg(t *testing.T) {
	base := t.TempDir()
	flask := repoIn(t, filepath.Join(base, "flask"))
	flask.Git("remote", "add", "origin", "https://github.com/pallets/flask.git")
	t.Chdir(base)
	for _, tc := range []struct{ in, want string }{
		{in: "pallets/flask", want: "pallets/flask"},
		{in: "Redis/Redis", want: "redis/redis"},
		{in: "flask", want: "pallets/flask"}, // a directory here wins over the bare name
		{in: "./flask", want: "pallets/flask"},
		{in: flask.Dir, want: "pallets/flask"},
		{in: "https://github.com/pallets/flask", want: "pallets/flask"},
		{in: "git@github.com:pallets/flask.git", want: "pallets/flask"},
		{in: "other/name=" + flask.Dir, want: "other/name"},
	} {
		if got, err := ResolveRepoArg(tc.in); err != nil || string(got) != tc.want {
			t.Errorf("ResolveRepoArg(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	t.Chdir(flask.Dir)
	if got, err := ResolveRepoArg("."); err != nil || got != "pallets/flask" {
		t.Errorf(`ResolveRepoArg(".") = %q, %v; want pallets/flask`, got, err)
	}
	for _, bad := range []string{"", "a b/c", "../x", "a/b/c"} {
		if got, err := ResolveRepoArg(bad); err == nil {
			t.Errorf("ResolveRepoArg(%q) = %q, want an error", bad, got)
		}
	}
}

func TestRootCommitAndIsAncestor(t *testing.T) {
	ctx := context.Background()
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "1\n"})
	root := r.Commit("one")
	r.Write(map[string]string{"a.txt": "2\n"})
	two := r.Commit("two")
	// An unrelated history merged in as second parent does not change the root.
	r.Git("checkout", "-q", "--orphan", "other")
	r.Git("rm", "-q", "-rf", ".")
	r.Write(map[string]string{"b.txt": "b\n"})
	otherRoot := r.Commit("other root")
	r.Git("checkout", "-q", "main")
	r.Tick()
	r.Git("merge", "-q", "--allow-unrelated-histories", "-m", "merge other", "other")
	merged := r.Head()
	gitDir := filepath.Join(r.Dir, ".git")

	for _, b := range []Backend{BackendGoGit, BackendCatFile} {
		for _, head := range []string{root, two, merged} {
			got, err := RootCommit(ctx, gitDir, b, mustHash(t, head))
			if err != nil || got.String() != root {
				t.Errorf("%s: RootCommit(%s) = %s, %v; want %s", b, head[:7], got, err, root)
			}
		}
		for _, tc := range []struct {
			anc, head string
			want      bool
		}{
			{root, merged, true}, {two, merged, true}, {otherRoot, merged, true}, {merged, merged, true},
			{merged, two, false}, {two, root, false}, {otherRoot, two, false},
		} {
			got, err := IsAncestor(ctx, gitDir, b, mustHash(t, tc.anc), mustHash(t, tc.head))
			if err != nil || got != tc.want {
				t.Errorf("%s: IsAncestor(%s, %s) = %v, %v; want %v", b, tc.anc[:7], tc.head[:7], got, err, tc.want)
			}
		}
	}

	// Rewritten history: the old head is no longer an ancestor, and a commit
	// the clone has never seen is not one either.
	r.Git("reset", "-q", "--hard", root)
	r.Write(map[string]string{"a.txt": "rewritten\n"})
	rewritten := r.Commit("rewritten")
	for _, anc := range []string{two, merged, strings.Repeat("ab", 20)} {
		if ok, err := IsAncestor(ctx, gitDir, BackendAuto, mustHash(t, anc), mustHash(t, rewritten)); err != nil || ok {
			t.Errorf("IsAncestor(%s, rewritten) = %v, %v; want false", anc[:7], ok, err)
		}
	}

	// A shallow clone has no known root.
	shallow := filepath.Join(t.TempDir(), "shallow")
	r.Git("clone", "-q", "--depth", "1", "--no-single-branch", "file://"+r.Dir, shallow)
	_, err := RootCommit(ctx, filepath.Join(shallow, ".git"), BackendAuto, mustHash(t, rewritten))
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "shallow") || !strings.Contains(err.Error(), "git fetch --unshallow") {
		t.Errorf("RootCommit of a shallow clone: err = %v, want a permanent error saying shallow and --unshallow", err)
	}
}

func mustHash(t *testing.T, s string) Hash {
	t.Helper()
	h, ok := ParseHash(s)
	if !ok {
		t.Fatalf("bad hash %q", s)
	}
	return h
}
