package extract

import (
	"context"
	"strconv"
	"strings"

	tsgo "github.com/smacker/go-tree-sitter/golang"
)

// goLang extracts Go files (see NAMING.md).
type goLang struct{}

func init() { register(goLang{}) }

func (goLang) Name() string         { return "go" }
func (goLang) Extensions() []string { return []string{".go"} }

func (goLang) Extract(ctx context.Context, path string, src []byte) (*FileResult, error) {
	res := &FileResult{}
	err := parseTree(ctx, tsgo.GetLanguage(), path, src, func(root *fnode) error {
		res.ErrorNodes = errorsIn(root)
		defer bufferResult(res)()
		w := &goWalker{src: src, res: res, names: uniqueNames{}}
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

type goWalker struct {
	src   []byte
	res   *FileResult
	names uniqueNames
}

func (w *goWalker) def(name, kind string, n *fnode) string {
	q := w.names.add(name)
	w.res.Defs = append(w.res.Defs, defAt(q, kind, n))
	return q
}

// walk visits the cursor's node and its subtree; scope is the qualified name
// of the innermost enclosing definition. Function literals are not
// definitions: their calls belong to the function around them.
func (w *goWalker) walk(c *fcursor, scope string) {
	n := c.CurrentNode()
	if n == nil {
		return
	}
	switch n.Type() {
	case "function_declaration":
		if name := textOf(n.ChildByFieldName("name"), w.src); name != "" {
			scope = w.def(goQualify(scope, name), KindFunction, n)
		}
	case "method_declaration":
		if name := textOf(n.ChildByFieldName("name"), w.src); name != "" {
			// Methods are top-level; a receiver that does not parse leaves
			// the bare method name rather than dropping the definition.
			if recv := goReceiver(n.ChildByFieldName("receiver"), w.src); recv != "" {
				name = recv + "." + name
			}
			scope = w.def(name, KindFunction, n)
		}
	case "type_spec":
		// Aliases (type A = B, node type_alias) name no new type and are
		// skipped, as TypeScript type aliases are.
		if name := textOf(n.ChildByFieldName("name"), w.src); name != "" {
			span := n
			// A lone spec spans its declaration, "type" keyword included,
			// as a function's span includes "func".
			if p := n.Parent(); p != nil && p.Type() == "type_declaration" && p.NamedChildCount() == 1 {
				span = p
			}
			scope = w.def(goQualify(scope, name), KindClass, span)
			w.typeBody(n.ChildByFieldName("type"), scope)
		}
	case "call_expression":
		if callee := goCallee(n.ChildByFieldName("function"), w.src); callee != "" {
			w.call(scope, callee, n)
		}
	case "type_conversion_expression":
		// F[int](x) and pkg.F[T](x), explicit instantiations of generic
		// functions, parse as conversions to a generic type; so do
		// conversions to instantiated generic types and, ambiguously,
		// calls of indexed function values (handlers[i](x)). Reporting them
		// keeps generic calls; the others do not resolve to functions.
		if t := n.ChildByFieldName("type"); t != nil && t.Type() == "generic_type" {
			if callee := goTypeName(t, w.src); callee != "" {
				w.call(scope, callee, n)
			}
		}
	case "import_spec":
		w.importSpec(n)
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

func (w *goWalker) call(from, callee string, n *fnode) {
	w.res.Calls = append(w.res.Calls, Call{From: from, Callee: callee, Line: int(n.StartPoint().Row) + 1})
}

// typeBody records what a named struct or interface type embeds, and an
// interface's method specs as functions. Only the type's own body counts:
// fields of anonymous struct types nested in it embed into those.
func (w *goWalker) typeBody(t *fnode, class string) {
	if t == nil {
		return
	}
	switch t.Type() {
	case "struct_type":
		var list *fnode
		for i := 0; i < int(t.NamedChildCount()); i++ {
			if ch := t.NamedChild(i); ch != nil && ch.Type() == "field_declaration_list" {
				list = ch
			}
		}
		if list == nil {
			return
		}
		for i := 0; i < int(list.NamedChildCount()); i++ {
			f := list.NamedChild(i)
			if f == nil || f.Type() != "field_declaration" || f.ChildByFieldName("name") != nil {
				continue // named fields are not embedded
			}
			if base := goTypeName(f.ChildByFieldName("type"), w.src); base != "" {
				w.res.Inherits = append(w.res.Inherits, Inherit{Class: class, Base: base})
			}
		}
	case "interface_type":
		for i := 0; i < int(t.NamedChildCount()); i++ {
			el := t.NamedChild(i)
			if el == nil {
				continue
			}
			switch el.Type() {
			case "method_elem", "method_spec": // method_spec in older grammars
				if name := textOf(el.ChildByFieldName("name"), w.src); name != "" {
					w.def(class+"."+name, KindFunction, el)
				}
			case "type_elem", "constraint_elem", "interface_type_name":
				// An element that is a single type embeds it (io.Reader,
				// comparable); unions and ~T are type-set constraints.
				if el.Type() == "interface_type_name" || el.NamedChildCount() == 1 {
					ty := el
					if el.Type() != "interface_type_name" {
						ty = el.NamedChild(0)
					}
					if base := goTypeName(ty, w.src); base != "" {
						w.res.Inherits = append(w.res.Inherits, Inherit{Class: class, Base: base})
					}
				}
			}
		}
	}
}

func (w *goWalker) importSpec(n *fnode) {
	p := n.ChildByFieldName("path")
	raw := textOf(p, w.src)
	mod, err := strconv.Unquote(raw)
	if err != nil {
		// Invalid escapes or a missing closing quote: keep what is there.
		mod = strings.Trim(raw, "\"`")
	}
	if mod == "" {
		return
	}
	// Alias is the name as written, blank and dot imports included.
	alias := textOf(n.ChildByFieldName("name"), w.src)
	w.res.Imports = append(w.res.Imports, Import{Module: mod, Alias: alias, Line: int(n.StartPoint().Row) + 1})
}

// goReceiver is a method's receiver type name without "*", parentheses or
// type parameters: (s *Stack[T]) → Stack.
func goReceiver(params *fnode, src []byte) string {
	if params == nil {
		return ""
	}
	for i := 0; i < int(params.NamedChildCount()); i++ {
		p := params.NamedChild(i)
		if p == nil || p.Type() != "parameter_declaration" {
			continue
		}
		t := p.ChildByFieldName("type")
		for t != nil {
			switch t.Type() {
			case "pointer_type", "parenthesized_type":
				t = t.NamedChild(0)
				continue
			}
			break
		}
		return goTypeName(t, src)
	}
	return ""
}

// goTypeName is the dotted name of a type as written, without "*" or type
// arguments: T, pkg.T, *pkg.T, List[int] → T, pkg.T, pkg.T, List; "" for
// type literals.
func goTypeName(t *fnode, src []byte) string {
	for t != nil {
		switch t.Type() {
		case "type_identifier":
			return textOf(t, src)
		case "qualified_type":
			pkg, name := textOf(t.ChildByFieldName("package"), src), textOf(t.ChildByFieldName("name"), src)
			if pkg == "" || name == "" {
				return ""
			}
			return pkg + "." + name
		case "pointer_type":
			t = t.NamedChild(0)
		case "generic_type":
			t = t.ChildByFieldName("type")
		default:
			return ""
		}
	}
	return ""
}

// goCallee reduces a call's function expression to a dotted chain: New,
// fmt.Println, s.helper, a.b.c. When the chain does not start at a name
// (a().b(), x.(T).M(), s.fns[0].Run()) the trailing selectors are reported
// (b, M, Run), to be matched by method name; calls of a call, an index or a
// function literal (f()(), fns[0](), func(){}()) name no callee and are
// skipped.
func goCallee(n *fnode, src []byte) string {
	var parts []string
	for n != nil {
		switch n.Type() {
		case "identifier":
			if name := textOf(n, src); name != "" {
				parts = append(parts, name)
			}
			n = nil
		case "selector_expression":
			field := textOf(n.ChildByFieldName("field"), src)
			if field == "" {
				return ""
			}
			parts = append(parts, field)
			n = n.ChildByFieldName("operand")
		case "parenthesized_expression":
			// (s.f)(x) is s.f(x); (*T)(x) is a conversion and ends below.
			n = n.NamedChild(0)
		default:
			n = nil
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		if i > 0 {
			b.WriteByte('.')
		}
	}
	return b.String()
}

func goQualify(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "." + name
}
