package extract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCFamilyDeclarators(t *testing.T) {
	cases := []struct {
		file, src string
		defs      []string // all function and class defs, in order
		decls     []string
	}{
		{"a.c", "static char *(*pick(int x))(char) { return 0; }", []string{"function pick"}, nil},
		{"a.c", "int (*fp)(int);\nint (*get(void))(int);", nil, []string{"get"}},
		{"a.c", "int f(a, b) int a; char *b; { return a; }", []string{"function f"}, nil},
		{"a.c", "int proto(int);\nint proto(int x) { return x; }", []string{"function proto"}, nil},
		{"a.c", "typedef struct { int x; } point;\ntypedef struct node { int v; } node_t;\nstruct fwd;\nstruct fwd *p;",
			[]string{"class point", "class node"}, nil},
		{"a.c", "#define F(x) g(x)\n#define O 1\n", []string{"function F"}, nil},
		{"a.c", "#if A\nint f(void) { return 1; }\n#else\nint f(void) { return 2; }\n#endif\n",
			[]string{"function f", "function f#2"}, nil},
		{"a.hpp", "namespace a::b { struct S { void m() {} void d(); virtual int p() = 0; S() = default; ~S(); }; }",
			[]string{"class a.b.S", "function a.b.S.m", "function a.b.S.p"}, []string{"a.b.S.d", "a.b.S.S", "a.b.S.~S"}},
		{"a.cpp", "namespace ns { void A::B::f() {} A::~A() {} }\ntemplate <class T> void X<T>::g() {}",
			[]string{"function ns.A.B.f", "function ns.A.~A", "function X.g"}, nil},
		{"a.cpp", "inline namespace v1 { namespace { void f() {} } }", []string{"function f"}, nil},
		{"a.hpp", "struct S { bool operator ==(const S&) const { return 1; } operator const char *() const { return 0; } int operator()(int) { return 0; } };",
			[]string{"class S", "function S.operator==", "function S.operator const char*", "function S.operator()"}, nil},
		{"a.hpp", "void f(int a = 1) {}\nvoid f(const std::basic_string_view<Char> & s, ...) {}\nvoid f(unsigned  long * p, T && q) {}\nvoid g() {}",
			[]string{"function f(int)", "function f(const std::basic_string_view<Char>&,...)", "function f(unsigned long*,T&&)", "function g"}, nil},
		{"a.hpp", "struct S { int& get() { return x; } const int& get() const { return x; } };",
			[]string{"class S", "function S.get()", "function S.get()const"}, nil},
		{"a.hpp", "#if A\ntemplate <class T> void f(T) {}\n#else\ntemplate <class T> void f(T) {}\n#endif\n",
			[]string{"function f", "function f#2"}, nil},
		{"a.hpp", "template <class T> struct formatter {};\ntemplate <> struct formatter<int> {};",
			[]string{"class formatter", "class formatter#2"}, nil},
		{"a.hpp", "FMT_BEGIN_NAMESPACE\nnamespace detail {\nFMT_CONSTEXPR inline auto f(int x) -> int { return x; }\nclass FMT_API err : public std::runtime_error {};\n}\nFMT_END_NAMESPACE\n",
			[]string{"function detail.f", "class detail.err"}, nil},
		{"a.hpp", "struct T { FMT_CONSTEXPR T(const A& a) : v(a) {} };", []string{"class T", "function T.T"}, nil},
		// Overloads defined inside a function body: pass one must look
		// into bodies that hold a class (mayDefine).
		{"a.cpp", "void f() {\n  struct L { void m(int) {} void m(long) {} };\n  g(1);\n}\nvoid h() { g(2); }",
			[]string{"function f", "class f.L", "function f.L.m(int)", "function f.L.m(long)", "function h"}, nil},
		{"a.cpp", "void f() {\n  struct L { void m(int); void m(long); };\n}",
			[]string{"function f", "class f.L"}, []string{"f.L.m(int)", "f.L.m(long)"}},
	}
	for _, c := range cases {
		r := cfExtract(t, c.file, c.src)
		got := cfDefNames(r)
		if strings.Join(got, "|") != strings.Join(c.defs, "|") {
			t.Errorf("%s %q:\n defs %q\n want %q", c.file, c.src, got, c.defs)
		}
		if strings.Join(r.Decls, "|") != strings.Join(c.decls, "|") {
			t.Errorf("%s %q:\n decls %q\n want %q", c.file, c.src, r.Decls, c.decls)
		}
	}
}

func TestCFamilyCallees(t *testing.T) {
	cases := []struct {
		file, expr string
		want       string // "" when no call is reported
	}{
		{"a.c", "f(x)", "f"},
		{"a.c", "s->fn(x)", "s.fn"},
		{"a.c", "s.fn(x)", "s.fn"},
		{"a.c", "a.b->c(x)", "a.b.c"},
		{"a.c", "(*fp)(x)", ""},
		{"a.c", "fns[i](x)", ""},
		{"a.c", "(*s->fp)(x)", "fp"},
		{"a.c", "s->fns[0](x)", "fns"},
		{"a.c", "(f)(x)", "f"},
		{"a.cpp", "ns::f()", "ns.f"},
		{"a.cpp", "A::B::f()", "A.B.f"},
		{"a.cpp", "this->m()", "this.m"},
		{"a.cpp", "f<T>(x)", "f"},
		{"a.cpp", "std::move(x)", "std.move"},
		{"a.cpp", "new Foo(x)", "Foo"},
		{"a.cpp", "new ns::Foo<int>(x)", "ns.Foo"},
		{"a.cpp", "(*p).f()", "p.f"},
		{"a.cpp", "a().b()", "b"},
		{"a.cpp", "static_cast<int>(x)", ""},
	}
	for _, c := range cases {
		r := cfExtract(t, c.file, "void g(void) { "+c.expr+"; }")
		var got []string
		for _, call := range r.Calls {
			if call.From != "g" {
				t.Errorf("%s: call from %q, want g", c.expr, call.From)
			}
			if call.Callee != "a" { // a().b(): the inner call
				got = append(got, call.Callee)
			}
		}
		want := []string{}
		if c.want != "" {
			want = []string{c.want}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s %s: callees %q, want %q", c.file, c.expr, got, want)
		}
	}
}

func TestCFamilyIncludesAndBases(t *testing.T) {
	r := cfExtract(t, "a.cpp", "#include \"a/b.h\"\n#include <x.h>\nclass A : public B, private ns::C<T>, virtual ::D {};\n")
	var mods []string
	for _, im := range r.Imports {
		mods = append(mods, fmt.Sprintf("%s@%d", im.Module, im.Line))
	}
	if strings.Join(mods, " ") != "a/b.h@1 x.h@2" {
		t.Errorf("imports %q", mods)
	}
	var bases []string
	for _, in := range r.Inherits {
		bases = append(bases, in.Class+"->"+in.Base)
	}
	if strings.Join(bases, " ") != "A->B A->ns.C A->D" {
		t.Errorf("bases %q", bases)
	}
}

func TestCFamilyTemplateSpan(t *testing.T) {
	src := "template <typename T>\nT id(T x) {\n  return x;\n}\n"
	r := cfExtract(t, "a.hpp", src)
	if len(r.Defs) != 1 || r.Defs[0].StartLine != 1 || r.Defs[0].EndLine != 4 || r.Defs[0].StartByte != 0 {
		t.Errorf("defs %+v", r.Defs)
	}
	if !slices.Contains(cfDefNames(r), "function id") {
		t.Errorf("defs %q", cfDefNames(r))
	}
}

// cfExtract runs the extractor of file's language over src.
func cfExtract(t *testing.T, file, src string) *FileResult {
	t.Helper()
	r, err := languageFor(file).Extract(context.Background(), file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, []byte(src), r)
	return r
}

// cfDefNames lists r's definitions as "kind name", in order.
func cfDefNames(r *FileResult) []string {
	var out []string
	for _, d := range r.Defs {
		out = append(out, d.Kind+" "+d.Name)
	}
	return out
}

func TestCUnbalancedBranches(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"int f(void) { return 0; }\n", false},
		{"#ifdef X\nint f(int a) {\n#else\nint f(void) {\n#endif\n  return 0;\n}\n", true},
		{"#if A\nvoid g(void) { h(); }\n#elif B\nvoid g(void) { }\n#endif\n", false},
		{"#ifndef X\n#define X\nstruct s { int a; };\n#endif\n", false},
		{"#if A\nconst char *s = \"{\"; /* } */ char c = '{'; // {\n#endif\n", false},
		{"#if A\n  if (x) {\n#endif\n  y();\n#if A\n  }\n#endif\n", true},
		{"#if A\n/* a comment\n  { spanning lines */\n#endif\n", false},
	} {
		if got := CUnbalancedBranches([]byte(tc.src)); got != tc.want {
			t.Errorf("CUnbalancedBranches(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestCQualifierMacro: which lines of C hold a macro used as a qualifier
// before a declaration's type, and where.
func TestCQualifierMacro(t *testing.T) {
	for _, tc := range []struct {
		line, want string // want: the macro, "" for none
	}{
		{"redisAtomic int x;", "redisAtomic"},
		{"redisAtomic uint64_t next_client_id; /* Next client unique ID. */", "redisAtomic"},
		{"static redisAtomic size_t lazyfree_objects = 0;", "redisAtomic"},
		{"redisAtomic unsigned int lruclock;", "redisAtomic"},
		{"redisAtomic size_t stat_clients_type_memory[CLIENT_TYPE_COUNT];", "redisAtomic"},
		{"MY_ATTR char *name, *value;", "MY_ATTR"},
		{"unsigned_flags int x : 3;", "unsigned_flags"},
		{"int x;", ""},                        // one type, one name
		{"robj *o;", ""},                      // the same with a pointer
		{"unsigned long long x;", ""},         // keywords
		{"static const char *s = \"a\";", ""}, // storage classes and a type
		{"int REDIS_UNUSED x;", ""},           // the type first: left as it is
		{"size_t MY_ATTR n;", ""},             // a built-in type first
		{"return a b;", ""},                   // a keyword
		{"foo(bar baz);", ""},                 // a call
		{"x = y + z;", ""},                    // an assignment
		{"again: x y;", ""},                   // a label
		{"* the comment says this;", ""},      // a comment line
		{"static inline int f(int x);", ""},   // a prototype
		{"redisAtomic int", ""},               // no end
		{"", ""},
	} {
		from, to := cQualifierMacro([]byte(tc.line))
		if got := tc.line[from:to]; got != tc.want {
			t.Errorf("cQualifierMacro(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
	// Blanked in C only, keeping every byte's place.
	src := []byte("struct s {\n    redisAtomic int x;\n};\n")
	if got, want := string(CBlankMacroLines(src, false)), "struct s {\n                int x;\n};\n"; got != want {
		t.Errorf("CBlankMacroLines(C) = %q, want %q", got, want)
	}
	if got := CBlankMacroLines(src, true); string(got) != string(src) {
		t.Errorf("CBlankMacroLines(C++) = %q, want it unchanged", got)
	}
	// The struct reads without a syntax error, which would make a file
	// with unpaired branches be read again (redis's server.h).
	r := cfExtract(t, "server.h", "struct server {\n    redisAtomic int clients;\n    redisAtomic uint64_t next_id;\n};\nint f(void) { return 0; }\n")
	if got := cfDefNames(r); r.ErrorNodes != 0 || strings.Join(got, "|") != "class server|function f" {
		t.Errorf("struct with qualifier macros: %d error nodes, defs %q; want none and [class server, function f]", r.ErrorNodes, got)
	}
}

// TestCReadings checks which readings of a C file with syntax errors are
// parsed: once the reading keeping every branch finds more functions than
// the file as written, the others of the file as written are not made.
func TestCReadings(t *testing.T) {
	// A branch opens a brace that the other closes (jq's jv_print.c).
	unbalanced := "static void dump(int flags)\n{\n    if (flags) {\n#ifdef DEC\n        if (lit()) {\n            pl();\n        } else {\n#endif\n            pd();\n        }\n#ifdef DEC\n    }\n#endif\n}\n\nvoid after(void)\n{\n    dump(1);\n}\n"
	for _, tc := range []struct {
		name, src string
		defs      []string
		reads     int
	}{
		{"clean", "int f(void) { return 0; }\n", []string{"function f"}, 1},
		{"every branch wins", unbalanced, []string{"function dump", "function after"}, 2},
		{"every branch wins, cut short", unbalanced + "void cut(int y) {\n    if (y) {\n        after(\n", []string{"function dump", "function after", "function cut"}, 3},
		{"no other branch", "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void) { return 0; }\n#ifdef __cplusplus\n}\n#endif\n", []string{"function f"}, 2},
		{"cut short only", "int f(void) { return 0; }\nvoid cut(int y) {\n    if (y) {\n        f(\n", []string{"function f", "function cut"}, 2},
		// tree-sitter closes the last function itself (a MISSING "}"), and
		// no ERROR reaches the end: closers are appended to the file as
		// written, not to the reading with every branch kept.
		{"cut short, closed by the parser", "int f(void) { return 0; }\nvoid g(void) {\n    f();\n", []string{"function f", "function g"}, 2},
		{"every branch wins, closed by the parser", unbalanced + "void g(void) {\n    f();\n", []string{"function dump", "function after", "function g"}, 2},
	} {
		r := cfExtract(t, "a.c", tc.src)
		got := cfDefNames(r)
		if strings.Join(got, "|") != strings.Join(tc.defs, "|") || r.reads != tc.reads {
			t.Errorf("%s: defs %q after %d readings, want %q after %d", tc.name, got, r.reads, tc.defs, tc.reads)
		}
		if (tc.reads > 1) != r.Reread() {
			t.Errorf("%s: reread %v after %d readings", tc.name, r.Reread(), r.reads)
		}
	}
}

// TestCMacroPrefilters: wherever the regular expressions of
// CBlankMacroLines match a line, their prefilters let it through (they
// only skip lines that cannot match).
func TestCMacroPrefilters(t *testing.T) {
	lines := []string{
		"class FMT_API format_error : public std::runtime_error {",
		"struct  FMT_EXPORT X final {", "union\tU_API u {", "typedef struct FOO_T bar {",
		"class foo : bar {", "struct FMT_API;", "xclass A B {",
		"FMT_CONSTEXPR typed_node(const Arg& arg) : value(arg) {}",
		"  constexpr static FMT_INLINE FMT_API ~basic_memory_buffer() {",
		"FMT_API FOO (x)", "FMT_API inline (x)", "Foo(x);", "FMT_API", "static FMT_API", "FOO\tbar(",
		"explicit FMT_CONSTEXPR20 inline format_error(const char* m)",
	}
	for _, dir := range []string{"testdata/c", "testdata/cpp"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, strings.Split(string(data), "\n")...)
		}
	}
	matched := 0
	for _, l := range lines {
		line := []byte(l)
		if cClassMacro.Match(line) {
			matched++
			if len(cClassMacroCandidates(line)) == 0 {
				t.Errorf("%q: cClassMacro matches, no candidate", l)
			}
		}
		if cCtorMacros.Match(line) {
			matched++
			if !cMayHaveCtorMacro(bytes.TrimLeft(line, " \t")) {
				t.Errorf("%q: cCtorMacros matches, cMayHaveCtorMacro says no", l)
			}
		}
	}
	if matched < 8 {
		t.Errorf("only %d matches: the lines no longer exercise the prefilters", matched)
	}
}

func TestCExportAndAttributeMacros(t *testing.T) {
	for _, tc := range []struct {
		line, lead, trail string // the macros found, "" for none
	}{
		{"REDISMODULE_API void * (*RedisModule_Alloc)(size_t bytes) REDISMODULE_ATTR;", "REDISMODULE_API", "REDISMODULE_ATTR"},
		{"REDISMODULE_API RedisModuleCommand *(*RedisModule_GetCommand)(RedisModuleCtx *ctx) REDISMODULE_ATTR;", "REDISMODULE_API", "REDISMODULE_ATTR"},
		{"REDISMODULE_API void (*RedisModule_Log)(RedisModuleCtx *ctx, const char *fmt, ...) REDISMODULE_ATTR REDISMODULE_ATTR_PRINTF(2,3);",
			"REDISMODULE_API", "REDISMODULE_ATTR REDISMODULE_ATTR_PRINTF(2,3)"},
		{"static int RedisModule_Init(RedisModuleCtx *ctx, const char *name) REDISMODULE_ATTR_UNUSED;", "", "REDISMODULE_ATTR_UNUSED"},
		{"REDIS_STATIC quicklistNode *_quicklistMergeNodes(quicklist *quicklist, quicklistNode *center);", "REDIS_STATIC", ""},
		{"static FOO_INLINE int h(void) {", "FOO_INLINE", ""},
		{"MY_API unsigned long x;", "MY_API", ""},
		{"REDISMODULE_API mstime_t (*RedisModule_Milliseconds)(void) REDISMODULE_ATTR;", "REDISMODULE_API", "REDISMODULE_ATTR"},
		{"FOO_T name(int x);", "", ""}, // FOO_T may be the return type
		{"FOO_T *p;", "", ""},          // or a pointer's type
		{"int f(void);", "", ""},       // nothing to blank
		{"int x = FOO_BAR;", "", ""},   // a value
		{"long long mt = (long long)REDISMODULE_TYPE_SIGN(o->type->id);", "", ""}, // a call after a cast
		{"if (x) FOO_BAR(y);", "", ""},                                            // a statement's body
		{"return (x) FOO_BAR;", "", ""},                                           // a value
		{"FOO_BAR(x) BAZ_QUX;", "", ""},                                           // no declarator before the macros
		{"#define F(x) g(x) FOO_BAR;", "", ""},
		{"", "", ""},
	} {
		a, b := cQualifierMacro([]byte(tc.line))
		c, d := cTrailingAttributes([]byte(tc.line))
		if got := tc.line[a:b]; got != tc.lead {
			t.Errorf("cQualifierMacro(%q) = %q, want %q", tc.line, got, tc.lead)
		}
		if got := tc.line[c:d]; got != tc.trail {
			t.Errorf("cTrailingAttributes(%q) = %q, want %q", tc.line, got, tc.trail)
		}
	}
	// Blanked in C only: C++'s grammar reads FMT_CONSTEXPR and the like.
	src := []byte("FOO_API void f(int x) FOO_ATTR;\n")
	if got, want := string(CBlankMacroLines(src, false)), "        void f(int x)         ;\n"; got != want {
		t.Errorf("C: %q, want %q", got, want)
	}
	if got := string(CBlankMacroLines(src, true)); got != string(src) {
		t.Errorf("C++: %q, want it unchanged", got)
	}
}

// TestCStatementMacros: what tree-sitter cannot read around C macro calls
// is mended with every line kept, and nothing else is touched.
func TestCStatementMacros(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"    char *s = va_arg(ap,char*);\n", "    char *s = va_arg(ap      );\n"},
		{"    x = va_arg(ap, long long) + my_va_arg(a, b);\n", "    x = va_arg(ap           ) + my_va_arg(a, b);\n"},
		{"    run_with_period(100) {\n        f();\n    }\n", "    run_with_period(100);{\n        f();\n    }\n"},
		{"    run_with_period(1000) receiveChildInfo();\n", "    run_with_period(1000);receiveChildInfo();\n"},
		{"    __attribute__((unused)) f(x);\n", ""},
		{"    FOO(x) int y;\n", ""}, // a declaration: no call after
		{"    if (x) {\n", ""},
		{"    if(x) f();\n", ""},
		{"    } config_set_special_field(\"save\") {\n", "    } config_set_special_field(\"save\");{\n"},
		{"    } else if (x) {\n", ""},
		{"    x = 1;\n    GET_A(x)\n    SET_B(y)\n\n    if (x) y++;\n", "    x = 1;\n   GET_A(x);\n   SET_B(y);\n\n    if (x) y++;\n"},
		{"    while(x) {\n", ""},
		{"int f(void) {\n", ""},
		{"    x = 1;\n    GET_NUMERIC_TYPE(prev)\n    if (prev != x) return;\n", "    x = 1;\n   GET_NUMERIC_TYPE(prev);\n    if (prev != x) return;\n"},
		// Comments beside a line change nothing of how it reads.
		{"    x = 1;\n  // one\n  /* two\n   * lines */\n    GET_A(x)\n    /* three */\n    if (x) y++;\n", "    x = 1;\n  // one\n  /* two\n   * lines */\n   GET_A(x);\n    /* three */\n    if (x) y++;\n"},
		{"REDIS_NO_SANITIZE(\"bounds\")\n// why\n/* and\n   more */\nsize_t f(void) {\n", "                           \n// why\n/* and\n   more */\nsize_t f(void) {\n"},
		{"    x = a +\n    GET_VALUE(prev)\n    + 1;\n", ""},   // inside an expression
		{"    x = 1;\n    lower_case(prev)\n    y = 2;\n", ""}, // not a macro's name
		{"#define F(x) \\\n    G(x)\n    int y;\n", ""},        // a macro's body
		{"REDIS_NO_SANITIZE(\"bounds\")\nsize_t f(void) {\n", "                           \nsize_t f(void) {\n"},
		{"FOO_BAR(x)\n{\n", ""},
		{"static const char *help[] = {\n\"A\",\n#ifdef X\n\"B\",\n#else\n\"C\",\n#endif\n\"D\",\nNULL };\n",
			"static const char *help[] = {\n\"A\",\n        \n\"B\",\n     \n\"C\",\n      \n\"D\",\nNULL };\n"},
		{"int a = 1,\n#ifdef X\n    b = 2;\n#endif\n", ""}, // a line in it ends otherwise
		{"int a[] = {1,\n\n#ifdef X\n    2, /* two */\n#endif\n3};\n", "int a[] = {1,\n\n        \n    2, /* two */\n      \n3};\n"},
		{"void f(void);\n#ifdef X\nvoid g(void);\n#endif\n", ""},
		// A macro standing for braces is written over its name.
		{"#define config_set_else } else\n    } config_set_else {\n", "#define config_set_else } else\n    } } else          {\n"},
		{"#define begin_block {\n#define end_block }\n    x = 1;\n    begin_block\n    f(begin_block_x);\n    end_block\n",
			"#define begin_block {\n#define end_block }\n    x = 1;\n    {          \n    f(begin_block_x);\n    }        \n"},
		{"#define LONG_NAME } else if (x) {\n    } LONG_NAME {\n", ""},                // not braces alone
		{"#define E } else\n    } E {\n", ""},                                         // longer than its name
		{"/*\n * #define config_set_else } else\n */\n    } config_set_else {\n", ""}, // in a comment
		{"    } F(x){\n", ""}, // too short a name to become if
		// Arguments on the lines after; a brace with no blank before it;
		// a brace alone on the next line.
		{"    } config_set_bool_field(\n      \"rdbcompression\", x) {\n", "    } config_set_bool_field(\n      \"rdbcompression\", x);{\n"},
		{"    } config_set_numerical_field(\n      \"hz\",hz,0,INT_MAX){\n", "    } if                        (\n      \"hz\",hz,0,INT_MAX){\n"},
		{"    } with_alias(\"a\",\n                 \"b\")\n    {\n", "    } with_alias(\"a\",\n                 \"b\")\n   ;{\n"},
		{"    } run(\"a\",\n        \"b\") {\n", "    } run(\"a\",\n        \"b\");{\n"},
		{"    if (a &&\n        b) {\n", ""},
		{"    x = f(a,\n        b) + 1;\n", ""},
		// A conditional cutting an if-else chain, every branch kept.
		{"    } else if (a) {\n#ifdef X\n    } else if (b) {\n        f();\n#endif\n    } else {\n",
			"    } else if (a) {\n        \n    } else if (b) {\n        f();\n      \n    } else {\n"},
		{"    } else if (a) {\n#ifdef X\n    } else if (b) { /* } */\n#else\n    } else if (c) {\n  #ifdef Y\n    } else if (d) {\n  #endif\n#endif\n    }\n",
			"    } else if (a) {\n        \n    } else if (b) { /* } */\n     \n    } else if (c) {\n          \n    } else if (d) {\n        \n      \n    }\n"},
		{"    } else if (a) {\n#ifdef X\n    /* x */\n\n    } else if (b) {\n#endif\n    }\n", "    } else if (a) {\n        \n    /* x */\n\n    } else if (b) {\n      \n    }\n"},
		{"#ifdef X\n    if (a) {\n#endif\n", ""},                    // leaves one open
		{"#ifdef X\n    x = 1;\n#endif\n", ""},                      // no brace
		{"#ifdef X\n    } else {\n#else\n    x = 1;\n#endif\n", ""}, // a branch that closes none
		// A conditional among a string's pieces; a macro call among them.
		{"    printf(\"a\\n\"\n#ifdef X\n\"b\\n\"\n#endif\n\"c\\n\");\n", "    printf(\"a\\n\"\n        \n\"b\\n\"\n      \n\"c\\n\");\n"},
		{"    s = \"less than \"\n        STRINGIFY(LEN) \" chars\";\n", "    s = \"less than \"\n        STRINGIFY      \" chars\";\n"},
		{"    s = \"a\" STR(X) \"b\" f(y);\n", "    s = \"a\" STR    \"b\" f(y);\n"},
		{"    s = f(\"a\", STR(X));\n", ""},
		// typedef after a struct's body.
		{"} typedef clusterNodeFailReport;\n", "}         clusterNodeFailReport;\n"},
	} {
		want := tc.want
		if want == "" {
			want = tc.src
		}
		if got := string(CBlankMacroLines([]byte(tc.src), false)); got != want {
			t.Errorf("CBlankMacroLines(%q) =\n%q, want\n%q", tc.src, got, want)
		}
		if got := string(CBlankMacroLines([]byte(tc.src), true)); got != tc.src {
			t.Errorf("C++: CBlankMacroLines(%q) = %q, want it unchanged", tc.src, got)
		}
	}
}
