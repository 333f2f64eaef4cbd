package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsureSnapshotMissingBlob: a snapshot of a commit whose file blob the
// clone lacks is built without that file, counts it and warns once.
func TestEnsureSnapshotMissingBlob(t *testing.T) {
	ctx := context.Background()
	b, g, first, _ := fixture(t)
	blob := strings.TrimSpace(g.Git("rev-parse", first+":pkg/conf.py"))
	if err := os.Remove(filepath.Join(g.Dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	c := Config{Bucket: b, GitDir: g.Dir + "/.git", Warn: func(msg string, args ...any) {
		warnings = append(warnings, msg+fmt.Sprint(args...))
	}}
	res, err := Ensure(ctx, c, repo, first)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if m := res.Manifest; m.Graph.MissingFiles != 1 || len(functionIDs(t, b, m.Graph)) != 0 {
		t.Errorf("snapshot graph: %d missing files, functions %v; want 1 and none", m.Graph.MissingFiles, functionIDs(t, b, m.Graph))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "blob missing") {
		t.Errorf("warnings %q, want one about the missing blob", warnings)
	}
}
