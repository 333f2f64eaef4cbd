package search

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

var update = flag.Bool("update", false, "rewrite the ranking golden files in testdata/rank")

// rankGoldenK is how many items of each ranking the golden files hold.
const rankGoldenK = 10

// TestRankGolden ranks the queries of each fixture repository
// (testdata/rank/<name>.txtar: a git history and its queries) with every
// method in Methods, as a query without an LLM runs them (the lexical
// embedder, the heuristic neighbour selector, default parameters, top 10),
// and compares the result with testdata/rank/<name>.golden: one line per
// item with the query, the method, the rank, the score to 4 decimals, why
// the item is there and its id. A change of the ranking shows as a diff of
// those files in review.
//
// After a deliberate ranking change, rewrite the golden files with
//
//	go test ./internal/search -run TestRankGolden -update
//
// and commit them with the change.
func TestRankGolden(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join("testdata", "rank", "*.txtar"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures in testdata/rank (%v)", err)
	}
	for _, path := range fixtures {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			fx := readRankFixture(t, path)
			b := blobtest.Bucket(t)
			repo := schema.RepoName("golden/" + name)
			indexHistory(ctx, t, b, repo, fx)
			got := rankGolden(ctx, t, Deps{Bucket: b}, repo, fx.queries)
			checkRankGolden(t, strings.TrimSuffix(path, ".txtar")+".golden", got)
		})
	}
}

// rankFixture is a fixture repository built from its archive.
type rankFixture struct {
	dir     string // the working copy
	head    string // its last commit
	queries []string
}

// readRankFixture builds the git history an archive describes: its files
// are written in order, and each "@commit SUBJECT" entry commits what was
// written before it, with the entry's text as the message body. The
// "@queries" entry holds the queries, one a line.
func readRankFixture(t *testing.T, path string) rankFixture {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := gitfixture.New(t)
	var fx rankFixture
	n := 0
	for _, f := range a.Files {
		switch {
		case f.Name == "@queries":
			for q := range strings.SplitSeq(strings.TrimSpace(string(f.Data)), "\n") {
				if q = strings.TrimSpace(q); q != "" {
					fx.queries = append(fx.queries, q)
				}
			}
		case strings.HasPrefix(f.Name, "@commit "):
			msg := strings.TrimPrefix(f.Name, "@commit ")
			if body := strings.TrimSpace(string(f.Data)); body != "" {
				msg += "\n\n" + body
			}
			r.Commit(msg)
			n++
		case strings.HasPrefix(f.Name, "@"):
			t.Fatalf("%s: unknown entry %q (want a file, @commit SUBJECT or @queries)", path, f.Name)
		default:
			r.Write(map[string]string{f.Name: string(f.Data)})
		}
	}
	if n == 0 || len(fx.queries) == 0 {
		t.Fatalf("%s: %d commits and %d queries; want both", path, n, len(fx.queries))
	}
	if st := r.Git("status", "--porcelain"); st != "" {
		t.Fatalf("%s: files written after the last @commit:\n%s", path, st)
	}
	fx.dir, fx.head = r.Dir, r.Head()
	return fx
}

// indexHistory indexes the fixture's repository into b as `locus index` does,
// without Temporal: the commits table and the memory built from it, the
// code graph of the head, its vectors and BM25 index, one manifest.
func indexHistory(ctx context.Context, t *testing.T, b *blob.Bucket, repo schema.RepoName, fx rankFixture) {
	t.Helper()
	gitDir := filepath.Join(fx.dir, ".git")
	head, ok := gitrepo.ParseHash(fx.head)
	if !ok {
		t.Fatalf("head %q", fx.head)
	}
	sr, err := commits.Scrape(ctx, commits.Config{Bucket: b, Repo: repo, GitDir: gitDir, Head: head.String(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memory.Build(ctx, memory.BuildConfig{Bucket: b, Repo: repo, GitDir: gitDir, Head: sr.Head, Parts: sr.Parts})
	if err != nil || mem == nil {
		t.Fatalf("memory: %v, %v", mem, err)
	}
	g, err := codegraph.BuildCommit(ctx, gitDir, gitrepo.BackendAuto, head, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := graphstore.Write(ctx, b, repo, head.String(), g)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := IndexRepo(ctx, Deps{Bucket: b}, repo, info)
	if err != nil {
		t.Fatal(err)
	}
	size, sum, err := sparse.Digest(ctx, b, ir.SparseKey)
	if err != nil {
		t.Fatal(err)
	}
	si := &schema.SearchInfo{Commit: info.Commit, Model: ir.Model, Functions: ir.Functions, SparseKey: ir.SparseKey, SparseBytes: size, SparseSHA256: sum}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Head: sr.Head,
		Scrape: schema.ScrapeResult{Head: sr.Head, NewCommits: sr.NewCommits, Rows: sr.Rows, Parts: sr.Parts, FileIDs: sr.FileIDsKey, Memory: mem},
		Graph:  &info, Search: si}); err != nil {
		t.Fatal(err)
	}
}

// rankGolden is the golden text of every query of one repository with
// every method: a header line per query, then one line per item.
func rankGolden(ctx context.Context, t *testing.T, d Deps, repo schema.RepoName, queries []string) string {
	t.Helper()
	var w strings.Builder
	w.WriteString("# go test ./internal/search -run TestRankGolden -update rewrites this file.\n")
	w.WriteString("# query, method, rank, score (4 decimals), reason, function id\n")
	for i, q := range queries {
		qn := fmt.Sprintf("q%d", i+1)
		fmt.Fprintf(&w, "\n%s %s\n", qn, strconv.Quote(q))
		for _, m := range Methods {
			p := Params{Method: m, Params: spider.Params{K: rankGoldenK}}
			r, err := Retrieve(ctx, d, repo, q, p)
			if err != nil {
				t.Fatalf("%s %s: %v", qn, m, err)
			}
			if r.Warning != "" {
				fmt.Fprintf(&w, "%s %-6s warning: %s\n", qn, m, r.Warning)
			}
			res, err := localize(ctx, d, repo, q, p)
			if err != nil {
				t.Fatalf("%s %s: %v", qn, m, err)
			}
			if len(res.Failed) > 0 {
				t.Fatalf("%s %s: selection failed for %v", qn, m, res.Failed)
			}
			for j, it := range res.Items {
				fmt.Fprintf(&w, "%s %-6s %2d %9s %-9s %s\n", qn, m, j+1, strconv.FormatFloat(it.Score, 'f', 4, 64), it.Reason, it.ID)
			}
		}
	}
	return w.String()
}

// checkRankGolden compares got with the golden file, or rewrites the file
// with -update.
func checkRankGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/search -run TestRankGolden -update writes it)", err)
	}
	if d := diff.Diff(golden, want, "got", []byte(got)); d != nil {
		t.Errorf("the ranking differs from %s; if the change is meant, rewrite it with go test ./internal/search -run TestRankGolden -update and commit it:\n%s", golden, d)
	}
}
