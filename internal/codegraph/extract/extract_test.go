package extract

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unsafe"

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

// bufferResult gives each result's definitions, imports and calls arrays
// of their own length (nil for none), however the reused buffers grew, and
// hands the buffers back cleared: a later file's result never shares them,
// nor keeps an earlier file's strings alive through them.
func TestBufferResult(t *testing.T) {
	type kept struct{ defs, imports, calls int }
	var results []*FileResult
	for _, n := range []kept{{0, 0, 0}, {3, 1, 0}, {1000, 50, 2000}, {2, 0, 5}, {0, 0, 0}, {70, 9, 1}} {
		res := &FileResult{}
		settle := bufferResult(res)
		for i := range n.defs {
			res.Defs = append(res.Defs, Def{Name: fmt.Sprint("d", i)})
		}
		for i := range n.imports {
			res.Imports = append(res.Imports, Import{Module: fmt.Sprint("m", i)})
		}
		for i := range n.calls {
			res.Calls = append(res.Calls, Call{Callee: fmt.Sprint("g", i), Line: i + 1})
		}
		defs, imports, calls := res.Defs, res.Imports, res.Calls
		settle()
		checkSettled(t, "defs", n.defs, res.Defs, defs)
		checkSettled(t, "imports", n.imports, res.Imports, imports)
		checkSettled(t, "calls", n.calls, res.Calls, calls)
		results = append(results, res)
	}
	for _, r := range results { // later files did not write into earlier results
		for i, d := range r.Defs {
			if d.Name != fmt.Sprint("d", i) {
				t.Fatalf("a result of %d definitions changed: %d = %+v", len(r.Defs), i, d)
			}
		}
		for i, m := range r.Imports {
			if m.Module != fmt.Sprint("m", i) {
				t.Fatalf("a result of %d imports changed: %d = %+v", len(r.Imports), i, m)
			}
		}
		for i, c := range r.Calls {
			if c.Callee != fmt.Sprint("g", i) || c.Line != i+1 {
				t.Fatalf("a result of %d calls changed: %d = %+v", len(r.Calls), i, c)
			}
		}
	}
}

// checkSettled: got holds n elements in an array of its own, not buf (what
// the walk appended to), and buf was cleared.
func checkSettled[T any](t *testing.T, what string, n int, got, buf []T) {
	t.Helper()
	if n == 0 {
		if got != nil {
			t.Errorf("no %s: got %v, want nil", what, got)
		}
		return
	}
	if len(got) != n || cap(got) != n {
		t.Errorf("%d %s: len %d cap %d, want both %d", n, what, len(got), cap(got), n)
	}
	if &got[0] == &buf[0] {
		t.Errorf("%d %s: the result shares the reused buffer", n, what)
	}
	if !reflect.ValueOf(buf[n-1]).IsZero() {
		t.Errorf("%d %s: the buffer was not cleared: %v", n, what, buf[n-1])
	}
}

// With WithStableSource, Extract finds what it finds without it, and the
// names and callees it reads from the file are parts of the file's string.
// Without it, nothing it returns shares the caller's bytes: a caller that
// reuses its buffer (package changes) changes no result.
func TestStableSource(t *testing.T) {
	shared, sharedDotted := 0, 0
	for _, in := range flatTestInputs(t) {
		path, _, _ := strings.Cut(in.path, " ")
		l := languageFor(path)
		text := string(in.src)
		src := unsafe.Slice(unsafe.StringData(text), len(text))
		want, err := l.Extract(context.Background(), path, bytes.Clone(in.src))
		if err != nil {
			t.Fatalf("%s: %v", in.path, err)
		}
		got, err := l.Extract(WithStableSource(context.Background(), text), path, src)
		if err != nil {
			t.Fatalf("%s: %v", in.path, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: with a stable source Extract found\n%+v\nwant\n%+v", in.path, got, want)
		}
		within := func(s string) bool {
			p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
			return len(s) > 0 && p >= uintptr(unsafe.Pointer(unsafe.StringData(text))) && p < uintptr(unsafe.Pointer(unsafe.StringData(text)))+uintptr(len(text))
		}
		for _, c := range got.Calls {
			if within(c.Callee) {
				shared++
				if strings.Contains(c.Callee, ".") {
					sharedDotted++
				}
			}
		}
		// Without the promise: overwrite the buffer Extract read, and the
		// result must not change.
		buf := bytes.Clone(in.src)
		res, err := l.Extract(context.Background(), path, buf)
		if err != nil {
			t.Fatalf("%s: %v", in.path, err)
		}
		for i := range buf {
			buf[i] = 'x'
		}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("%s: overwriting the source after Extract changed its result", in.path)
		}
	}
	if shared == 0 || sharedDotted == 0 {
		t.Errorf("%d callees, %d of them dotted (joinDot), were parts of the stable text: want some of each", shared, sharedDotted)
	}
}
