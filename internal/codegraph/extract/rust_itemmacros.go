package extract

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	tsrust "github.com/smacker/go-tree-sitter/rust"
)

// Item macros read in the first parse.
//
// tokio wraps whole files and modules in macros whose braces hold items
// (`cfg_rt! { … }`). Parsed as written, their insides are token trees, and
// itemMacro parses each inside again as items: a second parse of much of
// the code. Instead, the file is first read with the wrappers of such
// macros blanked (`cfg_rt! {` and its `}` turned to spaces, every other
// byte in place), so that one parse reads the insides as items where they
// stand. The text only proposes the macros (rustProposeItemMacros); the
// tree of the blanked reading must confirm each (rustUnwrapped), or the
// file is read as written and itemMacro does as before. The extraction is the same
// either way (checked over whole histories, docs/changelog.md, 2026-11-27).

// rustMacro is a brace macro invocation in item position, found by its
// text: its name's first byte, its "{" and the matching "}".
type rustMacro struct {
	name               string
	start, open, close int
	line               int // 1-based, of the name
}

// HasRustItemMacros reports whether Rust source src holds invocations that
// the extractor may read as items (rustProposeItemMacros).
func HasRustItemMacros(src []byte) bool { return len(rustProposeItemMacros(src)) > 0 }

// rustProposeItemMacros proposes the invocations `name! { … }` (a plain
// name) that begin an item in a file, an inline module, an impl, a trait, an
// extern block or another such invocation: where itemMacro reads items. It
// returns nil when there is none, or when the text's braces, comments or
// literals do not pair (the file is then read as written).
func rustProposeItemMacros(src []byte) []rustMacro {
	if !bytes.Contains(src, []byte("!{")) && !bytes.Contains(src, []byte("! {")) {
		return nil // most files: no lexing (one missed goes the other way, as written)
	}
	type frame struct {
		container bool // items stand here
		macro     int  // index in out of the invocation these braces are, or -1
		// probe: the braces of a proposed macro, whose first token is not
		// read yet. One that cannot begin an item (`name: (…)`, `a => b`,
		// nothing) drops the proposal: a macro that holds no items would
		// fail in the tree, and cost a reading.
		probe bool
		// groups: the parentheses and brackets open in these braces. A
		// macro's braces must pair with them, as a token tree's do.
		groups int
	}
	stack := []frame{{container: true, macro: -1}}
	var out []rustMacro
	// The item being read in the innermost frame: its first word (after
	// attributes, visibility and qualifiers), whether it has a fn, and a
	// candidate name followed by "!".
	// Words are slices of src: no string is made per word.
	var first, cand []byte
	hasFn, atStart := false, true
	candAt, candLine, bang := 0, 0, false
	line := 1
	reset := func() { first, hasFn, atStart, cand, bang = nil, false, true, nil, false }
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end, nl := rustBlockCommentEnd(src, i)
			if end < 0 {
				return nil
			}
			line += nl
			i = end
			continue
		}
		// Any other token: a candidate needs exactly name, "!", "{".
		if top := &stack[len(stack)-1]; top.probe {
			top.probe = false
			if !rustMayBeginItem(src, i) {
				out[top.macro].name = "" // dropped
				top.container, top.macro = false, -1
			}
		}
		switch {
		case c == '"':
			end, nl := rustStringEnd(src, i)
			if end < 0 {
				return nil
			}
			line += nl
			i = end
			cand, bang, atStart = nil, false, false
		case c == '\'':
			if end := rustCharEnd(src, i); end > 0 {
				i = end
			} else {
				i++ // a lifetime: its name follows
			}
			cand, bang, atStart = nil, false, false
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := rustWordEnd(src, i)
			word := src[i:j]
			if j < len(src) && (string(word) == "r" || string(word) == "br" || string(word) == "cr") && (src[j] == '"' || src[j] == '#') {
				// A raw string r#"…"#, or a raw identifier r#name.
				k := j
				for k < len(src) && src[k] == '#' {
					k++
				}
				if k < len(src) && src[k] == '"' {
					end, nl := rustRawStringEnd(src, k, k-j)
					if end < 0 {
						return nil
					}
					line += nl
					i = end
					cand, bang, atStart = nil, false, false
					continue
				}
				if string(word) == "r" && k == j+1 { // r#name: read as the name, which no candidate is
					i = k
					cand, bang, atStart = nil, false, false
					continue
				}
			}
			i = j
			switch {
			case atStart && first == nil && rustItemQualifier(word):
				if string(word) == "pub" && i < len(src) && src[i] == '(' {
					k := i
					for k < len(src) && src[k] != ')' && src[k] != '\n' {
						k++
					}
					if k < len(src) && src[k] == ')' {
						i = k + 1
					}
				}
				cand, bang = nil, false
				continue
			case atStart && first == nil:
				first = word
				cand, candAt, candLine, bang = word, j-len(word), line, false
				if !rustASCIIName(word) || rustNotMacroNames[string(word)] {
					cand = nil // a name tree-sitter may not read as one: left as written
				}
			default:
				cand, bang = nil, false
			}
			if string(word) == "fn" {
				hasFn = true
			}
			atStart = false
		case c == '#':
			// An attribute: #[…] or #![…], skipped whole.
			k := i + 1
			if k < len(src) && src[k] == '!' {
				k++
			}
			if k < len(src) && src[k] == '[' {
				end, nl := rustBracketEnd(src, k)
				if end < 0 {
					return nil
				}
				line += nl
				i = end
				continue
			}
			i++
			cand, bang, atStart = nil, false, false
		case c == '!':
			bang = cand != nil && !bang
			if !bang {
				cand = nil
			}
			i++
			atStart = false
		case c == '{':
			top := stack[len(stack)-1]
			f := frame{macro: -1}
			switch {
			case top.container && cand != nil && bang: // cand is the item's first word
				if len(stack) > 16 { // itemMacro's depth limit
					return nil
				}
				f.container, f.macro, f.probe = true, len(out), true
				out = append(out, rustMacro{name: string(cand), start: candAt, open: i, close: -1, line: candLine})
			case top.container && !hasFn && rustItemContainer(first):
				f.container = true
			}
			stack = append(stack, f)
			i++
			reset()
		case c == '}':
			if len(stack) == 1 || stack[len(stack)-1].groups != 0 {
				return nil
			}
			if m := stack[len(stack)-1].macro; m >= 0 {
				out[m].close = i
			}
			stack = stack[:len(stack)-1]
			i++
			reset()
		case c == ';':
			i++
			if stack[len(stack)-1].groups == 0 { // not [u8; 4]
				reset()
			}
		case c == '(' || c == '[':
			stack[len(stack)-1].groups++
			i++
			cand, bang, atStart = nil, false, false
		case c == ')' || c == ']':
			if stack[len(stack)-1].groups--; stack[len(stack)-1].groups < 0 {
				return nil
			}
			i++
			cand, bang, atStart = nil, false, false
		default:
			i++
			cand, bang = nil, false
			atStart = false
		}
	}
	if len(stack) != 1 {
		return nil
	}
	kept := out[:0]
	for _, m := range out {
		if m.name != "" {
			kept = append(kept, m)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// rustMayBeginItem: the token at src[i] can begin an item: an attribute,
// a keyword that begins an item or qualifies one, or a macro invocation's
// name.
func rustMayBeginItem(src []byte, i int) bool {
	if src[i] == '#' { // #[…] or #![…], not a shebang's #!
		return i+1 < len(src) && (src[i+1] == '[' || src[i+1] == '!' && i+2 < len(src) && src[i+2] == '[')
	}
	j := rustWordEnd(src, i)
	if j == i {
		return false
	}
	switch string(src[i:j]) {
	case "fn", "pub", "struct", "enum", "union", "impl", "trait", "mod", "use", "const", "static", "type",
		"extern", "unsafe", "async", "macro_rules", "default", "auto":
		return true
	}
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return j < len(src) && src[j] == '!'
}

// rustWordEnd is the end of the word (letters, digits, underscores and
// non-ASCII bytes) starting at src[i].
func rustWordEnd(src []byte, i int) int {
	for i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z' || src[i] >= '0' && src[i] <= '9' || src[i] >= 0x80) {
		i++
	}
	return i
}

// rustASCIIName: letters, digits and underscores, not starting with a
// digit.
func rustASCIIName(w []byte) bool {
	for i, c := range w {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return len(w) > 0
}

// rustNotMacroNames are Rust's keywords, strict, reserved and contextual: none
// names a proposed macro.
var rustNotMacroNames = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`as async await break const continue crate dyn else enum extern false fn for if impl in
		let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while
		abstract become box do final macro override priv typeof unsized virtual yield try union default auto raw gen
		macro_rules safe`) {
		rustNotMacroNames[k] = true
	}
}

// rustItemQualifier: a word before an item's keyword (visibility,
// qualifiers), which does not start the item's first word.
func rustItemQualifier(w []byte) bool {
	switch string(w) {
	case "pub", "unsafe", "default", "auto", "async":
		return true
	}
	return false
}

// rustItemContainer: an item whose braces hold items.
func rustItemContainer(first []byte) bool {
	switch string(first) {
	case "mod", "impl", "trait", "extern":
		return true
	}
	return false
}

// rustStringEnd is the index just past the string literal opening at i
// (src[i] == '"'), and the newlines in it; -1 when it does not close.
func rustStringEnd(src []byte, i int) (end, newlines int) {
	for k := i + 1; k < len(src); k++ {
		switch src[k] {
		case '\\':
			k++
			if k < len(src) && src[k] == '\n' {
				newlines++
			}
		case '\n':
			newlines++
		case '"':
			return k + 1, newlines
		}
	}
	return -1, 0
}

// rustRawStringEnd is the index just past the raw string whose quote is at
// k, with hashes "#"s around it; -1 when it does not close.
func rustRawStringEnd(src []byte, k, hashes int) (end, newlines int) {
	for p := k + 1; p < len(src); p++ {
		if src[p] == '\n' {
			newlines++
			continue
		}
		if src[p] != '"' {
			continue
		}
		n := 0
		for p+1+n < len(src) && n < hashes && src[p+1+n] == '#' {
			n++
		}
		if n == hashes {
			return p + 1 + n, newlines
		}
	}
	return -1, 0
}

// rustCharEnd is the index just past the character literal opening at i,
// or 0 when the quote begins a lifetime or label ('a, 'static).
func rustCharEnd(src []byte, i int) int {
	if i+1 >= len(src) {
		return 0
	}
	if src[i+1] == '\\' {
		for k := i + 2; k < len(src) && k < i+14; k++ {
			if src[k] == '\'' && k > i+2 {
				return k + 1
			}
			if src[k] == '\n' {
				return 0
			}
		}
		return 0
	}
	_, size := utf8.DecodeRune(src[i+1:])
	if i+1+size < len(src) && src[i+1+size] == '\'' && src[i+1] != '\'' {
		return i + 2 + size
	}
	return 0
}

// rustBlockCommentEnd is the end of the block comment (nested, as Rust's
// are) starting at src[i], and the newlines in it; -1 when it is not
// closed.
func rustBlockCommentEnd(src []byte, i int) (end, newlines int) {
	depth := 0
	for i < len(src) {
		switch {
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
			depth++
			i += 2
		case src[i] == '*' && i+1 < len(src) && src[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i, newlines
			}
		default:
			if src[i] == '\n' {
				newlines++
			}
			i++
		}
	}
	return -1, newlines
}

// rustBracketEnd is the index just past the "]" closing the "[" at k, and
// the newlines before it, skipping strings; -1 when it does not close.
func rustBracketEnd(src []byte, k int) (end, newlines int) {
	depth := 0
	for p := k; p < len(src); p++ {
		switch src[p] {
		case '\n':
			newlines++
		case '"':
			e, nl := rustStringEnd(src, p)
			if e < 0 {
				return -1, 0
			}
			newlines += nl
			p = e - 1
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return p + 1, newlines
			}
		}
	}
	return -1, 0
}

// rustBlankMacros returns src with each macro's `name! {` and its "}"
// blanked (newlines kept).
func rustBlankMacros(src []byte, ms []rustMacro) []byte {
	out := append([]byte(nil), src...)
	for _, m := range ms {
		for k := m.start; k <= m.open; k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
		out[m.close] = ' '
	}
	return out
}

// rustRegion is the inside of a macro the blanked reading unwrapped, with
// the node (a file's or a body's declaration list) its items stand in.
type rustRegion struct {
	from, to  int
	container int32
}

// rustUnwrapped checks, in the tree of a blanked reading, that each macro
// stood where itemMacro would have read its inside as items: the inside is
// a run of whole children (at least one) of a source_file or
// declaration_list, with no syntax error in it. It returns the regions of
// the macros that hold, and the indexes of those that do not (with every
// macro inside one of those: they are token trees again once it is). ok is
// false when the reading has errors outside every macro, which restoring
// macros cannot mend.
func rustUnwrapped(root *fnode, ms []rustMacro) (regions []rustRegion, bad []int, ok bool) {
	t := root.t
	var errs [][2]int // the spans of ERROR and MISSING nodes
	if errorsIn(root) != 0 {
		for _, f := range t.nodes {
			if f.flags&(2|4) != 0 {
				errs = append(errs, [2]int{int(f.startByte), int(f.endByte)})
			}
		}
	}
	isBad := make([]bool, len(ms))
	for i, m := range ms {
		for _, e := range errs {
			if e[0] <= m.close && e[1] >= m.start {
				isBad[i] = true
			}
		}
		if !isBad[i] {
			c, good := rustContainer(t, root.i, m)
			isBad[i] = !good
			regions = append(regions, rustRegion{from: m.open + 1, to: m.close, container: c})
		} else {
			regions = append(regions, rustRegion{})
		}
	}
	for _, e := range errs {
		in := false
		for _, m := range ms {
			in = in || e[0] <= m.close && e[1] >= m.start
		}
		if !in {
			return nil, nil, false
		}
	}
	// A macro inside a bad one is a token tree once that one is.
	for i, m := range ms {
		for j := range i {
			if isBad[j] && ms[j].start < m.start && m.close < ms[j].close {
				isBad[i] = true
			}
		}
	}
	var good []rustRegion
	for i := range ms {
		if isBad[i] {
			bad = append(bad, i)
		} else {
			good = append(good, regions[i])
		}
	}
	return good, bad, true
}

// rustContainer is the innermost node around macro m's whole invocation,
// and whether it is a source_file or declaration_list whose children m's
// inside holds whole (at least one of them).
func rustContainer(t *flatTree, root int32, m rustMacro) (int32, bool) {
	c := root
descend:
	for {
		for _, k := range t.kids[t.kidStart[c]:t.kidStart[c+1]] {
			if int(t.nodes[k].startByte) <= m.start && int(t.nodes[k].endByte) > m.close {
				c = k
				continue descend
			}
		}
		break
	}
	if typ := t.typeOf(c); typ != "source_file" && typ != "declaration_list" {
		return c, false
	}
	inside := 0
	for _, k := range t.kids[t.kidStart[c]:t.kidStart[c+1]] {
		s, e := int(t.nodes[k].startByte), int(t.nodes[k].endByte)
		if e <= m.start || s > m.close {
			continue
		}
		if s <= m.open || e > m.close {
			return c, false // a node across the wrapper
		}
		inside++
	}
	return c, inside > 0
}

// rustReadAgain reads text as an edit of base's reading, and hands fn the
// tree only when it has no syntax error: tree-sitter's error recovery can
// read an edited text otherwise than the same text parsed whole (a fuzzed
// `A!{#!(}`), so a tree with errors is not used (done is false, and the
// caller parses text afresh). A tree without errors is the one a fresh
// parse gives (checked over every .rs version of three histories).
func rustReadAgain(ctx context.Context, path string, text []byte, base *fnode, fn func(*fnode) error) (done bool, err error) {
	resetMembers(ctx)
	err = reparseTree(ctx, tsrust.GetLanguage(), path, text, base, func(r *fnode) error {
		if errorsIn(r) > 0 {
			return nil
		}
		done = true
		return fn(r)
	})
	if err == nil && !done {
		resetMembers(ctx)
	}
	return done, err
}

// rustExtractUnwrapped extracts src read with the wrappers of item macros
// ms blanked. Macros the tree does not bear out are restored and the text
// read again; nil when that does not hold either, when the tree bears out
// none, or when the reading has errors outside every macro (the file is
// then read as written).
func rustExtractUnwrapped(ctx context.Context, path string, src []byte, ms []rustMacro) (res *FileResult, err error) {
	var read func(root *fnode, ms []rustMacro, again bool) error
	read = func(root *fnode, ms []rustMacro, again bool) error {
		regions, bad, ok := rustUnwrapped(root, ms)
		switch {
		case !ok || len(bad) == len(ms) || len(bad) > 0 && again:
			// The file is read as written: as an edit of this reading
			// where that reads it without error, else afresh (Extract).
			_, err := rustReadAgain(ctx, path, src, root, func(r *fnode) error {
				res = rustWalkTree(ctx, path, src, r, nil, nil)
				return nil
			})
			return err
		case len(bad) > 0:
			kept := make([]rustMacro, 0, len(ms)-len(bad))
			for i, m := range ms {
				if len(bad) > 0 && bad[0] == i {
					bad = bad[1:]
					continue
				}
				kept = append(kept, m)
			}
			text := rustBlankMacros(src, kept)
			reread := func(r *fnode) error { return read(r, kept, true) }
			if done, err := rustReadAgain(ctx, path, text, root, reread); done || err != nil {
				return err
			}
			return parseTree(ctx, tsrust.GetLanguage(), path, text, reread)
		}
		res = rustWalkTree(ctx, path, src, root, ms, regions)
		return nil
	}
	err = parseTree(ctx, tsrust.GetLanguage(), path, rustBlankMacros(src, ms), func(root *fnode) error {
		return read(root, ms, false)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
