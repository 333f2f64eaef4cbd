package codegraph

import (
	"context"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
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
