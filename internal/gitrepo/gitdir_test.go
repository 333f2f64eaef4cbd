package gitrepo

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

func TestGitDir(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.py": "x = 1\n"})
	r.Commit("a")
	bare := filepath.Join(t.TempDir(), "bare.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", r.Dir, bare).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v: %s", err, out)
	}
	plain := t.TempDir()
	for _, tc := range []struct {
		name, dir, want, err string
	}{
		{"working copy", r.Dir, filepath.Join(r.Dir, ".git"), ""},
		{"bare", bare, bare, ""},
		{"not a repository", plain, "", plain + " is not a git repository"},
	} {
		got, err := GitDir(tc.dir)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
