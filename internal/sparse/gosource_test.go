package sparse

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goSourceCorpus turns the Go standard library's source into function
// documents in locus's shape (path line, then the function's code; ids
// "path:Recv.name") and uses the doc comments, which are not part of the
// documents, as natural-language queries. Real code for benchmarks, found
// wherever the toolchain is; the benchmark skips when the source is absent.
func goSourceCorpus(tb testing.TB, maxDocs, maxQueries int) ([]synthDoc, []string) {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(filepath.Join(root, "fmt")); err != nil {
		tb.Skipf("Go source not found under %s (GOROOT): %v", root, err)
	}
	var docs []synthDoc
	var queries []string
	seen := map[string]bool{}
	done := false
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if done {
			return filepath.SkipAll
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.Contains(p, "testdata") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			id := rel + ":" + fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				id = rel + ":" + recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			start, end := fset.Position(fd.Pos()).Offset, fset.Position(fd.End()).Offset
			docs = append(docs, synthDoc{id: id, text: rel + "\n" + string(src[start:end])})
			if fd.Doc != nil && len(queries) < maxQueries && len(docs)%3 == 0 {
				queries = append(queries, fd.Doc.Text())
			}
			if len(docs) >= maxDocs {
				done = true
				break
			}
		}
		return nil
	})
	return docs, queries
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	}
	return "_"
}

func BenchmarkSearchGoSource(b *testing.B) {
	docs, queries := goSourceCorpus(b, 20000, 1000)
	ix := buildCorpus(b, docs)
	b.Logf("Go source: %d docs, %d terms, avgdl %.1f tokens, %d queries, file %d bytes",
		ix.Len(), ix.NumTerms(), ix.AvgDocLen(), len(queries), ix.Size())
	lat := make([]time.Duration, 0, 1<<16)
	i := 0
	for b.Loop() {
		t0 := time.Now()
		ix.Search(queries[i%len(queries)], 10)
		lat = append(lat, time.Since(t0))
		i++
	}
	reportPercentiles(b, lat)
}

func BenchmarkLoadGoSource(b *testing.B) {
	docs, _ := goSourceCorpus(b, 10000, 0)
	benchLoad(b, buildCorpus(b, docs))
}

func BenchmarkDecodeGoSource(b *testing.B) {
	docs, _ := goSourceCorpus(b, 10000, 0)
	data := encode(b, buildCorpus(b, docs))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
