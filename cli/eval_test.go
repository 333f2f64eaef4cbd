package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalUsage checks eval's flag handling: the work itself is tested in
// eval/evalrun.
func TestEvalUsage(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		run      func(context.Context, []string) error
		args     []string
		code     int    // exit code of an exitError; 0: any other error
		contains string // in the message
	}{
		{"eval without bench", runEval, []string{"--repo-dir", "x"}, 2, "--bench"},
		{"eval without repos", runEval, []string{"--bench", empty}, 2, "--repo-dir"},
		{"eval bad repo-path", runEval, []string{"--repo-path", "noslash=dir"}, 2, "owner/name=DIR"},
		{"eval empty bench", runEval, []string{"--data-dir", t.TempDir(), "--bench", empty, "--repo-dir", t.TempDir()}, 0, "no records"},
	} {
		_, err := capture(t, func() error { return tc.run(context.Background(), tc.args) })
		var ee exitError
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.code != 0 && (!errors.As(err, &ee) || ee.code != tc.code):
			t.Errorf("%s: %v, want exit code %d", tc.name, err, tc.code)
		case !strings.Contains(err.Error()+ee.msg, tc.contains):
			t.Errorf("%s: %v does not mention %q", tc.name, err, tc.contains)
		}
	}
}
