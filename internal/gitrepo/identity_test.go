package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
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

// fakeIndexed is a store holding the given manifests.
type fakeIndexed []schema.Manifest

func (f fakeIndexed) Manifest(_ context.Context, n schema.RepoName) (*schema.Manifest, error) {
	for _, m := range f {
		if m.Repo == n {
			return &m, nil
		}
	}
	return nil, nil
}

func (f fakeIndexed) Manifests(context.Context) ([]schema.Manifest, error) { return f, nil }

// repoWith makes a working copy at dir whose one commit holds content, so
// that repositories made with different content have different roots.
func repoWith(t *testing.T, dir, content string) (*gitfixture.Repo, string) {
	t.Helper()
	r := gitfixture.NewAt(t, dir)
	r.Write(map[string]string{"a.txt": content})
	return r, r.Commit("one")
}

func TestResolveIndexed(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	a, rootA := repoWith(t, filepath.Join(base, "x", "a", "repo"), "a\n")
	b, rootB := repoWith(t, filepath.Join(base, "x", "b", "repo"), "b\n")
	// A clone of b elsewhere (same root, never indexed from there).
	cloneB := filepath.Join(base, "clones", "b")
	b.Git("clone", "-q", b.Dir, cloneB)
	// A folder holding ./b/repo that is a clone of a, not of the stored b/repo.
	lookalike := filepath.Join(base, "elsewhere")
	a.Git("clone", "-q", a.Dir, filepath.Join(lookalike, "b", "repo"))
	notRepo := filepath.Join(base, "plain")
	if err := os.MkdirAll(notRepo, 0o755); err != nil {
		t.Fatal(err)
	}
	store := fakeIndexed{
		{Repo: "b/repo", URL: b.Dir, Root: rootB},
		{Repo: "psf/requests", URL: "https://github.com/psf/requests.git"},
		{Repo: "repo", URL: a.Dir, Root: rootA},
	}
	for _, tc := range []struct {
		name, dir, in, want string
		errs                []string // substrings of the error; none: success
		is                  error
	}{
		{name: "path of the second", in: b.Dir, want: "b/repo"},
		{name: "path of the first", in: a.Dir, want: "repo"},
		{name: "dot", dir: b.Dir, in: ".", want: "b/repo"},
		{name: "file URL", in: "file://" + b.Dir, want: "b/repo"},
		{name: "clone by root", in: cloneB, want: "b/repo"},
		{name: "stored name", in: "b/repo", want: "b/repo"},
		{name: "explicit name", in: "repo=" + b.Dir, want: "repo"},
		{name: "name and its own directory", dir: filepath.Join(base, "x"), in: "b/repo", want: "b/repo"},
		{name: "bare name not a directory", dir: base, in: "repo", want: "repo"},
		{name: "remote other form", in: "git@github.com:psf/requests", want: "psf/requests"},
		{name: "remote https", in: "https://GitHub.com/psf/requests/", want: "psf/requests"},
		{name: "name against another repository's directory", dir: lookalike, in: "b/repo",
			errs: []string{`"b/repo"`, "b/repo (" + b.Dir + ")", "repo (" + a.Dir + ")", "give ./b/repo"}, is: ErrAmbiguous},
		{name: "not indexed name", in: "pallets/flask", errs: []string{"pallets/flask: not indexed", "indexed: b/repo, psf/requests, repo"}, is: ErrNotIndexed},
		{name: "not indexed remote", in: "https://github.com/pallets/flask", errs: []string{"pallets/flask", "indexed: b/repo, psf/requests, repo"}, is: ErrNotIndexed},
		{name: "not a repository", in: notRepo, errs: []string{"directory " + notRepo + ": not indexed (", "no root commit", "indexed: b/repo"}, is: ErrNotIndexed},
		{name: "neither", dir: base, in: "no-such-dir/x/y", errs: []string{"not an owner/name", "want owner/name"}},
		{name: "traversal", dir: base, in: "../x", errs: []string{`"../x"`, `part ".." is not allowed`}},
		{name: "file URL of nothing", in: "file://" + notRepo + "/nope", errs: []string{notRepo + "/nope is not a directory"}},
		{name: "password", in: "https://u:hunter2@example.com/x.git", errs: []string{"https://***@example.com/x.git", "credentials"}},
		{name: "token in the query", in: "https://example.com/x.git?token=hunter2", errs: []string{"https://example.com/x.git?token=***", "credentials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.dir != "" {
				t.Chdir(tc.dir)
			}
			got, err := ResolveIndexed(ctx, tc.in, store)
			if len(tc.errs) == 0 {
				if err != nil || string(got) != tc.want {
					t.Fatalf("ResolveIndexed(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ResolveIndexed(%q) = %q, want an error", tc.in, got)
			}
			for _, s := range tc.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q shows the password", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}

	// Two stored repositories with the path's root: refused, naming both.
	forks := append(fakeIndexed{{Repo: "fork/repo", URL: "https://example.com/fork/repo", Root: rootB}}, store...)
	if got, err := ResolveIndexed(ctx, cloneB, forks); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "fork/repo") || !strings.Contains(err.Error(), "b/repo") {
		t.Errorf("a clone of two stored repositories = %q, %v; want both named, ErrAmbiguous", got, err)
	}
	// The path it was indexed from beats a shared root.
	if got, err := ResolveIndexed(ctx, b.Dir, forks); err != nil || got != "b/repo" {
		t.Errorf("the indexed path with a fork stored = %q, %v; want b/repo", got, err)
	}
	if _, err := ResolveIndexed(ctx, "a/b", fakeIndexed{}); err == nil || !strings.Contains(err.Error(), "nothing is indexed yet") {
		t.Errorf("an empty store: %v, want nothing is indexed yet", err)
	}
}

// countingIndexed counts how often the whole store is listed.
type countingIndexed struct {
	fakeIndexed
	lists int
}

func (c *countingIndexed) Manifests(ctx context.Context) ([]schema.Manifest, error) {
	c.lists++
	return c.fakeIndexed.Manifests(ctx)
}

// The directory a repository was indexed from, under the name it gives,
// resolves from that one manifest; a lookalike still lists the store.
func TestResolveIndexedReadsOneManifest(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	flask, rootF := repoWith(t, filepath.Join(base, "flask"), "f\n")
	flask.Git("remote", "add", "origin", "https://github.com/pallets/flask.git")
	other, rootO := repoWith(t, filepath.Join(base, "other", "flask"), "o\n")
	ix := &countingIndexed{fakeIndexed: fakeIndexed{
		{Repo: "pallets/flask", URL: flask.Dir, Root: rootF},
		{Repo: "flask", URL: filepath.Join(base, "gone"), Root: "0000"},
		{Repo: "o/flask", URL: filepath.Join(base, "o-was-here"), Root: rootO},
	}}
	if got, err := ResolveIndexed(ctx, flask.Dir, ix); err != nil || got != "pallets/flask" || ix.lists != 0 {
		t.Errorf("ResolveIndexed(%s) = %q, %v after %d listings; want pallets/flask, none", flask.Dir, got, err, ix.lists)
	}
	// Named "flask" by its directory, which holds another repository: found by root.
	if got, err := ResolveIndexed(ctx, other.Dir, ix); err != nil || got != "o/flask" || ix.lists != 1 {
		t.Errorf("ResolveIndexed(%s) = %q, %v after %d listings; want o/flask, one", other.Dir, got, err, ix.lists)
	}
}
