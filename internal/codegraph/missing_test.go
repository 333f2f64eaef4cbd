package codegraph

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestBuildMissingBlob: a file whose blob the repository lacks is listed
// as not parsed, with the reason, and the graph holds the others.
func TestBuildMissingBlob(t *testing.T) {
	files := []File{
		{Path: "a.py", Regular: true, Read: func() ([]byte, error) { return []byte("def f():\n    return 1\n"), nil }},
		{Path: "big.py", Regular: true, Read: func() ([]byte, error) {
			return nil, fmt.Errorf("object 5901b7c4: %w", plumbing.ErrObjectNotFound)
		}},
	}
	g, err := Build(context.Background(), files, Options{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if g.Stats.Files != 1 || g.Stats.Missing != 1 {
		t.Errorf("files parsed %d, missing %d; want 1 and 1", g.Stats.Files, g.Stats.Missing)
	}
	if len(g.Stats.Skipped) != 1 || g.Stats.Skipped[0] != (Skipped{"big.py", SkipMissingBlob}) {
		t.Errorf("skipped %+v, want big.py with the missing-blob reason", g.Stats.Skipped)
	}
	// Any other read error still fails the build, naming the file.
	files[1].Read = func() ([]byte, error) { return nil, fmt.Errorf("disk on fire") }
	if _, err := Build(context.Background(), files, Options{}); err == nil {
		t.Error("Build with an unreadable file: no error")
	}
}
