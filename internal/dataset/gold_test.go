package dataset

import (
	"context"
	"reflect"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

func TestGoldFromPatch(t *testing.T) {
	g := &codegraph.Graph{Nodes: []codegraph.Node{
		{ID: "pkg/m.py", Type: codegraph.TypeFile, Path: "pkg/m.py", StartLine: 1, EndLine: 40},
		{ID: "pkg/m.py:C", Type: codegraph.TypeClass, Path: "pkg/m.py", StartLine: 1, EndLine: 20},
		{ID: "pkg/m.py:C.a", Type: codegraph.TypeFunction, Path: "pkg/m.py", StartLine: 3, EndLine: 8},
		{ID: "pkg/m.py:C.b", Type: codegraph.TypeFunction, Path: "pkg/m.py", StartLine: 10, EndLine: 20},
		{ID: "pkg/m.py:C.b.inner", Type: codegraph.TypeFunction, Path: "pkg/m.py", StartLine: 12, EndLine: 14},
		{ID: "pkg/m.py:f", Type: codegraph.TypeFunction, Path: "pkg/m.py", StartLine: 25, EndLine: 30},
		{ID: "pkg/n.py:g", Type: codegraph.TypeFunction, Path: "pkg/n.py", StartLine: 1, EndLine: 5},
	}}
	for _, tc := range []struct {
		name  string
		patch string
		want  []string
	}{
		{"replace a line in a method", `diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -4,3 +4,3 @@ class C:
     x = 1
-    y = 2
+    y = 3
     z = 4
`, []string{"pkg/m.py:C.a"}},
		{"a line in a nested function belongs to its enclosing method", `--- a/pkg/m.py
+++ b/pkg/m.py
@@ -12,3 +12,3 @@
 def inner():
-    return 1
+    return 2
 x
`, []string{"pkg/m.py:C.b"}},
		{"insertion strictly inside a function", `--- a/pkg/m.py
+++ b/pkg/m.py
@@ -26,2 +26,3 @@
     a
+    b
     c
`, []string{"pkg/m.py:f"}},
		{"insertion after a function's last line is not inside", `--- a/pkg/m.py
+++ b/pkg/m.py
@@ -30,0 +31,2 @@
+def new():
+    pass
`, nil},
		{"class-level lines outside methods are no function", `--- a/pkg/m.py
+++ b/pkg/m.py
@@ -1,2 +1,2 @@
-class C:
+class C(Base):
     """doc"""
`, nil},
		{"two files, a new file ignored", `--- a/pkg/n.py
+++ b/pkg/n.py
@@ -2 +2 @@
-    old
+    new
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+def x():
+    pass
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -9,3 +9,4 @@
 
 def b(self):
-    pass
+    more
+    lines
`, []string{"pkg/m.py:C.b", "pkg/n.py:g"}},
		{"a deleted line that starts with dashes", `--- a/pkg/m.py
+++ b/pkg/m.py
@@ -27,1 +27,1 @@
---- comment
+++ comment
`, []string{"pkg/m.py:f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GoldFromPatch(g, tc.patch)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := GoldFromPatch(g, "--- a/x\n+++ b/x\n@@ -a,b +c,d @@\n"); err == nil {
		t.Error("a malformed hunk header was accepted")
	}
}

// TestGoldFromPatchNative: gold from a patch over a built graph in Rust
// (an impl method's body), C (a function in a .c file whose header only
// declares it) and C++ (an out-of-line method), and the reason a patch
// that edits only a declaration has no gold.
func TestGoldFromPatchNative(t *testing.T) {
	g := buildTree(t, map[string]string{
		"src/lib.rs":   "pub struct S;\n\nimpl S {\n    pub fn get(&self) -> u32 {\n        1\n    }\n}\n",
		"c/list.h":     "int list_sum(int n);\n",
		"c/list.c":     "#include \"list.h\"\nint list_sum(int n) {\n    return n;\n}\n",
		"cc/shape.hpp": "class Shape {\n public:\n  int area() const;\n};\n",
		"cc/shape.cpp": "#include \"shape.hpp\"\nint Shape::area() const {\n  return 1;\n}\n",
	})
	for _, tc := range []struct {
		name, patch string
		want        []string
		why         string
	}{
		{"rust impl method", "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -4,3 +4,3 @@ impl S {\n     pub fn get(&self) -> u32 {\n-        1\n+        2\n     }\n", []string{"src/lib.rs:S.get"}, ""},
		{"c function", "--- a/c/list.c\n+++ b/c/list.c\n@@ -2,3 +2,3 @@\n int list_sum(int n) {\n-    return n;\n+    return n + 1;\n }\n", []string{"c/list.c:list_sum"}, ""},
		{"c++ out-of-line method", "--- a/cc/shape.cpp\n+++ b/cc/shape.cpp\n@@ -2,3 +2,3 @@\n int Shape::area() const {\n-  return 1;\n+  return 2;\n }\n", []string{"cc/shape.cpp:Shape.area"}, ""},
		{"a declaration only", "--- a/c/list.h\n+++ b/c/list.h\n@@ -1 +1 @@\n-int list_sum(int n);\n+int list_sum(long n);\n", nil,
			"no function-level edit: no graph for the files it edits: c/list.h (defines no function)"},
		{"another language", "--- a/build.zig\n+++ b/build.zig\n@@ -1 +1 @@\n-a\n+b\n", nil,
			"no function-level edit: no graph for the files it edits: build.zig (no graph for language zig)"},
	} {
		got, err := GoldFromPatch(g, tc.patch)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != len(tc.want) || len(got) > 0 && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: gold %v, want %v", tc.name, got, tc.want)
		}
		if tc.why != "" {
			if why := NoGoldReason(g, tc.patch); why != tc.why {
				t.Errorf("%s: reason %q, want %q", tc.name, why, tc.why)
			}
		}
	}
}

// buildTree builds the graph of files (path → content) written into a new
// gitfixture work tree.
func buildTree(t *testing.T, files map[string]string) *codegraph.Graph {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(files)
	fs, err := codegraph.DirFiles(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := codegraph.Build(context.Background(), fs, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
