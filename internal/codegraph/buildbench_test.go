package codegraph

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/cputime"
)

// BenchmarkBuildVsParse measures the graph build against tree-sitter
// parsing alone over the files of LOCUS_BENCH_REPO's head, held in memory,
// in CPU time, which is steadier than wall time on a shared machine. Each op
// is one pass of each; LOCUS_BENCH_WORKERS sets the workers (default 1):
//
//	LOCUS_BENCH_REPO=/path/to/repo.git go test ./internal/codegraph -run '^$' -bench BuildVsParse -benchtime 5x
func BenchmarkBuildVsParse(b *testing.B) {
	gitDir := os.Getenv("LOCUS_BENCH_REPO")
	if gitDir == "" {
		b.Skip("set LOCUS_BENCH_REPO to a git directory to measure the graph build")
	}
	ctx := context.Background()
	head, err := gitrepo.Resolve(gitDir, "HEAD")
	if err != nil {
		b.Fatal(err)
	}
	snap, err := gitrepo.OpenSnapshot(ctx, gitDir, "", head)
	if err != nil {
		b.Fatal(err)
	}
	var files []File
	for _, f := range GitFiles(snap) {
		data, err := f.Read()
		if err != nil { // a fetched mirror may lack its largest blobs
			b.Logf("left out %s: %v", f.Path, err)
			continue
		}
		data = bytes.Clone(data) // Read may reuse its buffer
		files = append(files, File{Path: f.Path, Regular: f.Regular, Read: func() ([]byte, error) { return data, nil }})
	}
	snap.Close()
	opts := Options{Workers: workersFromEnv()}
	// The passes alternate, so that a machine's slow spell falls on both.
	var cpu [2]time.Duration
	for range b.N {
		for i := range cpu {
			cpu0 := cputime.Process()
			var err error
			if i == 0 {
				_, _, err = ParseOnly(ctx, files, opts)
			} else {
				var g *Graph
				g, err = Build(ctx, files, opts)
				if err == nil && g.Stats.Nodes == 0 {
					b.Fatal("empty graph")
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			cpu[i] += cputime.Process() - cpu0
		}
	}
	b.ReportMetric(float64(cpu[0].Milliseconds())/float64(b.N), "parse-cpu-ms/op")
	b.ReportMetric(float64(cpu[1].Milliseconds())/float64(b.N), "build-cpu-ms/op")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "build/parse")
}

// workersFromEnv is LOCUS_BENCH_WORKERS, at least 1.
func workersFromEnv() int {
	n, _ := strconv.Atoi(os.Getenv("LOCUS_BENCH_WORKERS"))
	return max(n, 1)
}
