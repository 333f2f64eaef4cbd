package sparse

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The behaviour of Tokenize is versioned by schema.TokenizerVersion, stored
// in every index and checked on load: bump it whenever a change to this file
// can change the output of Tokenize.

const (
	// MinTokenRunes is the shortest token kept, in runes.
	MinTokenRunes = 2
	// MaxTokenRunes is the longest token kept, in runes. Longer tokens are
	// almost always encoded data (base64, hashes, minified code) that no query
	// repeats; their parts are still kept when short enough.
	MaxTokenRunes = 64
)

// stopWords are dropped from documents and queries alike. The list is
// deliberately short, because BM25's IDF already discounts frequent terms and
// every word here becomes unsearchable:
//
//   - Lucene's English stop set (EnglishAnalyzer): a an and are as at be but by
//     for if in into is it no not of on or such that the their then there these
//     they this to was will with;
//   - words that occur in nearly every function of the common languages
//     and never discriminate: def fn func function return self var let const
//     elif else import package public private protected static void.
//
// Words such as "class", "new", "none", "null", "error" or "string" are kept:
// bug reports use them to mean something specific.
var stopWords = map[string]struct{}{
	// Lucene English stop set (single-letter "a" is dropped by length anyway).
	"an": {}, "and": {}, "are": {}, "as": {}, "at": {}, "be": {}, "but": {},
	"by": {}, "for": {}, "if": {}, "in": {}, "into": {}, "is": {}, "it": {},
	"no": {}, "not": {}, "of": {}, "on": {}, "or": {}, "such": {}, "that": {},
	"the": {}, "their": {}, "then": {}, "there": {}, "these": {}, "they": {},
	"this": {}, "to": {}, "was": {}, "will": {}, "with": {},
	// Ubiquitous code keywords.
	"def": {}, "fn": {}, "func": {}, "function": {}, "return": {}, "self": {},
	"var": {}, "let": {}, "const": {}, "elif": {}, "else": {}, "import": {},
	"package": {}, "public": {}, "private": {}, "protected": {}, "static": {},
	"void": {},
}

// IsStopWord reports whether the lower-cased token w is on the stop list.
func IsStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// Tokenize splits text into lower-cased search terms, in order of appearance
// and with repeats (term frequencies matter to BM25).
//
// Rules:
//   - an identifier is a maximal run of Unicode letters, marks, digits and
//     '_'; everything else separates (spaces, punctuation, '-', '.', '/', ':'),
//     so kebab-case words and path components become separate identifiers;
//   - each identifier yields itself, lower-cased with leading and trailing
//     underscores trimmed ("__init__" → "init", "get_user" → "get_user"),
//     followed by its parts when it has more than one: split at '_', at
//     lower→upper case changes, before the last capital of an acronym that
//     starts a word ("HTTPServer" → http, server) and at letter↔digit
//     changes ("utf8Decode" → utf, 8, decode); a plural 's' after an acronym
//     is split off ("URLs" → url, s);
//   - letters without case (CJK, Arabic, ...) behave like lower-case letters,
//     so a run of them is one token;
//   - tokens shorter than MinTokenRunes or longer than MaxTokenRunes runes,
//     and stop words (see IsStopWord), are dropped.
//
// The output depends only on text.
func Tokenize(text string) []string {
	return AppendTokens(nil, text)
}

// AppendTokens appends the tokens of text (see Tokenize) to dst.
func AppendTokens(dst []string, text string) []string {
	var parts []string
	start := -1
	for i, r := range text {
		if isIdentRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			dst, parts = appendIdent(dst, parts[:0], text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		dst, _ = appendIdent(dst, parts[:0], text[start:])
	}
	return dst
}

func isIdentRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// appendIdent appends the whole identifier and then its parts. parts is
// scratch space, returned for reuse.
func appendIdent(dst, parts []string, ident string) ([]string, []string) {
	trimmed := strings.Trim(ident, "_")
	if trimmed == "" {
		return dst, parts
	}
	for seg := range strings.SplitSeq(trimmed, "_") {
		if seg != "" {
			parts = splitCase(parts, seg)
		}
	}
	whole := strings.ToLower(trimmed)
	dst = appendToken(dst, whole)
	if len(parts) == 1 && strings.ToLower(parts[0]) == whole {
		return dst, parts
	}
	for _, p := range parts {
		dst = appendToken(dst, strings.ToLower(p))
	}
	return dst, parts
}

func appendToken(dst []string, tok string) []string {
	runes := len(tok)
	if !isASCII(tok) {
		runes = utf8.RuneCountInString(tok)
	}
	if runes < MinTokenRunes || runes > MaxTokenRunes {
		return dst
	}
	if IsStopWord(tok) {
		return dst
	}
	return append(dst, tok)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

type runeClass uint8

const (
	classLower runeClass = iota // lower-case, caseless letters and marks
	classUpper
	classDigit
)

func classOf(r rune) runeClass {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case 'A' <= r && r <= 'Z':
			return classUpper
		case '0' <= r && r <= '9':
			return classDigit
		}
		return classLower
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return classUpper
	case unicode.IsNumber(r):
		return classDigit
	}
	return classLower
}

// splitCase appends the case- and digit-separated parts of seg (which holds
// no '_') to parts.
func splitCase(parts []string, seg string) []string {
	// Small fixed buffers keep the common case allocation-free.
	var posBuf [48]int
	var clsBuf [48]runeClass
	pos, cls := posBuf[:0], clsBuf[:0]
	for i, r := range seg {
		pos = append(pos, i)
		cls = append(cls, classOf(r))
	}
	n := len(cls)
	// pluralS reports whether rune j is a lone lower-case 's' ending a word.
	pluralS := func(j int) bool {
		return seg[pos[j]] == 's' && (j+1 == n || cls[j+1] != classLower)
	}
	start := 0
	for i := 1; i < n; i++ {
		p, c := cls[i-1], cls[i]
		cut := false
		switch {
		case (p == classDigit) != (c == classDigit):
			cut = true
		case p == classLower && c == classUpper:
			cut = true
		case p == classUpper && c == classUpper && i+1 < n && cls[i+1] == classLower:
			// "HTTPServer": cut before the 'S' that starts "Server", unless
			// the lower-case run is a plural 's' ("URLs"), handled below.
			cut = !pluralS(i + 1)
		case p == classUpper && c == classLower && i >= 2 && cls[i-2] == classUpper && pluralS(i):
			cut = true
		}
		if cut {
			parts = append(parts, seg[pos[start]:pos[i]])
			start = i
		}
	}
	return append(parts, seg[pos[start]:])
}
