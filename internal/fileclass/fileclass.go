// Package fileclass classifies a repository's files: their language, and
// whether they are vendored, generated, tests or binary. It wraps go-enry,
// the Go port of GitHub linguist's rules, as zoekt's languages package does.
//
// What comes from enry: languages by file name and extension, and by
// content where an extension is shared (Language, Languages,
// IsProgramming); vendored paths (IsVendor); generated files by name and
// content (IsGenerated); test paths (IsTest); git's binary test (IsBinary).
//
// What locus changes, and why:
//   - Language settles a shared extension by modeline, shebang and
//     linguist's heuristics, not by enry's Bayesian classifier, which names
//     a language for any text (byContent).
//   - IsVendor leaves out linguist's cache/ and env/, which are a project's
//     own packages as often as not, and adds _vendor/ (notVendor,
//     moreVendor).
//   - IsGenerated also takes the markers generators write at the top of a
//     file in any language (HasGeneratedMarker) and, where the content is
//     not at hand, generators' file names (GeneratedName): enry tells
//     protobuf's and others' outputs only by content. The graph build
//     skips a file by its markers alone, so that which files get a graph
//     does not move with enry's lists.
//   - IsTest also takes locus's conventions for the languages it parses
//     (test directories anywhere in the path, conftest.py, *IT.java, C and
//     C++ test files); enry's are narrower for these languages, and the
//     ranking and the training triplets were measured with locus's.
//
// Paths are slash-separated and relative to the repository's root.
package fileclass

import (
	"bytes"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	enry "github.com/go-enry/go-enry/v2"
	"github.com/go-enry/go-enry/v2/data"
)

// Languages are the languages the file at p may be in by its name and
// extension alone (linguist's names, as "Python" or "C++"): one for most
// files, several for an extension that languages share (".m": MATLAB,
// Objective-C, …), none for a path that says nothing.
func Languages(p string) []string {
	if ls := enry.GetLanguagesByFilename(p, nil, nil); len(ls) > 0 {
		return ls
	}
	return enry.GetLanguagesByExtension(p, nil, nil)
}

// byContent are the strategies Language asks, in order, when a path gives
// several languages: an editor's modeline, a shebang, linguist's
// heuristics for the extension. Not enry's Bayesian classifier: it names
// a language for any text (a release-notes file VERSION-2.x is "Logos" by
// it), where an uncertain file had better count as none.
var byContent = []enry.Strategy{modeline, enry.GetLanguagesByShebang, enry.GetLanguagesByContent}

// modeline is enry.GetLanguagesByModeline, asked only where content can
// hold a modeline that names a language: an Emacs one holds "-*-", a Vim
// one a colon and, where it names the language, "=" (enry's reEmacsModeline,
// reVimModeline and reVimLang). Its expressions cost 25 µs a file, most of
// what telling a shared extension's language costs (jq's 249 signatures and
// Markdown files: 6.2 ms, a twentieth of its graph build's parse).
func modeline(p string, content []byte, candidates []string) []string {
	if !bytes.Contains(content, []byte("-*-")) && (bytes.IndexByte(content, ':') < 0 || bytes.IndexByte(content, '=') < 0) {
		return nil
	}
	return enry.GetLanguagesByModeline(p, content, candidates)
}

// Language is the language of the file at p with content: the one its
// name or extension gives, or, where those give several, the one its
// content settles among them (byContent). "" for a path that gives no language, for
// binary content, and where neither path nor content settle it (content
// nil included).
func Language(p string, content []byte) string {
	ls := Languages(p)
	switch {
	case len(ls) == 1:
		return ls[0]
	case len(ls) == 0 || content == nil || IsBinary(content):
		return ""
	}
	for _, s := range byContent {
		// Among the path's languages: a perl shebang says Perl or Pod.
		got := slices.DeleteFunc(s(p, content, ls), func(l string) bool { return !slices.Contains(ls, l) })
		if len(got) == 1 {
			return got[0]
		}
	}
	return ""
}

// IsProgramming reports whether lang is a programming language in
// linguist's sense (not markup, data or prose).
func IsProgramming(lang string) bool {
	return enry.GetLanguageType(lang) == enry.Programming
}

// MayBeProgramming reports whether one of the languages of p by its name
// and extension (Languages) is a programming language: whether its
// content is worth reading to tell.
func MayBeProgramming(p string) bool {
	for _, l := range Languages(p) {
		if IsProgramming(l) {
			return true
		}
	}
	return false
}

// notVendor are linguist's vendored paths that IsVendor leaves out: a
// directory named cache or env is a project's own package as often as not
// (Kafka's common/cache, grpc-go's internal/cache, axios's lib/env, clap's
// src/env).
var notVendor = map[string]bool{`(^|/)cache/`: true, `(^|/)env/`: true}

// moreVendor are vendored paths linguist does not list: pip's and
// setuptools' _vendor/.
var moreVendor = []string{`(^|/)_vendor/`}

// vendorPaths is linguist's vendored paths (data.VendorMatchers) without
// notVendor, with moreVendor: each expression with a literal every match
// of it contains, so that IsVendor runs only the expressions whose literal
// the path holds. One alternation of all of them was 0.4 ms a path, a
// tenth of a Java graph build's CPU (BenchmarkIsVendor).
var vendorPaths = func() []literalRegexp {
	var out []literalRegexp
	add := func(expr string) {
		out = append(out, literalRegexp{re: regexp.MustCompile(expr), lit: requiredLiteral(expr)})
	}
	for _, m := range data.VendorMatchers {
		if m != nil && !notVendor[m.String()] {
			add(m.String())
		}
	}
	for _, m := range moreVendor {
		add(m)
	}
	return out
}()

// literalRegexp is an expression and a literal that every match of it
// contains ("" when none is known).
type literalRegexp struct {
	re  *regexp.Regexp
	lit string
}

// requiredLiteral is the longest case-sensitive literal that expr's top
// level concatenation holds, which every match of expr contains; "" when
// there is none (an alternation, a case-folded literal).
func requiredLiteral(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	best := ""
	for _, sub := range subs {
		if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 && len(sub.Rune) > len([]rune(best)) {
			best = string(sub.Rune)
		}
	}
	return best
}

// IsVendor reports whether p is code a repository carries but did not
// write: linguist's vendored paths (node_modules/, vendor/, third_party/,
// minified and bundled libraries …) without its cache/ and env/
// (notVendor), and with _vendor/.
func IsVendor(p string) bool {
	for _, m := range vendorPaths {
		if (m.lit == "" || strings.Contains(p, m.lit)) && m.re.MatchString(p) {
			return true
		}
	}
	return false
}

// IsGenerated reports whether the file at p with content was written by a
// program: linguist's generated files (lock files, minified JavaScript,
// protobuf and other generators' outputs recognised by content) or a
// generator's marker at its top (HasGeneratedMarker). With content nil
// (not at hand) it goes by the name: linguist's generated names and
// generators' file names (GeneratedName), a guess that content
// overrules (grpc-go's hand-written codes/code_string.go has a stringer
// output's name).
func IsGenerated(p string, content []byte) bool {
	return content == nil && GeneratedName(p) || HasGeneratedMarker(content) || enryGenerated(p, content)
}

// generatedNameLiterals holds, for each of linguist's generated-name
// matchers as go-enry lists them (data.GeneratedCodeNameMatchers, index
// for index), a lower-case literal that the lower-cased name holds
// wherever the matcher matches it; "" for a matcher as cheap as that test
// (a suffix, a substring). enry's matchers are functions that do not show
// their expressions, and running its fifteen expressions on every path
// was 60 µs a path on Kafka's, 0.4 of its graph build's 7.1 CPU seconds
// (BenchmarkIsGenerated: 14× less over this checkout's paths). The literals of
// the case-insensitive expressions leave out s and k, which case-fold to
// ſ and the Kelvin sign. TestGeneratedNameLiterals checks each literal
// against its matcher.
var generatedNameLiterals = []string{
	".idea/", "pods/", "carthage/build/", "igner.", ".feature.", "",
	"vendor/", "", "", "", "", "", "esy", "", "", "", "", ".pnp.", "", "",
	".zep.", "", "", "flake.lock", "module.bazel.lock", "",
	".terraform.lock.hcl", "", "_tlb.pa", "htmlcov/", ".sqlx/query-",
}

// enryGenerated is enry.IsGenerated, asking each generated-name matcher
// only where the path holds its literal (generatedNameLiterals).
func enryGenerated(p string, content []byte) bool {
	if len(generatedNameLiterals) != len(data.GeneratedCodeNameMatchers) {
		return enry.IsGenerated(p, content) // another enry: its own way
	}
	ext := strings.ToLower(filepath.Ext(p))
	if _, ok := data.GeneratedCodeExtensions[ext]; ok {
		return true
	}
	lower := strings.ToLower(p)
	for i, m := range data.GeneratedCodeNameMatchers {
		if lit := generatedNameLiterals[i]; (lit == "" || strings.Contains(lower, lit)) && m(p) {
			return true
		}
	}
	for _, m := range data.GeneratedCodeMatchers {
		if m(lower, ext, content) {
			return true
		}
	}
	return false
}

// generatedMarkerBytes: HasGeneratedMarker looks this far into a file.
const generatedMarkerBytes = 1024

// HasGeneratedMarker reports whether the first KiB of content holds a
// marker generators put at the top of a file: Go's "Code generated … DO
// NOT EDIT", "@generated" (Facebook's tools, Rust's and Java's code
// generators) or .NET's "<auto-generated".
func HasGeneratedMarker(content []byte) bool {
	head := content
	if len(head) > generatedMarkerBytes {
		head = head[:generatedMarkerBytes]
	}
	return bytes.Contains(head, []byte("Code generated")) && bytes.Contains(head, []byte("DO NOT EDIT")) ||
		bytes.Contains(head, []byte("@generated")) || bytes.Contains(head, []byte("<auto-generated"))
}

// generatedSuffixes end the names of generators' outputs: protobuf and
// gRPC (Go, Python, C++), Go's stringer and code generators, Dart's
// build_runner, .NET's designer, minified JavaScript.
var generatedSuffixes = []string{".pb.go", "_pb2.py", "_pb2_grpc.py", ".pb.cc", ".pb.h", ".min.js", ".generated.go",
	"_generated.go", ".g.dart", "_string.go", ".designer.cs"}

// GeneratedName reports whether p's file name is one generators write
// (generatedSuffixes, Kubernetes' zz_generated*), for where the content
// is not at hand.
func GeneratedName(p string) bool {
	file := path.Base(p)
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(file, s) {
			return true
		}
	}
	return strings.HasPrefix(file, "zz_generated")
}

// testDirs are directory names whose code is tests (or their fixtures) in
// the languages locus parses: pytest's testing/, tests/ and test/ of most
// projects, JavaScript's __tests__, Java's src/test, Ruby-style spec/.
var testDirs = map[string]bool{"test": true, "tests": true, "testing": true, "__tests__": true, "spec": true, "specs": true, "testdata": true}

// IsTest reports whether the file at p is test code: by linguist's test
// paths (enry's IsTest: PHP, Java, Scala, Python, Go, Ruby, C#,
// JavaScript and TypeScript conventions) or by locus's conventions:
//   - any directory named test, tests, testing, __tests__, spec, specs or
//     testdata (Java's src/test/… included);
//   - Python: test_*.py, *_test.py, conftest.py;
//   - Go: *_test.go;
//   - Java: *Test.java, *Tests.java, *IT.java, Test*.java;
//   - JavaScript and TypeScript: *.test.* and *.spec.*;
//   - C and C++: test_*.c*, *_test.c*, *_unittest.c*.
func IsTest(p string) bool {
	return isLocusTest(p) || enry.IsTest(p)
}

func isLocusTest(p string) bool {
	dir, file := path.Split(p)
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if testDirs[d] {
			return true
		}
	}
	ext := path.Ext(file)
	stem := strings.TrimSuffix(file, ext)
	switch ext {
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "conftest"
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".java":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "IT") ||
			strings.HasPrefix(stem, "Test") && len(stem) > 4 && stem[4] >= 'A' && stem[4] <= 'Z'
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
	case ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_unittest")
	}
	return false
}

// IsBinary reports whether data is binary by git's rule without
// attributes (xdiff-interface.c's buffer_is_binary, which enry's IsBinary
// follows): a NUL byte in its first 8000 bytes. Git also calls files over
// core.bigFileThreshold binary; gitrepo adds that where it must equal git.
func IsBinary(data []byte) bool { return enry.IsBinary(data) }
