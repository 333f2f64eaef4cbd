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

func TestRunRebuildsEachQueryState(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"mem/alloc.c": "int a;\n"})
	r.Commit("add the allocator")
	r.Write(map[string]string{"net/socket.c": "int s;\n"})
	r.Commit("fix socket timeout handling")
	os.MkdirAll(filepath.Join(r.Dir, "io"), 0o755)
	r.Git("mv", "net/socket.c", "io/socket.c")
	r.Commit("move socket code to io")
	r.Write(map[string]string{"mem/alloc.c": "int a;\nint b;\n"})
	r.Commit("allocator leak")
	r.Write(map[string]string{"io/socket.c": "int s;\nint t;\n", "io/late.c": "int l;\n"})
	q := r.Commit("socket timeout again")
	date := func(c string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(r.Git("show", "-s", "--format=%ct", c)), 10, 64)
		return n
	}
	b := blobtest.Bucket(t)
	qs := []dataset.CommitQuery{{QueryID: "q1", Repo: "acme/sys", CommitID: q, CommitDate: date(q), Query: "socket timeout", GoldFiles: []string{"io/socket.c", "io/late.c"}}}
	res, skips, err := Run(context.Background(), b, filepath.Join(r.Dir, ".git"), "acme/sys", qs)
	if err != nil || len(skips) != 0 || len(res) != 1 {
		t.Fatalf("run: %v %v %v", res, skips, err)
	}
	got := res[0].Ranked
	// The old commit touched net/socket.c; at the query's state that file is
	// io/socket.c. io/late.c did not exist yet and cannot be returned.
	if len(got) == 0 || got[0] != "io/socket.c" {
		t.Fatalf("ranked %v, want io/socket.c first", got)
	}
	for _, f := range got {
		if f == "io/late.c" || f == "net/socket.c" {
			t.Errorf("ranked %v contains %s, which does not exist at the query's state", got, f)
		}
	}
	// Whole-file BM25 (the path is part of each document) and the fusion.
	if f := res[0].Files; len(f) == 0 || f[0] != "io/socket.c" {
		t.Errorf("file BM25 ranked %v, want io/socket.c first", f)
	}
	if f := res[0].Fused; len(f) == 0 || f[0] != "io/socket.c" {
		t.Errorf("fusion ranked %v, want io/socket.c first", f)
	}
	// The hybrid: the file BM25, the history (under the file's name at the
	// state) and the paths all point at io/socket.c; mem/alloc.c is in
	// none of them.
	if f := res[0].Hybrid; len(f) == 0 || f[0] != "io/socket.c" {
		t.Errorf("hybrid ranked %v, want io/socket.c first", f)
	}
	for _, f := range res[0].Hybrid {
		if f == "mem/alloc.c" {
			t.Errorf("hybrid ranked %v: mem/alloc.c matches nothing of the query", res[0].Hybrid)
		}
	}
	for _, f := range append(append(append([]string{}, res[0].Files...), res[0].Fused...), res[0].Hybrid...) {
		if f == "io/late.c" || f == "net/socket.c" {
			t.Errorf("a file that does not exist at the state was ranked: %s", f)
		}
	}
	// A second run reuses the scraped history.
	if _, _, err := Run(context.Background(), b, filepath.Join(r.Dir, ".git"), "acme/sys", qs); err != nil {
		t.Fatal(err)
	}
}
