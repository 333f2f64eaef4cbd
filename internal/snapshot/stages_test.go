package snapshot

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// BenchmarkSnapshotDerive indexes the head of the repository at
// LOCUS_BENCH_REPO (a git directory) and builds snapshots of the commits
// listed in the file LOCUS_BENCH_COMMITS (one per line, in the order a run
// asks for them) three ways: the stages of a build from scratch, timed apart
// (graph build; the same build with every file's extraction at hand, that
// is reading, hashing and cross-file resolution without parsing; graph
// write; embedding and BM25 with their writes), Ensure from scratch, and
// Ensure deriving each from the nearest built commit; it reports the mean
// of each and the bytes a derived snapshot adds to the store.
//
//	LOCUS_BENCH_REPO=/path/to/repo.git LOCUS_BENCH_COMMITS=commits.txt go test ./internal/snapshot -run '^$' -bench SnapshotDerive -benchtime 1x -v
func BenchmarkSnapshotDerive(b *testing.B) {
	gitDir := os.Getenv("LOCUS_BENCH_REPO")
	f, err := os.Open(os.Getenv("LOCUS_BENCH_COMMITS"))
	if gitDir == "" || err != nil {
		b.Skip("set LOCUS_BENCH_REPO to a git directory and LOCUS_BENCH_COMMITS to a file of its commits to measure snapshot derivation")
	}
	var commits []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			commits = append(commits, s)
		}
	}
	f.Close()
	out, err := exec.Command("git", "--git-dir", gitDir, "rev-parse", "HEAD").Output()
	if err != nil {
		b.Fatal(err)
	}
	head := strings.TrimSpace(string(out))
	ctx := context.Background()
	repo := schema.RepoName("bench/repo")
	for range b.N {
		stages, scratch, derived := blobtest.Bucket(b), blobtest.Bucket(b), blobtest.Bucket(b)
		indexKeeping(b, scratch, repo, gitDir, head)
		indexKeeping(b, derived, repo, gitDir, head)
		var build, resolve, write, index, tScratch, tDerived time.Duration
		var parsed, files int
		var added int64
		for _, c := range commits {
			h, _ := gitrepo.ParseHash(c)
			t0 := time.Now()
			g, err := codegraph.BuildCommit(ctx, gitDir, "", h, codegraph.Options{KeepExtracts: true})
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			g2, err := codegraph.BuildCommit(ctx, gitDir, "", h, codegraph.Options{Reuse: g.Extracts})
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			info, err := graphstore.WriteAt(ctx, stages, repo, repo.SnapshotPrefix(c)+"graph/", c, g2)
			if err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			if _, err := search.IndexSnapshot(ctx, search.Deps{Bucket: stages}, repo, info, nil); err != nil {
				b.Fatal(err)
			}
			t4 := time.Now()
			if _, err := Ensure(ctx, Config{Bucket: scratch, GitDir: gitDir, Scratch: true}, repo, c); err != nil {
				b.Fatal(err)
			}
			t5 := time.Now()
			before := size(b, derived, repo.Prefix())
			res, err := Ensure(ctx, Config{Bucket: derived, GitDir: gitDir}, repo, c)
			if err != nil {
				b.Fatal(err)
			}
			t6 := time.Now()
			grown := size(b, derived, repo.Prefix()) - before
			build, resolve, write, index = build+t1.Sub(t0), resolve+t2.Sub(t1), write+t3.Sub(t2), index+t4.Sub(t3)
			tScratch, tDerived = tScratch+t5.Sub(t4), tDerived+t6.Sub(t5)
			parsed, files, added = parsed+res.Parsed, files+res.Manifest.Graph.Files, added+grown
			b.Logf("%s: %d files, graph %s (without parsing %s), write %s, index %s; Ensure from scratch %s, derived from %.10s %s (parsed %d, BM25 took over %d of %d), +%.2f MB",
				c[:10], g.Stats.Files, ms(t1.Sub(t0)), ms(t2.Sub(t1)), ms(t3.Sub(t2)), ms(t4.Sub(t3)), ms(t5.Sub(t4)), res.Base, ms(t6.Sub(t5)),
				res.Parsed, res.Manifest.Search.SparseReused, res.Manifest.Search.Functions, mb(grown))
		}
		n := time.Duration(len(commits))
		b.Logf("mean of %d snapshots: graph %s (without parsing %s), write %s, index %s; Ensure from scratch %s, derived %s; parsed %d of %d files; %.2f MB added per derived snapshot",
			n, ms(build/n), ms(resolve/n), ms(write/n), ms(index/n), ms(tScratch/n), ms(tDerived/n), parsed, files, mb(added)/float64(n))
		b.ReportMetric(float64(tScratch/n)/1e6, "ms-scratch/snapshot")
		b.ReportMetric(float64(tDerived/n)/1e6, "ms-derived/snapshot")
		b.ReportMetric(mb(added)/float64(n), "MB/snapshot")
	}
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
