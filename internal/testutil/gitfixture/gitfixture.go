// Package gitfixture builds small real git repositories for tests with the git CLI.
package gitfixture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a working copy in a temporary directory.
type Repo struct {
	t    testing.TB
	Dir  string
	tick int
}

// New initialises an empty repository on branch main. It skips the test when
// git is not installed.
func New(t testing.TB) *Repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; the fixture repositories need the git CLI")
	}
	return NewAt(t, t.TempDir())
}

// NewAt initialises an empty repository on branch main in dir (created if
// missing). Unlike New it fails the test when git is not installed: suites that
// must never skip use it.
func NewAt(t testing.TB, dir string) *Repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed; the fixture repositories need the git CLI")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Repo{t: t, Dir: dir}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "core.quotepath", "false")
	return r
}

// Git runs git in the repository with a fixed identity and clock and returns stdout.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	out, err := r.run(args...)
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (r *Repo) run(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	date := fmt.Sprintf("%d +0000", 1700000000+r.tick*60)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_COMMITTER_DATE="+date,
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+r.Dir, "GIT_TERMINAL_PROMPT=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), nil
}

// Write creates or replaces files (path → content) in the working copy.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for p, c := range files {
		full := filepath.Join(r.Dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// WriteBytes creates or replaces one file with exact bytes (binary content,
// invalid UTF-8), creating its directory.
func (r *Repo) WriteBytes(path string, data []byte) {
	r.t.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// Symlink creates a symbolic link at path (relative to the working copy)
// pointing at target, which may lie outside the repository.
func (r *Repo) Symlink(target, path string) {
	r.t.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		r.t.Fatal(err)
	}
}

// CommitAs stages everything and commits with the exact bytes of msg as the
// message and the given author (any bytes, e.g. invalid UTF-8); returns the id.
func (r *Repo) CommitAs(author, email string, msg []byte) string {
	r.t.Helper()
	r.tick++
	r.Git("add", "-A")
	f, err := os.CreateTemp("", "gitfixture-msg-*")
	if err != nil {
		r.t.Fatal(err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(msg); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.Git("commit", "-q", "--allow-empty", "--allow-empty-message", "--cleanup=verbatim",
		"--author", author+" <"+email+">", "-F", f.Name())
	return r.Head()
}

// Commit stages everything and commits with msg (empty commits allowed); returns the id.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.tick++
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "--allow-empty-message", "-m", msg)
	return r.Head()
}

// Head returns the id of HEAD.
func (r *Repo) Head() string {
	r.t.Helper()
	return strings.TrimSpace(r.Git("rev-parse", "HEAD"))
}

// Tick advances the fixed clock (for commits made with Git directly).
func (r *Repo) Tick() { r.tick++ }
