package codegraph

// Reading a changed Java body by its changed statements alone.
//
// A change inside a leaf body is checked by parsing the body wrapped as a
// function (spanderive.go, Bodies): it must read without syntax errors and
// define nothing. Most of a changed body is usually unchanged, and parsing
// it is most of what the check costs. A block is a run of statements, so
// the body splits into A + R + B where A and B are unchanged runs of whole
// statements: only R, the run around the changes, needs reading. A clean
// body of P split there is A + R_P + B, each part whole statements; if R
// reads clean and defines nothing by itself, so does A + R + B, since a
// statement that ends where the next one begins is not continued by it.
//
// Where statements end is found from the tokens, on both versions of the
// body: a boundary lies between two tokens on different lines, outside any
// parenthesis, bracket or brace of the body, where the first is `;` or `}`
// and the second begins a statement (a word, `@` or `{`), unless that word
// continues the statement before it (`else`, `catch`, `finally`, the
// `while` of a `do`, `instanceof`). Both versions must have the boundary:
// P's, so A and B are whole statements there, and T's, so nothing in R
// continues into B. The body's braces are boundaries too.

// bodyBoundaries lexes the interior of a Java body, src[ob+1:cb] (ob and cb
// the offsets of its braces), and returns for each line of the body (0 is
// the line of the `{`) whether a boundary follows its last token (ends) and
// whether one precedes its first token (starts). ok is false when the
// body's brackets do not pair.
func bodyBoundaries(src []byte, ob, cb int) (ends, starts []bool, ok bool) {
	type token struct {
		line  int
		end   bool // `;` or `}`, and at depth 0 after it
		start bool // begins a statement at depth 0
	}
	var toks []token
	line, depth := 0, 0
	add := func(tk token) { toks = append(toks, tk) }
	for i := ob + 1; i < cb; {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '/' && i+1 < cb && src[i+1] == '/':
			for i < cb && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < cb && src[i+1] == '*':
			i += 2
			for i < cb && !(src[i] == '*' && i+1 < cb && src[i+1] == '/') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			if i >= cb {
				return nil, nil, false
			}
			i += 2
		case c == '"' || c == '\'':
			quote := []byte{c}
			if c == '"' && i+2 < cb && src[i+1] == '"' && src[i+2] == '"' {
				quote = []byte(`"""`)
			}
			add(token{line: line})
			i += len(quote)
			for {
				if i >= cb {
					return nil, nil, false
				}
				if src[i] == '\\' {
					i += 2
					continue
				}
				if src[i] == '\n' {
					line++
				}
				if src[i] == quote[0] && i+len(quote) <= cb && string(src[i:i+len(quote)]) == string(quote) {
					i += len(quote)
					break
				}
				i++
			}
		case wordByte(c):
			j := i
			for j < cb && (wordByte(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			switch string(src[i:j]) {
			case "else", "catch", "finally", "while", "instanceof":
				add(token{line: line})
			default:
				add(token{line: line, start: depth == 0})
			}
			i = j
		case c == '@':
			add(token{line: line, start: depth == 0})
			i++
		case c == '(' || c == '[' || c == '{':
			add(token{line: line, start: c == '{' && depth == 0})
			depth++
			i++
		case c == ')' || c == ']' || c == '}':
			if depth--; depth < 0 {
				return nil, nil, false
			}
			add(token{line: line, end: c == '}' && depth == 0})
			i++
		case c == ';':
			add(token{line: line, end: depth == 0})
			i++
		default: // numbers, operators and other punctuation
			add(token{line: line})
			i++
		}
	}
	if depth != 0 {
		return nil, nil, false
	}
	ends, starts = make([]bool, line+1), make([]bool, line+1)
	for k := 0; k+1 < len(toks); k++ {
		if a, b := toks[k], toks[k+1]; a.line < b.line && a.end && b.start {
			ends[a.line], starts[b.line] = true, true
		}
	}
	return ends, starts, true
}

// wordByte reports whether c can begin a Java word (an identifier or
// keyword): letters, `_`, `$`, and the bytes of non-ASCII letters.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

// changedRun returns the text of T's body (braces at mb.ob and mb.cb, P's at
// pOb and pCb) that holds its changes, T's lines [ta, tb] (1-based; tb <
// ta when lines were only removed), as a body: `{`, the run of statements
// around the changes, `}`. The lines before ta and after tb are the same in
// both versions. It returns the whole body when no boundary narrows it.
func changedRun(pText []byte, pOb, pCb int, t []byte, mb movedBody, ta, tb int) []byte {
	whole := t[mb.ob : mb.cb+1]
	pEnds, pStarts, ok := bodyBoundaries(pText, pOb, pCb)
	if !ok {
		return whole
	}
	tEnds, tStarts, ok := bodyBoundaries(t, mb.ob, mb.cb)
	if !ok {
		return whole
	}
	// Body lines: T's line ta is body line ta-1-open; P's lines before the
	// changes are T's, and those after them end where T's do.
	open := int(mb.open.row)
	first, last := ta-1-open, tb-1-open // the changed body lines of T
	tail := len(pStarts) - len(tStarts) // P's body line of T's body line k after the changes: k + tail
	from, to := mb.ob+1, mb.cb
	for k := first - 1; k >= 0; k-- {
		if tEnds[k] && pEnds[k] {
			from = lineStart(t, mb.ob, k+1)
			break
		}
	}
	for k := last + 1; k < len(tStarts); k++ {
		if k+tail >= 0 && k+tail < len(pStarts) && tStarts[k] && pStarts[k+tail] {
			to = lineStart(t, mb.ob, k)
			break
		}
	}
	if from == mb.ob+1 && to == mb.cb {
		return whole
	}
	run := make([]byte, 0, to-from+2)
	return append(append(append(run, '{'), t[from:to]...), '}')
}

// lineStart is the offset of body line k (0: the line of the `{` at ob).
func lineStart(src []byte, ob, k int) int {
	i := ob
	for ; k > 0; k-- {
		for src[i] != '\n' {
			i++
		}
		i++
	}
	return i
}
