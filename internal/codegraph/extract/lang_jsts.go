package extract

// The JavaScript and TypeScript extractors share one walker: the TypeScript
// grammars extend the JavaScript one, and every JavaScript construct keeps its
// node types there. TypeScript-only nodes (interfaces, namespaces, enums,
// signatures) simply never occur in JavaScript trees.

import (
	"context"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// jsLang is the JavaScript or TypeScript extractor. Beyond NAMING.md:
//   - Spans: a function or class bound by `const f = …` spans the whole
//     declaration when it declares only f, else its declarator; one bound by
//     assignment spans the statement (`a.b = function…;`); an object-literal
//     member spans its pair or method; `export default <expr>` spans the
//     expression. `export` itself is never part of a span. Decorators are
//     where tree-sitter puts them: in JavaScript inside the class and method
//     nodes (in the span); in TypeScript a member's decorators are siblings
//     in the class body and a class's decorators before `export` belong to
//     the export statement (outside the span). Calls are attributed by the
//     same rule: a decorator call outside a span is made by the enclosing
//     definition.
//   - Object literals qualify their members only when bound to a name (by
//     declaration, assignment, class field, `export default {…}` as
//     "default", or a property of such an object). Literals, classes and
//     functions that are arguments or return values (`foo({m() {}})`,
//     `memo(() => …)`, `forwardRef(…)`, `return class extends B {}`) are not
//     definitions: what they contain belongs to the enclosing definition.
//   - Class fields holding a function (`handle = () => {}`) are methods
//     `C.handle`; `this.x = function…` defines `C.x` in a class's methods and
//     `F.x` in a constructor function F (`this` of the enclosing non-arrow
//     function). `X.prototype = {m() {}}` defines `X.m`.
//   - `module.exports = function () {}` (or a class) is "default" unless the
//     function or class has its own name; `module.exports = require(…)`
//     defines nothing. In chained assignments (`a = b = function…`) the
//     innermost target names the definition.
//   - A child of a renamed duplicate is qualified by the duplicate's final
//     name (`N#2.g`). Names are kept on one line; computed keys drop
//     formatting whitespace (`[ Symbol.iterator ]` → `[Symbol.iterator]`);
//     string keys are unquoted (`'legacy-publish'() {}` → `C.legacy-publish`).
//   - TypeScript: overload signatures of functions and class methods,
//     `declare` functions and `declare class` members are function
//     definitions; interface method signatures are, property signatures (even
//     of function type), call, construct and index signatures are not. Enums
//     are classes. `namespace A.B {}` is one class `A.B`. `declare module
//     'x' {}` and `declare global {}` are not definitions: their contents are
//     named as at the top level. `import A = N.B` is not an import.
//   - Calls: `new Foo()` → "Foo", `super(…)` → "super", `a?.b()` → "a.b",
//     `a['b']()` → "a.b". When the chain does not start at a name the
//     trailing names are reported, as in the Python and Go extractors
//     (`a.b().c()` → "a.b" and "c", `arr[i].save()` → "save"); calls of a
//     call or element (`f()()`, `fns[i]()`) name no callee. A capitalised or
//     dotted JSX element (`<Button/>`, `<Table.Head>`) is a call of that
//     component; lower-case elements are HTML. `require('m')` and
//     `import('m')` are imports, not calls.
//   - Bases: `extends B` as written (member expressions dotted, type
//     arguments dropped); `extends mixin(B)` records no base (the call is a
//     call from the class).
//   - Imports: names as exported (`{b as c}` → "b", default import
//     "default", namespace "*" with its alias); `require('m')` bound to a
//     name has that alias, destructured it has the keys, `require('m').f`
//     has ["f"]; re-exports `export {a} from`, `export * from` (["*"]) count.
type jsLang struct {
	name string
	exts []string
	// grammar picks the tree-sitter grammar for a (lower-case) extension.
	grammar func(ext string) *sitter.Language
}

func (l *jsLang) Name() string         { return l.name }
func (l *jsLang) Extensions() []string { return append([]string(nil), l.exts...) }

func (l *jsLang) Extract(ctx context.Context, path string, src []byte) (*FileResult, error) {
	ext := ""
	if i := strings.LastIndexByte(path, '.'); i >= 0 && strings.LastIndexByte(path, '/') < i {
		ext = strings.ToLower(path[i:])
	}
	res := &FileResult{}
	err := parseTree(ctx, l.grammar(ext), path, src, func(root *fnode) error {
		defer bufferResult(res)()
		x := &jsExtractor{src: src, res: res, taken: map[string]bool{}, dups: map[string]int{}}
		x.walk(root, jsScope{})
		res.ErrorNodes = errorsIn(root)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// jsScope is where the walker stands.
type jsScope struct {
	qual string // prefix for the names of definitions found here
	from string // innermost enclosing definition, for calls ("" at module level)
	this string // what `this.x = function…` is qualified with
}

type jsExtractor struct {
	src   []byte
	res   *FileResult
	taken map[string]bool // definition names given out
	dups  map[string]int  // last "#n" used per name
}

// def records a definition and returns its final (unique) name, or "" when
// error recovery left it without a name (a MISSING identifier is empty).
func (x *jsExtractor) def(name, kind string, n *fnode) string {
	name = jsCleanName(name)
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return ""
	}
	if x.taken[name] {
		base := name
		k := max(x.dups[base], 1)
		for {
			k++
			name = base + "#" + strconv.Itoa(k)
			if !x.taken[name] {
				break
			}
		}
		x.dups[base] = k
	}
	x.taken[name] = true
	x.res.Defs = append(x.res.Defs, defAt(name, kind, n))
	return name
}

func (x *jsExtractor) call(callee string, n *fnode, sc jsScope) {
	callee = jsCleanName(callee)
	if callee == "" {
		return
	}
	line, _ := spanOf(n)
	x.res.Calls = append(x.res.Calls, Call{From: sc.from, Callee: callee, Line: line})
}

func (x *jsExtractor) inherit(class, base string) {
	if base = jsCleanName(base); base != "" && class != "" {
		x.res.Inherits = append(x.res.Inherits, Inherit{Class: class, Base: base})
	}
}

func (x *jsExtractor) addImport(module string, names []string, alias string, n *fnode) {
	x.addImportLocals(module, names, nil, alias, n)
}

// addImportLocals records an import whose names are bound under other local
// names (locals[i] for names[i], "" for the same name).
func (x *jsExtractor) addImportLocals(module string, names, locals []string, alias string, n *fnode) {
	module = strings.ToValidUTF8(module, "\uFFFD")
	if module == "" {
		return
	}
	line, _ := spanOf(n)
	x.res.Imports = append(x.res.Imports, Import{Module: module, Names: names, Locals: locals, Alias: jsCleanName(alias), Line: line})
}

func (x *jsExtractor) textOf(n *fnode) string { return textOf(n, x.src) }

func (x *jsExtractor) children(n *fnode, sc jsScope) {
	if n == nil {
		return
	}
	// By index: the walk needs no field names, and a list per node cost
	// a third of the walk (express).
	for i := range int(n.ChildCount()) {
		x.walk(n.Child(i), sc)
	}
}

func (x *jsExtractor) walk(n *fnode, sc jsScope) {
	if n == nil {
		return
	}
	switch n.Type() {
	case "function_declaration", "generator_function_declaration":
		name := n.ChildByFieldName("name")
		if name == nil { // error recovery
			x.children(n, sc)
			return
		}
		full := x.def(jsJoin(sc.qual, x.textOf(name)), KindFunction, n)
		x.children(n, x.inner(full, full, sc))
	case "function_signature": // TS overload or `declare function`
		if name := n.ChildByFieldName("name"); name != nil {
			x.def(jsJoin(sc.qual, x.textOf(name)), KindFunction, n)
		}
	case "class_declaration", "abstract_class_declaration":
		name := n.ChildByFieldName("name")
		if name == nil {
			x.children(n, sc)
			return
		}
		x.class(n, jsJoin(sc.qual, x.textOf(name)), n, sc)
	case "interface_declaration":
		x.iface(n, sc)
	case "enum_declaration":
		name := n.ChildByFieldName("name")
		if name == nil {
			x.children(n, sc)
			return
		}
		full := x.def(jsJoin(sc.qual, x.textOf(name)), KindClass, n)
		x.children(n, x.inner(full, full, sc))
	case "internal_module", "module": // namespace N {} / module N {} / declare module 'x' {}
		name := n.ChildByFieldName("name")
		body := n.ChildByFieldName("body")
		if name == nil || name.Type() == "string" {
			// An ambient module named by a string augments another module:
			// not a definition of this file's own, and "./x" is no name.
			x.children(n, sc)
			return
		}
		qn, ok := x.chain(name)
		if !ok {
			qn = x.textOf(name)
		}
		full := x.def(jsJoin(sc.qual, qn), KindClass, n)
		x.children(body, x.inner(full, full, sc))
	case "method_signature", "abstract_method_signature", "property_signature",
		"type_annotation", "type_alias_declaration", "type_arguments", "type_parameters",
		"object_type", "interface_body":
		// Types hold no calls and no definitions; member signatures are
		// definitions only inside interface and class bodies, handled there.
	case "variable_declarator":
		x.declarator(n, sc)
	case "assignment_expression":
		x.assignment(n, sc)
	case "export_statement":
		x.export(n, sc)
	case "import_statement":
		x.importStatement(n)
	case "call_expression":
		x.callExpr(n, sc)
	case "new_expression":
		if c := n.ChildByFieldName("constructor"); c != nil {
			x.call(x.callee(c), n, sc)
		}
		x.children(n, sc)
	case "jsx_opening_element", "jsx_self_closing_element":
		// A capitalised JSX element renders (calls) a component; lower-case
		// names are HTML elements.
		if name := n.ChildByFieldName("name"); name != nil && name.Type() != "jsx_namespace_name" {
			if callee, ok := x.chain(name); ok && (strings.Contains(callee, ".") || jsStartsUpper(callee)) {
				x.call(callee, n, sc)
			}
		}
		x.children(n, sc)
	default:
		// Unbound functions, classes and object literals (callbacks,
		// arguments, IIFEs) are not definitions: their insides belong to the
		// enclosing scope.
		x.children(n, sc)
	}
}

// inner is the scope inside the definition full, whose `this` is this; a
// definition that got no name leaves the scope as it was.
func (x *jsExtractor) inner(full, this string, sc jsScope) jsScope {
	if full == "" {
		return sc
	}
	return jsScope{qual: full, from: full, this: this}
}

// class records a class named full (already qualified) whose node is n and
// whose definition spans span, with its bases and members.
func (x *jsExtractor) class(n *fnode, full string, span *fnode, sc jsScope) {
	full = x.def(full, KindClass, span)
	in := x.inner(full, full, sc)
	for _, k := range jsKids(n) {
		c := k.n
		switch c.Type() {
		case "class_heritage":
			x.heritage(c, full, in)
		case "class_body":
			x.classBody(c, in)
		default: // decorators, name, type parameters
			x.walk(c, in)
		}
	}
}

func (x *jsExtractor) heritage(h *fnode, class string, sc jsScope) {
	for _, c := range jsNamed(h) {
		switch c.Type() {
		case "extends_clause": // TS
			for _, k := range jsKids(c) {
				if k.field != "value" {
					continue
				}
				v := k.n
				if base, ok := x.chain(v); ok {
					x.inherit(class, base)
				}
				x.walk(v, sc)
			}
		case "implements_clause": // TS
			for _, t := range jsNamed(c) {
				x.inherit(class, x.typeName(t))
			}
		default: // JS: the extended expression itself
			// `extends mixin(Base)` names no class: the call is recorded as a
			// call from the class, not as a base.
			if base, ok := x.chain(c); ok {
				x.inherit(class, base)
			}
			x.walk(c, sc)
		}
	}
}

func (x *jsExtractor) classBody(body *fnode, sc jsScope) {
	for _, k := range jsKids(body) {
		m := k.n
		switch m.Type() {
		case "method_definition":
			x.method(m, sc.qual, sc)
		case "method_signature", "abstract_method_signature":
			// Overload signatures, abstract methods and `declare class`
			// members have no body but are definitions.
			if name := m.ChildByFieldName("name"); name != nil {
				x.def(jsJoin(sc.qual, x.memberName(name)), KindFunction, m)
			}
		case "field_definition", "public_field_definition":
			name := m.ChildByFieldName("property") // JS
			if name == nil {
				name = m.ChildByFieldName("name") // TS
			}
			value := m.ChildByFieldName("value")
			if name != nil && value != nil {
				nm := x.memberName(name)
				if nm != "" && x.bind(jsJoin(sc.qual, nm), value, m, sc, sc.qual, m) {
					continue
				}
			}
			x.walk(m, sc)
		default: // decorators (TS puts them beside the member), static blocks
			x.walk(m, sc)
		}
	}
}

// method records a method_definition of a class or a bound object literal.
func (x *jsExtractor) method(m *fnode, qual string, sc jsScope) {
	name := m.ChildByFieldName("name")
	if name == nil {
		x.children(m, sc)
		return
	}
	nm := x.memberName(name)
	if nm == "" {
		x.children(m, sc)
		return
	}
	full := x.def(jsJoin(qual, nm), KindFunction, m)
	x.children(m, x.inner(full, sc.this, sc))
}

func (x *jsExtractor) iface(n *fnode, sc jsScope) {
	name := n.ChildByFieldName("name")
	if name == nil {
		return
	}
	full := x.def(jsJoin(sc.qual, x.textOf(name)), KindClass, n)
	if full == "" {
		return
	}
	for _, c := range jsNamed(n) {
		switch c.Type() {
		case "extends_type_clause", "extends_clause":
			for _, t := range jsNamed(c) {
				x.inherit(full, x.typeName(t))
			}
		case "interface_body", "object_type":
			for _, m := range jsNamed(c) {
				if m.Type() != "method_signature" {
					continue // properties (even of function type), call/construct/index signatures
				}
				if mn := m.ChildByFieldName("name"); mn != nil {
					if nm := x.memberName(mn); nm != "" {
						x.def(jsJoin(full, nm), KindFunction, m)
					}
				}
			}
		}
	}
}

// bind handles value bound to the qualified name full, the definition
// spanning span: functions and classes become definitions, object literals
// qualify their members. this is what `this` means in a non-arrow function
// ("" for the function itself). It reports false, having done nothing, for
// any other value. extra (may be nil) is walked inside the new definition
// when one is made, for decorators that tree-sitter puts inside span.
func (x *jsExtractor) bind(full string, value, span *fnode, sc jsScope, this string, extra *fnode) bool {
	v := jsUnwrap(value)
	if v == nil {
		return false
	}
	switch v.Type() {
	case "arrow_function", "function_expression", "function", "generator_function":
		full = x.def(full, KindFunction, span)
		if v.Type() == "arrow_function" {
			this = sc.this
		} else if this == "" {
			this = full
		}
		in := x.inner(full, this, sc)
		x.decorators(extra, in)
		x.children(v, in)
		return true
	case "class":
		x.decorators(extra, sc)
		x.class(v, full, span, sc)
		return true
	case "object":
		x.decorators(extra, sc)
		x.object(v, full, sc)
		return true
	}
	return false
}

func (x *jsExtractor) decorators(n *fnode, sc jsScope) {
	if n == nil {
		return
	}
	for _, c := range jsKids(n) {
		if c.n.Type() == "decorator" {
			x.walk(c.n, sc)
		}
	}
}

// object walks an object literal bound to the qualified name qual: its
// methods and function-valued properties are definitions qual.m.
func (x *jsExtractor) object(obj *fnode, qual string, sc jsScope) {
	for _, k := range jsKids(obj) {
		c := k.n
		switch c.Type() {
		case "method_definition":
			x.method(c, qual, jsScope{qual: sc.qual, from: sc.from, this: qual})
		case "pair":
			key, value := c.ChildByFieldName("key"), c.ChildByFieldName("value")
			if key != nil && value != nil {
				if nm := x.memberName(key); nm != "" && x.bind(jsJoin(qual, nm), value, c, sc, qual, nil) {
					continue
				}
			}
			x.walk(c, sc)
		default:
			x.walk(c, sc)
		}
	}
}

func (x *jsExtractor) declarator(n *fnode, sc jsScope) {
	name, value := n.ChildByFieldName("name"), n.ChildByFieldName("value")
	if value == nil {
		return
	}
	if name != nil && name.Type() == "identifier" {
		span := n
		// `const f = () => {}` spans the whole declaration when it declares
		// only f, so the text starts at the keyword.
		if p := n.Parent(); p != nil && (p.Type() == "lexical_declaration" || p.Type() == "variable_declaration") && jsDeclarators(p) == 1 {
			span = p
		}
		if x.bind(jsJoin(sc.qual, x.textOf(name)), value, span, sc, "", nil) {
			return
		}
	}
	x.walk(value, sc)
}

func jsDeclarators(decl *fnode) int {
	k := 0
	for _, c := range jsNamed(decl) {
		if c.Type() == "variable_declarator" {
			k++
		}
	}
	return k
}

func (x *jsExtractor) assignment(n *fnode, sc jsScope) {
	left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
	if left == nil || right == nil {
		x.children(n, sc)
		return
	}
	span := n
	if p := n.Parent(); p != nil && p.Type() == "expression_statement" {
		span = p
	}
	if name, this, ok := x.assignTarget(left, sc); ok {
		if name == "" { // module.exports = …
			v := jsUnwrap(right)
			if v != nil && v.Type() == "object" {
				x.object(v, "", sc) // module.exports = { g() {} } → g
				return
			}
			name = "default"
			if v != nil {
				if own := v.ChildByFieldName("name"); own != nil && (v.Type() == "class" || v.Type() == "function_expression" ||
					v.Type() == "function" || v.Type() == "generator_function") {
					name = x.textOf(own)
				}
			}
		}
		if x.bind(name, right, span, sc, this, nil) {
			return
		}
	}
	x.walk(left, sc)
	x.walk(right, sc)
}

// assignTarget names what `left = function…` defines: the qualified name
// ("" for module.exports itself) and what `this` means in a function
// assigned there ("" for the function itself).
func (x *jsExtractor) assignTarget(left *fnode, sc jsScope) (name, this string, ok bool) {
	if left.Type() == "identifier" {
		return jsJoin(sc.qual, x.textOf(left)), "", true
	}
	parts, ok := x.chainParts(left)
	if !ok || len(parts) < 2 {
		return "", "", false
	}
	switch {
	case parts[0] == "module" && parts[1] == "exports":
		return strings.Join(parts[2:], "."), "", true
	case parts[0] == "exports":
		return strings.Join(parts[1:], "."), "", true
	case parts[0] == "this":
		return jsJoin(sc.this, strings.Join(parts[1:], ".")), "", true
	}
	for i := 1; i < len(parts); i++ {
		if parts[i] == "prototype" {
			class := jsJoin(sc.qual, strings.Join(parts[:i], "."))
			rest := append(append([]string(nil), parts[:i]...), parts[i+1:]...)
			return jsJoin(sc.qual, strings.Join(rest, ".")), class, true
		}
	}
	return jsJoin(sc.qual, strings.Join(parts, ".")), "", true
}

func (x *jsExtractor) export(n *fnode, sc jsScope) {
	if src := n.ChildByFieldName("source"); src != nil { // re-export
		module, _ := x.stringValue(src)
		var names []string
		for _, k := range jsKids(n) {
			c := k.n
			switch c.Type() {
			case "*", "namespace_export":
				names = append(names, "*")
			case "export_clause":
				for _, s := range jsNamed(c) {
					if s.Type() != "export_specifier" {
						continue
					}
					if nm := x.specifierName(s.ChildByFieldName("name")); nm != "" {
						names = append(names, nm)
					}
				}
			}
		}
		x.addImport(module, names, "", n)
		return
	}
	value := n.ChildByFieldName("value")
	for _, k := range jsKids(n) {
		c := k.n
		if value != nil && k.field == "value" {
			// export default <expression>
			if !x.bind(jsJoin(sc.qual, "default"), c, c, sc, "", nil) {
				x.walk(c, sc)
			}
			continue
		}
		x.walk(c, sc)
	}
}

func (x *jsExtractor) importStatement(n *fnode) {
	module := ""
	if src := n.ChildByFieldName("source"); src != nil {
		module, _ = x.stringValue(src)
	}
	var names, locals []string
	alias := ""
	for _, c := range jsNamed(n) {
		switch c.Type() {
		case "import_require_clause": // TS: import fs = require('fs')
			if src := c.ChildByFieldName("source"); src != nil {
				module, _ = x.stringValue(src)
			}
			for _, id := range jsNamed(c) {
				if id.Type() == "identifier" {
					alias = x.textOf(id)
					break
				}
			}
		case "import_clause":
			for _, s := range jsNamed(c) {
				switch s.Type() {
				case "identifier": // default import
					names = append(names, "default")
					locals = append(locals, x.textOf(s))
				case "namespace_import":
					names = append(names, "*")
					locals = append(locals, "")
					for _, id := range jsNamed(s) {
						if id.Type() == "identifier" {
							alias = x.textOf(id)
						}
					}
				case "named_imports":
					for _, sp := range jsNamed(s) {
						if sp.Type() != "import_specifier" {
							continue
						}
						if nm := x.specifierName(sp.ChildByFieldName("name")); nm != "" {
							names = append(names, nm)
							locals = append(locals, x.specifierName(sp.ChildByFieldName("alias")))
						}
					}
				}
			}
		}
	}
	x.addImportLocals(module, names, locals, alias, n)
}

func (x *jsExtractor) specifierName(n *fnode) string {
	if n == nil {
		return ""
	}
	if s, ok := x.stringValue(n); ok { // import {"a-b" as ab}
		return jsCleanName(s)
	}
	return jsCleanName(x.textOf(n))
}

func (x *jsExtractor) callExpr(n *fnode, sc jsScope) {
	fn := n.ChildByFieldName("function")
	if fn != nil {
		switch {
		case fn.Type() == "import": // dynamic import('x')
			if m, ok := x.singleStringArg(n); ok {
				x.addImport(m, nil, "", n)
			}
		case fn.Type() == "identifier" && x.textOf(fn) == "require":
			if m, ok := x.singleStringArg(n); ok {
				x.requireImport(n, m)
			} else {
				x.call("require", n, sc)
			}
		default:
			x.call(x.callee(fn), n, sc)
		}
	}
	x.children(n, sc)
}

// requireImport records require('m') with what it is bound to.
func (x *jsExtractor) requireImport(call *fnode, module string) {
	var names []string
	alias := ""
	p := call.Parent()
	for p != nil && (p.Type() == "parenthesized_expression" || p.Type() == "await_expression") {
		p = p.Parent()
	}
	if p != nil {
		switch p.Type() {
		case "variable_declarator":
			if name := p.ChildByFieldName("name"); name != nil {
				switch name.Type() {
				case "identifier":
					alias = x.textOf(name)
				case "object_pattern": // const {a, b: c} = require('m')
					names = x.patternNames(name)
				}
			}
		case "assignment_expression":
			if left := p.ChildByFieldName("left"); left != nil && left.Type() == "identifier" {
				alias = x.textOf(left)
			}
		case "member_expression": // require('m').f
			if prop := p.ChildByFieldName("property"); prop != nil {
				names = []string{jsCleanName(x.textOf(prop))}
			}
		}
	}
	x.addImport(module, names, alias, call)
}

func (x *jsExtractor) patternNames(pat *fnode) []string {
	var names []string
	for _, c := range jsNamed(pat) {
		var key *fnode
		switch c.Type() {
		case "shorthand_property_identifier_pattern":
			key = c
		case "pair_pattern":
			key = c.ChildByFieldName("key")
		case "object_assignment_pattern": // {a = 1}
			key = c.ChildByFieldName("left")
		}
		if key != nil {
			if nm := x.memberName(key); nm != "" {
				names = append(names, nm)
			}
		}
	}
	return names
}

func (x *jsExtractor) singleStringArg(call *fnode) (string, bool) {
	args := call.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() != 1 {
		return "", false
	}
	return x.stringValue(args.NamedChild(0))
}

// stringValue is the content of a string literal, or of a template literal
// without substitutions.
func (x *jsExtractor) stringValue(n *fnode) (string, bool) {
	if n == nil {
		return "", false
	}
	switch n.Type() {
	case "string":
	case "template_string":
		for _, c := range jsNamed(n) {
			if c.Type() == "template_substitution" {
				return "", false
			}
		}
	default:
		return "", false
	}
	s := x.textOf(n)
	if len(s) < 2 {
		return "", false
	}
	return s[1 : len(s)-1], true
}

// memberName names a class member or object key as written: identifiers,
// `#private`, string keys unquoted, computed keys with their brackets.
func (x *jsExtractor) memberName(n *fnode) string {
	if s, ok := x.stringValue(n); ok && s != "" {
		return jsCleanName(s)
	}
	if n.Type() == "computed_property_name" {
		// Formatting must not rename: `[ Symbol.iterator ]` is
		// [Symbol.iterator].
		return jsCompact(x.textOf(n))
	}
	return jsCleanName(x.textOf(n))
}

// chain reduces a name, base or assignment target to a dotted name; ok is
// false unless the whole expression is a chain of names.
func (x *jsExtractor) chain(n *fnode) (string, bool) {
	parts, ok := x.chainParts(n)
	if !ok || len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "."), true
}

// callee reduces a call's function expression to a dotted chain: foo,
// this.foo, a.b.c, a['b'] as a.b. As in the Python and Go extractors, when the
// chain does not start at a name (a().b(), arr[i].save()) the trailing names
// are reported (b, save) for resolvers to match by method name; a call of a
// call or an indexed element with no name after it (f()(), fns[i]()) is
// skipped.
func (x *jsExtractor) callee(n *fnode) string {
	if n != nil && n.Type() == "await_expression" && n.NamedChildCount() == 1 {
		// tree-sitter-typescript parses `await a.f<T>(x)` as a call of
		// `await a.f`.
		n = n.NamedChild(0)
	}
	parts, _ := x.chainParts(n)
	return strings.Join(parts, ".")
}

// chainParts returns the chain of names at the end of n and whether it
// starts at a name.
func (x *jsExtractor) chainParts(n *fnode) ([]string, bool) {
	var rev []string
	done := func(ok bool) ([]string, bool) {
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		return rev, ok
	}
	for n != nil {
		switch n.Type() {
		case "identifier", "this", "super", "property_identifier", "private_property_identifier", "type_identifier":
			t := x.textOf(n)
			if t == "" { // MISSING
				return done(false)
			}
			rev = append(rev, t)
			return done(true)
		case "member_expression", "nested_identifier", "nested_type_identifier":
			obj, prop := n.ChildByFieldName("object"), n.ChildByFieldName("property")
			if n.Type() == "nested_type_identifier" {
				obj, prop = n.ChildByFieldName("module"), n.ChildByFieldName("name")
			}
			if prop == nil || x.textOf(prop) == "" {
				return done(false)
			}
			rev = append(rev, x.textOf(prop))
			n = obj
		case "subscript_expression": // a['b'] is a.b; a[i] has no name
			s, ok := x.stringValue(n.ChildByFieldName("index"))
			if !ok || s == "" {
				return done(false)
			}
			rev = append(rev, s)
			n = n.ChildByFieldName("object")
		case "parenthesized_expression", "non_null_expression":
			if n.NamedChildCount() != 1 {
				return done(false)
			}
			n = n.NamedChild(0)
		default:
			return done(false)
		}
	}
	return done(false)
}

// typeName names a TS type reference: "I", "ns.I" (type arguments dropped).
func (x *jsExtractor) typeName(n *fnode) string {
	if n == nil {
		return ""
	}
	if n.Type() == "generic_type" {
		return x.typeName(n.ChildByFieldName("name"))
	}
	if s, ok := x.chain(n); ok {
		return s
	}
	return ""
}

// unwrapExpr looks through parentheses and TS type assertions to the value.
func jsUnwrap(n *fnode) *fnode {
	for n != nil {
		switch n.Type() {
		case "parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression":
			if n.NamedChildCount() == 0 {
				return nil
			}
			n = n.NamedChild(0)
		case "type_assertion": // <T>expr
			k := n.NamedChildCount()
			if k == 0 {
				return nil
			}
			n = n.NamedChild(int(k) - 1)
		default:
			return n
		}
	}
	return nil
}

func jsJoin(qual, name string) string {
	if qual == "" {
		return name
	}
	if name == "" {
		return qual
	}
	return qual + "." + name
}

// cleanName keeps names on one line and valid UTF-8 (computed keys and
// string keys are free text).
func jsCleanName(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

func jsStartsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// jsCompact drops whitespace except between two identifier characters.
func jsCompact(s string) string {
	s = jsCleanName(s)
	var b strings.Builder
	for i, r := range s {
		if r == ' ' {
			prev, _ := utf8.DecodeLastRuneInString(s[:i])
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if !jsIdentRune(prev) || !jsIdentRune(next) {
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func jsIdentRune(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

type jsKid struct {
	n     *fnode
	field string
}

// jsKids lists n's children with their field names. It walks a cursor:
// Child(i) and FieldNameForChild(i) scan from the first child on every call,
// which is quadratic on wide nodes (huge object literals, flat ERROR nodes).
func jsKids(n *fnode) []jsKid {
	if n == nil {
		return nil
	}
	k := int(n.ChildCount())
	if k == 0 {
		return nil
	}
	out := make([]jsKid, 0, k)
	if k <= 64 { // a cursor costs more than a short scan
		for i := 0; i < k; i++ {
			out = append(out, jsKid{n.Child(i), n.FieldNameForChild(i)})
		}
		return out
	}
	cur := newCursor(n)
	defer cur.Close()
	for ok := cur.GoToFirstChild(); ok; ok = cur.GoToNextSibling() {
		out = append(out, jsKid{cur.CurrentNode(), cur.CurrentFieldName()})
	}
	return out
}

// jsNamed lists n's named children (see jsKids).
func jsNamed(n *fnode) []*fnode {
	var out []*fnode
	for _, k := range jsKids(n) {
		if k.n.IsNamed() {
			out = append(out, k.n)
		}
	}
	return out
}
