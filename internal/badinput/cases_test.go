package badinput

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/locus-dev/locus/internal/blob/fileblob"
)

// cases is the bad-input suite. Every case runs against a store that already
// holds baseRepo, which must come out untouched unless the case says otherwise.
var cases = slices.Concat([]badCase{
	// Repository names: nothing may be written outside the store.
	nameCase("name-dotdot", "../x", `part ".." is not allowed`),
	nameCase("name-dotdot-nested", "a/../../b", "want owner/name"),
	nameCase("name-absolute", "/etc/x", "want owner/name"),
	nameCase("name-backslash", `a\b`, `character '\\' is not allowed`),
	nameCase("name-dot-git", ".git/x", `part ".git" is not allowed`),
	nameCase("name-three-parts", "a/b/c", "want owner/name"),
	nameCase("name-non-ascii", "ünï/x", "character 'ü' is not allowed"),
	nameCase("name-too-long", strings.Repeat("n", 101)+"/x", "longer than 100 characters"),
	{
		name:  "name-nul-in-repos-file",
		input: "a repos-file line whose name holds a NUL byte (`a\\x00b=PATH`)",
		want:  "exit 1 before any work; the error quotes the line and says the character is not allowed",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			writeFile(s, "fleet.txt", "a\x00b="+r.Dir+"\n")
			return []string{"index", "--repos-file", filepath.Join(s.dir, "fleet.txt")}
		},
		code:  1,
		names: []string{`a\x00b`, "is not allowed"},
		check: func(s *sandbox, r result) { s.notIndexed("a") },
	},

	// Repository specs and repos-files.
	{
		name:  "ref-empty",
		input: "a spec ending in `#` with no ref (`PATH#`)",
		want:  "exit 1 before any work: \"empty ref after '#'\", quoting the spec",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			s.vars["SPEC"] = r.Dir + "#"
			return []string{"index", r.Dir + "#"}
		},
		code:  1,
		names: []string{"{{SPEC}}", "empty ref after '#'"},
		check: func(s *sandbox, r result) { s.notIndexed("r") },
	},
	{
		name:  "spec-no-url",
		input: "a name with nothing after `=` (`x/y=`)",
		want:  "exit 1 before any work: \"no URL or path\", quoting the spec",
		setup: func(s *sandbox) []string { return []string{"index", "x/y="} },
		code:  1,
		names: []string{`"x/y="`, "no URL or path"},
	},
	{
		name:  "spec-duplicate",
		input: "the same repository given twice in one command",
		want:  "exit 1 before any work; the error quotes both specs and suggests naming one (`other/name=…`)",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			return []string{"index", r.Dir, "r=" + r.Dir}
		},
		code:  1,
		names: []string{"given twice", "other/name="},
		check: func(s *sandbox, r result) { s.notIndexed("r") },
	},
	{
		name:  "repos-file-missing",
		input: "`--repos-file` naming a file that does not exist",
		want:  "exit 1; the error names the file",
		setup: func(s *sandbox) []string {
			s.vars["F"] = filepath.Join(s.dir, "no-such-fleet.txt")
			return []string{"index", "--repos-file", s.vars["F"]}
		},
		code:  1,
		names: []string{"{{F}}"},
	},
	{
		name:  "repos-file-bad-line",
		input: "a repos-file with comments, blank lines and one bad line (`../x=PATH`) among good ones",
		want:  "exit 1 before any work: the error names the file and line number (`fleet.txt:4:`) and quotes the bad line; the good lines are not indexed either",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			writeFile(s, "fleet.txt", "# fleet\n\n"+r.Dir+"\n../x="+r.Dir+"\n")
			s.vars["F"] = filepath.Join(s.dir, "fleet.txt")
			return []string{"index", "--repos-file", s.vars["F"]}
		},
		code:  1,
		names: []string{"{{F}}:4: ", `"../x=`, `part ".." is not allowed`},
		check: func(s *sandbox, r result) { s.notIndexed("r") },
	},
	{
		name:  "repos-file-crlf",
		input: "a repos-file written on Windows (CRLF line ends, a comment line)",
		want:  "exit 0; every line is read without its carriage return and each repository is indexed",
		setup: func(s *sandbox) []string {
			a, b := s.simpleRepo("a"), s.simpleRepo("b")
			writeFile(s, "fleet.txt", "# fleet\r\ncrlf/a="+a.Dir+"\r\ncrlf/b="+b.Dir+"\r\n")
			return []string{"index", "--repos-file", filepath.Join(s.dir, "fleet.txt")}
		},
		check: func(s *sandbox, r result) {
			s.indexed("crlf/a")
			s.indexed("crlf/b")
		},
	},
	{
		name:  "repos-file-bom",
		input: "a repos-file that starts with a UTF-8 byte order mark (as some Windows editors write it)",
		want:  "exit 0; the mark is not taken as part of the first path and every repository is indexed",
		setup: func(s *sandbox) []string {
			a, b := s.simpleRepo("a"), s.simpleRepo("b")
			writeFile(s, "fleet.txt", "\ufeffbom/a="+a.Dir+"\nbom/b="+b.Dir+"\n")
			return []string{"index", "--repos-file", filepath.Join(s.dir, "fleet.txt")}
		},
		check: func(s *sandbox, r result) {
			s.indexed("bom/a")
			s.indexed("bom/b")
		},
	},
	{
		name:  "env-not-a-number",
		input: "`LOCUS_WINDOW=abc` in the environment",
		want:  "exit 2 before any work; the error names the variable and its value",
		setup: func(s *sandbox) []string {
			s.env = append(s.env, "LOCUS_WINDOW=abc")
			return []string{"index", s.simpleRepo("r").Dir}
		},
		code:  2,
		names: []string{`LOCUS_WINDOW="abc"`},
		check: func(s *sandbox, r result) { s.notIndexed("r") },
	},

	// Repositories that cannot be read.
	fleetFailure("path-missing", "a local path that does not exist",
		func(s *sandbox) string { return filepath.Join(s.dir, "nowhere") }, "no such file or directory"),
	fleetFailure("not-a-repository", "a directory that is not a git repository",
		func(s *sandbox) string {
			writeFile(s, "plain/README", "not a repo\n")
			return filepath.Join(s.dir, "plain")
		}, "not a git repository"),
	fleetFailure("file-not-directory", "a path to a file instead of a directory",
		func(s *sandbox) string { return filepath.Join(s.simpleRepo("r").Dir, "lib.py") }, "not a directory"),
	fleetFailure("file-url-missing", "a `file://` URL to a path that does not exist",
		func(s *sandbox) string { return "file://" + filepath.Join(s.dir, "gone") }, "no such file or directory"),
	{
		name:  "ref-missing",
		input: "a ref that the repository does not have (`PATH#nope`)",
		want:  "exit 1; the repository is recorded as failed with \"ref \\\"nope\\\": no such branch, tag or commit\"; nothing is published for it",
		setup: func(s *sandbox) []string { return []string{"index", "bad/ref=" + s.simpleRepo("r").Dir + "#nope"} },
		code:  1,
		names: []string{"bad/ref", `ref "nope"`, "no such branch"},
		check: func(s *sandbox, r result) { s.notIndexed("bad/ref") },
	},
	{
		name:  "fleet-one-bad-repository",
		input: "a fleet of one good repository and one path that does not exist",
		want:  "exit 1 (\"1 of 2 repositories failed\"); the good one is indexed, the bad one is named with its error",
		setup: func(s *sandbox) []string {
			s.vars["BAD"] = filepath.Join(s.dir, "missing")
			return []string{"index", "good/one=" + s.simpleRepo("r").Dir, "bad/one=" + s.vars["BAD"]}
		},
		code:  1,
		names: []string{"1 of 2 repositories failed", "bad/one", "{{BAD}}"},
		check: func(s *sandbox, r result) {
			s.indexed("good/one")
			s.notIndexed("bad/one")
		},
	},

	// Contents that are hard to parse.
	{
		name:  "binary-file",
		input: "a binary file (PNG header, NUL bytes) committed next to code",
		want:  "indexed; the commit row for the binary is stored, the graph holds only the code files",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.WriteBytes("logo.png", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 4096)...))
			r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
			r.Commit("add logo")
			return []string{"index", "bin/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("bin/r")
			if paths := s.column(m.Parts[0].Key, "path"); !slices.Contains(paths, "logo.png") {
				s.t.Errorf("commit rows %v lack logo.png", paths)
			}
			ids := s.nodeIDs("bin/r")
			if !slices.Contains(ids, "lib.py:helper") || slices.Contains(ids, "logo.png") {
				s.t.Errorf("graph nodes %v: want lib.py:helper and no logo.png", ids)
			}
		},
	},
	syntaxCase("syntax-error-python", "broken.py", "def ok():\n    return 1\n\ndef broken(:\n    pass\n", "broken.py:ok"),
	syntaxCase("syntax-error-java", "Broken.java", "class Broken {\n  int ok() { return 1; }\n  void bad( { }\n", "Broken.java:Broken.ok"),
	syntaxCase("syntax-error-go", "broken.go", "package x\n\nfunc Ok() int { return 1 }\n\nfunc Bad( {\n", "broken.go:Ok"),
	syntaxCase("syntax-error-javascript", "broken.js", "function ok() { return 1 }\nfunction bad( {\n", "broken.js:ok"),
	{
		name:  "deeply-nested-expressions",
		input: "Python, JavaScript, Java and Go files with expressions nested 20,000 levels deep (one bracket per line)",
		want:  "indexed without a crash; the functions around the nesting are in the graph",
		setup: func(s *sandbox) []string {
			const n = 20000
			open, closeP := strings.Repeat("(\n", n), strings.Repeat(")\n", n)
			r := s.repo("r")
			r.Write(map[string]string{
				"deep.py":   "x = " + open + "1" + closeP + "\n\ndef after():\n    return 1\n",
				"deep.js":   "var x = " + strings.Repeat("[\n", n) + strings.Repeat("]\n", n) + ";\nfunction after() { return 1 }\n",
				"Deep.java": "class Deep {\n  int a() { return " + open + "1" + closeP + "; }\n}\n",
				"deep.go":   "package x\n\nfunc F() int {\n\treturn " + open + "1" + closeP + "\n}\n",
			})
			r.Commit("deep")
			return []string{"index", "deep/expr=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			ids := s.nodeIDs("deep/expr")
			for _, id := range []string{"deep.py:after", "deep.js:after", "Deep.java:Deep.a", "deep.go:F"} {
				if !slices.Contains(ids, id) {
					s.t.Errorf("graph lacks %s: %v", id, ids)
				}
			}
		},
	},
	{
		name:  "nul-bytes-in-source",
		input: "a `.py` file that holds NUL bytes and invalid UTF-8 after its code",
		want:  "indexed; the commit row is stored, the graph skips the file and its report lists it as skipped (\"binary\")",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.WriteBytes("nul.py", []byte("def a():\n    return 1\n\x00\x00\x00\xff\xfe garbage\n"))
			r.Write(map[string]string{"lib.py": "def helper():\n    return 1\n"})
			r.Commit("nul")
			return []string{"index", "nul/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("nul/r")
			if paths := s.column(m.Parts[0].Key, "path"); !slices.Contains(paths, "nul.py") {
				s.t.Errorf("commit rows %v lack nul.py", paths)
			}
			if ids := s.nodeIDs("nul/r"); !slices.Contains(ids, "lib.py:helper") || slices.Contains(ids, "nul.py:a") {
				s.t.Errorf("graph nodes %v: want lib.py:helper and nothing from nul.py", ids)
			}
			if rep := graphReport(s, m); !slices.Contains(rep.Skipped, skip{Path: "nul.py", Reason: "binary"}) {
				s.t.Errorf("graph report skips %v, want nul.py as binary", rep.Skipped)
			}
		},
	},
	{
		name:  "empty-commit",
		input: "a commit that changes no file (`git commit --allow-empty`) on top of a normal one",
		want:  "indexed; both commits are counted and the empty one has its own row",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			s.vars["EMPTY"] = r.Commit("nothing changed")
			return []string{"index", "emptycommit/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("emptycommit/r")
			if m.Commits != 2 || m.Head != s.vars["EMPTY"] {
				s.t.Errorf("indexed %d commits at %s, want 2 at the empty commit %s", m.Commits, m.Head, s.vars["EMPTY"])
			}
			if ids := s.column(m.Parts[0].Key, "commit_id"); !slices.Contains(ids, s.vars["EMPTY"]) {
				s.t.Errorf("no row for the empty commit: %v", ids)
			}
		},
	},
	{
		name:  "latin1-source",
		input: "a `.py` file whose string literal holds a Latin-1 byte (invalid UTF-8)",
		want:  "indexed; the function is in the graph and its stored code is valid UTF-8",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.WriteBytes("cafe.py", []byte("def cafe():\n    return \"caf\xe9\"\n"))
			r.Commit("latin-1")
			return []string{"index", "latin1/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			if ids := s.nodeIDs("latin1/r"); !slices.Contains(ids, "cafe.py:cafe") {
				s.t.Errorf("graph lacks cafe.py:cafe: %v", ids)
			}
			for _, code := range s.column(s.indexed("latin1/r").Graph.NodesKey, "code") {
				if !utf8.ValidString(code) {
					s.t.Errorf("stored code is invalid UTF-8: %q", code)
				}
			}
		},
	},
	{
		name:  "fleet-id-traversal",
		input: "`locus index --id ../../../escape` (a fleet id that looks like a path)",
		want:  "exit 0; the run's summary is written inside the store under a sanitised name (`runs/.._.._.._escape/`), nothing outside it",
		setup: func(s *sandbox) []string {
			return []string{"index", "--id", "../../../escape", "idt/r=" + s.simpleRepo("r").Dir}
		},
		names: []string{"runs/.._.._.._escape/summary.json"},
		check: func(s *sandbox, r result) {
			s.indexed("idt/r")
			if _, err := os.Stat(filepath.Join(s.store(), "runs", ".._.._.._escape", "summary.json")); err != nil {
				s.t.Errorf("summary not in the store: %v", err)
			}
			entries, err := os.ReadDir(s.dir)
			if err != nil {
				s.t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "data" && e.Name() != "r" {
					s.t.Errorf("%s was written next to the data dir", e.Name())
				}
			}
			if hits, _ := filepath.Glob(filepath.Join(filepath.Dir(s.dir), "*escape*")); len(hits) > 0 {
				s.t.Errorf("written outside the sandbox: %v", hits)
			}
		},
	},
	{
		name:  "symlink-outside-repository",
		input: "a committed symlink pointing at a secret file outside the repository",
		want:  "indexed; the link is stored as a link, the target's content is never read into the store",
		setup: func(s *sandbox) []string {
			writeFile(s, "outside/secret.txt", "TOP-SECRET-CONTENT-9f3a\n")
			r := s.repo("r")
			r.Symlink(filepath.Join(s.dir, "outside", "secret.txt"), "leak.py")
			r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
			r.Commit("link outside")
			return []string{"index", "link/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			s.indexed("link/r")
			if hits := filesContaining(s.t, s.data, "TOP-SECRET-CONTENT-9f3a"); len(hits) > 0 {
				s.t.Errorf("the symlink target's content is stored in %v", hits)
			}
		},
	},
	{
		name:  "minified-javascript",
		input: "a 300 KB minified JavaScript file on one line",
		want:  "indexed; the commit row is stored, the graph skips the file and its report lists it as skipped (\"minified\") instead of parsing it",
		setup: func(s *sandbox) []string {
			var b strings.Builder
			for i := 0; b.Len() < 300<<10; i++ {
				b.WriteString("function f" + strconv.Itoa(i) + "(a,b){return a+b*" + strconv.Itoa(i) + "};")
			}
			r := s.repo("r")
			r.Write(map[string]string{"app.min.js": b.String(), "src/app.js": "function add(a, b) {\n  return a + b\n}\n"})
			r.Commit("build")
			return []string{"index", "min/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("min/r")
			if paths := s.column(m.Parts[0].Key, "path"); !slices.Contains(paths, "app.min.js") {
				s.t.Errorf("commit rows %v lack app.min.js", paths)
			}
			ids := s.nodeIDs("min/r")
			if !slices.Contains(ids, "src/app.js:add") || slices.Contains(ids, "app.min.js") {
				s.t.Errorf("graph nodes %v: want src/app.js:add and not the minified file", ids)
			}
			rep := graphReport(s, m)
			if !slices.Contains(rep.Skipped, skip{Path: "app.min.js", Reason: "minified"}) {
				s.t.Errorf("graph report skips %v, want app.min.js as minified", rep.Skipped)
			}
		},
	},
	{
		name:  "hostile-file-names",
		input: "file names with spaces, quotes, a newline, a leading dash and non-ASCII letters",
		want:  "indexed; every name is stored exactly in the commit rows",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.Write(map[string]string{
				"with space.py": "def a():\n    return 1\n", "quote\"d.py": "def b():\n    return 2\n",
				"new\nline.py": "def c():\n    return 3\n", "-dash.py": "def d():\n    return 4\n", "ünïcödé/名前.py": "def e():\n    return 5\n",
			})
			r.Commit("odd names")
			return []string{"index", "names/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("names/r")
			paths := s.column(m.Parts[0].Key, "path")
			for _, p := range []string{"with space.py", "quote\"d.py", "new\nline.py", "-dash.py", "ünïcödé/名前.py"} {
				if !slices.Contains(paths, p) {
					s.t.Errorf("commit rows lack %q: %q", p, paths)
				}
			}
		},
	},
	{
		name:  "crlf-and-bom",
		input: "source files with CRLF line ends and a UTF-8 byte order mark",
		want:  "indexed; their functions are in the graph",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.Write(map[string]string{"win.py": "\ufeffdef crlf():\r\n    return 1\r\n", "Win.java": "\ufeffclass Win {\r\n  int a() { return 1; }\r\n}\r\n"})
			r.Commit("windows files")
			return []string{"index", "crlf/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			ids := s.nodeIDs("crlf/r")
			for _, id := range []string{"win.py:crlf", "Win.java:Win.a"} {
				if !slices.Contains(ids, id) {
					s.t.Errorf("graph lacks %s: %v", id, ids)
				}
			}
		},
	},
	{
		name:  "deep-nesting",
		input: "a file 60 directories deep",
		want:  "indexed; the file's function is in the graph under its full path",
		setup: func(s *sandbox) []string {
			p := strings.Repeat("d/", 60) + "deep.py"
			s.vars["ID"] = p + ":deep"
			r := s.repo("r")
			r.Write(map[string]string{p: "def deep():\n    return 1\n"})
			r.Commit("deep")
			return []string{"index", "deep/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			if ids := s.nodeIDs("deep/r"); !slices.Contains(ids, s.vars["ID"]) {
				s.t.Errorf("graph lacks %s (%d nodes)", s.vars["ID"], len(ids))
			}
		},
	},
	{
		name:  "empty-and-blank-files",
		input: "an empty .py file and a .go file of whitespace only",
		want:  "indexed; both files are in the commit rows, the other files' functions are in the graph",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.Write(map[string]string{"empty.py": "", "blank.go": "\n\n   \n", "lib.py": "def helper():\n    return 1\n"})
			r.Commit("empties")
			return []string{"index", "empty/files=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("empty/files")
			paths := s.column(m.Parts[0].Key, "path")
			for _, p := range []string{"empty.py", "blank.go", "lib.py"} {
				if !slices.Contains(paths, p) {
					s.t.Errorf("commit rows lack %s: %v", p, paths)
				}
			}
			if ids := s.nodeIDs("empty/files"); !slices.Contains(ids, "lib.py:helper") {
				s.t.Errorf("graph lacks lib.py:helper: %v", ids)
			}
		},
	},
	{
		name:  "submodule-entry",
		input: "a gitlink (submodule) entry whose commit is not in the repository",
		want:  "indexed; the gitlink is a commit row, nothing is fetched for it",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.Write(map[string]string{"lib.py": "def helper():\n    return 1\n"})
			r.Git("add", "lib.py")
			r.Git("update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/sub")
			r.Tick()
			r.Git("commit", "-q", "-m", "add submodule")
			return []string{"index", "sub/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("sub/r")
			if paths := s.column(m.Parts[0].Key, "path"); !slices.Contains(paths, "vendor/sub") {
				s.t.Errorf("commit rows %v lack the gitlink vendor/sub", paths)
			}
		},
	},

	// Repository shapes that are legal but unusual.
	{
		name:  "bare-repository",
		input: "a bare repository directory",
		want:  "indexed like a working copy",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("src")
			bare := filepath.Join(s.dir, "bare.git")
			r.Git("clone", "-q", "--bare", r.Dir, bare)
			return []string{"index", "bare/r=" + bare}
		},
		check: func(s *sandbox, r result) {
			if m := s.indexed("bare/r"); m.Commits != 1 {
				s.t.Errorf("bare repository indexed with %d commits, want 1", m.Commits)
			}
		},
	},
	{
		name:  "detached-head",
		input: "a working copy with a detached HEAD",
		want:  "indexed at the detached commit",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			first := r.Head()
			r.Write(map[string]string{"more.py": "def more():\n    return 1\n"})
			r.Commit("more")
			r.Git("checkout", "-q", "--detach", first)
			s.vars["HEAD"] = first
			return []string{"index", "detached/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			if m := s.indexed("detached/r"); m.Head != s.vars["HEAD"] || m.Commits != 1 {
				s.t.Errorf("indexed at %s with %d commits, want the detached %s with 1", m.Head, m.Commits, s.vars["HEAD"])
			}
		},
	},
	{
		name:  "path-with-spaces",
		input: "a repository whose directory name has spaces and parentheses, indexed at a tag (`PATH#v1`)",
		want:  "indexed at the tag",
		setup: func(s *sandbox) []string {
			r := s.repo("my repo (copy)")
			r.Write(map[string]string{"lib.py": "def helper():\n    return 1\n"})
			s.vars["HEAD"] = r.Commit("v1")
			r.Git("tag", "v1")
			r.Write(map[string]string{"lib.py": "def helper():\n    return 2\n"})
			r.Commit("after v1")
			return []string{"index", "spaces/r=" + r.Dir + "#v1"}
		},
		check: func(s *sandbox, r result) {
			if m := s.indexed("spaces/r"); m.Head != s.vars["HEAD"] {
				s.t.Errorf("indexed at %s, want the tag's commit %s", m.Head, s.vars["HEAD"])
			}
		},
	},
	{
		name:  "reindex-unchanged",
		input: "indexing an already indexed repository again with no new commits",
		want:  "exit 0 with 0 new commits; the stored commit parts are unchanged",
		setup: func(s *sandbox) []string {
			m := s.indexed(baseRepo)
			s.vars["URL"] = m.URL
			return []string{"index", baseRepo + "=" + m.URL}
		},
		touchesBase: true,
		check: func(s *sandbox, r result) {
			m := s.indexed(baseRepo)
			if m.Head != seed.head || m.Commits != 2 {
				s.t.Errorf("after re-indexing: head %s with %d commits, want %s with 2", m.Head, m.Commits, seed.head)
			}
			got, err := snapshot(filepath.Join(s.store(), "repos", baseRepo, "commits"))
			if err != nil {
				s.t.Fatal(err)
			}
			for f, h := range seed.snap {
				if strings.HasPrefix(f, "commits/") && got[strings.TrimPrefix(f, "commits/")] != h {
					s.t.Errorf("re-indexing changed or lost %s", f)
				}
			}
		},
	},

	// Credentials.
	{
		name:  "credentials-in-url",
		input: "an http URL with a user and password (`http://alice:SECRET@host/x.git`) to a real git server",
		want:  "exit 1 before any work: the URL is refused with its credentials masked (`http://***@host/x.git`) and LOCUS_GIT_TOKEN suggested; the password appears nowhere in the output or the data dir",
		setup: func(s *sandbox) []string {
			const secret = "pa55-Zq8-secret"
			r := s.simpleRepo("src")
			r.Git("clone", "-q", "--bare", r.Dir, filepath.Join(s.dir, "served", "x.git"))
			base := serveGit(s.t, filepath.Join(s.dir, "served"), "alice", secret)
			s.vars["SECRET"] = secret
			s.vars["MASKED"] = strings.Replace(base, "http://", "http://***@", 1) + "/x.git"
			return []string{"index", "creds/x=" + strings.Replace(base, "http://", "http://alice:"+secret+"@", 1) + "/x.git"}
		},
		code:  1,
		names: []string{"{{MASKED}}", "credentials", "LOCUS_GIT_TOKEN"},
		check: func(s *sandbox, r result) {
			s.notIndexed("creds/x")
			noSecret(s, r)
		},
	},
	{
		name:  "credentials-from-environment",
		input: "a password-protected http repository with the token in LOCUS_GIT_TOKEN",
		want:  "cloned and indexed; the token appears nowhere in the output, the store, the clone or the Temporal database",
		setup: func(s *sandbox) []string {
			const secret = "tok-7Hq2-secret"
			r := s.simpleRepo("src")
			r.Git("clone", "-q", "--bare", r.Dir, filepath.Join(s.dir, "served", "x.git"))
			base := serveGit(s.t, filepath.Join(s.dir, "served"), "x-access-token", secret)
			s.vars["SECRET"] = secret
			s.env = append(s.env, "LOCUS_GIT_TOKEN="+secret)
			return []string{"index", "creds/env=" + base + "/x.git"}
		},
		check: func(s *sandbox, r result) {
			s.indexed("creds/env")
			noSecret(s, r)
		},
	},

	// Concurrency.
	{
		name:  "two-concurrent-index-runs",
		input: "two `locus index` runs on the same data dir at the same time",
		want:  "the second exits 1 at once, naming the data dir's lock and suggesting another data dir or --temporal; the first finishes and is indexed; the second's repository is not",
		setup: func(s *sandbox) []string {
			emb := newEmbedServer(s.t, 8)
			first := s.simpleRepo("first")
			done := make(chan result, 1)
			go func() {
				done <- s.locus("index", "--embedder", "openai+http://"+strings.TrimPrefix(emb.URL, "http://")+"?model=m&dim=8", "one/first="+first.Dir)
			}()
			select {
			case <-emb.arrived: // the first run holds the data dir and waits on the embedder
			case r := <-done:
				s.t.Fatalf("the first index run ended before it reached its embedder: %v", r)
			}
			s.t.Cleanup(func() {
				emb.release()
				if r := <-done; r.code != 0 {
					s.t.Errorf("the first run failed: %v", r)
				} else {
					s.indexed("one/first")
				}
			})
			s.vars["LOCK"] = filepath.Join(s.data, "temporal")
			return []string{"index", "two/second=" + s.simpleRepo("second").Dir}
		},
		code:  1,
		names: []string{"in use by another locus process", "{{LOCK}}"},
		check: func(s *sandbox, r result) { s.notIndexed("two/second") },
	},

	// Two repositories that look alike, and histories that change under locus.
	{
		name:  "same-name-other-repository",
		input: "another repository indexed under a name that already holds one (`fixtures/base=OTHER`)",
		want:  "exit 1; the repository is refused: the error says the name already holds another repository (both URLs and roots) and suggests another name (`give it another name, e.g. owner/other=PATH`); the stored one is untouched",
		setup: func(s *sandbox) []string {
			other := s.simpleRepo("other")
			s.vars["OTHER"] = other.Dir
			return []string{"index", baseRepo + "=" + other.Dir}
		},
		code:  1,
		names: []string{baseRepo, "already holds", "{{OTHER}}", "give it another name, e.g. ", "={{OTHER}}"},
	},
	{
		name:  "same-repository-other-path",
		input: "a second clone of an indexed repository, at another path, under the same name",
		want:  "exit 0 with 0 new commits: the same repository (same root commit) is accepted from its new path; the stored history is unchanged",
		setup: func(s *sandbox) []string {
			m := s.indexed(baseRepo)
			clone := filepath.Join(s.dir, "elsewhere", "base")
			s.repo("scratch").Git("clone", "-q", m.URL, clone)
			s.vars["CLONE"] = clone
			return []string{"index", baseRepo + "=" + clone}
		},
		touchesBase: true,
		check: func(s *sandbox, r result) {
			m := s.indexed(baseRepo)
			if m.Head != seed.head || m.Commits != 2 || m.URL != s.vars["CLONE"] {
				s.t.Errorf("after indexing the clone: %s at %s with %d commits, want %s at %s with 2", m.URL, m.Head, m.Commits, s.vars["CLONE"], seed.head)
			}
			got, err := snapshot(filepath.Join(s.store(), "repos", baseRepo, "commits"))
			if err != nil {
				s.t.Fatal(err)
			}
			for f, h := range seed.snap {
				if strings.HasPrefix(f, "commits/") && got[strings.TrimPrefix(f, "commits/")] != h {
					s.t.Errorf("indexing the same repository from another path changed or lost %s", f)
				}
			}
		},
	},
	{
		name:  "lookalike-directories",
		input: "two different working copies that are both called `repo` (origins github.com/alpha/repo and github.com/beta/repo), indexed without names",
		want:  "exit 0; each is named from its origin remote (alpha/repo, beta/repo) and stored apart: neither history holds the other's commits",
		setup: func(s *sandbox) []string {
			var dirs []string
			for _, owner := range []string{"alpha", "beta"} {
				r := s.repo(filepath.Join(owner, "repo"))
				r.Write(map[string]string{owner + ".py": "def " + owner + "():\n    return 1\n"})
				s.vars[owner] = r.Commit(owner)
				r.Git("remote", "add", "origin", "https://github.com/"+owner+"/repo.git")
				dirs = append(dirs, r.Dir)
			}
			return append([]string{"index"}, dirs...)
		},
		check: func(s *sandbox, r result) {
			for _, owner := range []string{"alpha", "beta"} {
				m := s.indexed(owner + "/repo")
				if m.Head != s.vars[owner] || m.Commits != 1 {
					s.t.Errorf("%s/repo is at %s with %d commits, want its own %s alone", owner, m.Head, m.Commits, s.vars[owner])
				}
			}
		},
	},
	{
		name:  "force-pushed-history",
		input: "a repository whose branch was rewritten (reset and recommitted) after it was indexed",
		want:  "exit 0; locus says the history was rewritten and replaces the stored history with the new one (no commits of the old branch remain)",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			r.Write(map[string]string{"gone.py": "def gone():\n    return 1\n"})
			old := r.Commit("to be rewritten")
			if res := s.locus("index", "fp/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("first index: %v", res)
			}
			r.Git("reset", "-q", "--hard", "HEAD~1")
			r.Write(map[string]string{"new.py": "def new():\n    return 2\n"})
			s.vars["OLD"], s.vars["NEW"] = old, r.Commit("rewritten")
			return []string{"index", "fp/r=" + r.Dir}
		},
		names: []string{"history rewritten"},
		check: func(s *sandbox, r result) {
			m := s.indexed("fp/r")
			if m.Head != s.vars["NEW"] || m.Commits != 2 {
				s.t.Errorf("after the rewrite: head %s with %d commits, want %s with 2", m.Head, m.Commits, s.vars["NEW"])
			}
			for _, p := range m.Parts {
				if ids := s.column(p.Key, "commit_id"); slices.Contains(ids, s.vars["OLD"]) {
					s.t.Errorf("part %s still holds the rewritten commit %s", p.Key, s.vars["OLD"])
				}
			}
		},
	},
	{
		name:  "deleted-upstream",
		input: "an indexed repository whose upstream was deleted, indexed again",
		want:  "exit 1; the repository is listed as failed with an error naming its path; its published index stays as it was (same head, commits and parts) and still answers queries",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			if res := s.locus("index", "gone/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("first index: %v", res)
			}
			m := s.indexed("gone/r")
			s.vars["HEAD"], s.vars["PATH"] = m.Head, r.Dir
			s.vars["PARTS"] = fmt.Sprint(len(m.Parts), m.Rows)
			if err := os.RemoveAll(r.Dir); err != nil {
				s.t.Fatal(err)
			}
			return []string{"index", "gone/r=" + r.Dir}
		},
		code:  1,
		names: []string{"gone/r", "{{PATH}}", "1 of 1 repositories failed"},
		check: func(s *sandbox, r result) {
			m := s.indexed("gone/r")
			if m.Head != s.vars["HEAD"] || fmt.Sprint(len(m.Parts), m.Rows) != s.vars["PARTS"] {
				s.t.Errorf("after the failed re-index: head %s, %d parts, %d rows; want the index as it was", m.Head, len(m.Parts), m.Rows)
			}
			if res := s.locus("localize", "--repo", "gone/r", "double the helper"); res.code != 0 {
				s.t.Errorf("localize on the kept index: %v", res)
			}
		},
	},
	{
		name:  "empty-repository",
		input: "a repository with no commits",
		want:  "exit 0; the repository is reported as \"empty (no commits)\" and listed by status with 0 commits",
		setup: func(s *sandbox) []string { return []string{"index", "empty/r=" + s.repo("r").Dir} },
		check: func(s *sandbox, r result) {
			if !strings.Contains(r.stdout, "empty (no commits)") {
				s.t.Errorf("index output does not say the repository is empty:\n%v", r)
			}
			if m := s.statusOf("empty/r"); m == nil || m.Commits != 0 || m.Head != "" {
				s.t.Errorf("status shows the empty repository as %+v", m)
			}
		},
	},
	{
		name:  "url-unreachable",
		input: "an http URL where no server listens",
		want:  "exit 1 after bounded retries; the repository is listed as failed with the URL and \"connection refused\"; nothing is published",
		setup: func(s *sandbox) []string {
			s.vars["URL"] = "http://" + freePort(s) + "/x.git"
			return []string{"index", "net/r=" + s.vars["URL"]}
		},
		code:  1,
		names: []string{"net/r", "{{URL}}", "connection refused", "1 of 1 repositories failed"},
		check: func(s *sandbox, r result) { s.notIndexed("net/r") },
	},

	{
		name:  "ssh-unreachable",
		input: "an ssh URL where no server listens (`ssh://git@127.0.0.1:PORT/x.git`)",
		want:  "exit 1 after bounded retries; the repository is listed as failed with the URL named; nothing is published",
		setup: func(s *sandbox) []string {
			s.vars["URL"] = "ssh://git@" + freePort(s) + "/x.git"
			return []string{"index", "net/ssh=" + s.vars["URL"]}
		},
		code:  1,
		names: []string{"net/ssh", "{{URL}}", "1 of 1 repositories failed"},
		check: func(s *sandbox, r result) { s.notIndexed("net/ssh") },
	},
	// Damaged store objects.
	{
		name:  "truncated-commits-part",
		input: "a stored commits Parquet part cut to 100 bytes, then `locus index` again",
		want:  "exit 0; a warning names the damaged part and the history is re-scraped to replace it; every part is readable again",
		setup: func(s *sandbox) []string {
			m := s.indexed(baseRepo)
			s.vars["PART"] = m.Parts[0].Key
			if err := os.Truncate(filepath.Join(s.store(), filepath.FromSlash(m.Parts[0].Key)), 100); err != nil {
				s.t.Fatal(err)
			}
			return []string{"index", baseRepo + "=" + m.URL}
		},
		touchesBase: true,
		names:       []string{"{{PART}}", "damaged"},
		check: func(s *sandbox, r result) {
			if m := s.indexed(baseRepo); m.Head != seed.head || m.Commits != 2 {
				s.t.Errorf("after the repair: head %s with %d commits, want %s with 2", m.Head, m.Commits, seed.head)
			}
		},
	},
	{
		name:  "garbage-nodes-parquet-localize",
		input: "a stored graph nodes.parquet overwritten with garbage, then `locus localize`",
		want:  "exit 1: the error names the damaged nodes.parquet (\"stored object is damaged\"); no ranking is printed",
		setup: func(s *sandbox) []string {
			m := s.indexed(baseRepo)
			s.vars["NODES"] = m.Graph.NodesKey
			writeFile(s, filepath.Join("data", "store", filepath.FromSlash(m.Graph.NodesKey)), "garbage\n")
			return []string{"localize", "--repo", baseRepo, "port is negative"}
		},
		touchesBase: true,
		code:        1,
		names:       []string{"{{NODES}}", "damaged"},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stdout, "Server.bind") {
				s.t.Errorf("a ranking was printed from a damaged graph:\n%v", r)
			}
		},
	},
	{
		name:  "garbage-nodes-parquet-reindex",
		input: "a stored graph nodes.parquet overwritten with garbage, then `locus index` again",
		want:  "exit 0; the damaged graph is rebuilt and readable again",
		setup: func(s *sandbox) []string {
			m := s.indexed(baseRepo)
			writeFile(s, filepath.Join("data", "store", filepath.FromSlash(m.Graph.NodesKey)), "garbage\n")
			return []string{"index", baseRepo + "=" + m.URL}
		},
		touchesBase: true,
		check: func(s *sandbox, r result) {
			if ids := s.nodeIDs(baseRepo); !slices.Contains(ids, "app/server.py:Server.bind") {
				s.t.Errorf("rebuilt graph lacks app/server.py:Server.bind: %v", ids)
			}
		},
	},

	// The LLM.
	{
		name:  "llm-down-strict",
		input: "`locus localize --strict --llm URL` where no LLM server listens",
		want:  "exit 3 after bounded retries: one warning names the LLM URL; the ranking is still printed with each center marked \"selector unavailable\"",
		setup: func(s *sandbox) []string {
			s.vars["LLM"] = "http://" + freePort(s) + "/v1"
			return []string{"localize", "--repo", indexPortRepo(s), "--strict", "--llm", "openai+" + s.vars["LLM"] + "?model=m", "bind rejects a negative port"}
		},
		code:  3,
		names: []string{"{{LLM}}", "unavailable", "--strict"},
		check: func(s *sandbox, r result) {
			if n := strings.Count(r.stderr, "warning:"); n != 1 {
				s.t.Errorf("%d warnings, want 1:\n%v", n, r)
			}
			if !strings.Contains(r.stdout, "port.py:Port.bind") || !strings.Contains(r.stdout, "selector unavailable") {
				s.t.Errorf("the ranking is missing or does not mark the centers:\n%v", r)
			}
		},
	},

	{
		name:  "kill-9-during-index",
		input: "`locus index` killed with kill -9 while it embeds, then the same command again",
		want:  "the second run resumes the same fleet and finishes (exit 0); the repository is indexed completely and no temporary file is left in the store",
		setup: func(s *sandbox) []string {
			emb := newEmbedServer(s.t, 8)
			args := []string{"index", "--embedder", "openai+http://" + strings.TrimPrefix(emb.URL, "http://") + "?model=m&dim=8", "killed/r=" + s.simpleRepo("r").Dir}
			first := s.start(args...)
			select {
			case <-emb.arrived:
			case <-giveUpC(s.t):
				s.t.Fatal("the first index run never reached its embedder")
			}
			if err := first.Process.Signal(syscall.SIGKILL); err != nil {
				s.t.Fatal(err)
			}
			first.Wait()
			emb.release()
			return args
		},
		check: func(s *sandbox, r result) {
			if m := s.indexed("killed/r"); m.Commits != 1 {
				s.t.Errorf("indexed %d commits, want 1", m.Commits)
			}
			if left, _ := os.ReadDir(filepath.Join(s.store(), ".locus-tmp")); len(left) > 0 {
				s.t.Errorf("temporary files left in the store: %v", left)
			}
		},
	},
	{
		name:  "kill-9-during-triplets",
		input: "`locus triplets` killed with kill -9 while its chunks are mined (one commit each), then the same command again",
		want:  "the second run resumes the same run and finishes (exit 0): one part per chunk, one record per fix, none twice, the same records as a run never interrupted",
		setup: func(s *sandbox) []string {
			r := s.repo("t")
			files := map[string]string{}
			for i := range 4 {
				files[fmt.Sprintf("pkg/m%d.py", i)] = fmt.Sprintf("def load_%d(key):\n    return store[key]\n\ndef save_%d(key, value):\n    store[key] = value\n", i, i)
			}
			r.Write(files)
			r.Commit("initial layout")
			for i := range killedFixes {
				p := fmt.Sprintf("pkg/m%d.py", i%4)
				files[p] = strings.Replace(files[p], "    return store", fmt.Sprintf("    # fix %d\n    return store", i), 1)
				r.Write(map[string]string{p: files[p]})
				r.Commit(fmt.Sprintf("load_%d must not raise for the %s key", i%4, strings.Repeat("z", i+1)))
			}
			if res := s.locus("index", "killed/t="+r.Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			args := []string{"triplets", "--out", filepath.Join(s.dir, "out"), "--chunk", "1", "--format", "jsonl", "--negatives", "2", "killed/t"}
			first := s.start(args...)
			deadline, _ := giveUp(s.t)
			for len(tripletParts(s)) == 0 && (deadline.IsZero() || time.Now().Before(deadline)) {
				time.Sleep(5 * time.Millisecond)
			}
			if err := first.Process.Signal(syscall.SIGKILL); err != nil {
				s.t.Fatal(err)
			}
			first.Wait()
			if n := len(tripletParts(s)); n == 0 || n > killedFixes {
				s.t.Fatalf("%d parts when killed: want the run cut short after its first chunk", n)
			}
			return args
		},
		check: func(s *sandbox, r result) {
			if n := len(tripletParts(s)); n != killedFixes+1 {
				s.t.Errorf("%d parts, want one per commit (%d)", n, killedFixes+1)
			}
			got := tripletQueries(s, "out")
			seen := map[string]bool{}
			for _, q := range got {
				if seen[q] {
					s.t.Errorf("%s: two records", q)
				}
				seen[q] = true
			}
			if len(got) != killedFixes {
				s.t.Errorf("%d records, want one per fix (%d):\n%v", len(got), killedFixes, r)
			}
			again := runLocus(s.t, s.data, s.dir, s.env, "triplets", "--out", filepath.Join(s.dir, "again"), "--chunk", "1", "--format", "jsonl", "--negatives", "2", "killed/t")
			want := tripletQueries(s, "again")
			if again.code != 0 || !slices.Equal(got, want) {
				s.t.Errorf("an uninterrupted run (exit %d) gave %d records, the killed one %d", again.code, len(want), len(got))
			}
			a, _ := os.ReadFile(filepath.Join(s.dir, "out", "records.jsonl"))
			b, _ := os.ReadFile(filepath.Join(s.dir, "again", "records.jsonl"))
			if len(a) == 0 || string(a) != string(b) {
				s.t.Errorf("the killed run's export (%d bytes) differs from an uninterrupted run's (%d bytes)", len(a), len(b))
			}
		},
	},
	// Localize.
	{
		name:  "localize-never-indexed",
		input: "`locus localize` on a repository that was never indexed",
		want:  "exit 1 before any work: \"REPO: not indexed; indexed: …\" listing the indexed repositories",
		setup: func(s *sandbox) []string {
			return []string{"localize", "--repo", "nope/never", "server crashes on start"}
		},
		code:  1,
		names: []string{"nope/never", "not indexed"},
	},
	{
		name:  "localize-empty-repository",
		input: "`locus localize` on a repository that was indexed while it had no commits",
		want:  "exit 1: \"repository REPO is indexed but empty (no commits)\"",
		setup: func(s *sandbox) []string {
			if r := s.locus("index", "empty/r="+s.repo("r").Dir); r.code != 0 {
				s.t.Fatalf("index the empty repository: %v", r)
			}
			return []string{"localize", "--repo", "empty/r", "bug"}
		},
		code:  1,
		names: []string{"empty/r", "indexed but empty"},
	},
	{
		name:  "status-not-indexed",
		input: "`locus status nope/x` for a repository that is not indexed",
		want:  "exit 1: \"not indexed: nope/x\"",
		setup: func(s *sandbox) []string { return []string{"status", "nope/x"} },
		code:  1,
		names: []string{"not indexed", "nope/x"},
	},
	{
		name:  "temporal-unreachable",
		input: "`--temporal HOST:PORT` where no Temporal server listens",
		want:  "exit 1 at once: the error names the address; nothing is indexed",
		setup: func(s *sandbox) []string {
			s.vars["ADDR"] = freePort(s)
			return []string{"index", "--temporal", s.vars["ADDR"], "tmp/r=" + s.simpleRepo("r").Dir}
		},
		code:  1,
		names: []string{"connect to Temporal at {{ADDR}}"},
		check: func(s *sandbox, r result) { s.notIndexed("tmp/r") },
	},
	{
		name:  "localize-empty-issue",
		input: "`locus localize` with an empty issue text",
		want:  "exit 2 with the usage: \"localize needs --repo and an issue\"",
		setup: func(s *sandbox) []string { return []string{"localize", "--repo", baseRepo, ""} },
		code:  2,
		names: []string{"needs --repo and an issue"},
	},
	{
		name:  "localize-blank-issue-file",
		input: "`--issue-file` holding only whitespace",
		want:  "exit 2 with the usage: \"localize needs --repo and an issue\"",
		setup: func(s *sandbox) []string {
			writeFile(s, "issue.txt", " \n\t\n")
			return []string{"localize", "--repo", baseRepo, "--issue-file", filepath.Join(s.dir, "issue.txt")}
		},
		code:  2,
		names: []string{"needs --repo and an issue"},
	},
	{
		name:  "localize-issue-file-missing",
		input: "`--issue-file` naming a file that does not exist",
		want:  "exit 1; the error names the file",
		setup: func(s *sandbox) []string {
			s.vars["F"] = filepath.Join(s.dir, "no-issue.txt")
			return []string{"localize", "--repo", baseRepo, "--issue-file", s.vars["F"]}
		},
		code:  1,
		names: []string{"{{F}}"},
	},
	{
		name:  "localize-repo-traversal",
		input: "`locus localize --repo ../x`",
		want:  "exit 1 before any work: the name is refused (`part \"..\" is not allowed`)",
		setup: func(s *sandbox) []string { return []string{"localize", "--repo", "../x", "bug"} },
		code:  1,
		names: []string{`"../x"`, `part ".." is not allowed`},
	},
	{
		name:  "localize-ref-without-clone",
		input: "`locus localize --ref` of another commit in a data dir that has the store but not the clones",
		want:  "exit 1: `--ref` ranks a snapshot, built from the clone; the error names the repository and the commit and says `locus index` remakes the clone (a commit not in the repository: backlog-base-commit-missing)",
		setup: func(s *sandbox) []string {
			return []string{"localize", "--repo", baseRepo, "--ref", "deadbeef", "port is negative"}
		},
		code:  1,
		names: []string{baseRepo, "deadbeef", "no clone of", "locus index " + baseRepo},
	},
	{
		name:  "localize-unknown-method",
		input: "`locus localize --method bogus`",
		want:  "exit 2 before any work: the error names the flag, the value and the methods there are",
		setup: func(s *sandbox) []string {
			return []string{"localize", "--repo", baseRepo, "--method", "bogus", "port is negative"}
		},
		code:  2,
		names: []string{`--method "bogus"`, "sr, der, spisr, spider"},
	},
	{
		name:  "localize-invalid-utf8-issue",
		input: "an issue text with invalid UTF-8 bytes",
		want:  "exit 0; functions are ranked from the valid words",
		setup: func(s *sandbox) []string {
			return []string{"localize", "--repo", baseRepo, "--json", "bind \xff\xfe port \xc3( negative"}
		},
		check: func(s *sandbox, r result) {
			var out struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				s.t.Fatalf("localize --json: %v\n%s", err, r.stdout)
			}
			var ids []string
			for _, it := range out.Items {
				ids = append(ids, it.ID)
			}
			if !slices.Contains(ids, "app/server.py:Server.bind") {
				s.t.Errorf("ranked %v, want app/server.py:Server.bind among them", ids)
			}
		},
	},

	// Stores and the command line.
	{
		name:  "store-unknown-scheme",
		input: "`--store bogus://x`",
		want:  "exit 1: the error names the URL and the schemes locus knows",
		setup: func(s *sandbox) []string { return []string{"status", "--store", "bogus://x"} },
		code:  1,
		names: []string{"bogus://x", "unsupported scheme"},
	},
	{
		name:  "store-s3-no-bucket",
		input: "`--store s3://` with no bucket",
		want:  "exit 1: \"missing bucket name (want s3://bucket/prefix)\"",
		setup: func(s *sandbox) []string { return []string{"status", "--store", "s3://"} },
		code:  1,
		names: []string{"s3://", "missing bucket name"},
	},
	{
		name:  "store-url-missing-slashes",
		input: "`--store s3:/bucket/prefix` (a URL missing one slash) and `--store ::::`",
		want:  "exit 2 before any work: the store looks like a mistyped URL and is refused, instead of silently becoming a local directory of that name",
		setup: func(s *sandbox) []string {
			if r := s.locus("status", "--store", "::::"); r.code != 2 || !strings.Contains(r.stderr, `"::::"`) {
				s.t.Errorf("--store ::::: %v", r)
			}
			return []string{"index", "--store", "s3:/bucket/prefix", "st/r=" + s.simpleRepo("r").Dir}
		},
		code:  2,
		names: []string{`--store "s3:/bucket/prefix"`, "looks like a URL"},
		check: func(s *sandbox, r result) {
			for _, d := range []string{"s3:", "::::"} {
				if _, err := os.Stat(filepath.Join(s.dir, d)); err == nil {
					s.t.Errorf("a local directory %q was created", d)
				}
			}
		},
	},
	{
		name:  "embedder-url-without-dim",
		input: "`--embedder openai+http://host?model=m` without its dim",
		want:  "exit 2 before any work: the error names the URL and says dim is required; nothing is indexed",
		setup: func(s *sandbox) []string {
			return []string{"index", "--embedder", "openai+http://127.0.0.1:9?model=m", "emb/r=" + s.simpleRepo("r").Dir}
		},
		code:  2,
		names: []string{"openai+http://127.0.0.1:9?model=m", "dim is required"},
		check: func(s *sandbox, r result) { s.notIndexed("emb/r") },
	},
	{
		name:  "unknown-command",
		input: "`locus frobnicate`",
		want:  "exit 2: `unknown command \"frobnicate\"` and the usage",
		setup: func(s *sandbox) []string { return []string{"frobnicate"} },
		code:  2,
		names: []string{`"frobnicate"`},
	},
	{
		name:  "unknown-flag",
		input: "`locus index --bogus-flag PATH`",
		want:  "exit 2 before any work; the error names the flag",
		setup: func(s *sandbox) []string { return []string{"index", "--bogus-flag", s.simpleRepo("r").Dir} },
		code:  2,
		names: []string{"bogus-flag"},
		check: func(s *sandbox, r result) { s.notIndexed("r") },
	},

	// Flags are checked before any work starts.
	flagCase("flag-k-zero", []string{"localize", "--repo", baseRepo, "--k", "0", "bug"}, "--k 0", "want 1 to 2500"),
	flagCase("flag-k-negative", []string{"localize", "--repo", baseRepo, "--k", "-1", "bug"}, "--k -1", "want 1 to 2500"),
	flagCase("flag-k-past-a-part", []string{"backlog", "--k", "2501", "issues.jsonl"}, "--k 2501", "want 1 to 2500"),
	flagCase("flag-n-negative", []string{"localize", "--repo", baseRepo, "--n", "-5", "bug"}, "--n -5", "at least --k"),
	flagCase("flag-window-negative", []string{"index", "--window", "-1", "."}, "--window -1", "want 1 to 1000"),
	flagCase("flag-log-level-unknown", []string{"status", "--log-level", "shout"}, `--log-level "shout"`, "debug, info, warn, error"),
	flagCase("flag-git-backend-unknown", []string{"index", "--git-backend", "bogus", "."}, `--git-backend "bogus"`, "cat-file, go-git"),
	flagCase("flag-misspelt", []string{"index", "--windw", "3", "."}, "--windw", "did you mean --window?"),
	{
		name:  "command-misspelt",
		input: "`locus indx` (a misspelt command)",
		want:  "exit 2: `unknown command \"indx\"; did you mean index?`",
		setup: func(s *sandbox) []string { return []string{"indx"} },
		code:  2,
		names: []string{`"indx"`, "did you mean index?"},
	},
	{
		name:  "help-flag",
		input: "`locus -h` and `locus index -h`",
		want:  "exit 0 with the usage on stdout (help is not an error)",
		setup: func(s *sandbox) []string {
			if r := s.locus("-h"); r.code != 0 || !strings.Contains(r.stdout, "locus index") {
				s.t.Errorf("locus -h: %v", r)
			}
			return []string{"index", "-h"}
		},
		check: func(s *sandbox, r result) {
			if !strings.Contains(r.stdout+r.stderr, "-window int") {
				s.t.Errorf("locus index -h does not list the flags:\n%v", r)
			}
		},
	},

	// More damage and leftovers in the store.
	{
		name:  "garbage-manifest",
		input: "another repository's manifest.json overwritten with garbage, then `locus status`",
		want:  "exit 1; status still lists every readable repository and prints one DAMAGED line naming the damaged manifest",
		setup: func(s *sandbox) []string {
			writeFile(s, "data/store/repos/other/r/manifest.json", "{garbage")
			return []string{"status"}
		},
		code:  1,
		names: []string{"DAMAGED", "repos/other/r/manifest.json"},
		check: func(s *sandbox, r result) {
			if !strings.Contains(r.stdout, baseRepo) {
				s.t.Errorf("status no longer lists %s:\n%v", baseRepo, r)
			}
		},
	},
	{
		name:  "stale-temp-file",
		input: "a 1 MiB temporary file left in the store by a writer killed with kill -9",
		want:  "the next locus command removes it; stored data is untouched",
		setup: func(s *sandbox) []string {
			dead := exec.Command("true")
			if err := dead.Run(); err != nil {
				s.t.Fatal(err)
			}
			name := fileblob.TempFileName(dead.Process.Pid, "x1y2")
			s.vars["TMP"] = filepath.Join(s.store(), ".locus-tmp", name)
			writeFile(s, filepath.Join("data", "store", ".locus-tmp", name), strings.Repeat("x", 1<<20))
			return []string{"status"}
		},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(s.vars["TMP"]); err == nil {
				s.t.Errorf("the dead writer's temp file %s is still there", s.vars["TMP"])
			}
		},
	},

	// Issues and the models locus talks to.
	{
		name:  "issue-4mb",
		input: "a 4.3 MiB issue file",
		want:  "exit 0; one warning names the file and says only the first 256 KiB are used; the ranking is printed",
		setup: func(s *sandbox) []string {
			writeFile(s, "big-issue.txt", strings.Repeat("bind rejects a negative port ", 160000))
			s.vars["F"] = filepath.Join(s.dir, "big-issue.txt")
			return []string{"localize", "--repo", baseRepo, "--issue-file", s.vars["F"]}
		},
		names: []string{"{{F}}", "256.0 KiB"},
		check: func(s *sandbox, r result) {
			if n := strings.Count(r.stderr, "warning:"); n != 1 {
				s.t.Errorf("%d warnings, want 1:\n%v", n, r)
			}
			if !strings.Contains(r.stdout, "app/server.py:Server.bind") {
				s.t.Errorf("no ranking printed:\n%v", r)
			}
		},
	},
	{
		name:  "llm-garbage-answers",
		input: "an LLM that answers every neighbour selection with garbage (`]]] not json`)",
		want:  "exit 0 after bounded retries: one warning names the LLM, centers are marked \"selector unavailable\", and no garbage answer is cached",
		setup: func(s *sandbox) []string {
			chat := newChatServer(s.t, http.StatusOK, "]]] not json {{ at all")
			s.vars["LLM"] = chat.URL
			return []string{"localize", "--repo", indexPortRepo(s), "--llm", "openai+" + chat.URL + "/v1?model=m", "bind rejects a negative port"}
		},
		names: []string{"{{LLM}}", "unavailable"},
		check: func(s *sandbox, r result) {
			if n := strings.Count(r.stderr, "warning:"); n != 1 {
				s.t.Errorf("%d warnings, want 1:\n%v", n, r)
			}
			if !strings.Contains(r.stdout, "selector unavailable") {
				s.t.Errorf("centers are not marked:\n%v", r)
			}
			snap, err := snapshot(filepath.Join(s.store(), "llmcache"))
			if err != nil {
				s.t.Fatal(err)
			}
			if len(snap) > 0 {
				s.t.Errorf("garbage answers were cached: %v", slices.Sorted(maps.Keys(snap)))
			}
		},
	},
	{
		name:  "llm-garbage-then-healthy",
		input: "a localize run against an LLM answering garbage, then the same run against a healthy LLM",
		want:  "the second run asks the healthy LLM (nothing from the garbage run was cached) and its centers get selected neighbours, with no warning",
		setup: func(s *sandbox) []string {
			repo := indexPortRepo(s)
			bad := newChatServer(s.t, http.StatusOK, "I think the answer is: maybe?")
			if r := s.locus("localize", "--repo", repo, "--llm", "openai+"+bad.URL+"/v1?model=m", "bind rejects a negative port"); r.code != 0 || !strings.Contains(r.stdout, "selector unavailable") {
				s.t.Fatalf("garbage run: %v", r)
			}
			good := newChatServer(s.t, http.StatusOK, `{"ids": ["port.py:Port.open", "port.py:Port.parse"]}`)
			s.vars["GOOD"] = good.URL
			s.t.Cleanup(func() {
				if good.Calls() == 0 {
					s.t.Error("the healthy LLM was never asked: a garbage answer was served from the cache")
				}
			})
			return []string{"localize", "--repo", repo, "--llm", "openai+" + good.URL + "/v1?model=m", "bind rejects a negative port"}
		},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stdout+r.stderr, "unavailable") || strings.Contains(r.stderr, "warning:") {
				s.t.Errorf("the healthy run still reports the selector unavailable:\n%v", r)
			}
			if !strings.Contains(r.stdout, "port.py:Port.open") {
				s.t.Errorf("the selected neighbour is not ranked:\n%v", r)
			}
		},
	},
	{
		name:  "llm-hallucinated-ids",
		input: "an LLM that selects ids that are not candidates (`../../etc/passwd`, `nope.py:x`)",
		want:  "exit 0; the unknown ids are ignored: every ranked function exists in the repository",
		setup: func(s *sandbox) []string {
			chat := newChatServer(s.t, http.StatusOK, `{"ids": ["../../etc/passwd", "nope.py:x"]}`)
			return []string{"localize", "--json", "--repo", indexPortRepo(s), "--llm", "openai+" + chat.URL + "/v1?model=m", "bind rejects a negative port"}
		},
		check: func(s *sandbox, r result) {
			var out struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				s.t.Fatalf("localize --json: %v\n%s", err, r.stdout)
			}
			if len(out.Items) == 0 {
				s.t.Fatalf("nothing ranked:\n%v", r)
			}
			for _, it := range out.Items {
				if !strings.HasPrefix(it.ID, "port.py:Port.") {
					s.t.Errorf("ranked %q, which the repository does not have", it.ID)
				}
			}
		},
	},
	{
		name:  "embedder-500",
		input: "`--embedder` pointing at a server that answers every request with HTTP 500",
		want:  "exit 1 after bounded retries; the repository is listed as failed, the error names the embedder's URL and the HTTP status; nothing is published for it",
		setup: func(s *sandbox) []string {
			u := failingEmbedServer(s.t, http.StatusInternalServerError)
			s.vars["EMB"] = strings.TrimPrefix(u, "http://")
			return []string{"index", "--embedder", "openai+" + u + "?model=m&dim=8", "emb/r=" + s.simpleRepo("r").Dir}
		},
		code:  1,
		names: []string{"emb/r", "{{EMB}}", "500", "1 of 1 repositories failed"},
		check: func(s *sandbox, r result) { s.notIndexed("emb/r") },
	},
	// Bytes that are not UTF-8, and big files.
	{
		name:  "invalid-utf8-history",
		input: "a commit whose file path, message and author name are invalid UTF-8 (Latin-1 bytes)",
		want:  "indexed; every text column is valid UTF-8: the path holds U+FFFD for the bad byte and its exact bytes in path_raw; author and message, which have no encoding header, are read as Latin-1 (`José`, `résumé of café`)",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.WriteBytes("caf\xe9.py", []byte("def cafe():\n    return 1\n"))
			r.CommitAs("Jos\xe9", "jose@example.com", []byte("r\xe9sum\xe9 of caf\xe9\n"))
			return []string{"index", "utf8/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("utf8/r")
			key := m.Parts[0].Key
			for col, want := range map[string]string{"path": "caf\ufffd.py", "path_raw": "caf\xe9.py", "author_name": "José", "message": "résumé of café\n"} {
				if got := s.column(key, col); !slices.Contains(got, want) {
					s.t.Errorf("column %s = %q, want %q among them", col, got, want)
				}
			}
			for _, col := range []string{"path", "author_name", "message"} {
				for _, v := range s.column(key, col) {
					if !utf8.ValidString(v) {
						s.t.Errorf("column %s holds invalid UTF-8 %q", col, v)
					}
				}
			}
		},
	},
	{
		name:  "shallow-clone",
		input: "a shallow clone (`git clone --depth 1`) as the repository",
		want:  "exit 1; the repository is refused as a shallow clone (its history is incomplete), naming the path and suggesting `git fetch --unshallow`; nothing is published",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("full")
			r.Write(map[string]string{"more.py": "def more():\n    return 1\n"})
			r.Commit("more")
			shallow := filepath.Join(s.dir, "shallow")
			r.Git("clone", "-q", "--depth", "1", "file://"+r.Dir, shallow)
			s.vars["PATH"] = shallow
			return []string{"index", "shallow/r=" + shallow}
		},
		code:  1,
		names: []string{"shallow/r", "{{PATH}}", "shallow clone", "git fetch --unshallow"},
		check: func(s *sandbox, r result) { s.notIndexed("shallow/r") },
	},
	{
		name:  "file-50mb",
		input: "a 50 MB text file added in a commit",
		want:  "indexed; the commit row keeps the exact line counts and flags its diff as cut",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			line := strings.Repeat("x", 99) + "\n"
			r.Write(map[string]string{"big.txt": strings.Repeat(line, 500000), "lib.py": "def helper():\n    return 1\n"})
			r.Commit("add a big file")
			return []string{"index", "big/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			m := s.indexed("big/r")
			paths := s.column(m.Parts[0].Key, "path")
			i := slices.Index(paths, "big.txt")
			if i < 0 {
				s.t.Fatalf("commit rows %v lack big.txt", paths)
			}
			if adds := s.column(m.Parts[0].Key, "additions"); adds[i] != "500000" {
				s.t.Errorf("big.txt has %s additions, want 500000", adds[i])
			}
			if cut := s.column(m.Parts[0].Key, "diff_truncated"); cut[i] != "true" {
				s.t.Errorf("big.txt's diff_truncated is %s, want true", cut[i])
			}
		},
	},
}, backlogCases, partialCases, identCases, diskCases, loadCases, evalCases, schedCases, devCases, fileclassCases, rankCases, neuralCases, webuiCases, pagesCases, snapCases, workersCases, workerlossCases)

// indexPortRepo indexes a repository with one class of eight methods (enough
// for SpIDER to ask its selector about neighbours) and returns its name.
func indexPortRepo(s *sandbox) string {
	s.t.Helper()
	var b strings.Builder
	b.WriteString("class Port:\n")
	for _, m := range []string{"open", "close", "bind", "listen", "accept", "reject", "parse", "check"} {
		b.WriteString("    def " + m + "(self, port):\n        return port  # " + m + " the port\n\n")
	}
	r := s.repo("port")
	r.Write(map[string]string{"port.py": b.String()})
	r.Commit("ports")
	if res := s.locus("index", "llm/port="+r.Dir); res.code != 0 {
		s.t.Fatalf("index: %v", res)
	}
	return "llm/port"
}

// flagCase is a flag value locus must refuse before it starts anything.
func flagCase(name string, args []string, flagShown, why string) badCase {
	return badCase{
		name:  name,
		input: "`locus " + strings.Join(args, " ") + "`",
		want:  "exit 2 before any work: the error names the flag and value (`" + flagShown + "`) and says what is allowed (" + why + ")",
		setup: func(s *sandbox) []string { return args },
		code:  2,
		names: []string{flagShown, why},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.data, "temporal")); err == nil {
				s.t.Error("a refused flag still started the Temporal server")
			}
		},
	}
}

// nameCase is a repository name that must be refused before anything runs.
func nameCase(name, repoName, why string) badCase {
	shown := "repository name `" + repoName + "` (`" + repoName + "=PATH`)"
	if len(repoName) > 40 {
		shown = "repository name with a part of " + strconv.Itoa(strings.Index(repoName, "/")) + " characters (`nnn…n/x=PATH`)"
	}
	return badCase{
		name:  name,
		input: shown,
		want:  "exit 1 before any work: the error quotes the spec and says why (" + why + "); nothing is written",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			return []string{"index", repoName + "=" + r.Dir}
		},
		code:  1,
		names: []string{strings.ReplaceAll(repoName, `\`, `\\`), why},
		check: func(s *sandbox, r result) {
			entries, err := os.ReadDir(filepath.Join(s.store(), "repos"))
			if err != nil {
				s.t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != "fixtures" {
				s.t.Errorf("the store's repos/ holds %v, want only fixtures", entries)
			}
			if _, err := os.Stat(filepath.Join(s.data, "temporal")); err == nil {
				s.t.Error("a refused name still started the Temporal server")
			}
		},
	}
}

// fleetFailure is a repository that cannot be read: the fleet records it as
// failed with an error naming it, and nothing is published for it.
func fleetFailure(name, input string, path func(*sandbox) string, why string) badCase {
	return badCase{
		name:  name,
		input: input,
		want:  "exit 1 (\"1 of 1 repositories failed\"); the repository is listed as failed with an error naming the path (" + why + "); nothing is published for it",
		setup: func(s *sandbox) []string {
			p := path(s)
			s.vars["PATH"] = strings.TrimPrefix(p, "file://")
			return []string{"index", "bad/repo=" + p}
		},
		code:  1,
		names: []string{"bad/repo", "{{PATH}}", why, "1 of 1 repositories failed"},
		check: func(s *sandbox, r result) { s.notIndexed("bad/repo") },
	}
}

// syntaxCase is a file with a syntax error next to a good one: the graph is
// built, the functions that parse are in it, the report counts the file.
func syntaxCase(name, file, src, okID string) badCase {
	return badCase{
		name:  name,
		input: "a " + filepath.Ext(file) + " file with a syntax error (`" + file + "`)",
		want:  "indexed; the functions before the error are in the graph and the graph report counts the file under files_with_errors",
		setup: func(s *sandbox) []string {
			r := s.repo("r")
			r.Write(map[string]string{file: src, "good.py": "def good():\n    return 1\n"})
			r.Commit("broken file")
			return []string{"index", "syntax/r=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			ids := s.nodeIDs("syntax/r")
			for _, id := range []string{file, okID, "good.py:good"} {
				if !slices.Contains(ids, id) {
					s.t.Errorf("graph lacks %s: %v", id, ids)
				}
			}
			if rep := graphReport(s, s.indexed("syntax/r")); rep.FilesWithErrors != 1 {
				s.t.Errorf("graph report counts %d files with errors, want 1", rep.FilesWithErrors)
			}
		},
	}
}

type skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// graphReport reads the report.json stored beside the graph's nodes.
func graphReport(s *sandbox, m manifestJSON) (rep struct {
	FilesWithErrors int    `json:"files_with_errors"`
	Skipped         []skip `json:"skipped"`
}) {
	s.t.Helper()
	key := strings.TrimSuffix(m.Graph.NodesKey, "nodes.parquet") + "report.json"
	data, err := os.ReadFile(filepath.Join(s.store(), filepath.FromSlash(key)))
	if err != nil {
		s.t.Fatalf("graph report: %v", err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		s.t.Fatalf("graph report %s: %v", key, err)
	}
	return rep
}

// noSecret fails if the case's {{SECRET}} shows in the output or anywhere
// under the data dir.
func noSecret(s *sandbox, r result) {
	s.t.Helper()
	secret := s.vars["SECRET"]
	if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
		s.t.Errorf("the secret is printed:\n%v", r)
	}
	if st := s.locus("status", "--json"); strings.Contains(st.stdout, secret) {
		s.t.Errorf("locus status prints the secret:\n%s", st.stdout)
	}
	if hits := filesContaining(s.t, s.data, secret); len(hits) > 0 {
		s.t.Errorf("the secret is stored in %v", hits)
	}
}

func writeFile(s *sandbox, rel, content string) {
	s.t.Helper()
	p := filepath.Join(s.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// freePort is a TCP port nothing listens on.
func freePort(s *sandbox) string {
	s.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// killedFixes is how many fixes kill-9-during-triplets mines.
const killedFixes = 40

// tripletParts lists the triplets parts in the sandbox's store.
func tripletParts(s *sandbox) []string {
	parts, _ := filepath.Glob(filepath.Join(s.store(), "triplets", "*", "repo=*", "part-*.parquet"))
	return parts
}

// tripletQueries reads the query ids of a JSON Lines triplets export in
// the sandbox's directory dir, in file order.
func tripletQueries(s *sandbox, dir string) []string {
	data, err := os.ReadFile(filepath.Join(s.dir, dir, "records.jsonl"))
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			QueryID string `json:"query_id"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			s.t.Fatalf("%s: %v", dir, err)
		}
		out = append(out, rec.QueryID)
	}
	return out
}
