package snapshot

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// BenchmarkSnapshotStorage indexes the head of the repository at
// LOCUS_BENCH_REPO (a git directory) as IndexRepo does, then builds
// snapshots of LOCUS_BENCH_SNAPSHOTS (default 6) first-parent commits
// LOCUS_BENCH_WEEKS (default 3) weeks apart before it, and reports the
// bytes each snapshot adds to the store: its own prefix and the embedding
// cache and code store growth (content that is new).
//
//	LOCUS_BENCH_REPO=/path/to/sympy.git go test ./internal/snapshot -run '^$' -bench SnapshotStorage -benchtime 1x -v
func BenchmarkSnapshotStorage(b *testing.B) {
	gitDir := os.Getenv("LOCUS_BENCH_REPO")
	if gitDir == "" {
		b.Skip("set LOCUS_BENCH_REPO to a git directory to measure snapshot storage")
	}
	n := envInt("LOCUS_BENCH_SNAPSHOTS", 6)
	weeks := envInt("LOCUS_BENCH_WEEKS", 3)
	ctx := context.Background()
	out, err := exec.Command("git", "--git-dir", gitDir, "log", "--first-parent", "--format=%H %ct").Output()
	if err != nil {
		b.Fatal(err)
	}
	var commits []string
	var last int64
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		h, ts, _ := strings.Cut(line, " ")
		t, _ := strconv.ParseInt(ts, 10, 64)
		if i == 0 || last-t >= int64(weeks)*7*24*3600 {
			commits = append(commits, h)
			last = t
		}
		if len(commits) == n+1 {
			break
		}
	}
	for range b.N {
		bk := blobtest.Bucket(b)
		repo := schema.RepoName("bench/repo")
		start := time.Now()
		head := commits[0]
		_, ires := indexCommit(b, bk, repo, gitDir, "", head, time.Now())
		headBytes := size(b, bk, repo.Prefix())
		b.Logf("head %s: %d functions, %.1f MB indexed in %s (graph %.1f MB + code store %.1f MB, BM25 %.1f MB, embeddings %.1f MB, vectors %.1f MB)",
			head[:10], ires.Functions, mb(headBytes), time.Since(start).Round(time.Second), mb(size(b, bk, repo.GraphPrefix(head))),
			mb(size(b, bk, repo.CodePrefix())), mb(size(b, bk, repo.Prefix()+"sparse/")), mb(size(b, bk, repo.Prefix()+"embeddings/")),
			mb(size(b, bk, repo.Prefix()+"vectors/")))
		var total, own, code int64
		for _, c := range commits[1:] {
			before := size(b, bk, repo.Prefix())
			codeBefore := size(b, bk, repo.CodePrefix())
			t0 := time.Now()
			res, err := Ensure(ctx, Config{Bucket: bk, GitDir: gitDir}, repo, c)
			if err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(t0)
			grown := size(b, bk, repo.Prefix()) - before
			mine := size(b, bk, repo.SnapshotPrefix(c))
			newCode := size(b, bk, repo.CodePrefix()) - codeBefore
			total += grown
			own += mine
			code += newCode
			m := res.Manifest
			var read int64
			for _, s := range m.Graph.Code {
				read += s.Bytes
			}
			// What a query pays to load the graph (graph cache cold).
			t1 := time.Now()
			if _, err := graphstore.Read(ctx, bk, m.Graph); err != nil {
				b.Fatal(err)
			}
			load := time.Since(t1)
			b.Logf("snapshot %s: %d functions (%d embedded anew), +%.2f MB (prefix %.2f MB: nodes %.2f, edges %.2f, BM25 %.2f; code store +%.2f MB, %d segments read, %.2f MB; embedding cache +%.2f MB) in %s; graph loads in %s",
				c[:10], m.Search.Functions, res.Embedded, mb(grown), mb(mine), mb(m.Graph.NodesBytes), mb(m.Graph.EdgesBytes), mb(m.Search.SparseBytes),
				mb(newCode), len(m.Graph.Code), mb(read), mb(grown-mine-newCode), elapsed.Round(time.Second), load.Round(time.Millisecond))
		}
		k := float64(len(commits) - 1)
		b.ReportMetric(mb(total)/k, "MB/snapshot")
		b.ReportMetric(mb(own)/k, "MB-prefix/snapshot")
		b.ReportMetric(mb(code)/k, "MB-code/snapshot")
		b.ReportMetric(mb(headBytes), "MB-head")
	}
}

func size(b *testing.B, bk *blob.Bucket, prefix string) int64 {
	objs, err := bk.List(context.Background(), prefix)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, o := range objs {
		n += o.Size
	}
	return n
}

func mb(n int64) float64 { return float64(n) / 1e6 }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
