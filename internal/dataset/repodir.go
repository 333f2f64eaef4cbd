package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RepoLayouts are the places, relative to a --repo-dir root, where RepoDir
// looks for the bare clone of owner/name, in order. The first is the layout
// of the search tool's fetch verb.
var RepoLayouts = []string{
	"{owner}+{name}/repo",
	"{owner}+{name}",
	"{owner}/{name}.git",
	"{owner}/{name}",
	"{name}.git",
	"{name}",
}

// RepoDir resolves the git directory of repo ("owner/name") under root. Each
// layout of RepoLayouts is tried in order, first with the exact spelling and
// then matching each path component case-insensitively (GitHub names are
// case-insensitive). A candidate counts when it is a git directory (holds HEAD
// and objects/) or a work tree whose .git is one; the git directory is
// returned. The error lists every path tried.
func RepoDir(root, repo string) (string, error) {
	owner, name, err := SplitRepo(repo)
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	if fi, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("bench: repo dir for %s: %w", repo, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("bench: repo dir for %s: %s is not a directory", repo, root)
	}
	r := strings.NewReplacer("{owner}", owner, "{name}", name)
	var tried []string
	for _, layout := range RepoLayouts {
		rel := r.Replace(layout)
		cand := filepath.Join(root, filepath.FromSlash(rel))
		tried = append(tried, cand)
		if g, ok := gitDir(cand); ok {
			return g, nil
		}
		if folded, ok := foldPath(root, strings.Split(rel, "/")); ok && folded != cand {
			if g, ok := gitDir(folded); ok {
				return g, nil
			}
		}
	}
	return "", fmt.Errorf("bench: no git directory for %s under %s; tried (also case-insensitively): %s",
		repo, root, strings.Join(tried, ", "))
}

// gitDir reports whether p is a git directory, or a work tree with one at p/.git.
func gitDir(p string) (string, bool) {
	if isGitDir(p) {
		return p, true
	}
	if g := filepath.Join(p, ".git"); isGitDir(g) {
		return g, true
	}
	return "", false
}

func isGitDir(p string) bool {
	head, err := os.Stat(filepath.Join(p, "HEAD"))
	if err != nil || head.IsDir() {
		return false
	}
	obj, err := os.Stat(filepath.Join(p, "objects"))
	return err == nil && obj.IsDir()
}

// foldPath resolves parts under root, matching each component
// case-insensitively when the exact one is absent.
func foldPath(root string, parts []string) (string, bool) {
	cur := root
	for _, part := range parts {
		exact := filepath.Join(cur, part)
		if _, err := os.Lstat(exact); err == nil {
			cur = exact
			continue
		}
		ents, err := os.ReadDir(cur)
		if err != nil {
			return "", false
		}
		found := false
		for _, e := range ents {
			if strings.EqualFold(e.Name(), part) {
				cur = filepath.Join(cur, e.Name())
				found = true
				break
			}
		}
		if !found {
			return "", false
		}
	}
	return cur, true
}
