// Package extract reads what one file defines and references, with
// tree-sitter: one extractor a language (lang_<name>.go, all of them in
// All), over a flattened copy of the syntax tree (flat.go). Package
// codegraph builds the graph from what they find; package changes reads
// file versions through them. The naming rules the comments here call
// NAMING.md are codegraph's (internal/codegraph/NAMING.md), with a golden
// fixture for each case in testdata/<language>/.
package extract

import (
	"context"
	"sync"
)

// Kinds of definitions an extractor reports.
const (
	KindClass    = "class"
	KindFunction = "function"
)

// Def is a class or function defined in a file.
type Def struct {
	// Name is qualified within the file, LocAgent style: "func", "Class",
	// "Class.method", "outer.inner", "Outer.Inner.method".
	Name string
	Kind string // KindClass or KindFunction
	// StartLine and EndLine are 1-based and inclusive. Whether decorators and
	// annotations are inside is per language (NAMING.md): Python's are not
	// (as Python's ast), Java's annotations are.
	StartLine, EndLine int
	// StartByte and EndByte delimit the definition's source in the file.
	StartByte, EndByte int
	// BodyStart and BodyEnd delimit a function's braced body, from its `{`
	// to just past its `}`; both 0 when it has none (Python, a declaration,
	// an expression body). The history scrape uses them to re-read only
	// what changed (package changes).
	BodyStart, BodyEnd int
}

// resultBuffers keep the arrays that walks append definitions, imports
// and calls to, from file to file (bufferResult): growing new arrays file
// after file left as much garbage as the results themselves (kafka's
// calls: 65 MB allocated for 25 MB).
var resultBuffers sync.Pool // of *buffers

type buffers struct {
	defs    []Def
	imports []Import
	calls   []Call
}

// bufferResult points res's Defs, Imports and Calls at reused empty arrays
// for a walk to append to. The walk calls settle once it has appended all:
// each then gets an array of exactly its length (nil for none), and the
// reused ones, cleared, go back.
func bufferResult(res *FileResult) (settle func()) {
	b, _ := resultBuffers.Get().(*buffers)
	if b == nil {
		b = &buffers{}
	}
	res.Defs, res.Imports, res.Calls = b.defs[:0], b.imports[:0], b.calls[:0]
	return func() {
		b.defs = settleInto(&res.Defs)
		b.imports = settleInto(&res.Imports)
		b.calls = settleInto(&res.Calls)
		resultBuffers.Put(b)
	}
}

// settleInto moves *s into an array of its own length (nil when empty)
// and returns the array it was in, cleared (its strings are the file's,
// not the buffer's to keep alive) and emptied.
func settleInto[T any](s *[]T) []T {
	buf := *s
	*s = nil
	if len(buf) > 0 {
		*s = append(make([]T, 0, len(buf)), buf...)
	}
	clear(buf)
	return buf[:0]
}

// Import is one import statement's target, unresolved.
type Import struct {
	// Module as written, in the language's own syntax: "os.path", ".utils",
	// "../lib/x", "github.com/a/b/pkg", "com.fasterxml.jackson.core.JsonParser".
	Module string
	// Names imported from it ("" entries not allowed); empty when the module
	// itself is imported. "*" for a wildcard import.
	Names []string
	// Locals are the names each of Names is bound to in the file, where it
	// differs ("z" for `from x import y as z`, "Layout" for a JS default
	// import); nil or "" entries mean the name itself.
	Locals []string
	// Alias the module is bound to in the file, if any ("np" in import numpy as np).
	Alias string
	Line  int
}

// Local is the name Names[i] is bound to in the file.
func (im Import) Local(i int) string {
	if i < len(im.Locals) && im.Locals[i] != "" {
		return im.Locals[i]
	}
	return im.Names[i]
}

// Call is a reference from a definition to a callee, unresolved.
type Call struct {
	// From is the qualified name of the innermost enclosing Def; "" for
	// module-level code.
	From string
	// Callee as written, reduced to a dotted chain: "foo", "self.bar",
	// "os.path.join", "Foo.create", "new Foo" is reported as "Foo".
	Callee string
	Line   int
}

// Inherit is a base class, interface or embedded type of a class.
type Inherit struct {
	Class string // qualified name of the class
	Base  string // as written, dotted: "Base", "abc.ABC", "pkg.Type"
}

// FileResult is what an extractor finds in one file.
type FileResult struct {
	// Package is the file's declared package or namespace where the language
	// has one (Java "com.acme.util", Go "util"); "" otherwise.
	Package  string
	Defs     []Def
	Imports  []Import
	Calls    []Call
	Inherits []Inherit
	// Decls are functions the file declares without defining them (C and
	// C++ prototypes, in-class method declarations), named as their
	// definition would be ("parse", "Parser.parse"). They get no node: the
	// builder binds them to the definition elsewhere (header/source pairs).
	Decls []string
	// ErrorNodes counts tree-sitter ERROR and MISSING nodes: syntax errors
	// keep what parses.
	ErrorNodes int
	// declAt are the byte offsets of the declarations behind Decls (C and
	// C++), kept so that a body holding one is never skipped (package changes):
	// a declaration can make a name overloaded.
	declAt []int
	// reread: the file had syntax errors and was also read another way
	// (closers appended, conditionals blanked): its reading is not a
	// function of its text's parts, so the mapper derives nothing from it.
	reread bool
	// reads is how many readings of the file were parsed (C and C++, which
	// read a file with errors in other ways too); tests read it.
	reads int
}

// DeclOffsets are the byte offsets of the declarations behind Decls (C and
// C++).
func (r *FileResult) DeclOffsets() []int { return r.declAt }

// Functions counts the function definitions in Defs.
func (r *FileResult) Functions() int {
	n := 0
	for _, d := range r.Defs {
		if d.Kind == KindFunction {
			n++
		}
	}
	return n
}

// Reread reports whether the file had syntax errors and was also read
// another way (closers appended, conditionals blanked): its reading is then
// not a function of its text's parts.
func (r *FileResult) Reread() bool { return r.reread }

// Language extracts definitions and references from one language's files.
// Implementations live one per file (lang_<name>.go) and must be safe for
// concurrent use (create a parser per call).
type Language interface {
	// Name is the language's id as stored on nodes: "python", "java",
	// "javascript", "typescript", "go", "rust", "c", "cpp".
	Name() string
	// Extensions are the lower-case file extensions it handles, with the dot.
	Extensions() []string
	// Extract parses src (the content of path, repository-relative). It must
	// not panic on any input, must close every tree-sitter tree it opens,
	// and must not modify src: Build hands it the bytes of the string the
	// graph keeps as the file's code.
	Extract(ctx context.Context, path string, src []byte) (*FileResult, error)
}
