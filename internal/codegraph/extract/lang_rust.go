package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tsrust "github.com/smacker/go-tree-sitter/rust"
)

// Rust extraction. Rules beyond NAMING.md (the fixtures in
// testdata/rust/ show each one):
//
//   - Functions `f`, nested functions `outer.inner`; structs, enums, unions
//     and traits are classes; an inline module `mod m { … }` is a class
//     qualifying what it contains (`m.f`), `mod m;` is an import of
//     "self::m". Type aliases, consts, statics and enum variants are not
//     definitions.
//   - Methods of `impl Type` and of `impl Trait for Type` are `Type.m`, Type
//     being the last path segment of the implementing type without generic
//     arguments, references or pointers (`impl<T> Trait for &a::Foo<T>` →
//     `Foo.m`); `impl dyn Trait` is named after the trait. An impl for a type
//     without a name (tuples, slices, arrays, fn pointers) leaves its methods
//     unqualified. The impl block is not a definition: it qualifies names
//     only, calls in it outside a method belong to the enclosing definition.
//     A trait impl yields Inherit{Type, Trait} with the trait's path dotted
//     and generic arguments dropped (`fmt::Display`, `From<u8>` → "From").
//   - Trait methods, with or without a body, are `Trait.m`; supertraits
//     (`trait A: B + c::C`) are inherits. Functions declared in
//     `extern { … }` blocks are defined elsewhere and are not definitions.
//   - `macro_rules! m` is a function `m`. Macro invocations are calls of the
//     macro's name (`println!` → "println", `std::println!` → "std.println").
//   - Items in a function are qualified by it (`f.Inner`, `f.Inner.m`).
//   - A macro invocation in item position (a file's, module's, impl's or
//     trait's top level) whose `{…}` parses as items without error has them
//     extracted like the items around it: `cfg_rt! { pub fn spawn() }` →
//     `spawn`, inside `impl R` → `R.spawn`. Other macro arguments (and
//     macro_rules! bodies) yield calls only.
//   - A function cut short by the end of the file (`fn f() { g(`), which
//     error recovery leaves as a flat ERROR, is a function from `fn` to the
//     end of the ERROR.
//   - Spans are the item node: outer attributes (`#[test]`, `#[derive]`) and
//     doc comments are outside, as Python's decorators are.
//   - Raw identifiers lose their `r#` (`fn r#try` → `try`).
//   - Calls: a callee is reduced to a dotted chain, paths with `.` for `::`:
//     `a::b::f()` → "a.b.f", `self.x.m()` → "self.x.m", `self.0.m()` →
//     "self.0.m", `Vec::<u8>::new()` and `<Vec<u8>>::new()` → "Vec.new",
//     `<T as Trait>::f()` → "Trait.f", `$crate::f()` → "crate.f". When the
//     receiver chain does not start at a name (`f().g()`, `x[0].m()`,
//     `(a).b()`, `x?.m()`) the trailing field chain is reported ("g", "m").
//     Calls of calls, indexes and closures name no callee.
//   - Macro arguments are token trees, not expressions: in them a name, a
//     `::` path or a `.` chain directly followed by a `(…)` group is a call
//     (the same dotted forms as above, turbofish skipped), and `name!(…)`,
//     `name![…]` or `name!{…}` is a macro call. A name after `fn`, `struct`,
//     `enum`, `union`, `trait`, `'` or `$`, or that is a keyword, is not a
//     callee; attributes (`#[…]`) in token trees are skipped. Calls in a
//     `macro_rules!` body belong to the macro.
//   - Imports: `use a::b::c;` → "a::b" [c]; renames are Locals; `*` is a
//     wildcard name; a use tree yields one Import per distinct module prefix
//     in order of appearance, `self` in a list imports the prefix's last
//     segment from its parent (`use a::b::{self}` → "a" [b]); a path of one
//     segment imports the module itself (`use foo as bar;` → "foo" as bar).
//     `extern crate x as y;` → "x" as y. Module paths are the segments
//     joined with "::" (whitespace and comments dropped, a leading `::`
//     kept: `use ::std::mem;` → "::std" [mem]). In an inline module they
//     are made relative to the file's module: in `mod tests { … }`,
//     `use super::*;` → "self" [*], `use self::a::b;` → "self::tests::a"
//     [b], `mod m;` → "self::tests::m".
type rustLang struct{}

func init() { register(rustLang{}) }

func (rustLang) Name() string         { return "rust" }
func (rustLang) Extensions() []string { return []string{".rs"} }

func (rustLang) Extract(ctx context.Context, path string, src []byte) (res *FileResult, err error) {
	defer func() {
		// A bug here must cost one file, not a worker.
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("extract rust %s: %w: %v", path, ErrExtractor, r)
		}
	}()
	if ms := rustProposeItemMacros(src); len(ms) > 0 {
		// Item macros' insides read in place (rust_itemmacros.go), where
		// the tree bears the text out.
		if res, err = rustExtractUnwrapped(ctx, path, src, ms); err != nil || res != nil {
			return res, err
		}
		resetMembers(ctx)
	}
	return rustExtractWritten(ctx, path, src)
}

// rustExtractWritten extracts src as written: item macros' insides are
// parsed again where the walk meets them (itemMacro).
func rustExtractWritten(ctx context.Context, path string, src []byte) (res *FileResult, err error) {
	err = parseTree(ctx, tsrust.GetLanguage(), path, src, func(root *fnode) error {
		res = rustWalkTree(ctx, path, src, root, nil, nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// rustWalkTree extracts the tree of a reading of src. pending are the item
// macros the reading blanked and regions their insides (none for src as
// written); nil when a blanked macro's call was not made (no node after it).
func rustWalkTree(ctx context.Context, path string, src []byte, root *fnode, pending []rustMacro, regions []rustRegion) *FileResult {
	res := &FileResult{ErrorNodes: errorsIn(root)}
	defer bufferResult(res)()
	w := &rustWalker{ctx: ctx, path: path, src: src, res: res, names: uniqueNames{}, pending: pending, regions: regions}
	c := newCursor(root)
	defer c.Close()
	w.walk(c, "", "")
	if len(w.pending) > 0 {
		return nil
	}
	return res
}

type rustWalker struct {
	ctx   context.Context
	path  string
	src   []byte
	res   *FileResult
	names uniqueNames
	depth int // item macros being reparsed around the walk
	// pending are the item macros whose wrappers the reading blanked, in
	// order, their calls not yet made; regions their insides.
	pending []rustMacro
	regions []rustRegion
	// mods are the inline modules (`mod m { … }`) around the walk, outermost
	// first: `self` and `super` in their paths are relative to them.
	mods []string
}

// rustItemPosition reports whether macro invocation n, with token tree tt,
// is in item position (in a file, module, impl or trait body) with tt a
// non-empty brace block: where itemMacro reads items.
func rustItemPosition(n, tt *fnode) bool {
	p := n.Parent()
	if p == nil || p.Type() != "source_file" && p.Type() != "declaration_list" {
		return false
	}
	open := tt.Child(0)
	return open != nil && open.Type() == "{" && tt.ChildCount() >= 3
}

// itemMacro handles a macro invocation in item position whose braces hold
// items (`cfg_rt! { pub fn spawn() … }`, pin_project!, thread_local!): the
// inside of the braces is parsed again as Rust and walked like the items
// around the macro, with offsets and lines moved back into the file. It
// reports false, leaving the macro's arguments to the token scan, when the
// invocation is not in item position, is not brace-delimited, or its inside
// does not parse as items without error.
func (w *rustWalker) itemMacro(n, tt *fnode, prefix, from string) bool {
	if w.depth >= 16 || !rustItemPosition(n, tt) {
		return false
	}
	start, end := int(tt.StartByte())+1, int(tt.EndByte())-1
	if start >= end || end > len(w.src) {
		return false
	}
	inner := w.src[start:end]
	if rustNamedEntries(inner) {
		return false // a table (`name: …`), which no parse reads as items
	}
	rows := int(tt.StartPoint().Row) // the inside starts on the row of its "{"
	ok := false
	_ = parseTree(w.ctx, tsrust.GetLanguage(), w.path, inner, func(root *fnode) error {
		if errorsIn(root) > 0 {
			return nil
		}
		ok = true
		nd, nc, ni := len(w.res.Defs), len(w.res.Calls), len(w.res.Imports)
		sub := &rustWalker{ctx: w.ctx, path: w.path, src: inner, res: w.res, names: w.names, depth: w.depth + 1}
		c := newCursor(root)
		defer c.Close()
		if c.GoToFirstChild() {
			for {
				sub.walk(c, prefix, from)
				if !c.GoToNextSibling() {
					break
				}
			}
		}
		for i := nd; i < len(w.res.Defs); i++ {
			d := &w.res.Defs[i]
			d.StartByte += start
			d.EndByte += start
			if d.BodyEnd > 0 {
				d.BodyStart += start
				d.BodyEnd += start
			}
			d.StartLine += rows
			d.EndLine += rows
		}
		for i := nc; i < len(w.res.Calls); i++ {
			w.res.Calls[i].Line += rows
		}
		for i := ni; i < len(w.res.Imports); i++ {
			w.res.Imports[i].Line += rows
		}
		return nil
	})
	return ok
}

// rustNamedEntries reports whether b begins (after blanks and comments)
// with a name and a single colon, as macros that take tables do
// (`stable: { … }`, `byte_plus: ("+1b", …)`). No Rust statement or item
// begins so (a label is a lifetime, `'a:`), so the inside would parse with
// errors and itemMacro would not read it as items: it is not parsed at
// all. Error recovery made such parses the dearest of a build (fd: a sixth
// of its CPU for 8 KB of tables).
func rustNamedEntries(b []byte) bool {
	i := rustSkipTrivia(b, 0)
	j := rustWordEnd(b, i)
	if j == i || b[i] >= '0' && b[i] <= '9' {
		return false
	}
	k := rustSkipTrivia(b, j)
	return k < len(b) && b[k] == ':' && (k+1 == len(b) || b[k+1] != ':')
}

// rustSkipTrivia is the index of the first byte at or after i that is not
// a blank or in a comment; len(b) when there is none.
func rustSkipTrivia(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r':
			i++
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end, _ := rustBlockCommentEnd(b, i)
			if end < 0 {
				return len(b)
			}
			i = end
		default:
			return i
		}
	}
	return i
}

func (w *rustWalker) def(name, kind string, n *fnode) string {
	q := w.names.add(name)
	w.res.Defs = append(w.res.Defs, defAt(q, kind, n))
	return q
}

func (w *rustWalker) call(from, callee string, n *fnode) {
	w.res.Calls = append(w.res.Calls, Call{From: from, Callee: callee, Line: int(n.StartPoint().Row) + 1})
}

func (w *rustWalker) inherit(class, base string) {
	if class != "" && base != "" {
		w.res.Inherits = append(w.res.Inherits, Inherit{Class: class, Base: base})
	}
}

// name is the text of n's name field, without a raw identifier's "r#".
func (w *rustWalker) name(n *fnode) string {
	return rustIdent(textOf(n.ChildByFieldName("name"), w.src))
}

func rustIdent(s string) string {
	return strings.TrimPrefix(s, "r#")
}

// walk visits the cursor's node and its subtree. prefix qualifies the names
// of definitions found there (an impl block adds its type to it); from is the
// qualified name of the innermost enclosing definition, which calls belong to.
func (w *rustWalker) walk(c *fcursor, prefix, from string) {
	n := c.CurrentNode()
	if n == nil {
		return
	}
	inline := "" // the name of an inline module n is
	for len(w.pending) > 0 && int(n.StartByte()) > w.pending[0].start {
		// A blanked item macro's call, made where the invocation stood.
		m := w.pending[0]
		w.pending = w.pending[1:]
		w.res.Calls = append(w.res.Calls, Call{From: from, Callee: rustIdent(m.name), Line: m.line})
	}
	switch n.Type() {
	case "function_item", "function_signature_item":
		if n.Type() == "function_signature_item" {
			// Only trait methods without a body are definitions; foreign
			// functions (extern blocks) are defined elsewhere. Nor is one
			// in an item macro in a trait: the macro's inside is read
			// apart, as a file.
			if p := n.Parent(); p == nil || p.Type() != "declaration_list" || p.Parent() == nil || p.Parent().Type() != "trait_item" || w.inRegion(p, n) {
				return
			}
		}
		if name := w.name(n); name != "" {
			prefix = w.def(rustQualify(prefix, name), KindFunction, n)
			from = prefix
		}
	case "struct_item", "enum_item", "union_item", "trait_item":
		if name := w.name(n); name != "" {
			prefix = w.def(rustQualify(prefix, name), KindClass, n)
			from = prefix
			if n.Type() == "trait_item" {
				w.supertraits(n.ChildByFieldName("bounds"), prefix)
			}
		}
	case "mod_item":
		name := w.name(n)
		if name == "" {
			break
		}
		if n.ChildByFieldName("body") == nil {
			w.res.Imports = append(w.res.Imports, Import{Module: w.fileRelative("self::" + name), Line: rustLine(n)})
			return
		}
		prefix = w.def(rustQualify(prefix, name), KindClass, n)
		from = prefix
		inline = name
	case "impl_item":
		ty := rustTypeName(n.ChildByFieldName("type"), w.src)
		if ty != "" {
			prefix = rustQualify(prefix, ty)
		}
		if tr := n.ChildByFieldName("trait"); tr != nil && ty != "" {
			w.inherit(prefix, rustTypePath(tr, w.src))
		}
	case "macro_definition":
		if name := w.name(n); name != "" {
			prefix = w.def(rustQualify(prefix, name), KindFunction, n)
			from = prefix
		}
		// The rules' right-hand sides are token trees.
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if r := n.NamedChild(i); r != nil && r.Type() == "macro_rule" {
				if body := r.ChildByFieldName("right"); body != nil && body.Type() == "token_tree" {
					w.tokens(body, from)
				}
			}
		}
		return
	case "macro_invocation":
		if callee := rustPath(n.ChildByFieldName("macro"), w.src); callee != "" {
			w.call(from, callee, n)
		}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if tt := n.NamedChild(i); tt != nil && tt.Type() == "token_tree" {
				if !w.itemMacro(n, tt, prefix, from) {
					w.tokens(tt, from)
				}
			}
		}
		return
	case "call_expression":
		if callee := rustCallee(n.ChildByFieldName("function"), w.src); callee != "" {
			w.call(from, callee, n)
		}
	case "use_declaration":
		w.use(n)
		return
	case "extern_crate_declaration":
		if name := textOf(n.ChildByFieldName("name"), w.src); name != "" {
			w.res.Imports = append(w.res.Imports, Import{Module: rustIdent(name), Alias: rustIdent(textOf(n.ChildByFieldName("alias"), w.src)), Line: rustLine(n)})
		}
		return
	case "attribute_item", "inner_attribute_item":
		return
	case "ERROR":
		w.errorNode(n, prefix, from)
		return
	}
	if inline != "" {
		w.mods = append(w.mods, inline)
	}
	if c.GoToFirstChild() {
		for {
			w.walk(c, prefix, from)
			if !c.GoToNextSibling() {
				break
			}
		}
		c.GoToParent()
	}
	if inline != "" {
		w.mods = w.mods[:len(w.mods)-1]
	}
}

// fileRelative rewrites a use path written in inline modules (w.mods) so
// that `self` and `super` are relative to the file's module, which the
// resolver knows: in `mod tests { use super::*; }` super is the file
// (`self`), `self::x` is `self::tests::x`, and each `super` past the
// inline modules leaves the file's module as it would at its top level.
func (w *rustWalker) fileRelative(mod string) string {
	if len(w.mods) == 0 {
		return mod
	}
	segs := strings.Split(mod, "::")
	up := 0
	switch segs[0] {
	case "self":
		segs = segs[1:]
	case "super":
		for up < len(segs) && segs[up] == "super" {
			up++
		}
		segs = segs[up:]
	default:
		return mod
	}
	if up > len(w.mods) {
		return strings.Join(append(slices.Repeat([]string{"super"}, up-len(w.mods)), segs...), "::")
	}
	out := append([]string{"self"}, w.mods[:len(w.mods)-up]...)
	return strings.Join(append(out, segs...), "::")
}

// errorNode walks what error recovery left flat. A function cut short (a
// truncated file: `fn last() { f(`) is a run of `fn`, a name and the rest
// in one ERROR node: it becomes a function from `fn` to the end of the ERROR,
// and what follows it there is its body.
func (w *rustWalker) errorNode(n *fnode, prefix, from string) {
	c := newCursor(n)
	defer c.Close()
	if !c.GoToFirstChild() {
		return
	}
	for {
		k := c.CurrentNode()
		if k.Type() == "fn" {
			if next := n.t.node(k.f().nextSibling); next != nil && next.Type() == "identifier" {
				if name := rustIdent(textOf(next, w.src)); name != "" {
					q := w.names.add(rustQualify(prefix, name))
					sl, _ := spanOf(k)
					_, el := spanOf(n)
					w.res.Defs = append(w.res.Defs, Def{Name: q, Kind: KindFunction, StartLine: sl, EndLine: el, StartByte: int(k.StartByte()), EndByte: int(n.EndByte())})
					prefix, from = q, q
				}
			}
		}
		w.walk(c, prefix, from)
		if !c.GoToNextSibling() {
			break
		}
	}
}

func rustLine(n *fnode) int { return int(n.StartPoint().Row) + 1 }

func rustQualify(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// supertraits records `trait A: B + c::C<T>` as A inheriting B and c.C;
// lifetimes and `?Sized` are not traits.
func (w *rustWalker) supertraits(bounds *fnode, class string) {
	if bounds == nil {
		return
	}
	for i := 0; i < int(bounds.NamedChildCount()); i++ {
		b := bounds.NamedChild(i)
		if b != nil && b.Type() == "higher_ranked_trait_bound" {
			b = b.ChildByFieldName("type")
		}
		w.inherit(class, rustTypePath(b, w.src))
	}
}

// rustTypeName is the name an impl block gives its methods: the last path
// segment of the type, without generic arguments, references or pointers;
// `dyn Trait` is Trait. "" for types without a name.
func rustTypeName(t *fnode, src []byte) string {
	for t != nil {
		switch t.Type() {
		case "type_identifier", "primitive_type", "identifier":
			return rustIdent(textOf(t, src))
		case "scoped_type_identifier":
			t = t.ChildByFieldName("name")
		case "generic_type":
			t = t.ChildByFieldName("type")
		case "reference_type", "pointer_type":
			t = t.ChildByFieldName("type")
		case "dynamic_type", "abstract_type":
			t = t.ChildByFieldName("trait")
		default:
			return ""
		}
	}
	return ""
}

// rustTypePath is a trait (or type) path dotted, without generic arguments:
// fmt::Display → fmt.Display, From<u8> → From, crate::a::T → crate.a.T;
// "" for anything else (lifetimes, ?Sized, tuples).
func rustTypePath(t *fnode, src []byte) string {
	for t != nil {
		switch t.Type() {
		case "type_identifier", "identifier":
			return rustIdent(textOf(t, src))
		case "scoped_type_identifier", "scoped_identifier":
			name := rustIdent(textOf(t.ChildByFieldName("name"), src))
			if name == "" {
				return ""
			}
			if p := rustPath(t.ChildByFieldName("path"), src); p != "" {
				return p + "." + name
			}
			return name
		case "generic_type":
			t = t.ChildByFieldName("type")
		default:
			return ""
		}
	}
	return ""
}

// rustPath dots a path expression: a::b::c → a.b.c, Vec::<T>::new →
// Vec.new, <T as Trait>::f → Trait.f, <Vec<T>>::new → Vec.new, $crate::f →
// crate.f; when the path before the last segment is no name (<&T>::f),
// the last segment alone; "" when that is no name either.
func rustPath(n *fnode, src []byte) string {
	if n == nil {
		return ""
	}
	switch n.Type() {
	case "identifier", "type_identifier", "primitive_type", "self", "super", "crate":
		return rustIdent(textOf(n, src))
	case "metavariable":
		if t := textOf(n, src); t == "$crate" {
			return "crate"
		}
		return ""
	case "scoped_identifier", "scoped_type_identifier":
		name := rustIdent(textOf(n.ChildByFieldName("name"), src))
		if name == "" {
			return ""
		}
		p := n.ChildByFieldName("path")
		if p == nil {
			return name // ::name
		}
		if pp := rustPath(p, src); pp != "" {
			return pp + "." + name
		}
		return name // <&T>::f, <[T]>::len: the tail
	case "generic_type":
		return rustPath(n.ChildByFieldName("type"), src)
	case "generic_function":
		return rustPath(n.ChildByFieldName("function"), src)
	case "bracketed_type":
		t := n.NamedChild(0)
		if t != nil && t.Type() == "qualified_type" {
			// <T as Trait>: the function is the trait's.
			return rustPath(t.ChildByFieldName("alias"), src)
		}
		return rustPath(t, src)
	}
	return ""
}

// rustCallee reduces a call's function expression to a dotted chain (see
// the comment at the top of the file).
func rustCallee(n *fnode, src []byte) string {
	for n != nil && n.Type() == "parenthesized_expression" {
		// (s.f)(x) calls s.f.
		n = n.NamedChild(0)
	}
	if n != nil && n.Type() == "generic_function" {
		n = n.ChildByFieldName("function")
	}
	var parts []string
	for n != nil {
		switch n.Type() {
		case "field_expression":
			f := n.ChildByFieldName("field")
			if f == nil || (f.Type() != "field_identifier" && f.Type() != "integer_literal") {
				n = nil
				continue
			}
			field := rustIdent(textOf(f, src))
			if field == "" {
				n = nil
				continue
			}
			parts = append(parts, field)
			n = n.ChildByFieldName("value")
		default:
			if p := rustPath(n, src); p != "" {
				parts = append(parts, p)
			}
			n = nil
		}
	}
	if len(parts) == 0 || !rustNameLike(parts[0]) {
		return ""
	}
	return rustJoin(parts)
}

// rustNameLike reports whether a call's last segment is a name, not a tuple
// index (`self.0()` calls a field holding a closure: no callee to resolve).
func rustNameLike(s string) bool {
	return s != "" && (s[0] < '0' || s[0] > '9')
}

// rustKeywords are reserved words tree-sitter leaves as identifiers in token
// trees (and others, for safety): never callees.
var rustKeywords = map[string]bool{
	"as": true, "async": true, "await": true, "break": true, "const": true, "continue": true,
	"dyn": true, "else": true, "enum": true, "extern": true, "false": true, "fn": true,
	"for": true, "if": true, "impl": true, "in": true, "let": true, "loop": true,
	"match": true, "mod": true, "move": true, "mut": true, "pub": true, "ref": true,
	"return": true, "static": true, "struct": true, "trait": true, "true": true, "type": true,
	"union": true, "unsafe": true, "use": true, "where": true, "while": true, "yield": true,
	"box": true, "macro_rules": true,
}

// tokens reports the calls in a macro's token tree (see the comment at the
// top of the file).
func (w *rustWalker) tokens(tt *fnode, from string) {
	n := int(tt.ChildCount())
	for i := 0; i < n; i++ {
		k := tt.Child(i)
		if k == nil || k.Type() != "token_tree" {
			continue
		}
		// #[attr(…)] and #![attr(…)]
		if p := tt.Child(i - 1); p != nil && (p.Type() == "#" || p.Type() == "!" && tt.Child(i-2) != nil && tt.Child(i-2).Type() == "#") {
			continue
		}
		if open := k.Child(0); open != nil {
			end := i - 1
			macro := false
			if p := tt.Child(end); p != nil && p.Type() == "!" {
				macro, end = true, end-1
			}
			if open.Type() == "(" || macro {
				if callee := w.tokenCallee(tt, end, macro); callee != "" {
					w.call(from, callee, tt.Child(end))
				}
			}
		}
		w.tokens(k, from)
	}
}

// tokenCallee reads the chain of names ending at tt's child end backwards:
// `a::b` → "a.b", `self.x.m` → "self.x.m", `f().g` → "g"; "" when the
// child is no name or follows a word that makes it a definition. Macro
// paths have no `.`.
func (w *rustWalker) tokenCallee(tt *fnode, end int, macro bool) string {
	var parts []string
	i := end
	if g := tt.Child(i); g != nil && g.Type() == ">" && !macro {
		// A turbofish before the arguments: f::<T>(…).
		j := rustSkipGenerics(tt, i)
		if c := tt.Child(j); j < 0 || c == nil || c.Type() != "::" {
			return ""
		}
		i = j - 1
	}
	for {
		k := tt.Child(i)
		if k == nil {
			break
		}
		seg := ""
		switch k.Type() {
		case "identifier":
			seg = textOf(k, w.src)
			if rustKeywords[seg] {
				seg = ""
			}
			seg = rustIdent(seg)
		case "self", "super", "crate":
			seg = k.Type()
		case "metavariable":
			if textOf(k, w.src) == "$crate" {
				seg = "crate"
			}
		case "primitive_type":
			if len(parts) > 0 { // u64::from, never u64(…)
				seg = textOf(k, w.src)
			}
		case "integer_literal":
			if len(parts) > 0 && i > 0 && tt.Child(i-1) != nil && tt.Child(i-1).Type() == "." {
				seg = textOf(k, w.src) // self.0.m
			}
		}
		if seg == "" {
			if len(parts) == 0 {
				return ""
			}
			break // the chain does not start at a name: keep its tail
		}
		parts = append(parts, seg)
		prev := tt.Child(i - 1)
		if prev == nil {
			break
		}
		switch prev.Type() {
		case "::":
			// Skip a turbofish: a::<T>::b.
			j := i - 2
			if g := tt.Child(j); g != nil && g.Type() == ">" {
				if j = rustSkipGenerics(tt, j); j < 0 {
					return rustJoin(parts)
				}
				if c := tt.Child(j); c == nil || c.Type() != "::" {
					return rustJoin(parts)
				}
				j--
			}
			i = j
			continue
		case ".":
			if macro {
				return ""
			}
			i -= 2
			continue
		case "$":
			if seg == "crate" {
				return rustJoin(parts) // $crate::f outside macro_rules
			}
			// $f(…) names no callee; $x.m(…) keeps the tail.
			return rustJoin(parts[:len(parts)-1])
		case "fn", "struct", "enum", "union", "trait", "'", "macro_rules!":
			if len(parts) == 1 {
				return "" // a definition, or a lifetime
			}
		case "identifier":
			if t := textOf(prev, w.src); (t == "macro_rules" || t == "fn") && len(parts) == 1 {
				return ""
			}
		}
		break
	}
	return rustJoin(parts)
}

// rustSkipGenerics returns the index before the `<` matching the `>` at
// tt's child j, or -1.
func rustSkipGenerics(tt *fnode, j int) int {
	depth := 0
	for ; j >= 0; j-- {
		k := tt.Child(j)
		if k == nil {
			return -1
		}
		switch k.Type() {
		case ">":
			depth++
		case ">>":
			depth += 2
		case "<":
			depth--
		case "<<":
			depth -= 2
		case ";", "{", "}":
			return -1
		}
		if depth <= 0 {
			if depth < 0 {
				return -1
			}
			return j - 1
		}
	}
	return -1
}

// rustJoin joins a chain collected backwards. A tail that starts at a
// tuple index (f().0.load) starts after it: "load".
func rustJoin(parts []string) string {
	for len(parts) > 0 && !rustNameLike(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
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

// use records a use declaration: one Import per distinct module prefix.
func (w *rustWalker) use(n *fnode) {
	line := rustLine(n)
	var out []Import
	idx := map[string]int{} // module → index in out, for imports with names
	add := func(mod, name, local string) {
		if mod == "" && name == "" {
			return
		}
		if name == "" || mod == "" {
			// The module itself: `use foo;`, `use foo as bar;`, `use {a};`.
			m := mod
			if m == "" {
				m = name
			}
			out = append(out, Import{Module: w.fileRelative(m), Alias: local, Line: line})
			return
		}
		mod = w.fileRelative(mod)
		i, ok := idx[mod]
		if !ok {
			i = len(out)
			idx[mod] = i
			out = append(out, Import{Module: mod, Line: line})
		}
		im := &out[i]
		if local != "" && local != name {
			for len(im.Locals) < len(im.Names) {
				im.Locals = append(im.Locals, "")
			}
			im.Locals = append(im.Locals, local)
		} else if im.Locals != nil {
			im.Locals = append(im.Locals, "")
		}
		im.Names = append(im.Names, name)
	}
	var tree func(t *fnode, prefix []string)
	tree = func(t *fnode, prefix []string) {
		if t == nil {
			return
		}
		switch t.Type() {
		case "identifier", "scoped_identifier", "crate", "super", "metavariable":
			segs := w.useSegs(t)
			if segs == nil {
				return
			}
			segs = append(append([]string(nil), prefix...), segs...)
			mod, name := rustSplitUse(segs)
			add(mod, name, "")
		case "self":
			// `self` in a list: the prefix's last segment; alone (`use self;`)
			// nothing.
			if len(prefix) > 0 {
				mod, name := rustSplitUse(prefix)
				add(mod, name, "")
			}
		case "use_as_clause":
			p := t.ChildByFieldName("path")
			alias := rustIdent(textOf(t.ChildByFieldName("alias"), w.src))
			var segs []string
			if p != nil && p.Type() == "self" {
				segs = append([]string(nil), prefix...)
			} else {
				s := w.useSegs(p)
				if s == nil {
					return
				}
				segs = append(append([]string(nil), prefix...), s...)
			}
			if len(segs) == 0 {
				return
			}
			mod, name := rustSplitUse(segs)
			add(mod, name, alias)
		case "use_wildcard":
			segs := append([]string(nil), prefix...)
			if p := t.NamedChild(0); p != nil {
				s := w.useSegs(p)
				if s == nil {
					return
				}
				segs = append(segs, s...)
			}
			if len(segs) > 0 {
				add(strings.Join(segs, "::"), "*", "")
			}
		case "scoped_use_list":
			segs := append([]string(nil), prefix...)
			if p := t.ChildByFieldName("path"); p != nil {
				s := w.useSegs(p)
				if s == nil {
					return
				}
				segs = append(segs, s...)
			}
			tree(t.ChildByFieldName("list"), segs)
		case "use_list":
			for i := 0; i < int(t.NamedChildCount()); i++ {
				tree(t.NamedChild(i), prefix)
			}
		}
	}
	tree(n.ChildByFieldName("argument"), nil)
	w.res.Imports = append(w.res.Imports, out...)
}

// useSegs lists the segments of a use path: a::b::c → [a b c]; a leading
// `::` is kept as an empty first segment (::std::fmt → "::std" [fmt]). nil
// when a segment is missing.
func (w *rustWalker) useSegs(n *fnode) []string {
	if n == nil {
		return nil
	}
	switch n.Type() {
	case "identifier", "crate", "super", "self":
		s := rustIdent(textOf(n, w.src))
		if s == "" {
			return nil
		}
		return []string{s}
	case "metavariable":
		return []string{textOf(n, w.src)}
	case "scoped_identifier":
		name := w.useSegs(n.ChildByFieldName("name"))
		if name == nil {
			return nil
		}
		p := n.ChildByFieldName("path")
		if p == nil {
			return append([]string{""}, name...)
		}
		ps := w.useSegs(p)
		if ps == nil {
			return nil
		}
		return append(ps, name...)
	}
	return nil
}

// rustSplitUse splits a use path into its module and the imported name:
// [a b c] → "a::b", "c"; [foo] → "", "foo" (the module itself).
func rustSplitUse(segs []string) (string, string) {
	if len(segs) == 0 {
		return "", ""
	}
	if len(segs) == 2 && segs[0] == "" { // ::foo
		return "::" + segs[1], ""
	}
	return strings.Join(segs[:len(segs)-1], "::"), segs[len(segs)-1]
}

// RustItemMacros returns the byte ranges of a Rust file's brace-delimited
// macro invocations in item position, whose items the extractor reports
// (itemMacro): definitions that a tool reading Rust's syntax alone, such as
// ctags, does not see. The ctags agreement benchmark classifies them so.
func RustItemMacros(ctx context.Context, src []byte) ([][2]int, error) {
	var out [][2]int
	err := parseTree(ctx, tsrust.GetLanguage(), "", src, func(root *fnode) error {
		for i := int32(0); i < int32(len(root.t.nodes)); i++ {
			n := root.t.node(i)
			if n.Type() != "macro_invocation" {
				continue
			}
			for k := 0; k < int(n.NamedChildCount()); k++ {
				if tt := n.NamedChild(k); tt.Type() == "token_tree" && rustItemPosition(n, tt) {
					out = append(out, [2]int{int(n.StartByte()), int(n.EndByte())})
				}
			}
		}
		return nil
	})
	return out, err
}

// inRegion reports whether n stands in container p by way of a blanked
// item macro's inside.
func (w *rustWalker) inRegion(p, n *fnode) bool {
	for _, r := range w.regions {
		if r.container == p.i && int(n.StartByte()) >= r.from && int(n.StartByte()) < r.to {
			return true
		}
	}
	return false
}
