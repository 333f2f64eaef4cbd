package extract

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// C and C++ extraction share one walker: the C++ grammar's node types are a
// superset of C's. Rules beyond NAMING.md (the fixtures in
// testdata/c/ and testdata/cpp/ show each one):
//
//   - A function is a function_definition whose declarator, followed through
//     pointer, reference, parenthesized and attributed declarators, ends in a
//     function_declarator around a name; `int (*fp)(int) {…}` shapes that
//     end in a pointer name no function. Its span is the definition, or the
//     outermost template_declaration around it.
//   - Prototypes (declarations and field declarations whose declarator is a
//     function, outside function bodies), in-class method declarations and
//     `= default` / `= delete` members are Decls, named as the definition
//     would be; friend declarations are not. A Decl the file also defines is
//     left out. Pure virtual methods (`= 0`) are function definitions.
//   - struct/union (and in C++ class) specifiers with a body are classes,
//     named by their tag, or when anonymous by the typedef that names them;
//     a typedef'd one spans the whole typedef. Anonymous ones not in a
//     typedef are not definitions. Enums are not definitions. In C every tag
//     is a top-level name; in C++ nested classes are `Outer.Inner`, classes
//     local to a function `f.Local`.
//   - Function-like macros are functions named by the macro, never
//     qualified; object-like macros are not definitions.
//   - C++ names: namespaces qualify (`a.b.f`) but are not definitions;
//     anonymous and inline namespaces do not qualify. Out-of-line
//     definitions are named by their qualified declarator (`A.B.f`, template
//     arguments dropped: `A<T>::f` → `A.f`), inside the enclosing
//     namespaces. Destructors are `A.~A`; operators `operator==`,
//     `operator()`, `operator new[]`, conversions `operator bool`,
//     `operator const char*` (whitespace kept only between two word
//     characters). Explicit specialisations keep the bare template name and
//     take `#2` when it repeats.
//   - C++ overloads: a qualified name defined with two or more different
//     signatures in one file gets the signature on every definition:
//     `f(const T&,int)`, parameter names and default values removed,
//     whitespace kept only between two word characters, `...` for C
//     variadics; a method's trailing `const`, `volatile`, `&` and `&&` follow
//     the parenthesis (`get()const`), since `T& get()` / `const T& get()
//     const` pairs are the most common C++ overload. Definitions with equal
//     signatures (#if branches) keep the bare name and take `#2`.
//   - Calls: `f(x)` → "f"; `s->fn(x)`, `s.fn(x)` → "s.fn"; `a.b->c(x)` →
//     "a.b.c"; `ns::f()` → "ns.f"; `f<T>(x)` → "f"; `this->m()` → "this.m";
//     `(*p).f()` → "p.f"; `new Foo(x)` → "Foo". A callee that is not a name
//     chain reports the trailing field name (`a().b()` → "b", `(*s->fp)(x)` →
//     "fp", `s->fns[i](x)` → "fns") and is skipped when it has none
//     (`(*fp)(x)`, `fns[i](x)`, `f()(x)`). Calls at file or namespace level
//     come from "", in a class body from the class.
//   - Macro-heavy code: a line holding only an upper-case macro name
//     (`FMT_BEGIN_NAMESPACE`, `FMT_END_NAMESPACE`), an upper-case macro
//     between `class` and the class name (`class FMT_API error`), an
//     upper-case macro that begins a line and opens a block (`FMT_TRY {`)
//     and, in C++, upper-case macros before a constructor-like name
//     (`FMT_CONSTEXPR typed_node(…)`) are blanked before parsing (same bytes
//     and lines otherwise). A function_definition that declares no function
//     (a macro mistaken for a type before `namespace x {`) is walked as what
//     it contains; `namespace` written there still qualifies. `MACRO(name) {…}`
//     at file level is a function named by the argument (jemalloc's
//     TEST_BEGIN). Names that are keywords (`MACRO(x)\nif (…) {`) are not
//     functions; casts are not calls. In C, a macro used as a qualifier
//     before a declaration's type (`redisAtomic int x;`), an upper-case
//     export macro before one (`REDISMODULE_API void *(*f)(size_t)`) and
//     upper-case attribute macros between a declarator's parameters and its
//     `;` (`… REDISMODULE_ATTR;`) are blanked too (cQualifierMacro,
//     cTrailingAttributes).
//   - A file with syntax errors is also read with its conditional directives
//     blanked, with only each first #if branch kept, and (when cut short)
//     with closers appended; the reading that finds the most functions is
//     used (the file as written on a tie). Once the reading with every
//     branch kept finds more than the file as written, the other readings
//     of the file as written are not made; a reading with only first
//     branches that is the same text (no #else or #elif) is not made
//     either. Closers appended to a reading are read as an edit of that
//     reading's tree; to the reading with every branch kept, only where an
//     ERROR node reaches its end. ErrorNodes counts the file as written.
type cFamilyLang struct {
	name string
	exts []string
	cpp  bool
	lang func() *sitter.Language
}

func (l cFamilyLang) Name() string         { return l.name }
func (l cFamilyLang) Extensions() []string { return l.exts }

func (l cFamilyLang) Extract(ctx context.Context, path string, src []byte) (res *FileResult, err error) {
	defer func() {
		// A bug here must cost one file, not a worker.
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("extract %s %s: %w: %v", l.name, path, ErrExtractor, r)
		}
	}()
	parsed := CBlankMacroLines(src, l.cpp)
	err = parseTree(ctx, l.lang(), path, parsed, func(root *fnode) error {
		errs := errorsIn(root)
		res = l.walk(root, parsed)
		res.ErrorNodes, res.reads = errs, 1
		if errs == 0 {
			return nil
		}
		// Braces opened in one #if branch and closed in another leave
		// the rest of the file nested in one function or lost in ERROR
		// nodes. The file is also read with its conditional directives
		// blanked (every branch kept), and with only the first branch of
		// each kept (as ctags reads it); the reading that finds the most
		// functions wins, the file as written on a tie.
		// Only where a branch opens or closes more braces than it closes
		// or opens: the other readings cost parses, and most errors (a
		// macro tree-sitter cannot read) gain nothing from them.
		var alts [][]byte
		everyBranch := -1 // the index in alts of the reading keeping every branch
		if CUnbalancedBranches(parsed) {
			for _, firstOnly := range []bool{false, true} {
				if alt := cBlankConditionals(parsed, firstOnly); alt != nil {
					if firstOnly && everyBranch >= 0 && bytes.Equal(alt, alts[everyBranch]) {
						continue // no #else or #elif: the same reading
					}
					if !firstOnly {
						everyBranch = len(alts)
					}
					alts = append(alts, alt)
				}
			}
		}
		// Each reading of a file cut short (unclosed braces at its end) is
		// also read with closers appended; spans are then cut back to the
		// file's end.
		closed := func(r *fnode, base []byte) []byte {
			suffix := javaClosers(r)
			if !strings.Contains(suffix, "}") {
				return nil
			}
			fixed := make([]byte, 0, len(base)+1+len(suffix))
			return append(append(append(fixed, base...), '\n'), suffix...)
		}
		if c := closed(root, parsed); c != nil {
			alts = append(alts, c)
		}
		res.reread = len(alts) > 0
		// Once the reading keeping every branch finds more functions than
		// the file as written, the other readings of the file as written
		// (first branches only, closers appended) are not made; closers
		// appended to that reading still are. Over the whole histories of
		// jq, fmt and redis, every C/C++ file version with unbalanced
		// branches read both ways, the readings left out never found more
		// (docs/changelog.md, 2026-11-27), and they were a third of jq's build.
		written, settled, reads := len(alts), false, 1
		ahead := map[int]*FileResult{} // by index in alts: readings made ahead of their turn
		for i := 0; i < len(alts); i++ {
			if settled && i < written {
				continue
			}
			alt := alts[i]
			got := ahead[i]
			if got == nil {
				reads++
				// Each reading changes a few lines of the file, or
				// appends to it: tree-sitter reuses the rest of the first
				// reading.
				err := reparseTree(ctx, l.lang(), path, alt, root, func(r *fnode) error {
					got = l.walk(r, alt)
					if len(alt) > len(parsed) {
						cClamp(got, parsed)
						return nil
					}
					c := closed(r, alt)
					if c == nil || len(alts) >= 6 {
						return nil
					}
					if i == everyBranch && !errorAtEnd(r, alt) {
						// Closers appended to the reading with every
						// branch kept found more only where an ERROR node
						// reached its end: elsewhere tree-sitter had closed
						// what the branches left open itself (a MISSING
						// "}"). Over the whole C and C++ histories of jq,
						// redis, libuv, fmt and spdlog, all 26 of the 882
						// such readings that found more had one.
						return nil
					}
					// Closers appended to this reading are read now, as
					// an edit of its tree (only the end changes), and
					// weighed in their turn, after the readings before
					// them.
					reads++
					return reparseTree(ctx, l.lang(), path, c, r, func(rc *fnode) error {
						closedRes := l.walk(rc, c)
						cClamp(closedRes, parsed)
						alts = append(alts, c)
						ahead[len(alts)-1] = closedRes
						return nil
					})
				})
				if err != nil {
					return err
				}
			}
			if got.Functions() > res.Functions() {
				res = got
				res.ErrorNodes = errs
				res.reread = true
				settled = settled || i == everyBranch
			}
		}
		res.reads = reads
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// CUnbalancedBranches reports whether a branch of a conditional directive
// (#if, #ifdef, #ifndef, #elif, #else) opens more braces than it closes or
// the reverse, as in `#ifdef X\nvoid f(int a) {\n#else\nvoid f(void) {\n#endif`,
// which leaves tree-sitter, reading every branch, with braces that do not
// pair. Braces in comments, strings and character literals do not count.
func CUnbalancedBranches(src []byte) bool {
	var balance []int // per open #if, the braces of its current branch
	inComment := false
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		start = end + 1
		if t := bytes.TrimLeft(line, " \t"); !inComment && len(t) > 0 && t[0] == '#' {
			switch {
			case CDirective(t, "if"): // if, ifdef, ifndef
				balance = append(balance, 0)
			case CDirective(t, "el"): // else, elif, elifdef
				if len(balance) > 0 {
					if balance[len(balance)-1] != 0 {
						return true
					}
				}
			case CDirective(t, "endif"):
				if len(balance) > 0 {
					if balance[len(balance)-1] != 0 {
						return true
					}
					balance = balance[:len(balance)-1]
				}
			}
			continue
		}
		inComment, _ = cBraces(line, inComment, func(c byte) {
			if len(balance) > 0 {
				if c == '{' {
					balance[len(balance)-1]++
				} else {
					balance[len(balance)-1]--
				}
			}
		})
	}
	return false
}

// cClamp cuts spans reaching past src (into appended closers) back to the
// end of its last non-blank line.
func cClamp(r *FileResult, src []byte) {
	end := len(bytes.TrimRight(src, " \t\r\n\f"))
	for i := range r.Defs {
		d := &r.Defs[i]
		if d.EndByte <= end {
			continue
		}
		d.EndByte = end
		if d.StartByte > end {
			d.StartByte = end
			d.StartLine = 1 + bytes.Count(src[:end], []byte("\n"))
		}
		d.EndLine = d.StartLine + bytes.Count(src[d.StartByte:d.EndByte], []byte("\n"))
	}
}

func (l cFamilyLang) walk(root *fnode, src []byte) *FileResult {
	res := &FileResult{}
	defer bufferResult(res)()
	w := &cWalker{src: src, cpp: l.cpp, res: res, used: uniqueNames{}}
	if l.cpp {
		// Pass one finds which names are overloaded; pass two names. C has
		// no overloads, so it names in one pass.
		count := &cWalker{src: src, cpp: l.cpp, res: &FileResult{}, used: uniqueNames{}, collect: true,
			sigs: map[string]map[string]bool{}, declSigs: map[string]map[string]bool{}}
		count.walk(root, cScope{})
		w.sigs, w.declSigs = count.sigs, count.declSigs
	}
	w.walk(root, cScope{})
	w.finishDecls()
	return res
}

// cBlankConditionals returns src with its conditional directives (#if,
// #ifdef, #ifndef, #elif, #else, #endif and their continuation lines)
// blanked, and with firstOnly also the lines of every #elif/#else branch;
// nil when src has no conditional directive.
func cBlankConditionals(src []byte, firstOnly bool) []byte {
	var out []byte
	depth := 0     // #if nesting
	skipFrom := -1 // depth at which an #else branch being blanked began
	cont := false  // the previous line ended in a backslash inside a directive
	for start := 0; start < len(src); {
		end := start
		for end < len(src) && src[end] != '\n' {
			end++
		}
		line := src[start:end]
		blank := cont
		if !cont {
			t := bytes.TrimLeft(line, " \t")
			if len(t) > 0 && t[0] == '#' {
				d := bytes.TrimLeft(t[1:], " \t")
				word := d
				for i, c := range d {
					if !(c >= 'a' && c <= 'z') {
						word = d[:i]
						break
					}
				}
				switch string(word) {
				case "if", "ifdef", "ifndef":
					depth++
					blank = true
				case "elif", "else", "elifdef", "elifndef":
					blank = true
					if firstOnly && skipFrom < 0 {
						skipFrom = depth
					}
				case "endif":
					blank = true
					if skipFrom == depth {
						skipFrom = -1
					}
					if depth > 0 {
						depth--
					}
				}
			}
		}
		if skipFrom >= 0 && skipFrom <= depth {
			blank = true
		}
		cont = blank && len(line) > 0 && bytes.HasSuffix(bytes.TrimRight(line, " \t\r"), []byte("\\"))
		if blank {
			if out == nil {
				out = append([]byte(nil), src...)
			}
			for i := start; i < end; i++ {
				if out[i] != '\r' {
					out[i] = ' '
				}
			}
		}
		start = end + 1
	}
	return out
}

// CBlankMacroLines returns src with every line that holds only an upper-case
// identifier (FMT_BEGIN_NAMESPACE) blanked, or src itself when there is none.
// Such a line is a macro expanding to declarations or braces; left in, it
// reads as the type of the next declaration. In C it also blanks a macro
// qualifier before a declaration's type (cQualifierMacro).
func CBlankMacroLines(src []byte, cpp bool) []byte {
	if !cpp {
		// Macros standing for braces first: the rules below read the
		// braces.
		src = CWriteBraceMacros(src)
	}
	var out []byte
	blank := func(from, to int) {
		if out == nil {
			out = append([]byte(nil), src...)
		}
		for i := from; i < to; i++ {
			out[i] = ' '
		}
	}
	// Both patterns lie within a line: the regular expressions run only on
	// lines that can match (a tenth of a build's time when they ran over
	// whole files). A class macro needs a keyword followed by blanks and a
	// capital: such places are found in the whole file at once.
	classAt := cClassMacroCandidates(src)
	for start := 0; start < len(src); {
		end := start
		if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
			end += i
		} else {
			end = len(src)
		}
		line := src[start:end]
		a, b := start, end
		for a < b && (src[a] == ' ' || src[a] == '\t') {
			a++
		}
		for b > a && (src[b-1] == ' ' || src[b-1] == '\t' || src[b-1] == '\r') {
			b--
		}
		if cMacroName(src[a:b]) {
			blank(a, b)
		} else if k := cMacroBlock(src[a:b]); k > 0 {
			// FMT_TRY { … }: a macro opening a block statement reads as a
			// type with a broken initializer, and the function around it
			// ends there; blanked, the block is a compound statement.
			blank(a, a+k)
		}
		if !cpp {
			// In C only: C++'s own rules (below) already read fmt's
			// macros, and these would take FMT_CONSTEXPR and the like
			// out of places where its grammar reads them.
			if x, y := cQualifierMacro(src[a:b]); y > x {
				// redisAtomic int x;, REDISMODULE_API void *(*f)(size_t);
				// — a macro qualifier before a declaration's type.
				blank(a+x, a+y)
			}
			if x, y := cTrailingAttributes(src[a:b]); y > x {
				// int f(int) REDISMODULE_ATTR_PRINTF(1,2); — attribute
				// macros after a declarator.
				blank(a+x, a+y)
			}
		}
		for len(classAt) > 0 && classAt[0] < start {
			classAt = classAt[1:]
		}
		if len(classAt) > 0 && classAt[0] < end {
			// class FMT_API format_error : …: an export macro between the
			// keyword and the name reads as the name.
			for _, m := range cClassMacro.FindAllSubmatchIndex(line, -1) {
				if cMacroName(line[m[2]:m[3]]) {
					blank(start+m[2], start+m[3])
				}
			}
		}
		if cpp && cMayHaveCtorMacro(src[a:end]) {
			// FMT_CONSTEXPR typed_node(const Arg& arg) : value(arg) {}:
			// macros before a name with no return type (constructors) make
			// tree-sitter take the name for the type; blanked, the
			// constructor parses.
			for _, m := range cCtorMacros.FindAllSubmatchIndex(line, -1) {
				toks := bytes.Fields(line[m[2]:m[3]])
				all := len(toks) > 0
				for _, t := range toks {
					all = all && cMacroName(t)
				}
				if all {
					blank(start+m[2], start+m[3])
				}
			}
		}
		start = end + 1
	}
	if !cpp {
		if out == nil {
			return cStatementMacros(src, false)
		}
		return cStatementMacros(out, true)
	}
	if out == nil {
		return src
	}
	return out
}

// cStatementMacros returns C source src with what tree-sitter cannot read
// around macro calls mended, keeping every byte's line (NAMING.md); src
// itself when nothing changed, and edited in place when owned:
//   - the type given to va_arg is blanked: va_arg(ap, char*) → va_arg(ap);
//   - a macro call opening a block on an indented line ends as a statement:
//     run_with_period(100) { → run_with_period(100);{ (the blank before the
//     brace becomes the semicolon), so the block is a compound statement;
//     so does one before a call (run_with_period(100) f(); → …;f(););
//   - an upper-case macro call alone on an indented line, between
//     statements, gets a semicolon: the line moves left one column
//     (GET_NUMERIC_TYPE(prev));
//   - an upper-case macro call alone on a line at column 0 before a
//     declaration is blanked: an attribute (REDIS_NO_SANITIZE("address"));
//   - conditional directives among the elements of a list (each line of
//     the #if block ends with a comma, as does the line before it) are
//     blanked, every branch kept: tree-sitter reads no directive inside an
//     initializer.
func cStatementMacros(src []byte, owned bool) []byte {
	var out []byte
	edit := func() []byte {
		switch {
		case out != nil:
		case owned:
			out = src
		default:
			out = append([]byte(nil), src...)
		}
		return out
	}
	li := NewLineIndex(src)
	trimmed := func(k int) []byte { // as mended so far
		a, b := li.Bounds(k, len(src))
		if out != nil {
			return bytes.TrimSpace(out[a:b])
		}
		return bytes.TrimSpace(src[a:b])
	}
	// neighbour is the trimmed text of the nearest line from k in
	// direction d that is neither blank nor a comment, or nil: a comment
	// added or removed beside a line changes nothing of how it reads.
	neighbour := func(k, d int) []byte {
		inComment := false // inside a block comment, going back from its end or on from its start
		for k += d; k >= 0 && k < len(li); k += d {
			t := trimmed(k)
			switch open, close := bytes.HasPrefix(t, []byte("/*")), bytes.HasSuffix(t, []byte("*/")); {
			case inComment:
				inComment = !(d > 0 && bytes.Contains(t, []byte("*/")) || d < 0 && bytes.Contains(t, []byte("/*")))
			case len(t) == 0 || bytes.HasPrefix(t, []byte("//")) || open && close:
			case d > 0 && open || d < 0 && close:
				inComment = true
			default:
				return t
			}
		}
		return nil
	}
	for k := 0; k < len(li); k++ {
		a, b := li.Bounds(k, len(src))
		line := src[a:b]
		if bytes.IndexByte(line, '"') >= 0 {
			// "less than " STRINGIFY(LEN) " characters": a macro call
			// among a string's pieces loses its arguments; a macro's name
			// is a piece tree-sitter reads.
			afterString := k > 0 && bytes.HasSuffix(cCode(src[li[k-1]:a]), []byte(`"`))
			for _, at := range cStringMacroCalls(line, afterString) {
				o := edit()
				for x := a + at[0]; x < a+at[1]; x++ {
					o[x] = ' '
				}
			}
			if out != nil {
				line = out[a:b]
			}
		}
		if t := bytes.TrimSpace(line); bytes.HasPrefix(t, []byte("} typedef ")) && bytes.HasSuffix(t, []byte(";")) && cIdent(bytes.TrimSpace(t[len("} typedef "):len(t)-1])) {
			// } typedef clusterNodeFailReport; — typedef after the type,
			// which tree-sitter does not read: the struct's name stays.
			i := a + bytes.Index(line, []byte("typedef"))
			copy(edit()[i:], "       ")
			line = out[a:b]
		}
		for i := 0; ; {
			j := bytes.Index(line[i:], []byte("va_arg("))
			if j < 0 {
				break
			}
			i += j + len("va_arg(")
			if j := i - len("va_arg(") - 1; j >= 0 && cIdentByte(line[j]) {
				continue
			}
			if comma, close := cArgEnds(line, i); comma > 0 && close > comma {
				o := edit()
				for x := a + comma; x < a+close; x++ {
					o[x] = ' '
				}
			}
		}
		if out != nil {
			line = out[a:b] // with va_arg's type blanked
		}
		t := bytes.TrimSpace(line)
		lead := bytes.IndexFunc(line, func(r rune) bool { return r != ' ' && r != '\t' })
		if len(t) == 0 || t[0] == '#' {
			k2, list := cListConditional(src, li, k), true
			if k2 == k {
				k2, list = cChainConditional(src, li, k), false
			}
			if k2 > k {
				o := edit()
				for _, d := range cDirectiveLines(src, li, k, k2) {
					a, b := li.Bounds(d, len(src))
					for x := a; x < b; x++ {
						o[x] = ' '
					}
				}
				if list {
					k = k2
				}
			}
			continue
		}
		// } config_set_special_field("x") { — a macro in an else-if chain:
		// the same as a call opening a block, and nothing else.
		closing := len(t) > 2 && t[0] == '}' && (t[1] == ' ' || t[1] == '\t')
		if closing {
			lead += 2
			t = t[2:]
		}
		name, args := cCallShape(t)
		if name == "" && lead > 0 {
			// } config_set_bool_field(\n "rdbcompression", x) { — the same
			// with the arguments on the lines after.
			text := src
			if out != nil {
				text = out
			}
			if name, brace, end := cBlockCallAcross(text, a+lead, li, k); name != "" && !cKeywordOrType[name] && !cStatementWords[name] {
				cMendBlockCall(edit(), a+lead, len(name), brace)
				k = end
			}
			continue
		}
		if name == "" || cKeywordOrType[name] || cStatementWords[name] {
			continue
		}
		rest := bytes.TrimSpace(t[args:])
		if closing && !bytes.Equal(rest, []byte("{")) {
			continue
		}
		switch {
		case lead > 0 && len(rest) == 1 && rest[0] == '{':
			cMendBlockCall(edit(), a+lead, len(name), a+lead+len(t)-1)
		case lead > 0 && args < len(t) && (t[args] == ' ' || t[args] == '\t') && cCallStatement(rest) && !strings.HasPrefix(name, "__"):
			// run_with_period(1000) f(); — the same before a call.
			edit()[a+lead+args] = ';'
		case len(rest) != 0 || !cMacroName([]byte(name)):
		case lead > 0:
			prev, next := neighbour(k, -1), neighbour(k, 1)
			if len(prev) == 0 || !bytes.ContainsAny(prev[len(prev)-1:], ";{}") || len(next) == 0 || !(cIdentByte(next[0]) || next[0] == '}') {
				continue
			}
			o := edit()
			copy(o[a+lead-1:], t)
			o[a+lead-1+len(t)] = ';'
		default: // column 0
			next := neighbour(k, 1)
			if len(next) == 0 || !cIdentByte(next[0]) || next[0] >= '0' && next[0] <= '9' {
				continue
			}
			o := edit()
			for x := a; x < b; x++ {
				if o[x] != '\r' {
					o[x] = ' '
				}
			}
		}
	}
	if out == nil {
		return src
	}
	return out
}

// cBlockCallAcross reads text from at (on line k) as a call whose
// arguments end on one of the next four lines, followed there by `{`
// alone: the call's name, the brace's offset and the line; "" when text
// does not read so.
func cBlockCallAcross(text []byte, at int, li LineIndex, k int) (name string, brace, line int) {
	for n := k + 1; n <= k+4 && n < len(li); n++ {
		_, b := li.Bounds(n, len(text))
		name, after := cCallShape(text[at:b])
		if name == "" {
			continue
		}
		rest := bytes.TrimRight(text[at+after:b], " \t\r")
		if len(rest) == 0 && n+1 < len(li) { // the brace alone on the next line
			a2, b2 := li.Bounds(n+1, len(text))
			rest, n = bytes.TrimRight(text[b:b2], " \t\r"), n+1
			after = b - at
			if a2 != b+1 || len(rest) < 3 {
				return "", 0, 0
			}
		}
		if len(rest) == 0 || rest[len(rest)-1] != '{' || len(bytes.TrimSpace(rest)) != 1 {
			return "", 0, 0
		}
		return name, at + after + len(rest) - 1, n
	}
	return "", 0, 0
}

// cMendBlockCall mends a macro call opening a block, its name at o[at:]
// and its `{` at o[brace]: the blank before the brace becomes `;`, so the
// call is a statement and the block a compound statement; with no blank
// there, the name becomes `if`, and the arguments its condition.
func cMendBlockCall(o []byte, at, name, brace int) {
	if c := o[brace-1]; c == ' ' || c == '\t' {
		o[brace-1] = ';'
		return
	}
	if name < 2 {
		return
	}
	copy(o[at:], "if")
	for x := at + 2; x < at+name; x++ {
		o[x] = ' '
	}
}

// cBraceMacros are the object-like macros src defines as braces, `;` and
// `else` alone, no longer than their names (#define config_set_else }
// else): by name, what they stand for.
func cBraceMacros(src []byte) map[string][]byte {
	var m map[string][]byte
	for i := 0; ; {
		j := bytes.Index(src[i:], []byte("#define "))
		if j < 0 {
			return m
		}
		start := bytes.LastIndexByte(src[:i+j], '\n') + 1
		i += j + len("#define ")
		if len(bytes.TrimLeft(src[start:i-len("#define ")], " \t")) != 0 {
			continue // not a directive: in a comment or a string
		}
		e := bytes.IndexByte(src[i:], '\n')
		if e < 0 {
			e = len(src) - i
		}
		line := bytes.TrimSpace(src[i : i+e])
		n := 0
		for n < len(line) && cIdentByte(line[n]) {
			n++
		}
		if n == 0 || n == len(line) || line[n] == '(' {
			continue
		}
		repl := bytes.TrimSpace(line[n:])
		if len(repl) <= n && bytes.ContainsAny(repl, "{}") && cBracesOnly(repl) {
			if m == nil {
				m = map[string][]byte{}
			}
			m[string(line[:n])] = repl
		}
	}
}

// CWriteBraceMacros returns C source src with what its cBraceMacros stand
// for written over their names, outside directives (src itself when it
// defines none): a statement left open or closed by a macro would
// otherwise lose every brace after it. A part of src read alone (a body, a
// run of members) is cut from what this returns, so that it reads as in
// src.
func CWriteBraceMacros(src []byte) []byte {
	m := cBraceMacros(src)
	if len(m) == 0 {
		return src
	}
	out := append([]byte(nil), src...)
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n') + start
		if end < start {
			end = len(src)
		}
		if line := src[start:end]; !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			for name, repl := range m {
				for _, at := range cWordsIn(line, name) {
					at += start
					copy(out[at:at+len(name)], repl)
					for x := at + len(repl); x < at+len(name); x++ {
						out[x] = ' '
					}
				}
			}
		}
		start = end + 1
	}
	return out
}

// cBracesOnly reports whether t holds only braces, `;`, blanks and the
// word else.
func cBracesOnly(t []byte) bool {
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '{' || c == '}' || c == ';' || c == ' ' || c == '\t':
		case bytes.HasPrefix(t[i:], []byte("else")) && (i+4 == len(t) || !cIdentByte(t[i+4])) && (i == 0 || !cIdentByte(t[i-1])):
			i += 3
		default:
			return false
		}
	}
	return true
}

// cStringMacroCalls returns the arguments, as offsets in line, of the
// calls (macros', as nothing else can be there) that stand between two
// pieces of a string: after
// a `"` (or first on the line, when afterString: the line before ended
// with one) and before another.
func cStringMacroCalls(line []byte, afterString bool) [][2]int {
	var at [][2]int
	var last byte // the last byte before i that is not blank
	if afterString {
		last = '"'
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if last == '"' && cIdentStart(c) && (i == 0 || !cIdentByte(line[i-1])) {
			name, after := cCallShape(line[i:])
			if name != "" && !cKeywordOrType[name] && bytes.HasPrefix(bytes.TrimLeft(line[i+after:], " \t"), []byte(`"`)) {
				at = append(at, [2]int{i + len(name), i + after})
				i += after - 1
				last = ')'
				continue
			}
		}
		if c != ' ' && c != '\t' {
			last = c
		}
	}
	return at
}

// cIdent reports whether t is one identifier.
func cIdent(t []byte) bool {
	if len(t) == 0 || !cIdentStart(t[0]) {
		return false
	}
	for _, c := range t {
		if !cIdentByte(c) {
			return false
		}
	}
	return true
}

// cWordsIn returns the offsets in line of word standing alone (not part
// of a longer identifier).
func cWordsIn(line []byte, word string) []int {
	var at []int
	for i := 0; ; {
		j := bytes.Index(line[i:], []byte(word))
		if j < 0 {
			return at
		}
		j += i
		i = j + len(word)
		if (j == 0 || !cIdentByte(line[j-1])) && (i == len(line) || !cIdentByte(line[i])) {
			at = append(at, j)
		}
	}
}

// cCallStatement reports whether t is a call ending a statement: f(x);.
func cCallStatement(t []byte) bool {
	name, after := cCallShape(t)
	return name != "" && after == len(t)-1 && t[after] == ';' && !cKeywordOrType[name] && !cStatementWords[name]
}

// cStatementWords are C's keywords that take parentheses and may precede a
// block, never macro calls.
var cStatementWords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true,
	"sizeof": true, "defined": true, "_Alignof": true, "alignof": true}

func cIdentByte(c byte) bool { return cIdentStart(c) || c >= '0' && c <= '9' }

// cCallShape reads t as an identifier and its parenthesized arguments: the
// identifier and the offset after the closing parenthesis; "" when t does
// not begin so (or the parentheses do not close in t, or hold a string or
// character the count could misread).
func cCallShape(t []byte) (name string, after int) {
	i := 0
	for i < len(t) && cIdentByte(t[i]) {
		i++
	}
	if i == 0 || t[0] >= '0' && t[0] <= '9' || i == len(t) || t[i] != '(' {
		return "", 0
	}
	depth := 0
	for j := i; j < len(t); j++ {
		switch t[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return string(t[:i]), j + 1
			}
		case '\'', '/':
			return "", 0
		case '"':
			e := bytes.IndexByte(t[j+1:], '"')
			if e < 0 || bytes.IndexByte(t[j+1:j+1+e], '\\') >= 0 {
				return "", 0
			}
			j += e + 1
		}
	}
	return "", 0
}

// cArgEnds finds, in line from offset i (just inside a call's parenthesis),
// the comma after the first argument and the closing parenthesis; 0, 0
// when either is not on the line or the arguments hold a string.
func cArgEnds(line []byte, i int) (comma, close int) {
	depth := 0
	for j := i; j < len(line); j++ {
		switch line[j] {
		case '(', '[':
			depth++
		case ']':
			depth--
		case ')':
			if depth == 0 {
				return comma, j
			}
			depth--
		case ',':
			if depth == 0 && comma == 0 {
				comma = j
			}
		case '"', '\'':
			return 0, 0
		}
	}
	return 0, 0
}

// cListConditional reports, for a conditional directive on line k, the
// line of its #endif when the conditional stands among a list's elements
// or a string's pieces: the line before it and every line inside it
// (directives aside) end with a comma, or they end with `"` and the lines
// inside begin with one; k otherwise.
func cListConditional(src []byte, li LineIndex, k int) int {
	line := func(j int) []byte { a, b := li.Bounds(j, len(src)); return src[a:b] }
	t := bytes.TrimSpace(line(k))
	if !CDirective(t, "if") {
		return k
	}
	prev := k - 1
	var end byte
	for ; prev >= 0; prev-- {
		if p := cCode(line(prev)); len(p) > 0 && p[0] != '#' {
			if end = p[len(p)-1]; end != ',' && end != '"' {
				return k
			}
			break
		}
	}
	if prev < 0 {
		return k
	}
	depth := 0
	for j := k; j < len(li); j++ {
		l := cCode(line(j))
		switch {
		case len(l) == 0:
		case l[0] == '#':
			if l[len(l)-1] == '\\' {
				return k // a directive going on to the next line
			}
			if CDirective(l, "if") {
				depth++
			} else if CDirective(l, "endif") {
				if depth--; depth == 0 {
					return j
				}
			}
		case l[len(l)-1] != end || end == '"' && l[0] != '"':
			return k
		}
	}
	return k
}

// cChainConditional reports, for a conditional directive on line k, the
// line of its #endif when every branch of the conditional continues an
// if-else chain, `} else if (x) {`: it closes a brace before it opens one,
// and leaves as many open as it found (nothing else nested in it); k
// otherwise. tree-sitter reads no directive that cuts a statement so.
func cChainConditional(src []byte, li LineIndex, k int) int {
	if !CDirective(bytes.TrimSpace(src[li[k]:]), "if") {
		return k
	}
	for j := k + 1; j < len(li); j++ { // its first line of code must close a brace
		a, b := li.Bounds(j, len(src))
		t := bytes.TrimSpace(src[a:b])
		if len(t) == 0 || t[0] == '*' || bytes.HasPrefix(t, []byte("//")) || bytes.HasPrefix(t, []byte("/*")) {
			continue
		}
		if t[0] != '}' {
			return k
		}
		break
	}
	depth, low, code, inComment := 0, 0, false, false
	branch := func() bool { ok := code && depth == 0 && low < 0; depth, low, code = 0, 0, false; return ok }
	nested := 0 // conditionals open inside, each with one branch
	for j := k + 1; j < len(li); j++ {
		a, b := li.Bounds(j, len(src))
		line := src[a:b]
		if t := bytes.TrimSpace(line); !inComment && len(t) > 0 && t[0] == '#' {
			switch {
			case t[len(t)-1] == '\\' || nested > 0 && CDirective(t, "el"):
				return k
			case CDirective(t, "if"):
				nested++
			case nested > 0 && CDirective(t, "endif"):
				nested--
			case CDirective(t, "el"):
				if !branch() {
					return k
				}
			case CDirective(t, "endif"):
				if !branch() {
					return k
				}
				return j
			}
			continue
		}
		var ok bool
		if inComment, ok = cBraces(line, inComment, func(c byte) {
			code = true
			if c == '{' {
				depth++
			} else {
				depth--
				low = min(low, depth)
			}
		}); !ok {
			return k
		}
	}
	return k
}

// cBraces calls brace for each brace of a line of C outside comments,
// strings and characters; inComment says whether the line begins in a
// comment, and the result whether it ends in one. ok is false when a
// string or character does not end on the line.
func cBraces(line []byte, inComment bool, brace func(c byte)) (bool, bool) {
	for i := 0; i < len(line); i++ {
		if inComment {
			e := bytes.Index(line[i:], []byte("*/"))
			if e < 0 {
				return true, true
			}
			i += e + 1
			inComment = false
			continue
		}
		switch c := line[i]; c {
		case '{', '}':
			brace(c)
		case '/':
			if i+1 < len(line) && line[i+1] == '/' {
				return false, true
			}
			if i+1 < len(line) && line[i+1] == '*' {
				inComment = true
				i++
			}
		case '"', '\'':
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return false, false
			}
			i = j
		}
	}
	return inComment, true
}

// cCode is line trimmed, without a comment closing it (x, /* y */ is x,).
func cCode(line []byte) []byte {
	t := bytes.TrimSpace(line)
	if bytes.HasSuffix(t, []byte("*/")) {
		if i := bytes.LastIndex(t, []byte("/*")); i > 0 {
			t = bytes.TrimSpace(t[:i])
		}
	}
	return t
}

// CDirective reports whether trimmed line t is a directive whose word
// begins with kw (#if, #ifdef, #ifndef for "if"), spaces after # allowed.
func CDirective(t []byte, kw string) bool {
	if len(t) == 0 || t[0] != '#' {
		return false
	}
	return bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t"), []byte(kw))
}

// cDirectiveLines are the lines from k to end holding a directive.
func cDirectiveLines(src []byte, li LineIndex, k, end int) []int {
	var ds []int
	for j := k; j <= end; j++ {
		if a, b := li.Bounds(j, len(src)); bytes.HasPrefix(bytes.TrimSpace(src[a:b]), []byte("#")) {
			ds = append(ds, j)
		}
	}
	return ds
}

// cClassMacroCandidates are the offsets, in order, of each class, struct
// or union in src followed by blanks and a capital: where cClassMacro can
// match.
func cClassMacroCandidates(src []byte) []int {
	var at []int
	for _, kw := range [...]string{"class", "struct", "union"} {
		for i := 0; ; {
			k := bytes.Index(src[i:], []byte(kw))
			if k < 0 {
				break
			}
			i += k + len(kw)
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
			if j > i && j < len(src) && src[j] >= 'A' && src[j] <= 'Z' {
				at = append(at, i-len(kw))
			}
		}
	}
	slices.Sort(at)
	return at
}

// cMayHaveCtorMacro: the line (from its first non-blank) can match
// cCtorMacros: after any constexpr, inline, explicit and static, a word of
// capitals, digits and underscores starting with a capital, followed by a
// blank, with a "(" further on.
func cMayHaveCtorMacro(rest []byte) bool {
	for {
		i := 0
		for i < len(rest) && rest[i] != ' ' && rest[i] != '\t' {
			i++
		}
		w := rest[:i]
		switch string(w) {
		case "constexpr", "inline", "explicit", "static":
			rest = bytes.TrimLeft(rest[i:], " \t")
			continue
		}
		if i == len(rest) || len(w) == 0 || w[0] < 'A' || w[0] > 'Z' {
			return false
		}
		for _, c := range w {
			if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
		return bytes.IndexByte(rest[i:], '(') >= 0
	}
}

var cCtorMacros = regexp.MustCompile(`^[ \t]*(?:(?:constexpr|inline|explicit|static)[ \t]+)*((?:[A-Z][A-Z0-9_]*[ \t]+)+)(?:(?:constexpr|inline|explicit)[ \t]+)*~?[A-Za-z_]\w*[ \t]*\(`)

var cClassMacro = regexp.MustCompile(`\b(?:class|struct|union)[ \t]+([A-Z][A-Z0-9_]*)[ \t]+[A-Za-z_]\w*[ \t]*(?:final[ \t]*)?[:{]`)

// cQualifierMacro finds, in a line of C with its leading and trailing blanks
// trimmed, a macro used as a qualifier before a declaration's type. After
// storage-class keywords (and `inline`) comes an identifier X that is no
// keyword or built-in type, then either
//   - at least two words (a type and the declared name, with `*` allowed
//     between them) and one of `;`, `=`, `[`, `,` or `:`, as in
//     `redisAtomic int x;` or `static redisAtomic size_t n = 0;` (with no
//     `inline` before X): no C declaration has two words after a type; or,
//     when X is an upper-case macro (cMacroName), as export macros are,
//   - a keyword or built-in type, or a word followed by another word, a `*`
//     or `(*`: `REDISMODULE_API void *(*f)(size_t);`, `FOO_API
//     RedisModuleCommand *(*g)(void);`, `REDISMODULE_API mstime_t
//     (*h)(void);`, `static FOO_INLINE int k(void) {`. Were X the type, the
//     declaration could not go on so (mstime_t would be a function whose
//     parameters begin with `*`).
//
// tree-sitter takes X for the type and fails on the rest. It returns X's
// bounds in line, or 0, 0.
func cQualifierMacro(line []byte) (from, to int) {
	if len(line) == 0 || !cIdentStart(line[0]) {
		return 0, 0 // the common case: nothing to look at
	}
	i := 0
	word := func(stars bool) (int, int) { return cNextWord(line, &i, stars) }
	x, y := word(true)
	inline := false
	for cStorageClass[string(line[x:y])] || string(line[x:y]) == "inline" {
		inline = inline || string(line[x:y]) == "inline"
		x, y = word(true)
	}
	if y == x || cKeywordOrType[string(line[x:y])] || y == len(line) || line[y] != ' ' && line[y] != '\t' {
		return 0, 0
	}
	if cMacroName(line[x:y]) && line[x-min(x, 1)] != '*' && cExportShape(line, y) {
		return x, y
	}
	if inline {
		return 0, 0
	}
	words := 0
	for {
		s, e := word(true)
		if e == s {
			break
		}
		words++
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if words < 2 || i == len(line) || !strings.ContainsRune(";=[,:", rune(line[i])) {
		return 0, 0
	}
	return x, y
}

// cExportShape reports whether line goes on from i, after an upper-case
// qualifier macro, with a keyword or built-in type, or with a word followed
// by another word, a `*` or `(*` (cQualifierMacro).
func cExportShape(line []byte, i int) bool {
	ws, we := cNextWord(line, &i, false)
	if we == ws {
		return false
	}
	if cKeywordOrType[string(line[ws:we])] {
		return true
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i < len(line) && (line[i] == '*' || cIdentStart(line[i])) {
		return true
	}
	if i < len(line) && line[i] == '(' {
		rest := bytes.TrimLeft(line[i+1:], " \t")
		return len(rest) > 0 && rest[0] == '*'
	}
	return false
}

func cIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// cStorageClass are the keywords cQualifierMacro steps over before a
// qualifier macro (with `inline`).
var cStorageClass = map[string]bool{"static": true, "extern": true, "register": true, "const": true,
	"volatile": true, "_Thread_local": true, "__thread": true}

// cKeywordOrType are C's keywords and the types tree-sitter's C grammar
// reads as built in: a word cQualifierMacro never takes for a macro.
var cKeywordOrType = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`auto break case char const continue default do double else enum extern
		float for goto if inline int long register restrict return short signed sizeof static struct switch
		typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
		_Imaginary _Noreturn _Static_assert _Thread_local __thread __inline __inline__ __restrict __restrict__
		__volatile__ __asm__ asm __attribute__ __extension__ typeof __typeof__ bool size_t ssize_t ptrdiff_t
		intptr_t uintptr_t charptr_t nullptr_t max_align_t int8_t int16_t int32_t int64_t uint8_t uint16_t
		uint32_t uint64_t char8_t char16_t char32_t`) {
		m[w] = true
	}
	return m
}()

// cTrailingAttributes finds, in a line with its leading and trailing blanks
// trimmed, the upper-case macros (cMacroName, each with or without an
// argument list) between a declarator's closing parenthesis and the `;`
// that ends the line: `int f(int) REDISMODULE_ATTR REDISMODULE_ATTR_PRINTF(3,4);`.
// No C declaration has a word there. A line with `=` is left alone: a
// call after a cast (`x = (T)MACRO(y);`) ends the same way. It returns
// their bounds in line, or 0, 0.
func cTrailingAttributes(line []byte) (from, to int) {
	n := len(line)
	if n < 2 || line[n-1] != ';' || line[0] == '#' || bytes.IndexByte(line, '=') >= 0 {
		return 0, 0 // not a C declaration of a function (`x = (T)MACRO(y);`)
	}
	// wordBefore is the start of the identifier ending at k (k+1 when none).
	wordBefore := func(k int) int {
		for k >= 0 && (cIdentStart(line[k]) || line[k] >= '0' && line[k] <= '9') {
			k--
		}
		return k + 1
	}
	k, end := n-2, -1
	from = -1
	for {
		for k >= 0 && (line[k] == ' ' || line[k] == '\t') {
			k--
		}
		if k < 0 {
			return 0, 0
		}
		if end < 0 {
			end = k + 1
		}
		if line[k] != ')' {
			w := wordBefore(k)
			if !cMacroName(line[w : k+1]) {
				return 0, 0
			}
			from, k = w, w-1
			continue
		}
		// An argument list: an attribute's, or the declarator's own.
		depth := 0
		open := k
		for ; open >= 0; open-- {
			switch line[open] {
			case ')':
				depth++
			case '(':
				depth--
			case '"', '\'':
				return 0, 0
			}
			if depth == 0 {
				break
			}
		}
		if open < 0 {
			return 0, 0
		}
		k = open - 1
		for k >= 0 && (line[k] == ' ' || line[k] == '\t') {
			k--
		}
		if w := wordBefore(k); k >= 0 && cMacroName(line[w:k+1]) {
			from, k = w, w-1
			continue
		}
		// The declarator's parameter list follows its name, or the
		// parenthesised declarator of a function pointer.
		if from < 0 || k < 0 {
			return 0, 0
		}
		if line[k] == ')' {
			return from, end
		}
		// A name, and not `if (x) FOO(y);` or `return (x) FOO;`.
		if w := wordBefore(k); w == k+1 || cKeywordOrType[string(line[w:k+1])] {
			return 0, 0
		}
		return from, end
	}
}

// cNextWord skips the blanks (and, with stars, the `*`s) from line[*i] on
// and returns the bounds of the identifier there (empty when none), *i
// moved past it.
func cNextWord(line []byte, i *int, stars bool) (from, to int) {
	k := *i
	for k < len(line) && (line[k] == ' ' || line[k] == '\t' || stars && line[k] == '*') {
		k++
	}
	from = k
	if k < len(line) && cIdentStart(line[k]) {
		for k < len(line) && (cIdentStart(line[k]) || line[k] >= '0' && line[k] <= '9') {
			k++
		}
	}
	*i = k
	return from, k
}

// cMacroBlock is the length of the upper-case macro name (cMacroName)
// that line begins with when a block's `{` follows it, 0 otherwise.
func cMacroBlock(line []byte) int {
	k := 0
	for k < len(line) && (line[k] == '_' || line[k] >= 'A' && line[k] <= 'Z' || line[k] >= '0' && line[k] <= '9') {
		k++
	}
	if !cMacroName(line[:k]) {
		return 0
	}
	if rest := bytes.TrimLeft(line[k:], " \t"); len(rest) == 0 || rest[0] != '{' {
		return 0
	}
	return k
}

// cMacroName: an identifier of upper-case letters, digits and underscores
// with at least one underscore and one letter (FMT_BEGIN_NAMESPACE, not
// BEGIN or X).
func cMacroName(s []byte) bool {
	if len(s) < 3 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	under, letter := false, false
	for _, c := range s {
		switch {
		case c == '_':
			under = true
		case c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return under && letter
}

type cWalker struct {
	src  []byte
	cpp  bool
	res  *FileResult
	used uniqueNames // definition names given out, for #n
	// collect is pass one: it records signatures and emits nothing.
	collect bool
	// sigs are the signatures each qualified function name is defined
	// with; declSigs those it is declared or defined with.
	sigs, declSigs map[string]map[string]bool
	decls          []string
}

// cScope is what a node needs to know about what surrounds it.
type cScope struct {
	from   string // innermost enclosing definition, for calls
	prefix string // qualifies names defined here (namespaces, classes, functions)
	inFunc bool   // inside a function body
	outer  string // prefix outside the innermost function (a function_definition inside a body is a parse artefact)
	span   *fnode // outermost template_declaration around the node, if any
}

func (s cScope) qualify(name string) string {
	if s.prefix == "" {
		return name
	}
	return s.prefix + "." + name
}

// def records a definition spanning from start (a template_declaration, or
// n) to n's end, trailing whitespace left out.
func (w *cWalker) def(name, kind string, n, start *fnode) string {
	name = w.used.add(name)
	if w.collect {
		return name
	}
	if start == nil {
		start = n
	}
	sb, eb := int(start.StartByte()), int(n.EndByte())
	for eb > sb && (w.src[eb-1] == '\n' || w.src[eb-1] == '\r' || w.src[eb-1] == ' ' || w.src[eb-1] == '\t') {
		eb--
	}
	sl := int(start.StartPoint().Row) + 1
	el := sl
	for _, c := range w.src[sb:eb] {
		if c == '\n' {
			el++
		}
	}
	d := Def{Name: name, Kind: kind, StartLine: sl, EndLine: el, StartByte: sb, EndByte: eb}
	if kind == KindFunction {
		body := n
		if n.Type() != "compound_statement" {
			body = n.ChildByFieldName("body")
		}
		d.BodyStart, d.BodyEnd = bracedBody(body)
	}
	w.res.Defs = append(w.res.Defs, d)
	return name
}

func (w *cWalker) call(from, callee string, n *fnode) {
	if callee == "" || w.collect {
		return
	}
	w.res.Calls = append(w.res.Calls, Call{From: from, Callee: callee, Line: int(n.StartPoint().Row) + 1})
}

func (w *cWalker) walkChildren(n *fnode, sc cScope) {
	sc.span = nil
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if n.namedToken(i) { // walk does nothing with a token
			continue
		}
		c := n.NamedChild(i)
		if c.Type() == "ERROR" {
			if next := n.NamedChild(i + 1); next != nil && next.Type() == "compound_statement" && w.recover(c, next, sc) {
				i++
				continue
			}
		}
		w.walk(c, sc)
	}
}

// recover handles a function whose header tree-sitter could not attach to
// its body: an ERROR ending in a function_declarator (after its type),
// followed by a compound_statement. The definition spans from the type to
// the body; what comes before the type in the ERROR is walked as usual.
func (w *cWalker) recover(e, body *fnode, sc cScope) bool {
	k := int(e.NamedChildCount())
	if k == 0 {
		return false
	}
	decl := e.NamedChild(k - 1)
	nameNode, isFunc := w.declName(decl)
	if !isFunc || nameNode == nil {
		return false
	}
	_, qual := w.funcName(nameNode)
	if qual == "" {
		return false
	}
	start := k - 1
	for start > 0 {
		switch e.NamedChild(start - 1).Type() {
		case "primitive_type", "type_identifier", "sized_type_specifier", "storage_class_specifier",
			"type_qualifier", "struct_specifier", "enum_specifier", "union_specifier", "attribute_specifier",
			"qualified_identifier", "template_type", "placeholder_type_specifier", "virtual", "function_specifier":
			start--
			continue
		}
		break
	}
	for i := 0; i < start; i++ {
		w.walk(e.NamedChild(i), sc)
	}
	if sc.inFunc {
		sc.prefix = sc.outer
	}
	full := sc.qualify(qual)
	sig := w.signature(decl)
	name := w.overloadName(full, sig)
	name = w.def(name, KindFunction, body, e.NamedChild(start))
	inner := cScope{from: name, prefix: name, inFunc: true, outer: sc.prefix}
	if !w.cpp {
		inner.prefix = ""
	}
	w.walkDeclarator(decl, inner)
	if !w.collect || w.mayDefine(body) {
		w.walk(body, inner)
	}
	return true
}

func (w *cWalker) walk(n *fnode, sc cScope) {
	if n == nil {
		return
	}
	switch n.Type() {
	case "comment", "string_literal", "raw_string_literal", "char_literal", "number_literal",
		"preproc_def", "preproc_call", "primitive_type", "identifier", "field_identifier", "type_identifier":
		return
	case "template_declaration":
		if sc.span == nil {
			sc.span = n
		}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if c := n.NamedChild(i); c.Type() != "template_parameter_list" {
				w.walk(c, sc)
			}
		}
		return
	case "function_definition":
		if w.funcDef(n, sc) {
			return
		}
	case "declaration", "field_declaration":
		w.declaration(n, sc)
		return
	case "type_definition":
		w.typedef(n, sc)
		return
	case "struct_specifier", "union_specifier", "class_specifier":
		if w.class(n, sc, "", n) {
			return
		}
	case "namespace_definition":
		w.namespace(n, sc)
		return
	case "friend_declaration":
		// A friend's declaration is not a member; a friend defined in the
		// class is named under it.
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if c := n.NamedChild(i); c.Type() != "declaration" {
				w.walk(c, sc)
			}
		}
		return
	case "preproc_function_def":
		if name := textOf(n.ChildByFieldName("name"), w.src); name != "" {
			w.def(name, KindFunction, n, nil)
		}
		return
	case "preproc_include":
		w.include(n)
		return
	case "call_expression":
		if c := w.callee(n.ChildByFieldName("function")); !cCasts[c] {
			w.call(sc.from, c, n)
		}
	case "new_expression":
		w.call(sc.from, w.typeName(n.ChildByFieldName("type")), n)
	}
	w.walkChildren(n, sc)
}

// funcDef handles a function_definition; false when it declares no function
// (a macro taken for a type), so the caller walks its children.
func (w *cWalker) funcDef(n *fnode, sc cScope) bool {
	decl := n.ChildByFieldName("declarator")
	nameNode, isFunc := w.declName(decl)
	if !isFunc && !sc.inFunc && sc.from == "" && decl != nil && decl.Type() == "parenthesized_declarator" && decl.NamedChildCount() == 1 &&
		decl.NamedChild(0).Type() == "identifier" && cMacroName([]byte(textOf(n.ChildByFieldName("type"), w.src))) {
		// TEST_BEGIN(test_x) { … }: a macro that opens a function, named
		// by its argument.
		nameNode, isFunc = decl.NamedChild(0), true
	}
	if isFunc && nameNode != nil && cMacroName([]byte(textOf(nameNode, w.src))) {
		// f() LOCKS_EXCLUDED(mu) { … }: an annotation macro after the
		// parameters is read as the declarator, the function's own
		// declarator left in an ERROR before it.
		if d, nn := w.annotatedDeclarator(n); nn != nil {
			decl, nameNode = d, nn
		}
	}
	span := sc.span
	if isFunc && nameNode != nil && n.ChildByFieldName("type") == nil && cMacroName([]byte(textOf(nameNode, w.src))) {
		// T f() const\n MACRO(x) { … }: the line break splits it in two, a
		// declaration missing its ";" and a definition named by the macro.
		prev := prevNamedSibling(n)
		switch {
		case prev != nil && (prev.Type() == "declaration" || prev.Type() == "field_declaration") && endsMissing(prev):
			if d, nn := w.functionLike(prev.ChildByFieldName("declarator")); nn != nil {
				decl, nameNode, span = d, nn, prev
			}
		case prev != nil && prev.Type() == "function_definition" && prev.EndPoint().Row == n.StartPoint().Row:
			// `} FMT_CATCH(…) {`: the rest of a statement that tree-sitter
			// cut the function before (FMT_TRY { … } read as its end).
			isFunc = false
		}
	}
	if isFunc && nameNode != nil && sc.inFunc && cMacroName([]byte(textOf(nameNode, w.src))) {
		isFunc = false // FMT_TRY {…} FMT_CATCH(…) {…} in a body: a statement, not a definition
	}
	if isFunc && nameNode != nil && cKeywords[textOf(nameNode, w.src)] {
		isFunc = false // MACRO(x)\nif (…) {…}: a statement read as a definition
	}
	if !isFunc || nameNode == nil {
		if ns := w.macroNamespace(n); ns != "" {
			// FOO\nnamespace x { … }: tree-sitter reads FOO as a type and
			// `namespace` as the declarator; the body is the namespace's.
			inner := sc
			inner.prefix = sc.qualify(ns)
			inner.span = nil
			w.walkChildren(n, inner)
			return true
		}
		return false
	}
	short, qual := w.funcName(nameNode)
	if short == "" {
		return false
	}
	body := n.ChildByFieldName("body")
	if sc.inFunc {
		sc.prefix = sc.outer
	}
	full := sc.qualify(qual)
	sig := w.signature(decl)
	if body == nil && !hasChild(n, "pure_virtual_clause") {
		// = default, = delete: declared here, defined by the compiler.
		w.declare(full, sig, n)
		return true
	}
	name := w.overloadName(full, sig)
	name = w.def(name, KindFunction, n, span)
	inner := cScope{from: name, prefix: name, inFunc: true, outer: sc.prefix}
	if !w.cpp {
		inner.prefix = ""
	}
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); !c.Equal(decl) {
			if w.collect && !w.mayDefine(c) {
				continue // nothing in it names or declares a function
			}
			w.walk(c, inner)
		} else {
			w.walkDeclarator(c, inner) // default arguments, trailing return types
		}
	}
	return true
}

// mayDefine reports whether n's subtree holds a node from which pass one
// can record a name or a signature: a function or preprocessor function
// definition, a struct, union or class, or an error (recover). Inside a
// function nothing else can (declarations there are not recorded), so pass
// one skips a function's parts that hold none; it only looks at their
// nodes' symbols.
func (w *cWalker) mayDefine(n *fnode) bool {
	t := n.t
	for k, end := n.i, n.subtreeEnd(); k < end; k++ {
		if cDefining.hasSymbol(t.names, t.nodes[k].symbol) {
			return true
		}
	}
	return false
}

var cDefining = newTypeSet("function_definition", "preproc_function_def", "struct_specifier", "union_specifier",
	"class_specifier", "ERROR", "_ERROR")

func prevNamedSibling(n *fnode) *fnode {
	p := n.Parent()
	if p == nil {
		return nil
	}
	var prev *fnode
	for i := 0; i < int(p.NamedChildCount()); i++ {
		c := p.NamedChild(i)
		if c.Equal(n) {
			return prev
		}
		if c.Type() != "comment" {
			prev = c
		}
	}
	return nil
}

// endsMissing: n's last child is one tree-sitter made up (a missing ";").
func endsMissing(n *fnode) bool {
	c := n.Child(int(n.ChildCount()) - 1)
	return c != nil && c.IsMissing()
}

// annotatedDeclarator finds the declarator of `f() MACRO(x) {` in the ERROR
// node tree-sitter leaves before the macro: a function declarator, or
// `A::f()` read as an initialised variable; nil when there is none.
func (w *cWalker) annotatedDeclarator(n *fnode) (decl, name *fnode) {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		e := n.NamedChild(i)
		if e.Type() != "ERROR" {
			continue
		}
		for k := 0; k < int(e.NamedChildCount()); k++ {
			if d, nn := w.functionLike(e.NamedChild(k)); nn != nil {
				return d, nn
			}
		}
	}
	return nil, nil
}

// functionLike is d's declarator and name when d declares a function: a
// function declarator, or `A::f()` read as an initialised variable.
func (w *cWalker) functionLike(d *fnode) (decl, name *fnode) {
	if d == nil {
		return nil, nil
	}
	switch d.Type() {
	case "function_declarator":
		if nn, ok := w.declName(d); ok && nn != nil {
			return d, nn
		}
	case "init_declarator":
		if v := d.ChildByFieldName("value"); v != nil && v.Type() == "argument_list" {
			if nn, _ := w.declName(d.ChildByFieldName("declarator")); nn != nil {
				return d.ChildByFieldName("declarator"), nn
			}
		}
	}
	return nil, nil
}

// walkDeclarator walks what a declarator holds that may call (default
// arguments, array sizes, decltype), but no parameter names.
func (w *cWalker) walkDeclarator(n *fnode, sc cScope) {
	if n == nil {
		return
	}
	switch n.Type() {
	case "optional_parameter_declaration":
		w.walk(n.ChildByFieldName("default_value"), sc)
		return
	case "identifier", "field_identifier", "type_identifier", "qualified_identifier", "destructor_name",
		"operator_name", "template_function", "primitive_type":
		return
	case "call_expression", "lambda_expression", "decltype", "new_expression":
		w.walk(n, sc)
		return
	}
	for i := 0; i < int(n.NamedChildCount()); i++ {
		w.walkDeclarator(n.NamedChild(i), sc)
	}
}

var cCasts = map[string]bool{"static_cast": true, "dynamic_cast": true, "reinterpret_cast": true, "const_cast": true}

var cKeywords = map[string]bool{"if": true, "else": true, "while": true, "for": true, "do": true, "switch": true,
	"case": true, "return": true, "sizeof": true, "goto": true, "break": true, "continue": true, "default": true}

func hasChild(n *fnode, typ string) bool {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if n.NamedChild(i).Type() == typ {
			return true
		}
	}
	return false
}

func addSig(m map[string]map[string]bool, name, sig string) {
	if m[name] == nil {
		m[name] = map[string]bool{}
	}
	m[name][sig] = true
}

// macroNamespace recognises `FOO namespace x {` read as a function_definition
// with `namespace` as its declarator (or scope) and x in an ERROR; it returns
// x ("a.b" for a::b), or "".
func (w *cWalker) macroNamespace(n *fnode) string {
	if !w.cpp {
		return ""
	}
	d := n.ChildByFieldName("declarator")
	if d == nil {
		return ""
	}
	var parts []string
	switch d.Type() {
	case "identifier":
		if textOf(d, w.src) != "namespace" {
			return ""
		}
		for i := 0; i < int(n.NamedChildCount()); i++ {
			if c := n.NamedChild(i); c.Type() == "ERROR" {
				parts = append(parts, w.identsIn(c)...)
			}
		}
	case "qualified_identifier":
		if textOf(d.ChildByFieldName("scope"), w.src) != "namespace" {
			return ""
		}
		for i := 0; i < int(d.NamedChildCount()); i++ {
			c := d.NamedChild(i)
			switch c.Type() {
			case "ERROR":
				parts = append(parts, w.identsIn(c)...)
			case "identifier", "namespace_identifier", "type_identifier":
				if !c.Equal(d.ChildByFieldName("scope")) {
					parts = append(parts, textOf(c, w.src))
				}
			}
		}
	default:
		return ""
	}
	if len(parts) == 0 || parts[0] == "inline" {
		return ""
	}
	return strings.Join(parts, ".")
}

func (w *cWalker) identsIn(n *fnode) []string {
	var out []string
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		switch c.Type() {
		case "identifier", "namespace_identifier", "type_identifier":
			out = append(out, textOf(c, w.src))
		}
	}
	return out
}

// declName follows a declarator to the name it declares, and reports
// whether it declares a function (the declarator nearest the name, past
// parentheses, is a function_declarator).
func (w *cWalker) declName(d *fnode) (*fnode, bool) {
	isFunc := false
	for depth := 0; d != nil && depth < 1000; depth++ {
		switch d.Type() {
		case "function_declarator":
			isFunc = true
			d = d.ChildByFieldName("declarator")
		case "pointer_declarator", "reference_declarator", "array_declarator", "attributed_declarator":
			isFunc = false
			d = w.innerDeclarator(d)
		case "parenthesized_declarator":
			d = w.innerDeclarator(d)
		case "operator_cast":
			return d, true
		case "identifier", "field_identifier", "qualified_identifier", "destructor_name",
			"operator_name", "template_function", "type_identifier":
			return d, isFunc
		default:
			return nil, false
		}
	}
	return nil, false
}

// innerDeclarator is the declarator a wrapping declarator wraps: its
// "declarator" field, or its only named child that is a declarator.
func (w *cWalker) innerDeclarator(d *fnode) *fnode {
	if c := d.ChildByFieldName("declarator"); c != nil {
		return c
	}
	for i := int(d.NamedChildCount()) - 1; i >= 0; i-- {
		c := d.NamedChild(i)
		switch c.Type() {
		case "type_qualifier", "attribute_declaration", "ms_pointer_modifier", "ms_based_modifier",
			"comment", "attribute_specifier", "ms_call_modifier":
			continue
		}
		return c
	}
	return nil
}

// overloadName is a function's name: full, with its signature when the file
// defines full with several (C++); pass one only records the signature.
func (w *cWalker) overloadName(full, sig string) string {
	if w.collect {
		addSig(w.sigs, full, sig)
		addSig(w.declSigs, full, sig)
	} else if w.cpp && len(w.sigs[full]) > 1 {
		return full + sig
	}
	return full
}

// qualified splits A::B::name into its scopes' names and the name's node.
func (w *cWalker) qualified(n *fnode) (scopes []string, name *fnode) {
	for depth := 0; n != nil && n.Type() == "qualified_identifier" && depth < 1000; depth++ {
		if s := w.scopeName(n.ChildByFieldName("scope")); s != "" {
			scopes = append(scopes, s)
		}
		n = n.ChildByFieldName("name")
	}
	return scopes, n
}

// funcName returns a function's own name and its name qualified by what its
// declarator names (A::B::f → "f", "A.B.f").
func (w *cWalker) funcName(n *fnode) (short, qual string) {
	switch n.Type() {
	case "qualified_identifier":
		parts, n := w.qualified(n)
		if n == nil {
			return "", ""
		}
		short, _ = w.funcName(n)
		if short == "" {
			return "", ""
		}
		return short, strings.Join(append(parts, short), ".")
	case "destructor_name":
		short = "~" + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(textOf(n, w.src)), "~"))
	case "operator_name":
		short = cNormalize(textOf(n, w.src))
	case "operator_cast":
		end := n.EndByte()
		if p := w.find(n, "parameter_list"); p != nil {
			end = p.StartByte()
		}
		short = cNormalize(string(w.src[n.StartByte():end]))
	case "template_function":
		return w.funcName(n.ChildByFieldName("name"))
	default:
		short = textOf(n, w.src)
	}
	return short, short
}

// find is the first node of type typ in n's subtree (preorder), or nil.
func (w *cWalker) find(n *fnode, typ string) *fnode {
	if n == nil {
		return nil
	}
	if n.Type() == typ {
		return n
	}
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if f := w.find(n.NamedChild(i), typ); f != nil {
			return f
		}
	}
	return nil
}

// scopeName is a qualifier's name without template arguments: A<T> → A.
func (w *cWalker) scopeName(n *fnode) string {
	if n == nil {
		return ""
	}
	switch n.Type() {
	case "template_type", "template_function":
		return textOf(n.ChildByFieldName("name"), w.src)
	case "qualified_identifier":
		return w.typeName(n)
	case "decltype":
		return ""
	}
	return textOf(n, w.src)
}

// signature is a function declarator's parameter types as written:
// "(const T&,int)", followed by its const/volatile/ref qualifiers.
func (w *cWalker) signature(d *fnode) string {
	if !w.cpp {
		return "" // signatures only tell C++ overloads apart
	}
	var fd *fnode
	for depth := 0; d != nil && depth < 1000; depth++ {
		if d.Type() == "function_declarator" {
			fd = d
			inner := d.ChildByFieldName("declarator")
			if _, ok := w.declName(inner); !ok {
				break // the name's own declarator, not one of a returned function pointer
			}
		}
		if d.Type() == "operator_cast" {
			d = w.find(d, "abstract_function_declarator")
			fd = d
			break
		}
		d = w.innerDeclarator(d)
	}
	if fd == nil {
		return "()"
	}
	var params []string
	var quals strings.Builder
	for i := 0; i < int(fd.NamedChildCount()); i++ {
		c := fd.NamedChild(i)
		switch c.Type() {
		case "parameter_list":
			for j := 0; j < int(c.ChildCount()); j++ {
				p := c.Child(j)
				if !p.IsNamed() {
					if p.Type() == "..." {
						params = append(params, "...")
					}
					continue
				}
				if t := w.paramType(p); t != "" {
					params = append(params, t)
				}
			}
		case "type_qualifier", "ref_qualifier":
			quals.WriteString(cNormalize(textOf(c, w.src)))
		}
	}
	return "(" + strings.Join(params, ",") + ")" + quals.String()
}

// paramType is a parameter's text without its name, default value and
// comments, whitespace normalised.
func (w *cWalker) paramType(p *fnode) string {
	switch p.Type() {
	case "comment":
		return ""
	case "variadic_parameter":
		return "..."
	}
	var skip [][2]uint32
	if d := p.ChildByFieldName("default_value"); d != nil {
		// `= value`: from the '=' before it.
		start := d.StartByte()
		for i := 0; i < int(p.ChildCount()); i++ {
			if c := p.Child(i); c.Type() == "=" {
				start = c.StartByte()
			}
		}
		skip = append(skip, [2]uint32{start, p.EndByte()})
	}
	if name, _ := w.declName(p.ChildByFieldName("declarator")); name != nil {
		skip = append(skip, [2]uint32{name.StartByte(), name.EndByte()})
	} else if d := p.ChildByFieldName("declarator"); d != nil && d.Type() == "variadic_declarator" {
		if id := w.find(d, "identifier"); id != nil {
			skip = append(skip, [2]uint32{id.StartByte(), id.EndByte()})
		}
	}
	w.commentsIn(p, &skip)
	var b strings.Builder
	for i := p.StartByte(); i < p.EndByte(); i++ {
		in := false
		for _, s := range skip {
			if i >= s[0] && i < s[1] {
				in = true
				break
			}
		}
		if !in {
			b.WriteByte(w.src[i])
		}
	}
	return cNormalize(b.String())
}

func (w *cWalker) commentsIn(n *fnode, skip *[][2]uint32) {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		if c.Type() == "comment" {
			*skip = append(*skip, [2]uint32{c.StartByte(), c.EndByte()})
		} else {
			w.commentsIn(c, skip)
		}
	}
}

// cNormalize collapses whitespace, keeping one space only between two word
// characters: "const T &" → "const T&", "operator ==" → "operator==".
func cNormalize(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '\\' {
			space = true
			continue
		}
		if space && b.Len() > 0 && cWordChar(b.String()[b.Len()-1]) && cWordChar(c) {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
	}
	return b.String()
}

func cWordChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// declaration handles declarations and field declarations: prototypes and
// method declarations become Decls (pure virtual ones definitions); types
// defined in them are walked.
func (w *cWalker) declaration(n *fnode, sc cScope) {
	pure := false
	if n.Type() == "field_declaration" {
		if dv := n.ChildByFieldName("default_value"); dv != nil && textOf(dv, w.src) == "0" {
			pure = true
		}
	}
	for i := 0; i < int(n.ChildCount()); i++ {
		c := n.Child(i)
		if !c.IsNamed() {
			continue
		}
		switch n.FieldNameForChild(i) {
		case "declarator":
			name, isFunc := w.declName(c)
			if !isFunc || name == nil {
				w.walkDeclaratorValue(c, sc)
				continue
			}
			_, qual := w.funcName(name)
			if qual == "" {
				continue
			}
			full := sc.qualify(qual)
			sig := w.signature(c)
			if pure {
				nm := full
				if w.collect {
					addSig(w.sigs, full, sig)
					addSig(w.declSigs, full, sig)
				} else if w.cpp && len(w.sigs[full]) > 1 {
					nm += sig
				}
				w.def(nm, KindFunction, n, sc.span)
				continue
			}
			if !sc.inFunc {
				w.declare(full, sig, n)
			}
		case "default_value":
			if !pure {
				w.walk(c, sc)
			}
		default:
			w.walk(c, sc)
		}
	}
}

// walkDeclaratorValue walks a variable's declarator for its initializer.
func (w *cWalker) walkDeclaratorValue(d *fnode, sc cScope) {
	switch d.Type() {
	case "init_declarator":
		w.walk(d.ChildByFieldName("value"), sc)
		w.walkDeclarator(d.ChildByFieldName("declarator"), sc)
	default:
		w.walkDeclarator(d, sc)
	}
}

func (w *cWalker) declare(full, sig string, at *fnode) {
	if w.collect {
		addSig(w.declSigs, full, sig)
		return
	}
	w.decls = append(w.decls, full+"\x00"+sig)
	w.res.declAt = append(w.res.declAt, int(at.StartByte()))
}

// finishDecls names the Decls (with their signature where the name is
// overloaded in the file), dropping repeats and names the file defines.
func (w *cWalker) finishDecls() {
	defined := map[string]bool{}
	for _, d := range w.res.Defs {
		defined[d.Name] = true
	}
	seen := map[string]bool{}
	for _, d := range w.decls {
		full, sig, _ := strings.Cut(d, "\x00")
		name := full
		if w.cpp && len(w.declSigs[full]) > 1 {
			name += sig
		}
		if seen[name] || defined[name] {
			continue
		}
		seen[name] = true
		w.res.Decls = append(w.res.Decls, name)
	}
}

// typedef handles `typedef struct [tag] {…} name;`: the struct is named by
// its tag, or by the typedef when it has none, and spans the typedef.
func (w *cWalker) typedef(n *fnode, sc cScope) {
	t := n.ChildByFieldName("type")
	if t != nil {
		switch t.Type() {
		case "struct_specifier", "union_specifier", "class_specifier":
			alias := ""
			for i := 0; i < int(n.ChildCount()); i++ {
				if n.FieldNameForChild(i) != "declarator" {
					continue
				}
				if d := n.Child(i); d.Type() == "type_identifier" {
					alias = textOf(d, w.src)
					break
				} else if nm, _ := w.declName(d); nm != nil && alias == "" && nm.Type() == "type_identifier" {
					alias = textOf(nm, w.src)
				}
			}
			start := n
			if sc.span != nil {
				start = sc.span
			}
			if w.class(t, sc, alias, start) {
				return
			}
		}
	}
	w.walkChildren(n, sc)
}

// class defines a struct, union or class with a body; false when it has
// none or no name (the caller walks its children). alias names an anonymous
// one; span is the node its span starts at (n, a typedef or a template).
func (w *cWalker) class(n *fnode, sc cScope, alias string, span *fnode) bool {
	body := n.ChildByFieldName("body")
	if body == nil {
		return false
	}
	name := ""
	if nm := n.ChildByFieldName("name"); nm != nil {
		switch nm.Type() {
		case "template_type":
			name = textOf(nm.ChildByFieldName("name"), w.src)
		case "qualified_identifier":
			name = w.typeName(nm)
		default:
			name = textOf(nm, w.src)
		}
	}
	if name == "" {
		name = alias
	}
	if name == "" {
		// An anonymous struct's members belong to what is around it; its
		// methods are not in the function it may be declared in.
		inner := sc
		inner.span = nil
		if sc.inFunc {
			inner.inFunc, inner.prefix = false, sc.from
		}
		w.walkChildren(body, inner)
		return true
	}
	if span == n && sc.span != nil {
		span = sc.span
	}
	if w.cpp {
		name = sc.qualify(name)
	}
	end := n
	if span != n {
		end = span
	}
	q := w.def(name, KindClass, end, span)
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); c.Type() == "base_class_clause" {
			w.bases(q, c)
		}
	}
	inner := cScope{from: q, prefix: q}
	if !w.cpp {
		inner.prefix = ""
	}
	w.walkChildren(body, inner)
	return true
}

func (w *cWalker) bases(class string, n *fnode) {
	if w.collect {
		return
	}
	for i := 0; i < int(n.NamedChildCount()); i++ {
		c := n.NamedChild(i)
		switch c.Type() {
		case "access_specifier", "comment", "virtual":
			continue
		}
		if b := w.typeName(c); b != "" {
			w.res.Inherits = append(w.res.Inherits, Inherit{Class: class, Base: b})
		}
	}
}

// typeName is a type as written, dotted, without template arguments:
// ns::C<T> → ns.C; "" for what names no type.
func (w *cWalker) typeName(n *fnode) string {
	if n == nil {
		return ""
	}
	switch n.Type() {
	case "type_identifier", "identifier", "namespace_identifier", "field_identifier":
		return textOf(n, w.src)
	case "template_type", "template_function", "template_method":
		return w.typeName(n.ChildByFieldName("name"))
	case "qualified_identifier":
		parts, n := w.qualified(n)
		last := w.typeName(n)
		if last == "" {
			return ""
		}
		return strings.Join(append(parts, last), ".")
	case "struct_specifier", "class_specifier", "union_specifier":
		return w.typeName(n.ChildByFieldName("name"))
	}
	return ""
}

func (w *cWalker) namespace(n *fnode, sc cScope) {
	inner := sc
	inner.span = nil
	inline := false
	for i := 0; i < int(n.ChildCount()); i++ {
		if n.Child(i).Type() == "inline" {
			inline = true
		}
	}
	if nm := n.ChildByFieldName("name"); nm != nil && !inline {
		var parts []string
		if nm.Type() == "nested_namespace_specifier" {
			for i := 0; i < int(nm.NamedChildCount()); i++ {
				c := nm.NamedChild(i)
				if c.Type() == "namespace_identifier" || c.Type() == "identifier" {
					parts = append(parts, textOf(c, w.src))
				}
			}
		} else {
			parts = append(parts, textOf(nm, w.src))
		}
		if len(parts) > 0 {
			inner.prefix = sc.qualify(strings.Join(parts, "."))
		}
	}
	w.walkChildren(n, inner)
}

func (w *cWalker) include(n *fnode) {
	if w.collect {
		return
	}
	p := n.ChildByFieldName("path")
	if p == nil {
		return
	}
	mod := strings.TrimSpace(textOf(p, w.src))
	mod = strings.TrimPrefix(strings.TrimPrefix(mod, "<"), "\"")
	mod = strings.TrimSuffix(strings.TrimSuffix(mod, ">"), "\"")
	if mod == "" || p.Type() == "identifier" || p.Type() == "call_expression" {
		return // #include MACRO
	}
	w.res.Imports = append(w.res.Imports, Import{Module: mod, Line: int(n.StartPoint().Row) + 1})
}

// callee reduces a call's function expression to a dotted chain (see the
// rules at the top of this file).
func (w *cWalker) callee(n *fnode) string {
	if n == nil {
		return ""
	}
	switch n.Type() {
	case "identifier", "qualified_identifier", "template_function":
		return w.typeName(n)
	case "field_expression":
		field := w.typeName(n.ChildByFieldName("field"))
		if field == "" {
			return ""
		}
		if recv := w.chain(n.ChildByFieldName("argument")); recv != "" {
			return recv + "." + field
		}
		return field
	case "parenthesized_expression":
		if n.NamedChildCount() == 1 {
			c := n.NamedChild(0)
			switch c.Type() {
			case "identifier", "qualified_identifier", "field_expression", "template_function":
				return w.callee(c)
			}
			return w.trailingField(c)
		}
		return ""
	}
	return w.trailingField(n)
}

// chain is a receiver as a dotted chain: a, a.b, this, p (for *p and (p)),
// ns.x; "" when it is not a chain of names.
func (w *cWalker) chain(n *fnode) string {
	for depth := 0; n != nil && depth < 1000; depth++ {
		switch n.Type() {
		case "identifier", "qualified_identifier", "template_function":
			return w.typeName(n)
		case "this":
			return "this"
		case "field_expression":
			recv := w.chain(n.ChildByFieldName("argument"))
			field := w.typeName(n.ChildByFieldName("field"))
			if recv == "" || field == "" {
				return ""
			}
			return recv + "." + field
		case "parenthesized_expression":
			if n.NamedChildCount() != 1 {
				return ""
			}
			n = n.NamedChild(0)
		case "pointer_expression":
			if op := n.Child(0); op == nil || op.Type() != "*" {
				return ""
			}
			n = n.ChildByFieldName("argument")
		default:
			return ""
		}
	}
	return ""
}

// trailingField is the field name a callee expression that is no name chain
// ends in: (*s->fp) → fp, s->fns[i] → fns; "" when there is none.
func (w *cWalker) trailingField(n *fnode) string {
	for depth := 0; n != nil && depth < 1000; depth++ {
		switch n.Type() {
		case "field_expression":
			return w.typeName(n.ChildByFieldName("field"))
		case "parenthesized_expression":
			if n.NamedChildCount() != 1 {
				return ""
			}
			n = n.NamedChild(0)
		case "pointer_expression", "subscript_expression":
			n = n.ChildByFieldName("argument")
		default:
			return ""
		}
	}
	return ""
}
