// Package termtext makes text that a repository controls (paths, names,
// commit messages, issue titles, error messages quoting them) safe to print
// on a terminal: a control character cannot move the cursor, clear the
// screen, set the window title or break a table's line, and bytes that are
// not UTF-8 stay visible.
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character a terminal would act on instead of
// show written the way strconv.Quote writes it: C0 controls (tab and
// newline included: \t, \n, \x1b), DEL (\x7f), C1 controls (\u009b), the
// invisible bidirectional and line-separator controls (\u202e, \u2028), and
// each byte of invalid UTF-8 as \xNN. Everything else, quotes and
// backslashes included, is left as it is, so ordinary text reads unchanged.
func Escape(s string) string { return escape(s, false) }

// Lines is Escape for multi-line messages: newlines and tabs are kept.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n, keepLines) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case unsafe(r, n, keepLines):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafe reports whether the rune r, n bytes long, must be escaped.
func unsafe(r rune, n int, keepLines bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n' || r == '\t':
		return !keepLines
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
