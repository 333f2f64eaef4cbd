package commitrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// TestRunMissingBlob: a file of a query's state whose blob the clone lacks
// is searched by its path alone; the query still runs.
func TestRunMissingBlob(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"net/socket.c": "int timeout;\n", "mem/alloc.c": "int a;\n"})
	r.Commit("add socket and allocator")
	r.Write(map[string]string{"net/socket.c": "int timeout;\nint retry;\n"})
	q := r.Commit("socket timeout retry")
	blob := strings.TrimSpace(r.Git("rev-parse", q+"~1:net/socket.c"))
	if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	date, _ := strconv.ParseInt(strings.TrimSpace(r.Git("show", "-s", "--format=%ct", q)), 10, 64)
	qs := []dataset.CommitQuery{{QueryID: "q1", Repo: "acme/sys", CommitID: q, CommitDate: date, Query: "socket timeout", GoldFiles: []string{"net/socket.c"}}}
	res, skips, err := Run(context.Background(), blobtest.Bucket(t), filepath.Join(r.Dir, ".git"), "acme/sys", qs)
	if err != nil || len(skips) != 0 || len(res) != 1 {
		t.Fatalf("run: results %v, skips %v, error %v; want one result", res, skips, err)
	}
	if f := res[0].Files; len(f) == 0 || f[0] != "net/socket.c" {
		t.Errorf("file BM25 ranked %v, want net/socket.c first (by its path)", f)
	}
}
