package extract

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// render prints a FileResult as sorted, stable text for golden files.
func render(r *FileResult) string {
	var lines []string
	for _, d := range r.Defs {
		lines = append(lines, fmt.Sprintf("def %s %s %d-%d", d.Kind, d.Name, d.StartLine, d.EndLine))
	}
	for _, im := range r.Imports {
		s := "import " + im.Module
		if len(im.Names) > 0 {
			names := make([]string, len(im.Names))
			for i, n := range im.Names {
				names[i] = n
				if i < len(im.Locals) && im.Locals[i] != "" && im.Locals[i] != n {
					names[i] += "→" + im.Locals[i]
				}
			}
			s += " [" + strings.Join(names, ",") + "]"
		}
		if im.Alias != "" {
			s += " as " + im.Alias
		}
		lines = append(lines, s)
	}
	for _, c := range r.Calls {
		from := c.From
		if from == "" {
			from = "<module>"
		}
		lines = append(lines, fmt.Sprintf("call %s -> %s", from, c.Callee))
	}
	for _, in := range r.Inherits {
		lines = append(lines, fmt.Sprintf("inherits %s -> %s", in.Class, in.Base))
	}
	for _, d := range r.Decls {
		lines = append(lines, "decl "+d)
	}
	sort.Strings(lines)
	lines = dedupe(lines)
	if r.Package != "" {
		lines = append([]string{"package " + r.Package}, lines...)
	}
	lines = append(lines, fmt.Sprintf("errors %d", r.ErrorNodes))
	return strings.Join(lines, "\n") + "\n"
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// TestExtractGolden runs every language over its fixtures in
// testdata/<language>/ and compares with <fixture>.golden.
func TestExtractGolden(t *testing.T) {
	for _, lang := range languages() {
		dir := filepath.Join("testdata", lang.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Errorf("%s: no fixtures in %s: %v", lang.Name(), dir, err)
			continue
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".golden") {
				continue
			}
			name := e.Name()
			t.Run(lang.Name()+"/"+name, func(t *testing.T) {
				path := filepath.Join(dir, name)
				src, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if languageFor(name) != lang {
					t.Fatalf("fixture %s is not recognised as %s by its extension", name, lang.Name())
				}
				res, err := lang.Extract(context.Background(), name, src)
				if err != nil {
					t.Fatal(err)
				}
				checkSpans(t, src, res)
				checkGolden(t, path+".golden", render(res), "TestExtractGolden")
			})
		}
	}
}

// checkSpans: every definition's bytes are the source slice of its lines, and
// names are unique within a file.
func checkSpans(t *testing.T, src []byte, r *FileResult) {
	t.Helper()
	seen := map[string]bool{}
	for _, d := range r.Defs {
		if seen[d.Name] {
			t.Errorf("definition name %q appears twice in one file", d.Name)
		}
		seen[d.Name] = true
		if d.StartByte < 0 || d.EndByte > len(src) || d.StartByte > d.EndByte {
			t.Errorf("%s: bytes %d-%d outside the file", d.Name, d.StartByte, d.EndByte)
			continue
		}
		startLine := bytes.Count(src[:d.StartByte], []byte("\n")) + 1
		endLine := startLine + bytes.Count(src[d.StartByte:d.EndByte], []byte("\n"))
		if startLine != d.StartLine || endLine != d.EndLine {
			t.Errorf("%s: lines %d-%d, but its bytes span lines %d-%d", d.Name, d.StartLine, d.EndLine, startLine, endLine)
		}
	}
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, file, got, testName string) {
	t.Helper()
	golden.Check(t, file, got, *update, "go test ./internal/codegraph/extract -run "+testName+" -update")
}

// TestExtractSurvivesGarbage: no extractor panics or errors on bad input.
func TestExtractSurvivesGarbage(t *testing.T) {
	inputs := map[string][]byte{
		"empty":        {},
		"binary":       {0, 1, 2, 0xff, 0xfe, 0, 0x80},
		"invalid utf8": []byte("def f(\xff\xfe):\n  return '\xc3'\n"),
		"unclosed":     []byte("class A {\n  void f() {\n    if (x) {\n"),
		"deep nesting": []byte(strings.Repeat("(", 5000) + strings.Repeat(")", 5000)),
	}
	for _, lang := range languages() {
		for name, src := range inputs {
			res, err := lang.Extract(context.Background(), "x"+lang.Extensions()[0], src)
			if err != nil {
				t.Errorf("%s/%s: %v", lang.Name(), name, err)
				continue
			}
			checkSpans(t, src, res)
		}
	}
}

// bufferCalls gives each result its own array of its calls' length (nil
// for none), however the reused buffer grew, and hands the buffer back
// cleared: a later file's result never shares it, nor keeps an earlier
// file's strings alive through it.
func TestBufferCalls(t *testing.T) {
	var kept [][]Call
	for _, n := range []int{0, 3, 1000, 2, 0, 70} {
		res := &FileResult{}
		settle := bufferCalls(res)
		for i := range n {
			res.Calls = append(res.Calls, Call{From: "f", Callee: fmt.Sprint("g", i), Line: i + 1})
		}
		buf := res.Calls
		settle()
		if n == 0 {
			if res.Calls != nil {
				t.Errorf("%d calls: Calls = %v, want nil", n, res.Calls)
			}
			continue
		}
		if len(res.Calls) != n || cap(res.Calls) != n {
			t.Errorf("%d calls: len %d cap %d, want both %d", n, len(res.Calls), cap(res.Calls), n)
		}
		if &res.Calls[0] == &buf[0] {
			t.Errorf("%d calls: the result shares the reused buffer", n)
		}
		if buf[n-1] != (Call{}) {
			t.Errorf("%d calls: the buffer was not cleared: %v", n, buf[n-1])
		}
		for i, c := range res.Calls {
			if c.Callee != fmt.Sprint("g", i) || c.Line != i+1 {
				t.Fatalf("%d calls: call %d = %+v", n, i, c)
			}
		}
		kept = append(kept, res.Calls)
	}
	for _, calls := range kept { // later files did not write into earlier results
		for i, c := range calls {
			if c.Callee != fmt.Sprint("g", i) {
				t.Fatalf("a result of %d calls changed: call %d = %+v", len(calls), i, c)
			}
		}
	}
}
