package codegraph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/python"
)

// TestFlatTreeMatchesBindings: the flattened tree has the nodes, types,
// spans, fields and nesting the official bindings report.
func TestFlatTreeMatchesBindings(t *testing.T) {
	src := []byte("import os\n\nclass A(B):\n    @dec\n    def f(self, x):\n        return os.path.join(x, 'y')\n\ndef g(:\n")
	ft, err := parseFlat(context.Background(), python.GetLanguage(), "x.py", src)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	var visit func(n *sitter.Node, field string, parent int32)
	visit = func(n *sitter.Node, field string, parent int32) {
		if i >= len(ft.nodes) {
			t.Fatalf("flat tree has fewer nodes than the bindings")
		}
		f := ft.nodes[i]
		self := int32(i)
		i++
		if got := ft.node(self).Type(); got != n.Type() {
			t.Errorf("node %d: type %q, bindings say %q", self, got, n.Type())
		}
		if f.startByte != n.StartByte() || f.endByte != n.EndByte() || f.startRow != n.StartPoint().Row || f.endRow != n.EndPoint().Row {
			t.Errorf("node %d (%s): span differs", self, n.Type())
		}
		if (f.flags&2 != 0) != n.IsMissing() || (f.flags&4 != 0) != (n.Type() == "ERROR") {
			t.Errorf("node %d (%s): missing %v error %v, bindings say %v %v", self, n.Type(), f.flags&2 != 0, f.flags&4 != 0, n.IsMissing(), n.Type() == "ERROR")
		}
		if ft.names.fields[f.field] != field || f.parent != parent || (f.flags&1 != 0) != n.IsNamed() || (f.flags&8 != 0) != n.HasError() {
			t.Errorf("node %d (%s): field %q parent %d named %v, want %q %d %v", self, n.Type(), ft.names.fields[f.field], f.parent, f.flags&1 != 0, field, parent, n.IsNamed())
		}
		if int(f.childCount) != int(n.ChildCount()) {
			t.Errorf("node %d (%s): %d children, want %d", self, n.Type(), f.childCount, n.ChildCount())
		}
		for c := 0; c < int(n.ChildCount()); c++ {
			visit(n.Child(c), n.FieldNameForChild(c), self)
		}
	}
	err = parse(context.Background(), python.GetLanguage(), "x.py", src, func(root *sitter.Node) error {
		visit(root, "", -1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(ft.nodes) {
		t.Errorf("flat tree has %d nodes, bindings %d", len(ft.nodes), i)
	}
}

// TestReparseMatchesParse: a tree read as an edit of another text's tree
// (reparseFlat, as the C and C++ extractor's second readings are) equals
// the tree of a fresh parse, node for node, spans and rows included.
func TestReparseMatchesParse(t *testing.T) {
	const cond = "#ifdef X\nint f(void) {\n#else\nint f(int a) {\n#endif\n  return g(1);\n}\nint h(void) { return 2; }\n"
	tail := strings.Repeat("static int k(int x)\n{\n  return h(x) + 1;\n}\n", 20)
	cases := []struct{ name, old, new string }{
		{"directive lines blanked", cond, strings.NewReplacer("#ifdef X", "        ", "#else", "     ", "#endif", "      ").Replace(cond)},
		{"first branch kept", cond, strings.Replace(strings.Replace(cond, "#else\nint f(int a) {\n#endif", "     \n              \n      ", 1), "#ifdef X", "        ", 1)},
		{"closers appended", "int f(void) {\n  if (x) {\n    g(", "int f(void) {\n  if (x) {\n    g(\n)}}"},
		{"lines joined and split", "int a;\nint b;\nint f(void) { return a; }\n" + tail, "int a; int b;\n\nint f(void) {\nreturn a; }\n" + tail},
		{"one line joined", "int a;\nint b;\n" + tail, "int a; int b;\n" + tail},
		{"end cut off", "int f(void) { return 1; }\nint g(void) { return 2; }\n", "int f(void) { return 1; }\n"},
		{"invalid UTF-8", "int f(void) { return '\xff'; }\nint g(void) {}\n", "int f(void) { return '\xfe'; }\nint g(void) { f(); }\n"},
		{"same text", cond, cond},
		{"from nothing", "", "int f(void) { return 1; }\n"},
	}
	ctx := context.Background()
	lang := c.GetLanguage()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.old) != len(tc.new) && strings.Contains(tc.name, "blanked") {
				t.Fatalf("case changes the length")
			}
			base, err := parseFlat(ctx, lang, "x.c", []byte(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			defer base.release()
			fresh, err := parseFlat(ctx, lang, "x.c", []byte(tc.new))
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.release()
			re, err := reparseFlat(ctx, lang, "x.c", []byte(tc.new), base)
			if err != nil {
				t.Fatal(err)
			}
			defer re.release()
			if !slices.Equal(re.nodes, fresh.nodes) {
				t.Errorf("reparsed tree differs from a fresh parse:\n%s\nwant\n%s", dumpFlat(re), dumpFlat(fresh))
			}
		})
	}
}

func dumpFlat(t *flatTree) string {
	var b strings.Builder
	for i := range t.nodes {
		n := t.node(int32(i))
		fmt.Fprintf(&b, "%d %s [%d,%d) rows %d-%d parent %d flags %d\n", i, n.Type(), n.StartByte(), n.EndByte(), n.f().startRow, n.f().endRow, n.f().parent, n.f().flags)
	}
	return b.String()
}

// testTypes is made at package initialization, as sets are.
var testTypes = newTypeSet("class_definition", "identifier")

// TestTypeSet: a set answers by symbol as by type name, for every node of
// a tree with an error, and a set made after the grammar's tables answers
// by name.
func TestTypeSet(t *testing.T) {
	ft, err := parseFlat(context.Background(), python.GetLanguage(), "x.py", []byte("class A:\n    def f(self): g(\n\ndef h(): pass\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer ft.release()
	late := newTypeSet("function_definition", "ERROR") // after python's tables were made
	defer func() { typeSets = typeSets[:len(typeSets)-1] }()
	sets := []*typeSet{late, testTypes}
	if late.id < len(ft.names.inSet) || testTypes.id >= len(ft.names.inSet) {
		t.Fatalf("tables: the late set %d, the package's %d, of %d", late.id, testTypes.id, len(ft.names.inSet))
	}
	hits := map[string]int{}
	for i := range ft.nodes {
		n := ft.node(int32(i))
		for _, s := range sets {
			if got, want := s.hasNode(n), s.has(n.Type()); got != want {
				t.Errorf("%s at %d: hasNode %v, has %v", n.Type(), n.StartByte(), got, want)
			} else if got {
				hits[n.Type()]++
			}
		}
	}
	if hits["ERROR"] == 0 || hits["function_definition"] == 0 || hits["identifier"] == 0 {
		t.Errorf("the tree did not exercise the sets: %v", hits)
	}
	if sets[0].hasNode(nil) {
		t.Error("hasNode(nil) is true")
	}
}
