package extract

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestGoLinesAndSpans(t *testing.T) {
	src := []byte("package p\n\nimport (\n\tx \"a/b\"\n\t`raw/c`\n)\n\n// T doc.\ntype T[K comparable] struct{ io.Reader }\n\nfunc (t *T[K]) M() {\n\tfmt.Println(New[K]())\n}\n")
	res, err := goLang{}.Extract(context.Background(), "p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	wantImports := []Import{{Module: "a/b", Alias: "x", Line: 4}, {Module: "raw/c", Line: 5}}
	if !reflect.DeepEqual(res.Imports, wantImports) {
		t.Errorf("imports:\n got %+v\nwant %+v", res.Imports, wantImports)
	}
	wantCalls := []Call{{From: "T.M", Callee: "fmt.Println", Line: 12}, {From: "T.M", Callee: "New", Line: 12}}
	if !reflect.DeepEqual(res.Calls, wantCalls) {
		t.Errorf("calls:\n got %+v\nwant %+v", res.Calls, wantCalls)
	}
	wantInherits := []Inherit{{Class: "T", Base: "io.Reader"}}
	if !reflect.DeepEqual(res.Inherits, wantInherits) {
		t.Errorf("inherits:\n got %+v\nwant %+v", res.Inherits, wantInherits)
	}
	// A lone type spec spans its declaration from "type"; doc comments are outside.
	starts := map[string]string{"T": "type T[K comparable]", "T.M": "func (t *T[K]) M()"}
	for _, d := range res.Defs {
		want, ok := starts[d.Name]
		if !ok {
			t.Errorf("unexpected def %q", d.Name)
			continue
		}
		if got := string(src[d.StartByte:d.EndByte]); !strings.HasPrefix(got, want) {
			t.Errorf("%s starts %q, want prefix %q", d.Name, got, want)
		}
		delete(starts, d.Name)
	}
	if len(starts) > 0 {
		t.Errorf("missing defs: %v", starts)
	}
}

func TestGoCallee(t *testing.T) {
	cases := map[string][]string{
		"F()":               {"F"},
		"fmt.Println()":     {"fmt.Println"},
		"s.a.b()":           {"s.a.b"},
		"a().b()":           {"b", "a"},
		"x.(T).M()":         {"M"},
		"fns[0]()":          nil,
		"f()()":             {"f"},
		"func() { g() }()":  {"g"},
		"(s.f)()":           {"s.f"},
		"(*T).M(t)":         {"M"},
		"pkg.F[int](x)":     {"pkg.F"},
		"[]byte(s)":         nil,
		"F[int, string](x)": {"F"},
	}
	for expr, want := range cases {
		src := "package p\nfunc f() {\n\t" + expr + "\n}\n"
		res, err := goLang{}.Extract(context.Background(), "p.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range res.Calls {
			got = append(got, c.Callee)
			if c.From != "f" {
				t.Errorf("%s: call from %q, want f", expr, c.From)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: callees %q, want %q", expr, got, want)
		}
		if res.ErrorNodes != 0 {
			t.Errorf("%s: %d error nodes", expr, res.ErrorNodes)
		}
	}
}

// Extract shares nothing between calls: run both languages from many goroutines.
func TestGoPythonConcurrent(t *testing.T) {
	pySrc := []byte("class A(B):\n    def f(self):\n        return g()\n")
	goSrc := []byte("package p\ntype A struct{ B }\nfunc (a A) F() { g() }\n")
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				for _, c := range []struct {
					l   Language
					src []byte
				}{{pythonLang{}, pySrc}, {goLang{}, goSrc}} {
					res, err := c.l.Extract(context.Background(), "x"+c.l.Extensions()[0], c.src)
					if err != nil || len(res.Defs) != 2 || len(res.Calls) != 1 || len(res.Inherits) != 1 {
						t.Errorf("%s: %+v, %v", c.l.Name(), res, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestGoRegistered(t *testing.T) {
	if l := languageFor("cmd/main.go"); l == nil || l.Name() != "go" {
		t.Fatalf("languageFor(.go) = %v", l)
	}
}

// fuzzPyGoExtract checks that any input extracts without error into valid spans
// and file-unique names; the seeds are the golden fixtures.
func fuzzPyGoExtract(f *testing.F, l Language) {
	dir := filepath.Join("testdata", l.Name())
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".golden") {
			if src, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				f.Add(src)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := l.Extract(context.Background(), "x"+l.Extensions()[0], src)
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, src, res)
		for _, c := range res.Calls {
			if c.Callee == "" || strings.HasPrefix(c.Callee, ".") || strings.HasSuffix(c.Callee, ".") || strings.Contains(c.Callee, "..") {
				t.Errorf("bad callee %q", c.Callee)
			}
		}
		for _, im := range res.Imports {
			if im.Module == "" {
				t.Errorf("empty import module")
			}
			for _, n := range im.Names {
				if n == "" {
					t.Errorf("empty import name in %q", im.Module)
				}
			}
		}
		for _, in := range res.Inherits {
			if in.Base == "" || in.Class == "" {
				t.Errorf("bad inherit %+v", in)
			}
		}
	})
}

func FuzzGoExtract(f *testing.F)     { fuzzPyGoExtract(f, goLang{}) }
func FuzzPythonExtract(f *testing.F) { fuzzPyGoExtract(f, pythonLang{}) }
