package extract

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/smacker/go-tree-sitter/java"
)

// Java extraction. Rules beyond NAMING.md (the fixtures in
// testdata/java/ show each one):
//
//   - Spans are the declaration node as tree-sitter gives it, so unlike
//     Python they include a definition's modifiers and annotations
//     (`@Override public void f()` starts at `@Override`); Javadoc and other
//     comments before the declaration are not part of it.
//   - An enum constant with a body (`A { void f() {} }`) is a class
//     `Enum.A` spanning the whole constant; it inherits from the enum. Enum
//     constants without a body are not definitions.
//   - Anonymous classes span the whole `new T(...) { ... }` expression and
//     inherit from T. They are numbered in source order (pre-order: an
//     anonymous class passed as an argument to another one's constructor comes
//     after it) within the innermost enclosing definition; a field
//     initializer's or initializer block's enclosing definition is the class.
//   - Local classes, records, enums and interfaces are named under the method
//     (or constructor) that declares them: `Outer.m.Local`; inside an
//     initializer block they are under the class.
//   - A compact constructor is the record's constructor `R.R`; when
//     constructors are overloaded its signature is the record's components.
//   - Annotation type elements (`String value() default "";`) are function
//     nodes, like interface methods.
//   - Overload signatures keep type variables as written (`m(T)`, not
//     `m(Object)`), drop parameter annotations and `final`, and leave out a
//     receiver parameter (`Foo this`). C-style array parameters (`int a[]`)
//     are `int[]`. A method named like its class (legal, rare) joins the
//     constructors' overload set since both would be `Foo.Foo`.
//   - Calls: a method invocation's callee is its receiver reduced to a
//     dotted chain plus the method name: `a.b().c()` → "a.b.c",
//     `arr[i].f()` → "arr.f", `Outer.this.m()` and `Outer.super.m()` →
//     "Outer.m" (`this.m()` and `super.m()` stay as written). Receivers whose
//     type is written in the expression report that type: `new Foo().g()` and
//     `((Foo) x).g()` → "Foo.g", `"s".equals(t)` → "String.equals",
//     `Foo.class.getName()` → "Class.getName"; other receivers (ternaries,
//     switch expressions, …) report the bare method name. Method references
//     are calls too: `Foo::bar` → "Foo.bar", `this::m` → "this.m",
//     `Foo::new` → "Foo". An anonymous class's creation is a call to its
//     supertype's constructor from the enclosing definition.
//   - Imports: `import a.b.C;` → Module "a.b.C"; `import a.b.*;` → "a.b"
//     ["*"]; `import static a.b.C.m;` → "a.b.C" ["m"]; `import static
//     a.b.C.*;` → "a.b.C" ["*"]. Package is the `package` declaration's
//     name. Module declarations (module-info.java) yield nothing.
//   - A name made unique with `#2` is the prefix of what it contains
//     (`C.Local#2.m`).
//   - A file with unclosed braces (cut short) is parsed again with closers
//     appended when that leaves fewer syntax errors; spans then end at the
//     file's last non-blank byte. ErrorNodes always counts the file as it is.
type javaLang struct{}

func init() { register(javaLang{}) }

func (javaLang) Name() string         { return "java" }
func (javaLang) Extensions() []string { return []string{".java"} }

func (javaLang) Extract(ctx context.Context, path string, src []byte) (res *FileResult, err error) {
	defer func() {
		// A bug here must cost one file, not a worker.
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("extract java %s: %w: %v", path, ErrExtractor, r)
		}
	}()
	x := &javaExtractor{
		src:   src,
		res:   &FileResult{},
		used:  map[string]bool{},
		anons: map[string]int{},
	}
	settle := bufferResult(x.res)
	err = parseTree(ctx, java.GetLanguage(), path, src, func(root *fnode) error {
		x.res.ErrorNodes = errorsIn(root)
		suffix := ""
		if x.res.ErrorNodes > 0 {
			suffix = javaClosers(root)
		}
		if !strings.Contains(suffix, "}") {
			x.walk(root, javaScope{})
			return nil
		}
		// A file cut short (or missing closing braces) parses as one flat
		// ERROR that loses every class around its members. Closing what is
		// open and parsing again recovers them; spans are then cut back to
		// the file's end.
		fixed := make([]byte, 0, len(src)+1+len(suffix))
		fixed = append(append(append(fixed, src...), '\n'), suffix...)
		x.res.reread = true
		return parseTree(ctx, java.GetLanguage(), path, fixed, func(fixedRoot *fnode) error {
			if errorsIn(fixedRoot) >= x.res.ErrorNodes {
				x.walk(root, javaScope{})
				return nil
			}
			x.src = fixed
			x.walk(fixedRoot, javaScope{})
			x.clamp(src)
			return nil
		})
	})
	settle()
	if err != nil {
		return nil, err
	}
	return x.res, nil
}

// javaClosers returns what closes the brackets left open at the end of the
// file (`;` before each `}` ends a statement cut short and is harmless in a
// class body), or "" when none are. Only an unclosed brace makes the repair
// worth trying: a lone unclosed parenthesis is a local error tree-sitter
// recovers from on its own.
func javaClosers(root *fnode) string {
	var open []byte
	// The leaves in source order: the subtree's nodes in preorder that
	// have no children.
	t := root.t
	for i, end := root.i, root.subtreeEnd(); i < end; i++ {
		if f := &t.nodes[i]; f.childCount > 0 || f.flags&2 != 0 { // MISSING is not in the source
			continue
		}
		switch typ := t.typeOf(i); typ {
		case "{", "(", "[":
			open = append(open, typ[0])
		case "}", ")", "]":
			want := byte('{')
			switch typ {
			case ")":
				want = '('
			case "]":
				want = '['
			}
			for i := len(open) - 1; i >= 0; i-- {
				if open[i] == want {
					open = open[:i]
					break
				}
			}
		}
	}
	var b strings.Builder
	for i := len(open) - 1; i >= 0; i-- {
		switch open[i] {
		case '{':
			b.WriteString(";}")
		case '(':
			b.WriteString(")")
		case '[':
			b.WriteString("]")
		}
	}
	return b.String()
}

// clamp cuts spans that reach into the appended closers back to the end of
// src's last line that is not blank.
func (x *javaExtractor) clamp(src []byte) {
	end := len(bytes.TrimRight(src, " \t\r\n\f"))
	for i := range x.res.Defs {
		d := &x.res.Defs[i]
		if d.EndByte <= end {
			continue
		}
		d.EndByte = end
		if d.StartByte > end {
			d.StartByte = end
			d.StartLine = 1 + bytes.Count(src[:end], []byte("\n"))
		}
		d.EndLine = d.StartLine + bytes.Count(src[d.StartByte:d.EndByte], []byte("\n"))
	}
}

type javaExtractor struct {
	src   []byte
	res   *FileResult
	used  map[string]bool // definition names given out in this file
	anons map[string]int  // anonymous classes numbered so far per enclosing definition
}

// javaScope is what a node needs to know about the definitions around it.
type javaScope struct {
	name string // innermost enclosing definition; "" at file level
	// Set while walking a class body, for naming its members: the class's
	// declaration node and the member names declared more than once.
	class     *fnode
	overloads map[string]bool
}

func (s javaScope) qualify(name string) string {
	if s.name == "" {
		return name
	}
	return s.name + "." + name
}

// unique applies NAMING.md's collision rule: later duplicates get #2, #3, ….
func (x *javaExtractor) unique(name string) string {
	if !x.used[name] {
		x.used[name] = true
		return name
	}
	for i := 2; ; i++ {
		n := name + "#" + strconv.Itoa(i)
		if !x.used[n] {
			x.used[n] = true
			return n
		}
	}
}

func (x *javaExtractor) def(name, kind string, n *fnode) string {
	name = x.unique(name)
	x.res.Defs = append(x.res.Defs, defAt(name, kind, n))
	return name
}

func (x *javaExtractor) call(from, callee string, n *fnode) {
	if callee == "" {
		return
	}
	x.res.Calls = append(x.res.Calls, Call{From: from, Callee: callee, Line: int(n.StartPoint().Row) + 1})
}

func (x *javaExtractor) inherit(class string, base *fnode) {
	if b := x.typeName(base); b != "" {
		x.res.Inherits = append(x.res.Inherits, Inherit{Class: class, Base: b})
	}
}

var javaClassDecls = newTypeSet("class_declaration", "interface_declaration", "enum_declaration",
	"record_declaration", "annotation_type_declaration")

var javaFuncDecls = newTypeSet("method_declaration", "constructor_declaration",
	"compact_constructor_declaration", "annotation_type_element_declaration")

func (x *javaExtractor) walk(n *fnode, sc javaScope) {
	if n == nil {
		return
	}
	switch {
	case javaClassDecls.hasNode(n):
		x.classDecl(n, sc)
		return
	case javaFuncDecls.hasNode(n):
		x.funcDecl(n, sc)
		return
	}
	switch n.Type() {
	case "import_declaration":
		x.importDecl(n)
		return
	case "package_declaration":
		x.packageDecl(n)
		return
	case "enum_constant":
		if body := n.ChildByFieldName("body"); body != nil {
			x.enumConstantBody(n, body, sc)
			return
		}
	case "object_creation_expression":
		if x.objectCreation(n, sc) {
			return
		}
	case "method_invocation":
		// The line of the name, not of the receiver: fluent chains span lines.
		at := n.ChildByFieldName("name")
		if at == nil {
			at = n
		}
		x.call(sc.name, x.invocationCallee(n), at)
	case "explicit_constructor_invocation":
		if c := n.ChildByFieldName("constructor"); c != nil {
			x.call(sc.name, c.Type(), n) // "this" or "super"
		}
	case "method_reference":
		x.call(sc.name, x.methodRefCallee(n), n)
	case "line_comment", "block_comment":
		return
	}
	x.walkChildren(n, sc)
}

// named lists n's named children.
func (x *javaExtractor) named(n *fnode) []*fnode { return slices.Collect(n.NamedKids()) }

func (x *javaExtractor) walkChildren(n *fnode, sc javaScope) {
	// By index: a range over NamedKids here allocated its loop body's
	// closure on every call (about a third of the walk, jackson-core).
	for i := range int(n.NamedChildCount()) {
		if !n.namedToken(i) { // walk does nothing with a token
			x.walk(n.NamedChild(i), sc)
		}
	}
}

// classDecl handles classes, interfaces, enums, records and annotation types.
func (x *javaExtractor) classDecl(n *fnode, sc javaScope) {
	nameNode := n.ChildByFieldName("name")
	if nameNode == nil {
		// Only in broken code; keep looking for what is inside.
		x.walkChildren(n, sc)
		return
	}
	name := x.def(sc.qualify(textOf(nameNode, x.src)), KindClass, n)
	for c := range n.NamedKids() {
		switch c.Type() {
		case "superclass", "super_interfaces", "extends_interfaces":
			x.inheritList(name, c)
		}
	}
	inner := javaScope{name: name, class: n}
	if body := n.ChildByFieldName("body"); body != nil {
		inner.overloads = x.overloadSet(body)
	}
	x.walkChildren(n, inner)
}

// inheritList records every type listed under extends / implements.
func (x *javaExtractor) inheritList(class string, n *fnode) {
	for c := range n.NamedKids() {
		switch c.Type() {
		case "type_list":
			x.inheritList(class, c)
		case "line_comment", "block_comment", "ERROR":
		default:
			x.inherit(class, c)
		}
	}
}

// overloadSet returns the method and constructor names a class body declares
// more than once.
func (x *javaExtractor) overloadSet(body *fnode) map[string]bool {
	count := map[string]int{}
	var collect func(n *fnode)
	collect = func(n *fnode) {
		for c := range n.NamedKids() {
			switch {
			case javaFuncDecls.hasNode(c):
				if nm := c.ChildByFieldName("name"); nm != nil {
					count[textOf(nm, x.src)]++
				}
			case c.Type() == "enum_body_declarations" || c.Type() == "ERROR":
				collect(c)
			}
		}
	}
	collect(body)
	set := map[string]bool{}
	for k, v := range count {
		if v > 1 {
			set[k] = true
		}
	}
	return set
}

// funcDecl handles methods, constructors and annotation type elements.
func (x *javaExtractor) funcDecl(n *fnode, sc javaScope) {
	nameNode := n.ChildByFieldName("name")
	if nameNode == nil {
		x.walkChildren(n, sc)
		return
	}
	short := textOf(nameNode, x.src)
	if sc.overloads[short] {
		params := n.ChildByFieldName("parameters")
		if n.Type() == "compact_constructor_declaration" && sc.class != nil {
			params = sc.class.ChildByFieldName("parameters")
		}
		short += "(" + x.signature(params) + ")"
	}
	name := x.def(sc.qualify(short), KindFunction, n)
	x.walkChildren(n, javaScope{name: name})
}

// signature lists simple parameter type names: "int,String[],T...".
func (x *javaExtractor) signature(params *fnode) string {
	if params == nil {
		return ""
	}
	var types []string
	for p := range params.NamedKids() {
		switch p.Type() {
		case "formal_parameter":
			nm := textOf(p.ChildByFieldName("name"), x.src)
			if nm == "this" || strings.HasSuffix(nm, ".this") {
				continue // receiver parameter: not part of the signature
			}
			types = append(types, x.simpleType(p.ChildByFieldName("type"))+x.brackets(p.ChildByFieldName("dimensions")))
		case "spread_parameter":
			for c := range p.NamedKids() {
				switch c.Type() {
				case "modifiers", "variable_declarator", "line_comment", "block_comment",
					"marker_annotation", "annotation":
					continue
				}
				types = append(types, x.simpleType(c)+"...")
				break
			}
		case "receiver_parameter":
		}
	}
	return strings.Join(types, ",")
}

// brackets is "[]" per dimension of a dimensions node.
func (x *javaExtractor) brackets(dims *fnode) string {
	if dims == nil {
		return ""
	}
	var b strings.Builder
	for c := range dims.Kids() {
		if c.Type() == "[" {
			b.WriteString("[]")
		}
	}
	return b.String()
}

// simpleType is a parameter type for a signature: simple name, generics erased.
func (x *javaExtractor) simpleType(n *fnode) string {
	if n == nil {
		return "?"
	}
	if n.Type() == "array_type" {
		return x.simpleType(n.ChildByFieldName("element")) + x.brackets(n.ChildByFieldName("dimensions"))
	}
	t := x.typeName(n)
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	if t == "" {
		return "?"
	}
	return t
}

// typeName is a type as written, dotted, without type arguments or annotations.
func (x *javaExtractor) typeName(n *fnode) string {
	if n == nil {
		return ""
	}
	switch n.Type() {
	case "type_identifier", "identifier":
		return textOf(n, x.src)
	case "scoped_type_identifier", "scoped_identifier", "generic_type", "annotated_type":
		var parts []string
		for c := range n.NamedKids() {
			switch c.Type() {
			case "type_arguments", "marker_annotation", "annotation",
				"line_comment", "block_comment":
				continue
			}
			if p := x.typeName(c); p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, ".")
	case "array_type":
		return x.typeName(n.ChildByFieldName("element")) + x.brackets(n.ChildByFieldName("dimensions"))
	}
	return strings.Join(strings.Fields(textOf(n, x.src)), "")
}

// enumConstantBody: `A(args) { … }` is the class Enum.A.
func (x *javaExtractor) enumConstantBody(n, body *fnode, sc javaScope) {
	short := textOf(n.ChildByFieldName("name"), x.src)
	if short == "" {
		x.walkChildren(n, sc)
		return
	}
	name := x.def(sc.qualify(short), KindClass, n)
	if sc.class != nil {
		x.inherit(name, sc.class.ChildByFieldName("name"))
	}
	for c := range n.NamedKids() {
		if c.Equal(body) {
			x.walk(c, javaScope{name: name, class: n, overloads: x.overloadSet(c)})
		} else {
			x.walk(c, sc) // arguments are evaluated by the enum
		}
	}
}

// objectCreation records `new T(…)` as a call to T, and an anonymous class
// when it has a body. It reports whether it walked the children itself.
func (x *javaExtractor) objectCreation(n *fnode, sc javaScope) bool {
	typ := n.ChildByFieldName("type")
	x.call(sc.name, x.typeName(typ), n)
	var body *fnode
	for c := range n.NamedKids() {
		if c.Type() == "class_body" {
			body = c
		}
	}
	if body == nil {
		return false
	}
	x.anons[sc.name]++
	name := x.def(sc.qualify("$"+strconv.Itoa(x.anons[sc.name])), KindClass, n)
	if typ != nil {
		x.inherit(name, typ)
	}
	for c := range n.NamedKids() {
		if c.Equal(body) {
			x.walk(c, javaScope{name: name, class: n, overloads: x.overloadSet(c)})
		} else {
			x.walk(c, sc)
		}
	}
	return true
}

// invocationCallee reduces a method_invocation to "receiver.chain.name".
func (x *javaExtractor) invocationCallee(n *fnode) string {
	nameNode := n.ChildByFieldName("name")
	name := textOf(nameNode, x.src)
	if name == "" {
		return ""
	}
	recv := ""
	obj := n.ChildByFieldName("object")
	if obj != nil {
		recv = x.receiver(obj)
	}
	// Iface.super.m() (the grammar puts `super` beside the object, unnamed)
	// runs Iface's m: it is reported as "Iface.m", like Outer.this.m().
	if recv == "" {
		return name
	}
	return joinDot(obj, nameNode, x.src, recv, name)
}

// receiver reduces an expression a method is called on to a dotted chain; ""
// when it has none worth keeping.
func (x *javaExtractor) receiver(n *fnode) string {
	if n == nil {
		return ""
	}
	switch n.Type() {
	case "identifier", "type_identifier":
		return textOf(n, x.src)
	case "this", "super":
		return n.Type()
	case "field_access":
		obj := x.receiver(n.ChildByFieldName("object"))
		f := n.ChildByFieldName("field")
		if obj == "" || f == nil {
			return ""
		}
		switch f.Type() {
		case "this":
			return obj // Outer.this is an Outer
		case "super":
			return obj + ".super"
		}
		return joinDot(n, f, x.src, obj, textOf(f, x.src))
	case "scoped_identifier", "scoped_type_identifier", "generic_type":
		return x.typeName(n)
	case "method_invocation":
		return x.invocationCallee(n)
	case "object_creation_expression":
		return x.typeName(n.ChildByFieldName("type"))
	case "cast_expression":
		return x.typeName(n.ChildByFieldName("type"))
	case "parenthesized_expression":
		if kids := x.named(n); len(kids) == 1 {
			return x.receiver(kids[0])
		}
	case "array_access":
		return x.receiver(n.ChildByFieldName("array"))
	case "string_literal", "text_block":
		return "String"
	case "class_literal":
		return "Class"
	}
	return ""
}

// methodRefCallee: Foo::bar → "Foo.bar", this::m → "this.m", Foo::new → "Foo".
func (x *javaExtractor) methodRefCallee(n *fnode) string {
	kids := x.named(n)
	if len(kids) == 0 {
		return ""
	}
	recvNode := kids[0]
	if recvNode.Type() == "array_type" {
		return "" // int[]::new makes an array, calls nothing
	}
	recv := x.receiver(recvNode)
	var name string
	for _, c := range kids[1:] {
		if c.Type() == "identifier" {
			name = textOf(c, x.src)
		}
	}
	switch {
	case name == "":
		return recv // constructor reference
	case recv == "":
		return name
	}
	return recv + "." + name
}

// dotted joins the identifiers of a (scoped) name, ignoring comments and
// whitespace inside it.
func (x *javaExtractor) dotted(n *fnode) string {
	switch n.Type() {
	case "identifier":
		return textOf(n, x.src)
	case "scoped_identifier":
		if !n.HasError() && javaPlainDotted(x.src[n.StartByte():n.EndByte()]) {
			// Identifiers and dots only: the text is the joined name, read
			// in one copy instead of one per level of nesting.
			return textOf(n, x.src)
		}
		var parts []string
		for c := range n.NamedKids() {
			if p := x.dotted(c); p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, ".")
	}
	return ""
}

// javaPlainDotted reports whether b is dot-separated ASCII names with
// nothing else in it (no blank, comment or empty name; tree-sitter's blanks
// include Unicode ones, so other names take the slow way).
func javaPlainDotted(b []byte) bool {
	if len(b) == 0 || b[0] == '.' || b[len(b)-1] == '.' {
		return false
	}
	for i, c := range b {
		switch {
		case c == '.':
			if b[i-1] == '.' {
				return false
			}
		case c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return true
}

func (x *javaExtractor) importDecl(n *fnode) {
	var static, wildcard bool
	var path string
	for c := range n.Kids() {
		switch c.Type() {
		case "static":
			static = true
		case "asterisk":
			wildcard = true
		case "identifier", "scoped_identifier":
			path = x.dotted(c)
		}
	}
	if path == "" {
		return
	}
	im := Import{Module: path, Line: int(n.StartPoint().Row) + 1}
	switch {
	case wildcard:
		im.Names = []string{"*"}
	case static:
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return // `import static m;` is not Java
		}
		im.Module, im.Names = path[:i], []string{path[i+1:]}
	}
	x.res.Imports = append(x.res.Imports, im)
}

func (x *javaExtractor) packageDecl(n *fnode) {
	for c := range n.NamedKids() {
		if p := x.dotted(c); p != "" {
			if x.res.Package == "" { // a second declaration is a syntax error
				x.res.Package = p
			}
			return
		}
	}
}
