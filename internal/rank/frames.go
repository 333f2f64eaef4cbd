package rank

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Frame is one frame of a stack trace quoted in an issue: the function
// (Func, with the class or type that qualifies it when the trace says,
// Class), the file as the trace writes it ("" when it names none) and the
// line.
type Frame struct {
	Func, Class, File string
	Line              int
	// Depth counts from the innermost frame of its trace (1: where it
	// was raised or panicked).
	Depth int
}

// The traces StackFrames reads, each a regexp over the issue's text.
var (
	// Python: File "pkg/mod.py", line 12, in func
	pyFrame = regexp.MustCompile(`File "([^"\n]+)", line (\d+), in ([\w<>.]+)`)
	// Java, Kotlin, Scala: at pkg.Class$Inner.method(File.java:12)
	jvmFrame = regexp.MustCompile(`\bat ([\w$.]+)\.([\w$<>]+)\(([\w$.-]+\.\w+):(\d+)\)`)
	// JavaScript (V8): at Class.method (path/file.js:12:5), at path/file.js:12:5
	jsFrame = regexp.MustCompile(`\bat (?:(?:async |new )?([\w$.<>]+) \()?((?:[\w@$.~-]*/)*[\w@$.-]+\.[cm]?[jt]sx?):(\d+):\d+\)?`)
	// Go: pkg/path.(*Type).Method(args)\n\tpath/file.go:12 +0x1d
	goFrame = regexp.MustCompile(`(?m)^\s*((?:[\w.~-]+/)*[\w.~-]+\.[\w.()*\[\]]+)\([^\n]*\)\n\s+(\S+\.go):(\d+)`)
	// Rust backtrace: 3: crate::module::func\n   at ./src/x.rs:12:5, or a
	// bare location: panicked at src/x.rs:12:5
	rustFrame = regexp.MustCompile(`(?m)(?:^\s*\d+:\s+([\w:<>{} ]+?)(?:::h[0-9a-f]{16})?\s*\n)?\s*at \.?/?([\w./-]+\.rs):(\d+)`)
	// C, C++ (gdb): #0  0x000055 in func (args) at file.c:12
	gdbFrame = regexp.MustCompile(`(?m)^#\d+\s+(?:0x[0-9a-fA-F]+ in )?([\w:~<>]+) \([^\n]*\) at ([\w./+-]+):(\d+)`)
)

// StackFrames parses the stack-trace frames issue quotes: Python, Java (and
// other JVM languages), JavaScript, Go, Rust and gdb traces. Frames that
// name neither a function nor a file are left out.
func StackFrames(issue string) []Frame {
	var out []Frame
	// Python's innermost frame is its last; every other trace's is its
	// first.
	var py []Frame
	for _, m := range pyFrame.FindAllStringSubmatch(issue, -1) {
		fn, class := splitQualified(m[3], ".")
		py = append(py, Frame{Func: fn, Class: class, File: cleanPath(m[1]), Line: atoi(m[2])})
	}
	for i := range py {
		py[i].Depth = len(py) - i
	}
	out = append(out, py...)
	add := func(f []Frame) {
		for i := range f {
			f[i].Depth = i + 1
		}
		out = append(out, f...)
	}
	var jvm []Frame
	for _, m := range jvmFrame.FindAllStringSubmatch(issue, -1) {
		class := m[1]
		if i := strings.LastIndexByte(class, '.'); i >= 0 {
			class = class[i+1:]
		}
		if i := strings.LastIndexByte(class, '$'); i >= 0 {
			class = class[i+1:]
		}
		jvm = append(jvm, Frame{Func: m[2], Class: class, File: m[3], Line: atoi(m[4])})
	}
	add(jvm)
	var js []Frame
	for _, m := range jsFrame.FindAllStringSubmatch(issue, -1) {
		fn, class := splitQualified(m[1], ".")
		js = append(js, Frame{Func: fn, Class: class, File: cleanPath(m[2]), Line: atoi(m[3])})
	}
	add(js)
	var gf []Frame
	for _, m := range goFrame.FindAllStringSubmatch(issue, -1) {
		sym := m[1][strings.LastIndexByte(m[1], '/')+1:] // pkg.(*T).Method
		if i := strings.IndexByte(sym, '.'); i >= 0 {
			sym = sym[i+1:]
		}
		sym = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(sym)
		// Closures: Func.func1.2 is Func's.
		parts := strings.Split(sym, ".")
		for len(parts) > 1 && (strings.HasPrefix(parts[len(parts)-1], "func") || isDigits(parts[len(parts)-1])) {
			parts = parts[:len(parts)-1]
		}
		fn, class := splitQualified(strings.Join(parts, "."), ".")
		gf = append(gf, Frame{Func: fn, Class: class, File: cleanPath(m[2]), Line: atoi(m[3])})
	}
	add(gf)
	var rs []Frame
	for _, m := range rustFrame.FindAllStringSubmatch(issue, -1) {
		sym := m[1]
		if i := strings.IndexByte(sym, '<'); i >= 0 && !strings.HasPrefix(sym, "<") {
			sym = sym[:i] // generic arguments
		}
		sym = strings.Trim(strings.TrimSuffix(sym, "::{{closure}}"), "<> ")
		fn, class := splitQualified(sym, "::")
		rs = append(rs, Frame{Func: fn, Class: class, File: cleanPath(m[2]), Line: atoi(m[3])})
	}
	add(rs)
	var gdb []Frame
	for _, m := range gdbFrame.FindAllStringSubmatch(issue, -1) {
		fn, class := splitQualified(m[1], "::")
		gdb = append(gdb, Frame{Func: fn, Class: class, File: cleanPath(m[2]), Line: atoi(m[3])})
	}
	add(gdb)
	return out
}

// splitQualified cuts a qualified name at its last sep: the function and
// what qualifies it (its class, type or module), the latter's own last
// segment.
func splitQualified(q, sep string) (fn, class string) {
	i := strings.LastIndex(q, sep)
	if i < 0 {
		return q, ""
	}
	fn, class = q[i+len(sep):], q[:i]
	if j := strings.LastIndex(class, sep); j >= 0 {
		class = class[j+len(sep):]
	}
	return fn, class
}

func cleanPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	return strings.TrimPrefix(p, "./")
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// sameFile reports whether a trace's file names the repository file file:
// one is the other, or ends in it at a directory boundary (traces print
// absolute paths, or, as Java's, base names).
func sameFile(trace, file string) bool {
	if trace == "" || file == "" {
		return false
	}
	if trace == file {
		return true
	}
	long, short := trace, file
	if len(short) > len(long) {
		long, short = short, long
	}
	return strings.HasSuffix(long, "/"+short) && strings.Contains(path.Base(short), ".")
}

// frameMatch is how a function stands in frames: fileHit when a frame is in
// its file, funcHit when a frame names it (its own name, and its class when
// the frame names one) in its file or in no file, depth the innermost
// such frame's Depth (0: none).
func frameMatch(frames []Frame, id string) (fileHit, funcHit bool, depth int) {
	file, q := fileOf(id), qualifiedOf(id)
	fn, class := splitQualified(q, ".")
	for _, f := range frames {
		inFile := sameFile(f.File, file)
		fileHit = fileHit || inFile
		if f.Func != fn || f.File != "" && !inFile || f.Class != "" && class != "" && f.Class != class {
			continue
		}
		funcHit = true
		if depth == 0 || f.Depth < depth {
			depth = f.Depth
		}
	}
	return fileHit, funcHit, depth
}
