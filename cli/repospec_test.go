package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// TestRepoSpecsResolveLikeEveryCommand indexes a working copy by "." (named
// after its origin) and an empty repository, then finds both again through
// status and localize by path, "." and name.
func TestRepoSpecsResolveLikeEveryCommand(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	r.Commit("one")
	r.Git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	empty := gitfixture.New(t)
	data := t.TempDir()
	ctx := context.Background()
	t.Chdir(r.Dir)

	out, err := capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "warn", ".", "acme/empty=" + empty.Dir})
	})
	if err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	if !strings.Contains(out, "acme/widgets") || !lineHas(out, "acme/empty", "empty (no commits)") {
		t.Fatalf("index output does not name acme/widgets and report acme/empty as empty:\n%s", out)
	}

	status := func(args ...string) ([]schema.Manifest, error) {
		out, err := capture(t, func() error { return runStatus(ctx, append([]string{"--data-dir", data, "--json"}, args...)) })
		if err != nil {
			return nil, err
		}
		var ms []schema.Manifest
		if err := json.Unmarshal([]byte(out), &ms); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		return ms, nil
	}
	for _, args := range [][]string{{"."}, {r.Dir}, {"acme/widgets"}, {"git@github.com:acme/widgets.git"}} {
		ms, err := status(args...)
		if err != nil || len(ms) != 1 || ms[0].Repo != "acme/widgets" {
			t.Errorf("status %v = %+v, %v; want acme/widgets only", args, ms, err)
		}
	}
	if ms, err := status(); err != nil || len(ms) != 2 {
		t.Errorf("status = %+v, %v; want both repositories", ms, err)
	}
	var ee exitError
	if _, err := status("acme/widgets", "nobody/nothing"); !errors.As(err, &ee) || !strings.Contains(ee.msg, "nobody/nothing") {
		t.Errorf("status of a repository never indexed: err = %v, want an error naming it", err)
	}

	for _, repo := range []string{".", r.Dir, "acme/widgets"} {
		out, err := capture(t, func() error {
			return runLocalize(ctx, []string{"--data-dir", data, "--json", "--repo", repo, "--k", "1", "--c", "1", "the A function"})
		})
		if err != nil || !strings.Contains(out, `"a.go:A"`) {
			t.Errorf("localize --repo %s: %v\n%s", repo, err, out)
		}
	}
	_, err = capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--repo", "acme/empty", "anything"})
	})
	if err == nil || !strings.Contains(err.Error(), "repository acme/empty is indexed but empty (no commits)") {
		t.Errorf("localize on an empty repository: err = %v, want it to say indexed but empty", err)
	}
}

// lineHas reports whether some line of out contains all of words.
func lineHas(out string, words ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			return true
		}
	}
	return false
}
