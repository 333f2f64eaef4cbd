package extract

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/extractfixture"
)

// TestJSTSCases pins decisions the golden fixtures do not show on their own.
func TestJSTSCases(t *testing.T) {
	cases := []struct {
		name, file, src string
		want, not       []string // lines of render()
	}{
		{name: "module.exports anonymous function is default", file: "a.js",
			src:  "module.exports = function () {\n  go();\n};\n",
			want: []string{"def function default 1-3", "call default -> go"}},
		{name: "module.exports named class keeps its name", file: "a.js",
			src:  "module.exports = class Foo extends Bar {};\n",
			want: []string{"def class Foo 1-1", "inherits Foo -> Bar"}},
		{name: "chained exports", file: "a.cjs",
			src:  "exports = module.exports = function createApp() {};\n",
			want: []string{"def function createApp 1-1"}, not: []string{"def function exports 1-1"}},
		{name: "this.x in a constructor function", file: "a.js",
			src:  "function Person(name) {\n  this.greet = function () {\n    helper();\n  };\n}\n",
			want: []string{"def function Person 1-5", "def function Person.greet 2-4", "call Person.greet -> helper"}},
		{name: "this.x in a class constructor", file: "a.js",
			src:  "class A {\n  constructor() {\n    this.onClick = () => go();\n  }\n}\n",
			want: []string{"def function A.onClick 3-3", "call A.onClick -> go"}},
		{name: "prototype method inside an IIFE", file: "a.js",
			src:  "(function () {\n  Foo.prototype.bar = function () {};\n})();\n",
			want: []string{"def function Foo.bar 2-2"}},
		{name: "computed names ignore formatting", file: "a.js",
			src:  "class A {\n  [ Symbol.iterator ]() {}\n  [\n    KEY\n  ]() {}\n}\n",
			want: []string{"def function A.[Symbol.iterator] 2-2", "def function A.[KEY] 3-5"}},
		{name: "unbound objects, classes and callbacks are not definitions", file: "a.js",
			src: "foo({ bar() { a(); } });\nregister(class { run() { b(); } });\n" +
				"app.get('/', function handler(req, res) { res.send(); });\n",
			want: []string{"call <module> -> a", "call <module> -> b", "call <module> -> res.send", "call <module> -> app.get"},
			not:  []string{"def function bar 1-1", "def function run 2-2", "def function handler 3-3"}},
		{name: "mixin base is a call, not a base", file: "a.js",
			src:  "class A extends mixin(B, C) {}\n",
			want: []string{"def class A 1-1", "call A -> mixin"}, not: []string{"inherits A -> mixin", "inherits A -> B"}},
		{name: "require forms", file: "a.js",
			src: "const x = require('m').default;\nconst {a = 1, b: c, ...rest} = require('n');\nrequire(name);\n" +
				"const lazy = () => require(`./lazy`);\n",
			want: []string{"import m [default]", "import n [a,b]", "call <module> -> require", "import ./lazy"}},
		{name: "decorators: inside the method in JS", file: "a.js",
			src:  "class A {\n  @dec()\n  m() {}\n}\n",
			want: []string{"def function A.m 2-3", "call A.m -> dec"}},
		{name: "decorators: beside the method in TS", file: "a.ts",
			src:  "class A {\n  @dec()\n  m() {}\n}\n",
			want: []string{"def function A.m 3-3", "call A -> dec"}},
		{name: "redefinitions count up", file: "a.js",
			src:  "function f() {}\nfunction f() {}\nfunction f() {}\n",
			want: []string{"def function f 1-1", "def function f#2 2-2", "def function f#3 3-3"}},
		{name: "children of a duplicate are under the duplicate", file: "a.ts",
			src:  "namespace N { export function f() {} }\nnamespace N { export function g() {} }\n",
			want: []string{"def class N 1-1", "def class N#2 2-2", "def function N.f 1-1", "def function N#2.g 2-2"}},
		{name: "chained assignment defines the innermost target", file: "a.js",
			src:  "x = y = function () {};\n",
			want: []string{"def function y 1-1"}, not: []string{"def function x 1-1"}},
		{name: "dotted ambient module", file: "a.d.ts",
			src:  "declare module Foo.Bar {\n  function f(): void;\n}\n",
			want: []string{"def class Foo.Bar 1-3", "def function Foo.Bar.f 2-2"}},
		{name: "type assertion in .ts", file: "a.ts",
			src:  "const x = <any>y;\nconst f = <T,>(v: T) => v;\n",
			want: []string{"def function f 2-2", "errors 0"}},
		{name: "upper-case .TSX picks the TSX grammar", file: "A.TSX",
			src:  "export const A = () => <div><B /></div>;\n",
			want: []string{"def function A 1-1", "call A -> B", "errors 0"}},
		{name: "JSX in .jsx and .js", file: "a.js",
			src:  "const A = () => <Foo.Bar><b /><Baz /></Foo.Bar>;\n",
			want: []string{"call A -> Foo.Bar", "call A -> Baz"}, not: []string{"call A -> b"}},
		{name: "callee chains", file: "a.js",
			src:  "a.b().c();\nx[i].save();\nfns[0]();\nf()();\nobj['key']();\n(0, m.f)();\n",
			want: []string{"call <module> -> a.b", "call <module> -> c", "call <module> -> save", "call <module> -> f", "call <module> -> obj.key"},
			not:  []string{"call <module> -> a.b.c", "call <module> -> m.f"}},
		{name: "TS dynamic import, satisfies and as", file: "a.mts",
			src: "export default {\n  async load() {\n    const m = await import('./lazy');\n    return m.run<string>();\n  },\n} satisfies Plugin;\n" +
				"const h = ((e: Event) => e) as Handler;\n",
			want: []string{"def function default.load 2-5", "import ./lazy", "call default.load -> m.run", "def function h 7-7"}},
		{name: "re-exports", file: "a.mjs",
			src:  "export { default as X, y } from './x';\nexport * as ns from 'ns';\n",
			want: []string{"import ./x [default,y]", "import ns [*]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := languageFor(c.file)
			if l == nil {
				t.Fatalf("no language for %s", c.file)
			}
			res, err := l.Extract(context.Background(), c.file, []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			checkSpans(t, []byte(c.src), res)
			got := render(res)
			have := map[string]bool{}
			for _, line := range strings.Split(got, "\n") {
				have[line] = true
			}
			for _, w := range c.want {
				if !have[w] {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if have[n] {
					t.Errorf("unexpected %q in:\n%s", n, got)
				}
			}
		})
	}
}

// TestJSTSConcurrent: one extractor value serves parallel builds.
func TestJSTSConcurrent(t *testing.T) {
	type fixture struct {
		lang Language
		name string
		src  []byte
		want string
	}
	var fixtures []fixture
	for _, f := range extractfixture.Read(t, "testdata", "javascript", "typescript") {
		l := languageFor(f.Name)
		res, err := l.Extract(context.Background(), f.Name, f.Src)
		if err != nil {
			t.Fatal(err)
		}
		fixtures = append(fixtures, fixture{l, f.Name, f.Src, render(res)})
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, f := range fixtures {
				res, err := f.lang.Extract(context.Background(), f.name, f.src)
				if err != nil {
					t.Error(err)
					return
				}
				if got := render(res); got != f.want {
					t.Errorf("%s: result differs when extracted concurrently", f.name)
				}
			}
		}()
	}
	wg.Wait()
}

// TestJSTSTruncated cuts every fixture at many points (and splices garbage
// in): error recovery must never yield empty names, callees or modules.
func TestJSTSTruncated(t *testing.T) {
	for _, f := range extractfixture.Read(t, "testdata", "javascript", "typescript") {
		full, name := f.Src, f.Name
		l := languageFor(name)
		step := max(len(full)/40, 1)
		for cut := 0; cut <= len(full); cut += step {
			for _, src := range [][]byte{
				full[:cut],
				append(append(append([]byte(nil), full[:cut]...), "\xff(\x00{ `"...), full[cut:]...),
			} {
				res, err := l.Extract(context.Background(), name, src)
				if err != nil {
					t.Fatalf("%s cut at %d: %v", name, cut, err)
				}
				checkSpans(t, src, res)
				for _, d := range res.Defs {
					for _, seg := range strings.Split(d.Name, ".") {
						if seg == "" && !strings.Contains(d.Name, "[") {
							t.Errorf("%s cut at %d: empty segment in %q", name, cut, d.Name)
						}
					}
				}
				for _, c := range res.Calls {
					if c.Callee == "" || strings.HasSuffix(c.Callee, ".") || strings.HasPrefix(c.Callee, ".") {
						t.Errorf("%s cut at %d: bad callee %q", name, cut, c.Callee)
					}
				}
				for _, im := range res.Imports {
					if im.Module == "" {
						t.Errorf("%s cut at %d: empty module", name, cut)
					}
					for _, n := range im.Names {
						if n == "" {
							t.Errorf("%s cut at %d: empty name imported from %s", name, cut, im.Module)
						}
					}
				}
				for _, in := range res.Inherits {
					if in.Class == "" || in.Base == "" {
						t.Errorf("%s cut at %d: bad inherit %+v", name, cut, in)
					}
				}
			}
		}
	}
}
