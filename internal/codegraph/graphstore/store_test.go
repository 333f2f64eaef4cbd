package graphstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/schema"
)

func storedGraph(t *testing.T) (dir string, b *blob.Bucket, info schema.GraphInfo, g *codegraph.Graph) {
	t.Helper()
	src := map[string]string{
		"pkg/a.py": "class A:\n    def m(self):\n        return helper()\n\n\ndef helper():\n    return 1\n",
		"pkg/b.py": "from pkg.a import helper\n\n\ndef run():\n    return helper()\n",
	}
	var files []codegraph.File
	for p, c := range src {
		files = append(files, codegraph.File{Path: p, Regular: true, Read: func() ([]byte, error) { return []byte(c), nil }})
	}
	ctx := context.Background()
	g, err := codegraph.Build(ctx, files, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	b, err = blob.OpenFile(dir, fileblob.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	info, err = Write(ctx, b, "acme/widgets", strings.Repeat("c", 40), g)
	if err != nil {
		t.Fatal(err)
	}
	return dir, b, info, g
}

func TestStoreRoundTripRecordsChecksums(t *testing.T) {
	_, b, info, g := storedGraph(t)
	if info.NodesBytes == 0 || len(info.NodesSHA256) != 64 || info.EdgesBytes == 0 || len(info.EdgesSHA256) != 64 {
		t.Fatalf("info %+v: want sizes and SHA-256 of both tables", info)
	}
	back, err := Read(context.Background(), b, info)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Nodes, g.Nodes) || !reflect.DeepEqual(back.Edges, g.Edges) {
		t.Errorf("graph changed in the store")
	}
	// A manifest written before sizes and sums were recorded still reads.
	old := info
	old.NodesBytes, old.NodesSHA256, old.EdgesBytes, old.EdgesSHA256 = 0, "", 0, ""
	if _, err := Read(context.Background(), b, old); err != nil {
		t.Errorf("graph without recorded sums: %v", err)
	}
}

// TestDamagedGraphIsCorrupt: any damage to a table is an error naming the key
// and wrapping blob.ErrCorrupt (not retried, rebuilt), even when the recorded
// sums are absent and only the Parquet structure can tell.
func TestDamagedGraphIsCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		damage   func(data []byte) []byte
		withSums bool
	}{
		{"garbage", func([]byte) []byte { return []byte("this is not parquet at all") }, true},
		{"garbage, no recorded sums", func([]byte) []byte { return []byte("this is not parquet at all") }, false},
		{"truncated", func(d []byte) []byte { return d[:len(d)/2] }, true},
		{"truncated, no recorded sums", func(d []byte) []byte { return d[:len(d)/2] }, false},
		{"byte flipped", func(d []byte) []byte { d[len(d)/2] ^= 0xff; return d }, true},
		{"empty", func([]byte) []byte { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, b, info, _ := storedGraph(t)
			path := filepath.Join(dir, filepath.FromSlash(info.NodesKey))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if !tc.withSums {
				info.NodesBytes, info.NodesSHA256 = 0, ""
			}
			_, err = Read(context.Background(), b, info)
			if !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), info.NodesKey) {
				t.Errorf("Read = %v, want an error naming %s and wrapping blob.ErrCorrupt", err, info.NodesKey)
			}
			if err := Verify(context.Background(), b, info); !errors.Is(err, blob.ErrCorrupt) {
				t.Errorf("Verify = %v, want blob.ErrCorrupt", err)
			}
		})
	}
}

// TestWriteKeepsExtracts: a graph built with KeepExtracts is written with
// them, and they read back as kept; one built without them has none.
func TestWriteKeepsExtracts(t *testing.T) {
	ctx := context.Background()
	files := []codegraph.File{{Path: "pkg/a.py", Regular: true, Read: func() ([]byte, error) { return []byte("def f():\n    return g()\n\n\ndef g():\n    return 1\n"), nil }}}
	b, err := blob.OpenFile(t.TempDir(), fileblob.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, keep := range []bool{true, false} {
		g, err := codegraph.Build(ctx, files, codegraph.Options{KeepExtracts: keep})
		if err != nil {
			t.Fatal(err)
		}
		info, err := Write(ctx, b, "acme/widgets", strings.Repeat("d", 40), g)
		if err != nil {
			t.Fatal(err)
		}
		if !keep {
			if info.ExtractsKey != "" {
				t.Errorf("extractions written for a graph that kept none: %s", info.ExtractsKey)
			}
			continue
		}
		if info.ExtractsKey != info.NodesKey[:len(info.NodesKey)-len("nodes.parquet")]+"extracts.gob.zst" || info.ExtractsBytes == 0 || len(info.ExtractsSHA256) != 64 {
			t.Fatalf("info %+v: want the extractions beside the tables, with size and SHA-256", info)
		}
		back, err := ReadExtracts(ctx, b, info)
		if err != nil || !reflect.DeepEqual(back, g.Extracts) {
			t.Fatalf("extractions read back: %v (equal: %v)", err, reflect.DeepEqual(back, g.Extracts))
		}
	}
}
