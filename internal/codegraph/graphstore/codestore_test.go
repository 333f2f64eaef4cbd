package graphstore

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/cputime"
	"github.com/locus-dev/locus/schema"
)

func TestCodeStore(t *testing.T) {
	ctx := context.Background()
	_, b, info, g := storedGraph(t)
	repo := schema.RepoName("acme/widgets")
	if len(info.Code) != 1 || info.CodeNodes == 0 || !strings.HasPrefix(info.Code[0].Key, repo.CodePrefix()) {
		t.Fatalf("graph info lists code %+v (%d nodes); want one segment of %s", info.Code, info.CodeNodes, repo.CodePrefix())
	}
	inline, err := readParquet[codegraph.Node](ctx, b, info.NodesKey, info.NodesBytes, info.NodesSHA256)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range inline {
		if n.Code != "" {
			t.Errorf("node %s keeps its code in nodes.parquet", n.ID)
		}
	}

	for _, tc := range []struct {
		name string
		edit func(g *codegraph.Graph)
		// rows the second write stores: none when all its content is stored
		rows int
		// inline nodes keep their code in nodes.parquet
		inline int
	}{
		{"the same graph again", func(*codegraph.Graph) {}, 0, 0},
		{"one function changed", func(g *codegraph.Graph) {
			for i := range g.Nodes {
				if g.Nodes[i].ID == "pkg/b.py:run" {
					g.Nodes[i].Code += "  # changed"
					g.Nodes[i].ContentHash = codegraph.ContentHash(g.Nodes[i].Code)
				}
			}
		}, 1, 0},
		{"a content hash that is not the code's", func(g *codegraph.Graph) {
			for i := range g.Nodes {
				if g.Nodes[i].ID == "pkg/b.py:run" {
					g.Nodes[i].Code += "  # not hashed"
				}
			}
		}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g2 := &codegraph.Graph{Nodes: append([]codegraph.Node(nil), g.Nodes...), Edges: g.Edges}
			tc.edit(g2)
			before, err := b.List(ctx, repo.CodePrefix())
			if err != nil {
				t.Fatal(err)
			}
			info2, err := WriteAt(ctx, b, repo, "snap/"+tc.name+"/", info.Commit, g2)
			if err != nil {
				t.Fatal(err)
			}
			after, err := b.List(ctx, repo.CodePrefix())
			if err != nil {
				t.Fatal(err)
			}
			rows := 0
			old := map[string]bool{}
			for _, o := range before {
				old[o.Key] = true
			}
			for _, s := range info2.Code {
				if !old[s.Key] {
					rows += s.Rows
				}
			}
			if rows != tc.rows || len(after)-len(before) != min(tc.rows, 1) {
				t.Errorf("second write stored %d rows in %d new segments, want %d", rows, len(after)-len(before), tc.rows)
			}
			back, err := Read(ctx, b, info2)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Nodes, g2.Nodes) {
				t.Errorf("graph changed in the store")
			}
			stored := 0
			for _, n := range g2.Nodes {
				if n.ContentHash != "" {
					stored++
				}
			}
			if info2.CodeNodes != stored-tc.inline {
				t.Errorf("%d nodes read their code from the store, want %d", info2.CodeNodes, stored-tc.inline)
			}
		})
	}

	// A segment that lost content a graph needs: named, corrupt.
	info3 := info
	info3.Code = nil
	other := &codegraph.Graph{Nodes: []codegraph.Node{{ID: "x.py", Type: codegraph.TypeFile, ContentHash: codegraph.ContentHash("x = 1\n"), Code: "x = 1\n"}}}
	oi, err := WriteAt(ctx, b, repo, "other/", info.Commit, other)
	if err != nil {
		t.Fatal(err)
	}
	info3.Code = oi.Code
	if _, err := Read(ctx, b, info3); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), "in none of them") {
		t.Errorf("graph read with another graph's segments: %v; want ErrCorrupt naming a node without code", err)
	}
}

// BenchmarkGraphRead compares loading a graph whose code is inline (as
// before the code store) with loading it from the code store, for the head
// of the repository at LOCUS_BENCH_REPO:
//
//	LOCUS_BENCH_REPO=/path/to/sympy.git go test ./internal/codegraph/graphstore -run '^$' -bench GraphRead -benchtime 5x
func BenchmarkGraphRead(b *testing.B) {
	gitDir := os.Getenv("LOCUS_BENCH_REPO")
	if gitDir == "" {
		b.Skip("set LOCUS_BENCH_REPO to a git directory to measure graph loading")
	}
	ctx := context.Background()
	head, err := gitrepo.Resolve(gitDir, "HEAD")
	if err != nil {
		b.Fatal(err)
	}
	g, err := codegraph.BuildCommit(ctx, gitDir, "", head, codegraph.Options{})
	if err != nil {
		b.Fatal(err)
	}
	bk, err := blob.OpenFile(b.TempDir(), fileblob.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	shared, err := Write(ctx, bk, "bench/repo", head.String(), g)
	if err != nil {
		b.Fatal(err)
	}
	inline := shared
	inline.NodesKey, inline.Code, inline.CodeNodes = "inline/nodes.parquet", nil, 0
	if inline.NodesBytes, inline.NodesSHA256, err = writeParquet(ctx, bk, inline.NodesKey, validNodes(g.Nodes)); err != nil {
		b.Fatal(err)
	}
	var code int64
	for _, s := range shared.Code {
		code += s.Bytes
	}
	for _, c := range []struct {
		name  string
		info  schema.GraphInfo
		bytes int64
	}{{"inline", inline, inline.NodesBytes}, {"code-store", shared, shared.NodesBytes + code}} {
		b.Run(c.name, func(b *testing.B) {
			// CPU time as well as wall time: on a shared machine the
			// first says more.
			cpu0 := cputime.Process()
			t0 := time.Now()
			for range b.N {
				if _, err := Read(ctx, bk, c.info); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.bytes)/1e6, "MB-nodes+code")
			b.ReportMetric(float64(time.Since(t0).Milliseconds())/float64(b.N), "ms/read")
			b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/read")
		})
	}
}

// TestCodeSegmentsDecodedOnce: a segment read before is answered from the
// process's cache while the object is the one read (same ETag); once the
// object is replaced it is read and checked again.
func TestCodeSegmentsDecodedOnce(t *testing.T) {
	ctx := context.Background()
	dir, b, info, g := storedGraph(t)
	if _, err := Read(ctx, b, info); err != nil {
		t.Fatal(err)
	}
	file := dir + "/" + info.Code[0].Key
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	// Garbage of the same size and time: the object's ETag is unchanged,
	// so only a cached decoding can answer.
	if err := os.WriteFile(file, make([]byte, fi.Size()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, err := Read(ctx, b, info)
	if err != nil {
		t.Fatalf("a segment decoded before was read again: %v", err)
	}
	if !reflect.DeepEqual(got.Nodes, g.Nodes) {
		t.Fatal("nodes from the cached segment differ from the graph written")
	}
	// Replaced (a new time): read and checked, so the damage is found.
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(ctx, b, info); !errors.Is(err, blob.ErrCorrupt) {
		t.Fatalf("a replaced, damaged segment: %v; want ErrCorrupt", err)
	}
}
