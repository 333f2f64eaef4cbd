package gitrepo

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

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

// ResolveRepoArg maps what a user typed to name an indexed repository onto its
// name, the way ResolveSpec names it at index time: an existing directory (".",
// a path) or a URL resolves like an index spec; anything else must be an
// owner/name.
func ResolveRepoArg(s string) (schema.RepoName, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("repository: empty")
	}
	if st, err := os.Stat(s); (err == nil && st.IsDir()) || strings.ContainsAny(s, "=#") || strings.Contains(s, "://") || schema.IsRemoteURL(s) {
		spec, err := ResolveSpec(s)
		if err != nil {
			return "", err
		}
		return spec.Name, nil
	}
	n, err := schema.ParseRepoName(s)
	if err != nil {
		return "", fmt.Errorf("repository %q is not an owner/name, a directory or a URL: %w", s, err)
	}
	return n, nil
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
	src, err := openSource(ctx, gitDir, backend)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	data, err := src.read(commit, plumbing.CommitObject, nil)
	if err != nil {
		return 0, fmt.Errorf("commit %s: %w", commit, err)
	}
	c, err := parseCommit(commit, data)
	if err != nil {
		return 0, err
	}
	return c.Committer.When * 1000, nil
}
