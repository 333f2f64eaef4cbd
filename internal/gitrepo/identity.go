package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/locus-dev/locus/schema"
)

// ResolveSpec parses a repository spec "[name=]url[#ref]" and gives it the
// name locus stores it under. An explicit name= always wins. Otherwise a remote
// URL gives owner/name, and a local path (working copy, bare directory, ".")
// is named after its origin remote when it has one (git@github.com:pallets/flask
// → pallets/flask), else after its directory. Local paths come back absolute,
// so the same repository resolves to the same spec from any working directory.
func ResolveSpec(s string) (schema.RepoSpec, error) { return ResolveSpecIn(s, "") }

// ResolveSpecIn is ResolveSpec with a relative local path taken relative to
// dir ("" : the working directory).
func ResolveSpecIn(s, dir string) (schema.RepoSpec, error) {
	spec, explicit, err := schema.SplitRepoSpec(s)
	if err != nil {
		return spec, err
	}
	if schema.IsRemoteURL(spec.URL) {
		if !explicit {
			if spec.Name, err = schema.RepoNameFromURL(spec.URL); err != nil {
				return spec, fmt.Errorf("repository spec %q: %w (give a name: owner/name=%s)", s, err, spec.URL)
			}
		}
		return spec, nil
	}
	path := spec.URL
	if strings.Contains(path, "://") {
		u, err := url.Parse(path)
		if err != nil {
			return spec, fmt.Errorf("repository spec %q: %w", s, err)
		}
		path = u.Path
	} else {
		if dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return spec, fmt.Errorf("repository spec %q: %w", s, err)
		}
		spec.URL, path = abs, abs
	}
	if explicit {
		return spec, nil
	}
	if origin := originURL(path); origin != "" {
		if n, err := schema.RepoNameFromURL(origin); err == nil {
			spec.Name = n
			return spec, nil
		}
	}
	if spec.Name, err = schema.RepoNameFromURL(path); err != nil {
		return spec, fmt.Errorf("repository spec %q: %w (give a name: owner/name=%s)", s, err, spec.URL)
	}
	return spec, nil
}

// originURL is the URL of the origin remote of the repository at path, or ""
// when it has none (or path is not a repository: Sync reports that).
func originURL(path string) string {
	repo, err := git.PlainOpenWithOptions(path, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return ""
	}
	cfg, err := repo.Config()
	if err != nil {
		return ""
	}
	if rc, ok := cfg.Remotes["origin"]; ok && len(rc.URLs) > 0 {
		return rc.URLs[0]
	}
	return ""
}

// Indexed is what ResolveIndexed reads of the store: the published
// manifests.
type Indexed interface {
	// Manifest is name's manifest, nil when nothing is published under it.
	Manifest(ctx context.Context, name schema.RepoName) (*schema.Manifest, error)
	// Manifests is every published manifest.
	Manifests(ctx context.Context) ([]schema.Manifest, error)
}

// ErrNotIndexed is wrapped by ResolveIndexed's error for a repository that
// no manifest records; ErrAmbiguous by its error for an argument that could
// mean two stored repositories.
var (
	ErrNotIndexed = errors.New("not indexed")
	ErrAmbiguous  = errors.New("names more than one indexed repository")
)

// maxListed bounds how many indexed repositories an error lists.
const maxListed = 20

// ResolveIndexed maps what a user typed to name an indexed repository
// (owner/name, name=URL, a directory, '.', a URL) onto the stored
// repository it means, reading the store's manifests:
//   - owner/name, or the name of name=URL, is that name;
//   - a directory is the repository indexed from that path (the manifest's
//     URL), else the one whose root commit is the directory's; the name
//     it would be given at index time decides nothing, so a directory that
//     happens to share a stored repository's last path element does not
//     resolve to it (that name is read first only to spare listing the
//     store when its manifest records this very path);
//   - a relative directory that is also a stored owner/name is that name,
//     unless the directory is another stored repository: then the argument
//     is refused, naming both;
//   - a remote URL is the repository indexed from it (scheme, user and
//     .git suffix aside), else the one that a local clone with that origin
//     was named after.
//
// Several matches are refused (ErrAmbiguous), listing them; none is
// ErrNotIndexed, listing what is indexed. A URL holding credentials is
// refused with them masked.
func ResolveIndexed(ctx context.Context, s string, ix Indexed) (schema.RepoName, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("repository: empty")
	}
	if masked, ok := schema.MaskCredentials(s); ok {
		return "", credentialsError(masked)
	}
	spec, explicit, err := schema.SplitRepoSpec(s)
	if err != nil {
		return "", err
	}
	if explicit {
		return named(ctx, ix, spec.Name, s)
	}
	if schema.IsRemoteURL(spec.URL) {
		return resolveRemote(ctx, ix, spec.URL, s)
	}
	path, isURL := spec.URL, strings.Contains(spec.URL, "://")
	if isURL {
		u, err := url.Parse(path)
		if err != nil {
			return "", fmt.Errorf("repository %q: %w", s, err)
		}
		path = u.Path
	}
	var name schema.RepoName
	var nameErr error // why s is not an owner/name, when it could be one
	if !isURL && spec.Ref == "" && !strings.ContainsAny(s, "#=") {
		name, nameErr = schema.ParseRepoName(s)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		switch {
		case name != "":
			return named(ctx, ix, name, s)
		case nameErr != nil:
			return "", fmt.Errorf("repository %q is not an owner/name (%v), an existing directory or a URL", s, nameErr)
		}
		return "", fmt.Errorf("repository %q: %s is not a directory", s, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("repository %q: %w", s, err)
	}
	// The usual case without listing the store: the name the directory
	// would be indexed under holds the repository indexed from it.
	if derived, err := ResolveSpec(abs); err == nil && (name == "" || name == derived.Name) {
		m, err := ix.Manifest(ctx, derived.Name)
		if err != nil {
			return "", fmt.Errorf("repository %q: %w", s, err)
		}
		if m != nil && samePath(m.URL, abs) {
			return derived.Name, nil
		}
	}
	ms, err := ix.Manifests(ctx)
	if err != nil {
		return "", fmt.Errorf("repository %q: %w", s, err)
	}
	matches, why := pathMatches(ctx, abs, ms)
	if name != "" {
		// A relative directory spelt like a stored owner/name.
		m, err := ix.Manifest(ctx, name)
		if err != nil {
			return "", fmt.Errorf("repository %q: %w", s, err)
		}
		if m != nil {
			if len(matches) == 0 || (len(matches) == 1 && matches[0].Repo == name) {
				return name, nil
			}
			return "", fmt.Errorf("repository %q %w: the indexed repository %s (%s), and the directory %s, which is %s; for the directory give ./%s or its absolute path, for %s run from a directory without ./%s",
				s, ErrAmbiguous, name, m.URL, abs, describe(matches), name, name, name)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0].Repo, nil
	case 0:
		return "", notIndexed("directory "+abs, why, ms)
	}
	return "", fmt.Errorf("directory %s is %s: give one name instead: %w", abs, describe(matches), ErrAmbiguous)
}

// credentialsError refuses a repository argument whose URL holds
// credentials, showing it masked.
func credentialsError(masked string) error {
	return fmt.Errorf("repository %s: credentials in a URL are not accepted (they would be printed and stored); drop them", masked)
}

// named checks that name is indexed.
func named(ctx context.Context, ix Indexed, name schema.RepoName, arg string) (schema.RepoName, error) {
	m, err := ix.Manifest(ctx, name)
	if err != nil {
		return "", err
	}
	if m != nil {
		return name, nil
	}
	ms, err := ix.Manifests(ctx)
	if err != nil {
		return "", err
	}
	what := string(name)
	if arg != string(name) {
		what = fmt.Sprintf("%s (from %q)", name, arg)
	}
	return "", notIndexed(what, "", ms)
}

// resolveRemote finds the repository indexed from the remote URL raw.
func resolveRemote(ctx context.Context, ix Indexed, raw, arg string) (schema.RepoName, error) {
	ms, err := ix.Manifests(ctx)
	if err != nil {
		return "", fmt.Errorf("repository %q: %w", arg, err)
	}
	want := canonicalRemote(raw)
	var matches []schema.Manifest
	for _, m := range ms {
		if schema.IsRemoteURL(m.URL) && canonicalRemote(m.URL) == want {
			matches = append(matches, m)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0].Repo, nil
	case 0:
		// A local clone is named after its origin at index time.
		if n, err := schema.RepoNameFromURL(raw); err == nil {
			for _, m := range ms {
				if m.Repo == n && !schema.IsRemoteURL(m.URL) {
					return n, nil
				}
			}
		}
		return "", notIndexed(fmt.Sprintf("URL %q", arg), "no repository was indexed from it", ms)
	}
	return "", fmt.Errorf("URL %q is %s: give one name instead: %w", arg, describe(matches), ErrAmbiguous)
}

// canonicalRemote is a remote URL with what does not change the repository
// it names taken out: scheme, user, host case, surrounding slashes and .git.
func canonicalRemote(raw string) string {
	r, err := schema.ParseRemote(raw)
	if err != nil {
		return raw
	}
	return r.Host + "/" + r.Path
}

// pathMatches are the manifests of the repository in directory abs: those
// indexed from that path, else those whose root commit is its root commit.
// why says what was compared, for an error when nothing matches.
func pathMatches(ctx context.Context, abs string, ms []schema.Manifest) (out []schema.Manifest, why string) {
	for _, m := range ms {
		if samePath(m.URL, abs) {
			out = append(out, m)
		}
	}
	if len(out) > 0 {
		return out, ""
	}
	root, err := dirRoot(ctx, abs)
	if err != nil {
		return nil, fmt.Sprintf("no repository was indexed from it, and it has no root commit to compare: %v", err)
	}
	for _, m := range ms {
		if m.Root == root.String() {
			out = append(out, m)
		}
	}
	return out, fmt.Sprintf("no repository was indexed from it or has its root commit %s", root.String()[:12])
}

// samePath reports whether a stored repository URL is the local directory
// abs (a file:// URL or a path; symbolic links followed).
func samePath(stored, abs string) bool {
	if stored == "" || schema.IsRemoteURL(stored) {
		return false
	}
	if strings.HasPrefix(stored, "file://") {
		u, err := url.Parse(stored)
		if err != nil {
			return false
		}
		stored = u.Path
	}
	stored, abs = filepath.Clean(stored), filepath.Clean(abs)
	if stored == abs {
		return true
	}
	a, err1 := filepath.EvalSymlinks(stored)
	b, err2 := filepath.EvalSymlinks(abs)
	return err1 == nil && err2 == nil && a == b
}

// dirRoot is the root commit (RootCommit) of HEAD of the repository in dir.
func dirRoot(ctx context.Context, dir string) (Hash, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return ZeroHash, fmt.Errorf("not a git repository: %w", err)
	}
	head, err := repo.Head()
	if err != nil {
		return ZeroHash, fmt.Errorf("HEAD: %w", err)
	}
	st, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return ZeroHash, fmt.Errorf("unsupported repository storage %T", repo.Storer)
	}
	return RootCommit(ctx, st.Filesystem().Root(), BackendAuto, head.Hash())
}

// describe lists stored repositories as "the indexed repositories a (URL)
// and b (URL)", or "the indexed repository a (URL)" for one.
func describe(ms []schema.Manifest) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s (%s)", m.Repo, m.URL)
	}
	if len(parts) == 1 {
		return "the indexed repository " + parts[0]
	}
	return "the indexed repositories " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// notIndexed says that what is not indexed, and why when why is not
// "", and lists what is.
func notIndexed(what, why string, ms []schema.Manifest) error {
	if why != "" {
		why = " (" + why + ")"
	}
	if len(ms) == 0 {
		return fmt.Errorf("%s: %w%s; nothing is indexed yet (run locus index first)", what, ErrNotIndexed, why)
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(m.Repo)
	}
	sort.Strings(names)
	list := strings.Join(names[:min(len(names), maxListed)], ", ")
	if len(ms) > maxListed {
		list += fmt.Sprintf(" and %d more (locus status lists them)", len(ms)-maxListed)
	}
	return fmt.Errorf("%s: %w%s; indexed: %s", what, ErrNotIndexed, why, list)
}

// RootCommit returns the repository's identity: the parentless commit at the
// end of head's first-parent chain. Other roots (unrelated histories merged
// in later) are ignored, so the answer does not change as a branch grows. A
// shallow history has no known root: that is an error saying so.
func RootCommit(ctx context.Context, gitDir string, backend Backend, head Hash) (Hash, error) {
	src, err := openSource(ctx, gitDir, backend)
	if err != nil {
		return ZeroHash, err
	}
	defer src.Close()
	shallow, err := readShallow(gitDir)
	if err != nil {
		return ZeroHash, err
	}
	w := &walker{src: src, parents: make(map[Hash][]Hash)}
	h := head
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ZeroHash, ctx.Err()
		}
		if shallow[h] {
			return ZeroHash, fmt.Errorf("root commit of %s: %w", head, shallowError(gitDir, h))
		}
		ps, err := w.parentsOf(h)
		if err != nil {
			return ZeroHash, fmt.Errorf("root commit of %s: %w", head, err)
		}
		if len(ps) == 0 {
			return h, nil
		}
		delete(w.parents, h) // a chain is visited once; keep memory flat
		h = ps[0]
	}
}

// IsAncestor reports whether anc is reachable from head (a commit is its own
// ancestor). The walk goes down first parents first, so the usual case, a
// branch that moved forward, stops after the new commits. A commit absent
// from the clone (dropped by a force-push) is simply not reached.
func IsAncestor(ctx context.Context, gitDir string, backend Backend, anc, head Hash) (bool, error) {
	if anc == head {
		return true, nil
	}
	src, err := openSource(ctx, gitDir, backend)
	if err != nil {
		return false, err
	}
	defer src.Close()
	shallow, err := readShallow(gitDir)
	if err != nil {
		return false, err
	}
	w := &walker{src: src, parents: make(map[Hash][]Hash), shallow: shallow}
	seen := map[Hash]bool{head: true}
	stack := []Hash{head}
	for n := 0; len(stack) > 0; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return false, ctx.Err()
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == anc {
			return true, nil
		}
		ps, err := w.parentsOf(h)
		if err != nil {
			return false, fmt.Errorf("is %s an ancestor of %s: %w", anc, head, err)
		}
		delete(w.parents, h)
		for i := len(ps) - 1; i >= 0; i-- {
			if !seen[ps[i]] {
				seen[ps[i]] = true
				stack = append(stack, ps[i])
			}
		}
	}
	return false, nil
}

// shallowError says that the history in gitDir is cut at boundary and how to
// get all of it.
func shallowError(gitDir string, boundary Hash) error {
	return fmt.Errorf("%s is a shallow clone (history cut at commit %s); locus indexes whole histories: run `git fetch --unshallow` in it first: %w",
		gitDir, boundary.String()[:12], ErrPermanent)
}

// CommitTime is the committer time of commit in unix milliseconds; a
// commit the clone lacks is an error.
func CommitTime(ctx context.Context, gitDir string, backend Backend, commit Hash) (int64, error) {
	t, err := CommitTimes(ctx, gitDir, backend, []Hash{commit})
	if err != nil {
		return 0, err
	}
	return t[0], nil
}

// CommitTimes is CommitTime of each commit, read through one object source.
func CommitTimes(ctx context.Context, gitDir string, backend Backend, commits []Hash) ([]int64, error) {
	src, err := openSource(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	out := make([]int64, len(commits))
	for i, commit := range commits {
		data, err := src.read(commit, plumbing.CommitObject, nil)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", commit, err)
		}
		c, err := parseCommit(commit, data)
		if err != nil {
			return nil, err
		}
		out[i] = c.Committer.When * 1000
	}
	return out, nil
}
