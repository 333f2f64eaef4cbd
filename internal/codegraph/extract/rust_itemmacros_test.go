package extract

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	tsrust "github.com/smacker/go-tree-sitter/rust"
)

func TestRustItemMacros(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // the proposed macros' names, in order
	}{
		{"file level", "cfg_rt! {\n    pub fn spawn() {}\n}\n", []string{"cfg_rt"}},
		{"nested, with attributes", "#[cfg(test)]\ncfg_a! {\n  cfg_b! { mod m; }\n}\n", []string{"cfg_a", "cfg_b"}},
		{"in impl, trait and mod", "impl<T: Fn() -> u8> S<T> where T: Copy {\n cfg_x! { fn f(&self) {} }\n}\npub(crate) unsafe trait Tr { cfg_y! { fn g(); } }\nmod m { cfg_z! { fn h() {} } }\n",
			[]string{"cfg_x", "cfg_y", "cfg_z"}},
		{"extern block", "extern \"C\" { cfg_x! { fn f(); } }\nextern \"C\" fn g() { cfg_y! { let a = 1; } }\n", []string{"cfg_x"}},
		{"not items: bodies, paths, other delimiters", "fn f() {\n    select! { x = a => {} }\n}\nstruct S { a: u8 }\ncrate::cfg_x! { fn g() {} }\nfoo!(x);\nmacro_rules! m { () => { cfg_x! { fn h() {} } } }\nconst C: S = S { a: m! { 1 } };\n", nil},
		{"literals and comments", "// cfg_a! { fn x() {} }\n/* cfg_b! { /* nested */ } */\nconst S: &str = \"cfg_c! { }\";\nconst R: &str = r#\"}\"#;\nconst C: char = '{';\nfn l<'a>(x: &'a u8) {}\ncfg_d! { fn y() {} }\n", []string{"cfg_d"}},
		{"unbalanced", "cfg_x! { fn f() {}\n", nil},
		{"insides that begin no item", "tests! { a: (1, 2), }\nrules! { x => y }\nempty! {}\nitems! { #[test] fn t() {} }\nmore! { other! { pub fn u() {} } }\n", []string{"items", "more", "other"}},
		{"unclosed string", "cfg_x! { }\nconst S: &str = \"abc;\n", nil},
	} {
		var got []string
		for _, m := range rustProposeItemMacros([]byte(tc.src)) {
			got = append(got, m.name)
			if tc.src[m.open] != '{' || tc.src[m.close] != '}' || !strings.HasPrefix(tc.src[m.start:], m.name) {
				t.Errorf("%s: %s at %d, %d, %d: not a name, its brace and the matching brace", tc.name, m.name, m.start, m.open, m.close)
			}
			if line := 1 + strings.Count(tc.src[:m.start], "\n"); line != m.line {
				t.Errorf("%s: %s on line %d, want %d", tc.name, m.name, m.line, line)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: proposed %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRustUnwrappedMatchesWritten: the extraction with item macros' insides
// read in place is the one of the file as written, whether the tree bears
// every macro out, restores some, or none.
func TestRustUnwrappedMatchesWritten(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
		inPlace   bool // read with at least one macro unwrapped
	}{
		{"file and nested", "use std::io;\ncfg_rt! {\n    pub fn spawn() { helper(); }\n    cfg_net! {\n        pub struct Tcp;\n        impl Tcp { fn bind() { io::stdin(); } }\n    }\n}\nfn helper() {}\n", true},
		{"impl and trait", "struct S;\nimpl S {\n    cfg_x! {\n        fn a(&self) { self.b(); }\n        fn b(&self) {}\n    }\n}\ntrait T {\n    cfg_y! { fn sig(&self); fn body(&self) {} }\n}\n", true},
		{"one inside does not parse as items", "cfg_ok! { fn f() { g(); } }\nrules! { struct S { a: } }\nfn g() {}\n", true},
		{"errors beyond the macro", "rules! { fn x( }\nfn g() {}\n", false},
		{"macro in a body only", "fn f() { tokio::select! { _ = a() => {} } }\n", false},
	} {
		want, err := rustExtractWritten(ctx, "a.rs", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		ms := rustProposeItemMacros([]byte(tc.src))
		got, err := rustExtractUnwrapped(ctx, "a.rs", []byte(tc.src), ms)
		if err != nil {
			t.Fatal(err)
		}
		inPlace := false
		if got != nil {
			// Read in place unless every macro was restored.
			_, bad, ok := func() (r []rustRegion, b []int, ok bool) {
				_ = parseTree(ctx, tsrust.GetLanguage(), "a.rs", rustBlankMacros([]byte(tc.src), ms), func(root *fnode) error {
					r, b, ok = rustUnwrapped(root, ms)
					return nil
				})
				return
			}()
			inPlace = ok && len(bad) < len(ms)
		}
		if inPlace != tc.inPlace {
			t.Errorf("%s: read in place %v, want %v", tc.name, inPlace, tc.inPlace)
		}
		if got == nil {
			got = want
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n in place   %+v\n as written %+v", tc.name, got, want)
		}
		if len(want.Defs) == 0 {
			t.Errorf("%s: nothing extracted", tc.name)
		}
	}
}

// FuzzRustItemMacros: whatever the text, proposed macros are a name, its
// "{" and the matching "}", and reading them in place extracts what the
// file as written does. The seeds include inputs fuzzing once found
// differing: a name tree-sitter does not read as one, a shebang where the
// wrapper was, a keyword as the macro's name.
func FuzzRustItemMacros(f *testing.F) {
	for _, s := range []string{"cfg_rt! { fn f() {} }", "mod m { a! { #[x] pub fn g(); } }", "r#\"}\"# x! { '{' }",
		"impl X { m! { fn f(&self) { y!{} } } }", "/* /* */ */ a! {}", "x! { 'a' 'static }", "trait T { m! { fn s(&self); } }",
		"A\xff!{fn A(){}}", "A!{#!(}", "mod!{A!{}}", "a! { fn f(x: [u8; 4]) {} }"} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, src []byte) {
		ms := rustProposeItemMacros(src)
		for _, m := range ms {
			if m.open < m.start || m.close <= m.open || m.close >= len(src) || src[m.open] != '{' || src[m.close] != '}' {
				t.Fatalf("%q: macro %+v is not a name, its brace and the matching brace", src, m)
			}
		}
		if len(ms) == 0 {
			return
		}
		got, err := rustExtractUnwrapped(ctx, "a.rs", src, ms)
		want, err2 := rustExtractWritten(ctx, "a.rs", src)
		if err == nil && err2 == nil && got != nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n in place   %+v\n as written %+v", src, got, want)
		}
	})
}

// TestRustMembersOfTheKeptReading: the members the history scrape keeps
// for a Rust file are those of the reading the extractor keeps, not of a
// blanked reading it dropped: item macros that read with errors once
// blanked are restored (two macros, the first kept) or the file read as
// written (the only macro).
func TestRustMembersOfTheKeptReading(t *testing.T) {
	for _, tc := range []struct {
		src  string
		kept int // macros read in place
	}{
		{"mac! {\n    fn a() {}\n    fn b() -> {}\n}\n\nfn c() {}\n", 0},
		{"ok! {\n    fn a() {}\n}\n\nbad! {\n    fn b() -> {}\n}\n\nfn c() {}\n", 1},
	} {
		src := []byte(tc.src)
		ctx, want := WithMembers(context.Background())
		if tc.kept == 0 {
			if _, err := rustExtractWritten(ctx, "a.rs", src); err != nil {
				t.Fatal(err)
			}
		} else {
			kept := rustProposeItemMacros(src)[:tc.kept]
			if err := parseTree(ctx, tsrust.GetLanguage(), "a.rs", rustBlankMacros(src, kept), func(*fnode) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		ctx, got := WithMembers(context.Background())
		if _, err := (rustLang{}).Extract(ctx, "a.rs", src); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Members, got.Errs) != fmt.Sprint(want.Members, want.Errs) {
			t.Errorf("%q: members %v, errors at %v; the kept reading's are %v, %v", tc.src, got.Members, got.Errs, want.Members, want.Errs)
		}
	}
}
