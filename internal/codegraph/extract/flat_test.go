package extract

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/python"
)

// TestFlatTreeMatchesBindings: the flattened tree (flat_fill, which reads
// tree-sitter's subtrees directly) has the nodes, types, spans, fields,
// flags, nesting and child lists the official bindings report, in every
// language: for the extractors' test files as written, cut short at
// several points (so that error recovery leaves ERROR and MISSING nodes)
// and with invalid UTF-8 put in.
func TestFlatTreeMatchesBindings(t *testing.T) {
	inputs := flatTestInputs(t)
	langs := map[string]int{}
	for _, in := range inputs {
		path, _, _ := strings.Cut(in.path, " ")
		lang := languageFor(path)
		if strings.HasSuffix(path, ".h") && strings.Contains(path, "/cpp/") {
			lang = languageFor("x.cpp")
		}
		langs[lang.Name()]++
		if err := matchBindings(Grammar(path, lang), in.src); err != nil {
			t.Errorf("%s: %v", in.path, err)
		}
	}
	for _, l := range []string{"python", "java", "javascript", "typescript", "go", "rust", "c", "cpp"} {
		if langs[l] == 0 {
			t.Errorf("no %s input was checked", l)
		}
	}
}

// FuzzFlatTree: the flattened tree matches the bindings for any text in
// any language.
//
//	go test ./internal/codegraph/extract -run '^$' -fuzz FuzzFlatTree -fuzztime 60s
func FuzzFlatTree(f *testing.F) {
	names := []string{"x.py", "X.java", "x.js", "x.ts", "x.tsx", "x.go", "x.rs", "x.c", "x.cpp"}
	for i, s := range []string{"def f(:\n  g(", "class A { void f() { g(); }", "f(`${a`", "let x: A<B = 1;", "<A>{x}</", "func f() { go g(", "impl A { fn f(&self) { m!{ x } }", "#if X\nint f(void) {\n#endif\n", "namespace a { class B : C { void f(); }"} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, src []byte) {
		path := names[int(which)%len(names)]
		if err := matchBindings(Grammar(path, languageFor(path)), src); err != nil {
			t.Errorf("%s %q: %v", path, src, err)
		}
	})
}

// matchBindings compares the flattened tree of src with a walk of the same
// text by the bindings' tree cursor, node by node. The cursor is the
// reference for fields: Node.FieldNameForChild names some children the
// cursor does not (an ERROR or a comment among a node's children).
func matchBindings(lang *sitter.Language, src []byte) error {
	ft, err := parseFlat(context.Background(), lang, "x", src)
	if err != nil {
		return err
	}
	defer ft.release()
	i := 0
	var visit func(c *sitter.TreeCursor, parent int32) error
	visit = func(c *sitter.TreeCursor, parent int32) error {
		n, field := c.CurrentNode(), c.CurrentFieldName()
		if i >= len(ft.nodes) {
			return fmt.Errorf("the flat tree has fewer nodes than the bindings")
		}
		f := ft.nodes[i]
		self := int32(i)
		i++
		if got := ft.node(self).Type(); got != n.Type() {
			return fmt.Errorf("node %d: type %q, the bindings say %q", self, got, n.Type())
		}
		if f.startByte != n.StartByte() || f.endByte != n.EndByte() || f.startRow != n.StartPoint().Row || f.endRow != n.EndPoint().Row {
			return fmt.Errorf("node %d (%s): span [%d,%d) rows %d-%d, the bindings say [%d,%d) rows %d-%d", self, n.Type(),
				f.startByte, f.endByte, f.startRow, f.endRow, n.StartByte(), n.EndByte(), n.StartPoint().Row, n.EndPoint().Row)
		}
		if (f.flags&2 != 0) != n.IsMissing() || (f.flags&4 != 0) != (n.Type() == "ERROR") {
			return fmt.Errorf("node %d (%s): missing %v error %v, the bindings say %v %v", self, n.Type(), f.flags&2 != 0, f.flags&4 != 0, n.IsMissing(), n.Type() == "ERROR")
		}
		if ft.names.fields[f.field] != field || f.parent != parent || (f.flags&1 != 0) != n.IsNamed() || (f.flags&8 != 0) != n.HasError() {
			return fmt.Errorf("node %d (%s): field %q parent %d named %v has error %v, want %q %d %v %v", self, n.Type(), ft.names.fields[f.field], f.parent,
				f.flags&1 != 0, f.flags&8 != 0, field, parent, n.IsNamed(), n.HasError())
		}
		if int(f.childCount) != int(n.ChildCount()) {
			return fmt.Errorf("node %d (%s): %d children, the bindings say %d", self, n.Type(), f.childCount, n.ChildCount())
		}
		if !c.GoToFirstChild() {
			return nil
		}
		for {
			if err := visit(c, self); err != nil {
				return err
			}
			if !c.GoToNextSibling() {
				break
			}
		}
		c.GoToParent()
		return nil
	}
	err = Parse(context.Background(), lang, "x", src, func(root *sitter.Node) error {
		c := sitter.NewTreeCursor(root)
		defer c.Close()
		return visit(c, -1)
	})
	if err != nil {
		return err
	}
	if i != len(ft.nodes) {
		return fmt.Errorf("the flat tree has %d nodes, the bindings %d", len(ft.nodes), i)
	}
	// The child lists (index) are each node's children in order, as the
	// sibling links give them.
	for p := range ft.nodes {
		var kids, named []int32
		for c := ft.nodes[p].firstChild; c >= 0; c = ft.nodes[c].nextSibling {
			kids = append(kids, c)
			if ft.nodes[c].flags&1 != 0 {
				named = append(named, c)
			}
		}
		if got := ft.kids[ft.kidStart[p]:ft.kidStart[p+1]]; !slices.Equal(got, kids) {
			return fmt.Errorf("node %d: children %v, the sibling links say %v", p, got, kids)
		}
		if got := ft.named[ft.namedStart[p]:ft.namedStart[p+1]]; !slices.Equal(got, named) {
			return fmt.Errorf("node %d: named children %v, the sibling links say %v", p, got, named)
		}
	}
	return nil
}

// TestReparseMatchesParse: a tree read as an edit of another text's tree
// (reparseFlat, as the C and C++ extractor's second readings are) equals
// the tree of a fresh parse, node for node, spans and rows included.
// flatInput is one text to parse, named by its file and what was done to it.
type flatInput struct {
	path string
	src  []byte
}

// flatTestInputs are the extractors' test files as written, cut short at
// several points and with invalid UTF-8 put in, and a Python file with a
// syntax error.
func flatTestInputs(t *testing.T) []flatInput {
	t.Helper()
	inputs := []flatInput{{"x.py", []byte("import os\n\nclass A(B):\n    @dec\n    def f(self, x):\n        return os.path.join(x, 'y')\n\ndef g(:\n")}}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || languageFor(path) == nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		inputs = append(inputs, flatInput{path, src})
		for _, cut := range []int{len(src) / 3, len(src) / 2, len(src) * 4 / 5} {
			inputs = append(inputs, flatInput{fmt.Sprintf("%s cut at %d", path, cut), src[:cut]})
		}
		bad := bytes.Clone(src)
		bad[len(bad)/2] = 0xff
		inputs = append(inputs, flatInput{path + " with invalid UTF-8", bad})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return inputs
}

// TestFillListsChildren: the child lists flat_fill writes are index's, for
// every test input, and flat_fill writes them for all of them.
func TestFillListsChildren(t *testing.T) {
	for _, in := range flatTestInputs(t) {
		path, _, _ := strings.Cut(in.path, " ")
		lang := languageFor(path)
		if strings.HasSuffix(path, ".h") && strings.Contains(path, "/cpp/") {
			lang = languageFor("x.cpp")
		}
		ft, err := parseFlat(context.Background(), Grammar(path, lang), path, in.src)
		if err != nil {
			t.Fatalf("%s: %v", in.path, err)
		}
		if !ft.filled {
			t.Errorf("%s: flat_fill left the child lists to index", in.path)
		}
		kids, named := slices.Clone(ft.kids), slices.Clone(ft.named)
		kidStart, namedStart := slices.Clone(ft.kidStart), slices.Clone(ft.namedStart)
		ft.index()
		if !slices.Equal(kids, ft.kids) || !slices.Equal(named, ft.named) ||
			!slices.Equal(kidStart, ft.kidStart) || !slices.Equal(namedStart, ft.namedStart) {
			t.Errorf("%s: flat_fill's child lists differ from index's", in.path)
		}
		ft.release()
	}
}

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
