package extract

import (
	"context"
	"strings"

	tspython "github.com/smacker/go-tree-sitter/python"
)

// pythonLang extracts Python files, naming entities as LocAgent does (see NAMING.md).
type pythonLang struct{}

func init() { register(pythonLang{}) }

func (pythonLang) Name() string         { return "python" }
func (pythonLang) Extensions() []string { return []string{".py"} }

func (pythonLang) Extract(ctx context.Context, path string, src []byte) (*FileResult, error) {
	res := &FileResult{}
	err := parseTree(ctx, tspython.GetLanguage(), path, src, func(root *fnode) error {
		res.ErrorNodes = errorsIn(root)
		defer bufferResult(res)()
		w := &pyWalker{src: src, res: res, names: uniqueNames{}}
		c := newCursor(root)
		defer c.Close()
		w.walk(c, "")
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type pyWalker struct {
	src   []byte
	res   *FileResult
	names uniqueNames
}

// walk visits the cursor's node and its subtree; scope is the qualified name
// of the innermost enclosing definition. A call belongs to the innermost
// definition whose span contains it, so calls in decorators (which sit
// outside the def/class node, and run in the enclosing scope) belong to the
// enclosing scope, while calls in default values and annotations belong to
// the function itself.
func (w *pyWalker) walk(c *fcursor, scope string) {
	n := c.CurrentNode()
	if n == nil {
		return
	}
	switch n.Type() {
	case "function_definition", "class_definition":
		// The function_definition node, not the decorated_definition around
		// it, so that spans start at def/class as Python's ast lineno does.
		if name := textOf(n.ChildByFieldName("name"), w.src); name != "" {
			kind := KindFunction
			if n.Type() == "class_definition" {
				kind = KindClass
			}
			q := w.names.add(pyQualify(scope, name))
			w.res.Defs = append(w.res.Defs, defAt(q, kind, n))
			if kind == KindClass {
				w.bases(n.ChildByFieldName("superclasses"), q)
			}
			scope = q
		}
	case "call":
		if callee := pyCallee(n.ChildByFieldName("function"), w.src); callee != "" {
			w.res.Calls = append(w.res.Calls, Call{From: scope, Callee: callee, Line: int(n.StartPoint().Row) + 1})
		}
	case "import_statement":
		w.importStatement(n)
		return
	case "import_from_statement", "future_import_statement":
		w.importFrom(n)
		return
	}
	if c.GoToFirstChild() {
		for {
			w.walk(c, scope)
			if !c.GoToNextSibling() {
				break
			}
		}
		c.GoToParent()
	}
}

// bases records a class's bases: positional arguments that are dotted names,
// with subscripts reduced to what they subscript (Generic[T] → Generic).
// Keyword arguments (metaclass=…), splats and computed bases are skipped.
func (w *pyWalker) bases(args *fnode, class string) {
	if args == nil {
		return
	}
	for i := 0; i < int(args.NamedChildCount()); i++ {
		b := args.NamedChild(i)
		if b != nil && b.Type() == "subscript" {
			b = b.ChildByFieldName("value")
		}
		if base := pyChain(b, w.src); base != "" {
			w.res.Inherits = append(w.res.Inherits, Inherit{Class: class, Base: base})
		}
	}
}

// importStatement: import a.b, c as d → one Import per name.
func (w *pyWalker) importStatement(n *fnode) {
	line := int(n.StartPoint().Row) + 1
	for i := 0; i < int(n.NamedChildCount()); i++ {
		ch := n.NamedChild(i)
		if ch == nil {
			continue
		}
		var mod, alias string
		switch ch.Type() {
		case "dotted_name":
			mod = pyDotted(ch, w.src)
		case "aliased_import":
			mod = pyDotted(ch.ChildByFieldName("name"), w.src)
			alias = textOf(ch.ChildByFieldName("alias"), w.src)
		}
		if mod != "" {
			w.res.Imports = append(w.res.Imports, Import{Module: mod, Alias: alias, Line: line})
		}
	}
}

// importFrom: from .m import a, b as c → Module ".m", Names [a b]; the names
// are the ones the module defines, not the local aliases, because they are
// what a resolver looks up in the module.
func (w *pyWalker) importFrom(n *fnode) {
	var mod string
	if n.Type() == "future_import_statement" {
		mod = "__future__"
	} else {
		m := n.ChildByFieldName("module_name")
		if m != nil && m.Type() == "relative_import" {
			for i := 0; i < int(m.NamedChildCount()); i++ {
				ch := m.NamedChild(i)
				if ch == nil {
					continue
				}
				switch ch.Type() {
				case "import_prefix":
					// Dots only: "from . . x" is legal and means "..x".
					mod += strings.Repeat(".", strings.Count(textOf(ch, w.src), "."))
				case "dotted_name":
					mod += pyDotted(ch, w.src)
				}
			}
		} else {
			mod = pyDotted(m, w.src)
		}
	}
	if mod == "" {
		return
	}
	im := Import{Module: mod, Line: int(n.StartPoint().Row) + 1}
	for i := 0; i < int(n.ChildCount()); i++ {
		ch := n.Child(i)
		if ch == nil {
			continue
		}
		var name, local string
		switch ch.Type() {
		case "wildcard_import":
			name = "*"
		case "dotted_name":
			if n.FieldNameForChild(i) == "name" {
				name = pyDotted(ch, w.src)
			}
		case "aliased_import":
			name = pyDotted(ch.ChildByFieldName("name"), w.src)
			local = textOf(ch.ChildByFieldName("alias"), w.src)
		}
		if name != "" {
			im.Names = append(im.Names, name)
			im.Locals = append(im.Locals, local)
		}
	}
	w.res.Imports = append(w.res.Imports, im)
}

// pyDotted joins a dotted_name's identifiers, dropping any whitespace or
// comments between them.
func pyDotted(n *fnode, src []byte) string {
	if n == nil {
		return ""
	}
	if n.Type() == "identifier" {
		return textOf(n, src)
	}
	if n.Type() != "dotted_name" {
		return ""
	}
	var parts []string
	for i := 0; i < int(n.NamedChildCount()); i++ {
		ch := n.NamedChild(i)
		if ch == nil || ch.Type() != "identifier" {
			continue
		}
		if t := textOf(ch, src); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, ".")
}

// pyChain is the dotted name of an identifier or attribute chain
// (os.path.join), or "" when the expression is anything else.
func pyChain(n *fnode, src []byte) string {
	chain, complete := pyTrailing(n, src)
	if !complete {
		return ""
	}
	return chain
}

// pyCallee reduces a call's function expression to a dotted chain. When the
// chain does not start at a name (a().b(), x[0].save(), "".join()), the
// trailing attributes are reported (b, save, join): a resolver can still match
// them by method name, while the receiver expression could not be resolved
// anyway. Calls of a call or subscript with no trailing attribute (f()(),
// x[0]()) name no callee and are skipped.
func pyCallee(n *fnode, src []byte) string {
	chain, _ := pyTrailing(n, src)
	return chain
}

// pyTrailing returns the attribute chain at the end of n and whether it
// reaches down to a plain identifier.
func pyTrailing(n *fnode, src []byte) (string, bool) {
	var parts []string
	for n != nil {
		switch n.Type() {
		case "identifier":
			name := textOf(n, src)
			if name == "" {
				return pyJoinReversed(parts), false
			}
			return pyJoinReversed(append(parts, name)), true
		case "attribute":
			attr := textOf(n.ChildByFieldName("attribute"), src)
			if attr == "" {
				return "", false
			}
			parts = append(parts, attr)
			n = n.ChildByFieldName("object")
		default:
			return pyJoinReversed(parts), false
		}
	}
	return pyJoinReversed(parts), false
}

func pyJoinReversed(parts []string) string {
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		if i > 0 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

// qualify appends name to the enclosing definition's qualified name.
func pyQualify(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "." + name
}
