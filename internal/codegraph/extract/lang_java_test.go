package extract

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func extractJava(t *testing.T, src string) *FileResult {
	t.Helper()
	res, err := javaLang{}.Extract(context.Background(), "X.java", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, []byte(src), res)
	return res
}

// The golden files don't show lines of imports and calls.
func TestJavaLinesAndPackage(t *testing.T) {
	res := extractJava(t, `package a.b;

import static x.Y.z;
import p.*;

class C {
  void m() {
    z();
    new D();
    this.m();
    Stream.of(1)
        .map(String::valueOf)
        .count();
  }
}
`)
	if res.Package != "a.b" {
		t.Errorf("package %q, want a.b", res.Package)
	}
	wantImports := []Import{
		{Module: "x.Y", Names: []string{"z"}, Line: 3},
		{Module: "p", Names: []string{"*"}, Line: 4},
	}
	if !reflect.DeepEqual(res.Imports, wantImports) {
		t.Errorf("imports %+v, want %+v", res.Imports, wantImports)
	}
	wantCalls := []Call{
		{From: "C.m", Callee: "z", Line: 8},
		{From: "C.m", Callee: "D", Line: 9},
		{From: "C.m", Callee: "this.m", Line: 10},
		{From: "C.m", Callee: "Stream.of.map.count", Line: 13},
		{From: "C.m", Callee: "Stream.of.map", Line: 12},
		{From: "C.m", Callee: "Stream.of", Line: 11},
		{From: "C.m", Callee: "String.valueOf", Line: 12},
	}
	if !reflect.DeepEqual(res.Calls, wantCalls) {
		t.Errorf("calls %+v, want %+v", res.Calls, wantCalls)
	}
}

// A file cut anywhere (an editor's partial save, a size-capped blob) must
// extract without error and with consistent spans, and a cut inside a method
// keeps the classes around it.
func TestJavaEveryPrefix(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "java", "Scheduler.java"))
	if err != nil {
		t.Fatal(err)
	}
	step := 7
	if testing.Short() {
		step = 61
	}
	for n := 0; n <= len(src); n += step {
		res, err := javaLang{}.Extract(context.Background(), "Scheduler.java", src[:n])
		if err != nil {
			t.Fatalf("prefix %d: %v", n, err)
		}
		checkSpans(t, src[:n], res)
	}
	cut := strings.Index(string(src), "d.forEachRemaining(")
	res := extractJava(t, string(src[:cut+len("d.forEachRemaining(")]))
	var names []string
	for _, d := range res.Defs {
		names = append(names, d.Name)
	}
	for _, want := range []string{"Scheduler", "Scheduler.drain", "Scheduler.drain.Drainer.next"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("cut file lost %s: %v", want, names)
		}
	}
}

func TestJavaInvalidUTF8(t *testing.T) {
	res := extractJava(t, "class C\xff {\n  void m\xfe() { String s = \"\xc3\"; f\x80(); }\n}\n")
	if len(res.Defs) == 0 {
		t.Errorf("no definitions kept: %+v", res)
	}
}

func FuzzJavaExtract(f *testing.F) {
	f.Add([]byte("class A { void f() { new B() { void g() {} }; } }"))
	f.Add([]byte("enum E { A { }, B; E() {} E(int x) {} }"))
	f.Add([]byte("record R(int a) { R { } R(String s) { this(1); } }"))
	f.Add([]byte("class A {\n  void f() {\n    if (x) {\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := javaLang{}.Extract(context.Background(), "F.java", src)
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, src, res)
	})
}

// TestJavaDotted: a qualified name reads the same by its text as by its
// parts, whatever stands between them.
func TestJavaDotted(t *testing.T) {
	cases := []struct{ src, want string }{
		{"import a.b.C;", "a.b.C"},
		{"import a . b.C;", "a.b.C"},
		{"import a./* x */b.C;", "a.b.C"},
		{"import a.\n  b.C;", "a.b.C"},
		{"import a.b$c.D_1;", "a.b$c.D_1"},
		{"import a.b.;", "a.b"},
		{"import ä.b.C;", "ä.b.C"},
	}
	for _, c := range cases {
		res := extractJava(t, c.src+"\nclass A {}\n")
		if len(res.Imports) != 1 || res.Imports[0].Module != c.want {
			t.Errorf("%q: imports %+v, want %q", c.src, res.Imports, c.want)
		}
	}
	for _, b := range []string{"", ".a", "a.", "a..b", "a b", "a/b", "ä"} {
		if javaPlainDotted([]byte(b)) {
			t.Errorf("%q is taken for a plain dotted name", b)
		}
	}
}
