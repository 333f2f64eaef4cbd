package changes

// Reading a changed Java or C body by its changed statements alone (a C
// body holding a preprocessor directive is read whole).
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
//
// The same holds inside any block: where every change lies in one block
// whose braces' lines did not change (an if's, a loop's, a lambda's), the
// runs are found among that block's statements. And where changes are
// apart, with whole statements between them in both versions (A + R1 + M
// + R2 + B), only R1 and R2 are read, one after the other: M is not
// continued by either, nor continues them.

// javaToken is a token of a Java body's interior: its offset, its line
// (0 is the line of the body's `{`), and its kind: 'w' a word (an
// identifier or keyword, src[off:end]), '"' a string, text block or
// character literal, or else the punctuation byte itself.
type javaToken struct {
	off, end, line int
	kind           byte
}

// javaBodyTokens lexes the interior of a Java body, src[ob+1:cb] (ob and
// cb the offsets of its braces), skipping comments; lines is the number of
// the body's last line. ok is false when a comment, string or text block
// does not end inside it.
func javaBodyTokens(src []byte, ob, cb int) (toks []javaToken, lines int, ok bool) {
	toks = make([]javaToken, 0, (cb-ob)/4+16) // Java averages more than four bytes a token
	line := 0
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
				return nil, 0, false
			}
			i += 2
		case c == '"' || c == '\'':
			tk := javaToken{off: i, line: line, kind: '"'}
			quote := []byte{c}
			if c == '"' && i+2 < cb && src[i+1] == '"' && src[i+2] == '"' {
				quote = []byte(`"""`)
			}
			i += len(quote)
			for {
				if i >= cb {
					return nil, 0, false
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
			tk.end = i
			toks = append(toks, tk)
		case wordByte(c):
			j := i
			for j < cb && (wordByte(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, javaToken{off: i, end: j, line: line, kind: 'w'})
			i = j
		default: // punctuation; numbers are words' digits or punctuation
			toks = append(toks, javaToken{off: i, end: i + 1, line: line, kind: c})
			i++
		}
	}
	return toks, line, true
}

// bodyBoundaries returns, for each line of a run of a Java body's tokens,
// toks (the interior of a block whose `{` is on line base, and whose `}` on
// line last), whether a boundary follows its last token (ends) and whether
// one precedes its first token (starts), indexed from base. ok is false
// when the run's brackets do not pair.
func bodyBoundaries(src []byte, toks []javaToken, base, last int) (ends, starts []bool, ok bool) {
	ends, starts = make([]bool, last-base+1), make([]bool, last-base+1)
	depth := 0
	prevEnd, prevLine := false, -1 // the previous token's: `;` or `}` at depth 0 after it, and its line
	for _, tk := range toks {
		start, end := false, false
		switch tk.kind {
		case 'w':
			switch string(src[tk.off:tk.end]) {
			case "else", "catch", "finally", "while", "instanceof":
			default:
				start = depth == 0
			}
		case '@':
			start = depth == 0
		case '(', '[', '{':
			start = tk.kind == '{' && depth == 0
			depth++
		case ')', ']', '}':
			if depth--; depth < 0 {
				return nil, nil, false
			}
			end = tk.kind == '}' && depth == 0
		case ';':
			end = depth == 0
		}
		if prevEnd && start && prevLine < tk.line {
			ends[prevLine-base], starts[tk.line-base] = true, true
		}
		prevEnd, prevLine = end, tk.line
	}
	if depth != 0 {
		return nil, nil, false
	}
	return ends, starts, true
}

// javaBlock is a pair of braces inside a Java body that is a block: the
// indices of its braces among the body's tokens.
type javaBlock struct {
	open, close int
}

// bodyBlocks returns the blocks among a Java body's tokens, in the order
// their braces close; ok is false when its brackets do not pair. A `{`
// opens a block where the tokens before it say so whatever follows: after
// `->` (a lambda's or a switch rule's body), and, directly in a block,
// after the `)` of `if`, `for`, `while`, `catch`, `synchronized` or `try
// (…)`, after `else`, `try`, `finally` or `do`, and where a statement
// begins (after `;`, `{`, `}` or a label's `:`). Braces after `=`, `]`, `,`
// or `(` are array initializers or annotation values; after a word or
// another `)`, a class's body (`new T() {`, `record R(…) {`) or a
// switch's: none of them holds statements.
func bodyBlocks(src []byte, toks []javaToken) (blocks []javaBlock, ok bool) {
	type open struct {
		tok   int
		block bool // a `{` that opens a block
		head  bool // a `(` after if, for, while, …
	}
	stack := []open{{tok: -1, block: true}} // the body
	afterHead := false                      // the last `)` closed the head of a statement with a block
	for k, tk := range toks {
		prev := byte(0)
		var word string
		if k > 0 {
			prev = toks[k-1].kind
			if prev == 'w' {
				word = string(src[toks[k-1].off:toks[k-1].end])
			}
		}
		top := stack[len(stack)-1]
		switch tk.kind {
		case '(', '[':
			head := false
			switch word {
			case "if", "for", "while", "catch", "synchronized", "try":
				head = tk.kind == '('
			}
			stack = append(stack, open{tok: k, head: head})
		case '{':
			var block bool
			switch {
			case prev == '>' && k > 1 && toks[k-2].kind == '-' && toks[k-2].end == toks[k-1].off:
				block = true
			case !top.block:
			case prev == ')':
				block = afterHead
			case prev == 'w':
				block = word == "else" || word == "try" || word == "finally" || word == "do"
			case prev == ';' || prev == '{' || prev == '}' || prev == ':':
				block = true
			}
			stack = append(stack, open{tok: k, block: block})
		case ')', ']', '}':
			if len(stack) == 1 || (tk.kind == '}') != (toks[top.tok].kind == '{') {
				return nil, false
			}
			stack = stack[:len(stack)-1]
			if tk.kind == ')' {
				afterHead = top.head
			}
			if top.block {
				blocks = append(blocks, javaBlock{open: top.tok, close: k})
			}
		}
	}
	return blocks, len(stack) == 1
}

// wordByte reports whether c can begin a Java word (an identifier or
// keyword): letters, `_`, `$`, and the bytes of non-ASCII letters.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

// changedRuns returns the text of T's body (braces at mb.ob and mb.cb, P's
// at pOb and pCb) that holds its changes, hunks (in order, all inside the
// body), as a body: `{`, the runs of statements around the hunks one after
// another, `}`. The runs lie in the innermost block around the changes
// whose braces are on unchanged lines (innerBlock). Each run is whole
// statements in both versions, so the unchanged statements between two
// runs cannot join them: if the runs read clean together, each does, and
// so does the body. It returns the whole body when nothing narrows it,
// and nil when T's brackets do not pair (the body cannot read clean).
// With ownLines (C) the runs begin on a line of their own after the `{`:
// C macros are mended line by line (extract.CBlankMacroLines), as in the file.
func changedRuns(pText []byte, pOb, pCb int, t []byte, mb movedBody, hunks []lineHunk, ownLines bool) []byte {
	whole := t[mb.ob : mb.cb+1]
	tToks, tLast, ok := javaBodyTokens(t, mb.ob, mb.cb)
	if !ok {
		return whole
	}
	pToks, pLast, ok := javaBodyTokens(pText, pOb, pCb)
	if !ok || directive(tToks) || directive(pToks) {
		return whole
	}
	// Lines of the body from here on: 0 is the line of its `{`. Before the
	// first hunk T's and P's lines are the same; between hunks and after
	// the last, P's line is T's plus the lines the hunks before it added
	// or removed.
	open := int(mb.open.row) + 1 // T's line of the body's `{`
	shift0 := hunks[0].pa - hunks[0].ta
	first, last := hunks[0].ta-open, hunks[len(hunks)-1].tb-open
	// The body, or the block inside it: T's braces, the lines of its
	// braces and its tokens, in T and in P.
	tBlocks, ok := bodyBlocks(t, tToks)
	if !ok {
		return nil
	}
	ob, cb := mb.ob, mb.cb
	base, tEnd, pEnd := 0, tLast, pLast
	if tb, pb, ok := innerBlock(bodyTokens{src: pText, toks: pToks, ob: pOb, cb: pCb}, bodyTokens{src: t, toks: tToks, ob: mb.ob, cb: mb.cb}, tBlocks, first, last); ok {
		ob, cb = tToks[tb.open].off, tToks[tb.close].off
		base, tEnd, pEnd = tToks[tb.open].line, tToks[tb.close].line, pToks[pb.close].line
		tToks, pToks = tToks[tb.open+1:tb.close], pToks[pb.open+1:pb.close]
	}
	pEnds, pStarts, ok := bodyBoundaries(pText, pToks, base, pEnd)
	if !ok {
		return whole
	}
	tEnds, tStarts, ok := bodyBoundaries(t, tToks, base, tEnd)
	if !ok {
		return nil
	}
	type span struct{ from, to int } // offsets in t
	var runs []span
	for i, h := range hunks {
		f, l := h.ta-open-base, h.tb-open-base              // the hunk's lines in the block
		before, after := h.pa-h.ta-shift0, h.pb-h.tb-shift0 // P's line of T's line k: k + before above the hunk, k + after below it
		prevEnd := 0                                        // the block's line where the runs before may reach
		if i > 0 {
			prevEnd = hunks[i-1].tb - open - base
		}
		nextStart := len(tStarts) // where the next hunk begins
		if i+1 < len(hunks) {
			nextStart = hunks[i+1].ta - open - base
		}
		from, to := ob+1, cb
		for k := f - 1; k >= 0 && k > prevEnd; k-- {
			if k+before >= 0 && k+before < len(pEnds) && tEnds[k] && pEnds[k+before] {
				from = lineStart(t, ob, k+1)
				break
			}
		}
		for k := l + 1; k < len(tStarts) && k < nextStart; k++ {
			if k+after >= 0 && k+after < len(pStarts) && tStarts[k] && pStarts[k+after] {
				to = lineStart(t, ob, k)
				break
			}
		}
		if i+1 < len(hunks) && to == cb {
			to = lineStart(t, ob, max(nextStart, 0)) // up to the next hunk: the runs join
		}
		if n := len(runs); n > 0 && from <= runs[n-1].to {
			runs[n-1].to = max(runs[n-1].to, to) // no boundary between: one run
			continue
		}
		runs = append(runs, span{from, to})
	}
	if len(runs) == 1 && runs[0].from == ob+1 && runs[0].to == cb {
		return t[ob : cb+1]
	}
	body := []byte{'{'}
	if ownLines {
		body = append(body, '\n')
	}
	for _, r := range runs {
		body = append(body, t[r.from:r.to]...)
	}
	return append(body, '}')
}

// directive reports whether a C body's tokens hold a preprocessor
// directive (#if, #define, …): it can join or split statements as no token
// of the statements shows, so the body is read whole.
func directive(toks []javaToken) bool {
	for _, tk := range toks {
		if tk.kind == '#' {
			return true
		}
	}
	return false
}

// bodyTokens is a function body's text, its tokens (javaBodyTokens) and
// the offsets of its braces.
type bodyTokens struct {
	src    []byte
	toks   []javaToken
	ob, cb int
}

// innerBlock finds the innermost block among T's body tokens (t, whose
// blocks are tBlocks) that holds its changed lines, [first, last] counted
// from the body's `{` line, with its braces on unchanged lines, and the
// same block among P's (p); ok is false where none qualifies. A block's
// text is its statements: if P's block read clean and T's block's
// statements read clean alone, T's block reads clean where P's stood, for
// all around it is P's text.
func innerBlock(p, t bodyTokens, tBlocks []javaBlock, first, last int) (tb, pb javaBlock, ok bool) {
	found := false
	for _, b := range tBlocks { // inner blocks close first
		if t.toks[b.open].line < first && t.toks[b.close].line > last {
			tb, found = b, true
			break
		}
	}
	if !found {
		return tb, pb, false
	}
	// Before the changes the texts agree from the body's `{`, and after
	// them up to its `}`: P's block has as many tokens before it and
	// after it as T's, at the same distances from the body's braces.
	pb = javaBlock{open: tb.open, close: len(p.toks) - (len(t.toks) - tb.close)}
	if pb.close <= pb.open || pb.close >= len(p.toks) ||
		p.toks[pb.open].off-p.ob != t.toks[tb.open].off-t.ob || p.cb-p.toks[pb.close].off != t.cb-t.toks[tb.close].off {
		return tb, pb, false
	}
	pBlocks, ok := bodyBlocks(p.src, p.toks)
	if !ok {
		return tb, pb, false
	}
	for _, b := range pBlocks {
		if b == pb {
			return tb, pb, true
		}
	}
	return tb, pb, false
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
