package crossenc

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"
)

// specials are BERT's special tokens, ids 0 to 4 ([PAD] is 0: train.py
// pads with it).
var specials = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// vocabCounter counts words as BERT's pre-tokenizer cuts them (runs of
// letters and digits; each punctuation mark alone), lower-cased as its
// normalizer does, in text whose identifiers splitWords has cut.
type vocabCounter map[string]int

func (c vocabCounter) add(text string) {
	start := -1
	for i, r := range text + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if w := text[start:i]; len(w) <= 100 { // WordPiece reads a longer word as [UNK]
				c[strings.ToLower(w)]++
			}
			start = -1
		}
	}
}

// splitWords puts a space inside identifiers at lower→upper, letter↔digit
// and UPPER→Upper-lower boundaries (getHTTPServer2 → get HTTP Server 2), so
// that an identifier's parts are the same tokens as the words: a
// model trained from scratch on little data matches them without learning
// first that ##name and name mean one thing.
func splitWords(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	var prev rune
	rs := []rune(s)
	for i, r := range rs {
		if i > 0 {
			cut := unicode.IsLower(prev) && unicode.IsUpper(r) ||
				(unicode.IsLetter(prev) && unicode.IsDigit(r)) || (unicode.IsDigit(prev) && unicode.IsLetter(r)) ||
				unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if cut {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// build is the vocabulary of at most size tokens: the special tokens, every
// printable ASCII character alone and (letters and digits) as a
// continuation, so that any ASCII word has a WordPiece spelling, then the
// counted units seen at least twice, most frequent first (ties: in byte
// order, so that one text gives one vocabulary).
func (c vocabCounter) build(size int) []string {
	out := slices.Clone(specials)
	seen := map[string]bool{}
	for _, s := range out {
		seen[s] = true
	}
	addTok := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for r := rune('!'); r <= '~'; r++ {
		if unicode.IsUpper(r) {
			continue // lower-cased before WordPiece
		}
		addTok(string(r))
	}
	for r := rune('0'); r <= 'z'; r++ {
		if unicode.IsDigit(r) || unicode.IsLower(r) {
			addTok("##" + string(r))
		}
	}
	type kv struct {
		tok string
		n   int
	}
	var all []kv
	for t, n := range c {
		if n >= 2 && !seen[t] {
			all = append(all, kv{t, n})
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Or(b.n-a.n, strings.Compare(a.tok, b.tok)) })
	for _, e := range all {
		if len(out) >= size {
			break
		}
		addTok(e.tok)
	}
	return out
}

// writeVocab writes tokens one a line, a BERT vocab.txt.
func writeVocab(path string, tokens []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, t := range tokens {
		if strings.ContainsAny(t, " \n\r\t") {
			f.Close()
			return fmt.Errorf("vocabulary token %q holds whitespace", t)
		}
		w.WriteString(t + "\n")
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
