package commits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// TestScrapeMissingBlob: a blob deleted from the object store gives rows
// flagged missing with counts -1, counted in the part, and the scrape
// succeeds; every other row is as before.
func TestScrapeMissingBlob(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"data.py": "def f():\n    return 1\n", "keep.py": "def g():\n    return 2\n"})
	r.Commit("add")
	r.Write(map[string]string{"data.py": "def f():\n    return 3\n", "keep.py": "def g():\n    return 4\n"})
	r.Commit("change both")
	blob := strings.TrimSpace(r.Git("rev-parse", "HEAD~1:data.py"))
	if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	b := blobtest.Bucket(t)
	res, m := scrapeAndPublish(t, b, r, schema.IndexOptions{})
	if res.Missing != 2 || schema.MissingRows(m.Parts) != 2 {
		t.Fatalf("missing rows: result %d, manifest parts %d; want 2 (data.py added, then changed)", res.Missing, schema.MissingRows(m.Parts))
	}
	for _, row := range readRows(t, b, m) {
		switch row.Path {
		case "data.py":
			if !row.Missing || row.Additions != -1 || row.Deletions != -1 || len(row.Diff) != 0 || len(row.ChangedFunctions) != 0 {
				t.Errorf("%s %s: missing %v +%d -%d diff %q functions %v; want missing, -1, -1, nothing",
					row.CommitID[:8], row.Path, row.Missing, row.Additions, row.Deletions, row.Diff, row.ChangedFunctions)
			}
		case "keep.py":
			if row.Missing || row.Additions < 1 || len(row.ChangedFunctions) != 1 {
				t.Errorf("%s %s: missing %v +%d functions %v; want a whole row", row.CommitID[:8], row.Path, row.Missing, row.Additions, row.ChangedFunctions)
			}
		}
	}
}
