package extract

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	tsrust "github.com/smacker/go-tree-sitter/rust"
)

func rustExtract(t *testing.T, src string) *FileResult {
	t.Helper()
	res, err := rustLang{}.Extract(context.Background(), "x.rs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, []byte(src), res)
	return res
}

func TestRustCallee(t *testing.T) {
	cases := map[string][]string{
		"foo()":                       {"foo"},
		"a::b::foo()":                 {"a.b.foo"},
		"Type::new()":                 {"Type.new"},
		"Self::new()":                 {"Self.new"},
		"self.m()":                    {"self.m"},
		"x.y.m()":                     {"x.y.m"},
		"self.0.m()":                  {"self.0.m"},
		"foo().bar()":                 {"bar", "foo"},
		"foo().a.b()":                 {"a.b", "foo"},
		"foo().0.load()":              {"load", "foo"},
		"x[0].m()":                    {"m"},
		"(a).b()":                     {"b"},
		"(a.b)()":                     {"a.b"},
		"x?.m()":                      {"m"},
		"foo::<T>()":                  {"foo"},
		"a.b::<T>()":                  {"a.b"},
		"Vec::<u8>::new()":            {"Vec.new"},
		"<T as Trait>::f()":           {"Trait.f"},
		"<Vec<T>>::new()":             {"Vec.new"},
		"<&T>::f()":                   {"f"},
		"crate::a::f()":               {"crate.a.f"},
		"super::f()":                  {"super.f"},
		"u64::from(1)":                {"u64.from"},
		"r#try()":                     {"try"},
		"Some(1)":                     {"Some"},
		"f()()":                       {"f"},
		"fns[0]()":                    nil,
		"(|| 1)()":                    nil,
		"self.0()":                    nil,
		"println!(\"{}\", g())":       {"println", "g"},
		"std::println!()":             {"std.println"},
		"assert_eq!(f(x), 1)":         {"assert_eq", "f"},
		"vec![h()]":                   {"vec", "h"},
		"m!(a::b(1), self.c(2))":      {"m", "a.b", "self.c"},
		"m!(x.y.z(1), f().g(2))":      {"m", "x.y.z", "f", "g"},
		"m!(p::<T>(1), Q::<T>::r(2))": {"m", "p", "Q.r"},
		"m!(inner!(k(1)))":            {"m", "inner", "k"},
		"m!(fn d(a: u8) {} struct S(u8); $v(1) 'l (2))": {"m"},
		"m!(if (a) {} else (b) in (c) move (d))":        {"m"},
		"m!(#[cfg(x)] y(1))":                            {"m", "y"},
		"m!($crate::io::f(1), $x.g(2))":                 {"m", "crate.io.f", "g"},
		"m!(r#match(1))":                                {"m", "match"},
	}
	for expr, want := range cases {
		res := rustExtract(t, "fn f() {\n    "+expr+";\n}\n")
		var got []string
		for _, c := range res.Calls {
			got = append(got, c.Callee)
			if c.From != "f" || c.Line != 2 {
				t.Errorf("%s: call from %q line %d, want f line 2", expr, c.From, c.Line)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: callees %q, want %q", expr, got, want)
		}
	}
}

func TestRustUse(t *testing.T) {
	cases := map[string][]Import{
		"use a::b::c;":         {{Module: "a::b", Names: []string{"c"}}},
		"use a::b::c as d;":    {{Module: "a::b", Names: []string{"c"}, Locals: []string{"d"}}},
		"use a::b::*;":         {{Module: "a::b", Names: []string{"*"}}},
		"use foo;":             {{Module: "foo"}},
		"use foo as bar;":      {{Module: "foo", Alias: "bar"}},
		"extern crate x;":      {{Module: "x"}},
		"extern crate x as y;": {{Module: "x", Alias: "y"}},
		"mod m;":               {{Module: "self::m"}},
		"pub use ::std::mem;":  {{Module: "::std", Names: []string{"mem"}}},
		"use a::{b::c, d, e::{f, g}};": {
			{Module: "a::b", Names: []string{"c"}},
			{Module: "a", Names: []string{"d"}},
			{Module: "a::e", Names: []string{"f", "g"}},
		},
		"use a::b::{self, c};": {
			{Module: "a", Names: []string{"b"}},
			{Module: "a::b", Names: []string{"c"}},
		},
		"use a::{b, c::d, e as f, g};": {
			{Module: "a", Names: []string{"b", "e", "g"}, Locals: []string{"", "f", ""}},
			{Module: "a::c", Names: []string{"d"}},
		},
		"use foo::{self as f, bar};": {
			{Module: "foo", Alias: "f"},
			{Module: "foo", Names: []string{"bar"}},
		},
		"use {a, b::c};": {{Module: "a"}, {Module: "b", Names: []string{"c"}}},
	}
	for stmt, want := range cases {
		res := rustExtract(t, "\n"+stmt+"\n")
		for i := range want {
			want[i].Line = 2
		}
		if !reflect.DeepEqual(res.Imports, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", stmt, res.Imports, want)
		}
	}
}

func TestRustImplNaming(t *testing.T) {
	cases := map[string][]string{
		"impl Foo { fn m() {} }":                                    {"Foo.m"},
		"impl<T> Foo<T> { fn m() {} }":                              {"Foo.m"},
		"impl Foo<'a> { fn m() {} }":                                {"Foo.m"},
		"impl path::to::Foo { fn m() {} }":                          {"Foo.m"},
		"impl<T> Tr for &mut Foo<T> { fn m() {} }":                  {"Foo.m"},
		"impl Tr for *const Foo { fn m() {} }":                      {"Foo.m"},
		"impl dyn Tr { fn m() {} }":                                 {"Tr.m"},
		"impl Tr for [u8] { fn m() {} }":                            {"m"},
		"impl Tr for u32 { fn m() {} }":                             {"u32.m"},
		"mod a { mod b { impl C { fn m() {} } } }":                  {"a", "a.b", "a.b.C.m"},
		"fn f() { impl Foo { fn m() { fn g() {} } } }":              {"f", "f.Foo.m", "f.Foo.m.g"},
		"impl A for X { fn fmt() {} } impl B for X { fn fmt() {} }": {"X.fmt", "X.fmt#2"},
		"trait T { fn a(&self); fn b(&self) {} }":                   {"T", "T.a", "T.b"},
		"extern \"C\" { fn ext(); }":                                nil,
		"m! { fn inside() {} }":                                     {"inside"},
		"impl Foo { m! { fn inside() {} } }":                        {"Foo.inside"},
		"fn f() { m! { fn inside() {} } }":                          {"f"},
	}
	for src, want := range cases {
		res := rustExtract(t, src)
		var got []string
		for _, d := range res.Defs {
			got = append(got, d.Name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: defs %q, want %q", src, got, want)
		}
	}
	res := rustExtract(t, "impl<T> io::Write<T> for a::Foo<T> {}\ntrait A: B + c::C<T> + 'static + ?Sized {}\n")
	wantInh := []Inherit{{Class: "Foo", Base: "io.Write"}, {Class: "A", Base: "B"}, {Class: "A", Base: "c.C"}}
	if !reflect.DeepEqual(res.Inherits, wantInh) {
		t.Errorf("inherits:\n got %+v\nwant %+v", res.Inherits, wantInh)
	}
}

// TestRustSpans: items start at the item, not at attributes or doc comments;
// an item macro's definitions keep the file's offsets and lines.
func TestRustSpans(t *testing.T) {
	src := "/// Doc.\n#[derive(Debug)]\npub struct S;\n\n#[test]\nfn t() {}\n\ncfg! {\n    // c\n    fn g() {\n        h();\n    }\n}\n"
	res := rustExtract(t, src)
	starts := map[string]string{"S": "pub struct S;", "t": "fn t() {}", "g": "fn g() {\n        h();\n    }"}
	for _, d := range res.Defs {
		if got := src[d.StartByte:d.EndByte]; got != starts[d.Name] {
			t.Errorf("%s spans %q, want %q", d.Name, got, starts[d.Name])
		}
		delete(starts, d.Name)
	}
	if len(starts) > 0 {
		t.Errorf("missing defs %v", starts)
	}
	want := []Call{{From: "", Callee: "cfg", Line: 8}, {From: "g", Callee: "h", Line: 11}}
	if !reflect.DeepEqual(res.Calls, want) {
		t.Errorf("calls:\n got %+v\nwant %+v", res.Calls, want)
	}
}

// TestRustConcurrent: the extractor is safe for concurrent use (go test -race).
func TestRustConcurrent(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "rust", "shapes.rs"))
	if err != nil {
		t.Fatal(err)
	}
	want := render(rustExtract(t, string(src)))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := rustLang{}.Extract(context.Background(), "shapes.rs", src)
			if err != nil || render(res) != want {
				t.Errorf("concurrent extraction differs (err %v)", err)
			}
		}()
	}
	wg.Wait()
}

// TestRustNamedEntries: an item macro's inside that begins with a name and
// one colon is not parsed as items, and every such inside would have
// parsed with errors (what itemMacro needs to read it), so the graph is the
// same without the parse.
func TestRustNamedEntries(t *testing.T) {
	tables := []string{
		"\n    stable: {\n        fn a() {}\n    },\n    unstable: { fn b() {} }\n",
		"byte_plus: (\"+1b\", SizeFilter::Min(1)),",
		"// comment\n/* block /* nested */ */ empty: \"\" => Ok(x),",
		"r: x",
	}
	for _, in := range tables {
		if !rustNamedEntries([]byte(in)) {
			t.Errorf("%q: not taken for a table", in)
		}
		err := parseTree(context.Background(), tsrust.GetLanguage(), "x.rs", []byte(in), func(root *fnode) error {
			if errorsIn(root) == 0 {
				t.Errorf("%q parses as items: itemMacro would read it", in)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []string{"fn a() {}", "a::b!(c);", "name :: x", "'a: loop {}", "#[cfg(x)] a: b", "1: 2", "", "/* open", "x", "r#type: u8"} {
		if rustNamedEntries([]byte(in)) {
			t.Errorf("%q is taken for a table", in)
		}
	}
	// The macro's calls are read from its tokens, as before.
	res := rustExtract(t, "fn f() {}\nmy_tests! {\n    first: f() => 1,\n}\n")
	var calls []string
	for _, c := range res.Calls {
		calls = append(calls, c.Callee)
	}
	if !slices.Contains(calls, "f") || !slices.Contains(calls, "my_tests") {
		t.Errorf("calls %v, want my_tests and f", calls)
	}
}

// TestRustInlineModulePaths: in an inline module, `super` is the module
// around it and `self` the inline module itself, so `use super::*` in a
// file's `mod tests` opens the file, not its parent, and a `mod x;` there
// is the file's subdirectory's.
func TestRustInlineModulePaths(t *testing.T) {
	for src, want := range map[string][]Import{
		"mod tests {\n use super::*;\n}":               {{Module: "self", Names: []string{"*"}, Line: 2}},
		"mod tests {\n use super::super::x;\n}":        {{Module: "super", Names: []string{"x"}, Line: 2}},
		"mod a {\n mod b {\n  use super::f;\n }\n}":    {{Module: "self::a", Names: []string{"f"}, Line: 3}},
		"mod a {\n mod b {\n  use self::c::g;\n }\n}":  {{Module: "self::a::b::c", Names: []string{"g"}, Line: 3}},
		"mod tests {\n use crate::x::y;\n}":            {{Module: "crate::x", Names: []string{"y"}, Line: 2}},
		"mod tests {\n mod helpers;\n}":                {{Module: "self::tests::helpers", Line: 2}},
		"mod tests {\n use super::{self as up, f};\n}": {{Module: "self", Alias: "up", Line: 2}, {Module: "self", Names: []string{"f"}, Line: 2}},
		"use super::*;\nmod tests {}":                  {{Module: "super", Names: []string{"*"}, Line: 1}},
	} {
		if got := rustExtract(t, src).Imports; !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %+v\nwant %+v", src, got, want)
		}
	}

}
