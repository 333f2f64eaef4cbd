package onnx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/model/wordpiece"
	"github.com/sugarme/tokenizer/normalizer"
	"github.com/sugarme/tokenizer/pretokenizer"
	"github.com/sugarme/tokenizer/pretrained"
	"github.com/sugarme/tokenizer/processor"
)

// Tokenizer turns text into the model's token ids: a Hugging Face
// tokenizer.json (WordPiece, BPE or Unigram, with its normalizer,
// pre-tokenizer and special-token template), or a BERT vocab.txt.
type Tokenizer struct {
	tk   *tokenizer.Tokenizer
	path string // the file it was read from
	// MaxID is the largest token id it can produce.
	MaxID int
}

// Encoded is one text's tokens, special tokens included.
type Encoded struct {
	IDs, Types []int64
	// Truncated: the text had more tokens than the limit and was cut.
	Truncated bool
}

// LoadTokenizer reads dir/tokenizer.json, or else dir/vocab.txt (lower-cased
// unless dir/tokenizer_config.json says do_lower_case false).
func LoadTokenizer(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	var tk *tokenizer.Tokenizer
	if _, err := os.Stat(path); err == nil {
		tk, err = readTokenizerJSON(path)
		if err != nil {
			return nil, err
		}
	} else {
		path = filepath.Join(dir, "vocab.txt")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("tokenizer: neither %s nor %s exists", filepath.Join(dir, "tokenizer.json"), path)
		}
		lower := true
		if b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
			var cfg struct {
				DoLowerCase *bool `json:"do_lower_case"`
			}
			if err := json.Unmarshal(b, &cfg); err != nil {
				return nil, fmt.Errorf("tokenizer: %s: %w", filepath.Join(dir, "tokenizer_config.json"), err)
			}
			if cfg.DoLowerCase != nil {
				lower = *cfg.DoLowerCase
			}
		}
		if tk, err = bertFromVocab(path, lower); err != nil {
			return nil, err
		}
	}
	// Padding is done per batch, truncation per text (Encode).
	tk.WithPadding(nil)
	tk.WithTruncation(nil)
	t := &Tokenizer{tk: tk, path: path}
	for _, id := range tk.GetVocab(true) {
		t.MaxID = max(t.MaxID, id)
	}
	if tk.GetVocabSize(true) == 0 {
		return nil, fmt.Errorf("tokenizer %s: empty vocabulary", path)
	}
	return t, nil
}

// readTokenizerJSON reads a tokenizer.json; the library panics on some
// malformed files, which becomes an error naming the file.
func readTokenizerJSON(path string) (tk *tokenizer.Tokenizer, err error) {
	defer func() {
		if r := recover(); r != nil {
			tk, err = nil, fmt.Errorf("tokenizer %s: malformed: %v", path, r)
		}
	}()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	tk, err = pretrained.FromReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var cfg struct {
		Normalizer *struct {
			Type         string `json:"type"`
			CleanText    bool   `json:"clean_text"`
			Chinese      bool   `json:"handle_chinese_chars"`
			StripAccents *bool  `json:"strip_accents"`
			Lowercase    bool   `json:"lowercase"`
		} `json:"normalizer"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	if n := cfg.Normalizer; n != nil && n.Type == "BertNormalizer" {
		strip := n.Lowercase // null: as lowercase, as in Hugging Face's
		if n.StripAccents != nil {
			strip = *n.StripAccents
		}
		tk.WithNormalizer(&bertNormalizer{clean: n.CleanText, chinese: n.Chinese, strip: strip, lower: n.Lowercase})
	}
	return tk, nil
}

// bertNormalizer is Hugging Face's BertNormalizer. The library's strips
// accents without decomposing first (é stays), and reads strip_accents null
// as false where Hugging Face follows lowercase; this one decomposes (NFD)
// and drops the combining marks, as Hugging Face does.
type bertNormalizer struct{ clean, chinese, strip, lower bool }

func (b *bertNormalizer) Normalize(n *normalizer.NormalizedString) (*normalizer.NormalizedString, error) {
	n, err := normalizer.NewBertNormalizer(b.clean, false, b.chinese, false).Normalize(n)
	if err != nil {
		return nil, err
	}
	if b.strip {
		n = n.NFD().RemoveAccents()
	}
	if b.lower {
		n = n.Lowercase()
	}
	return n, nil
}

// bertFromVocab builds BERT's tokenizer (BertNormalizer, BertPreTokenizer,
// WordPiece with [UNK], [CLS] … [SEP]) over a vocab.txt, as the Hugging Face
// BertTokenizer does.
func bertFromVocab(path string, lower bool) (*tokenizer.Tokenizer, error) {
	model, err := wordpiece.NewWordPieceFromFile(path, "[UNK]")
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	tk := tokenizer.NewTokenizer(model)
	tk.WithNormalizer(&bertNormalizer{clean: true, chinese: true, strip: lower, lower: lower})
	tk.WithPreTokenizer(pretokenizer.NewBertPreTokenizer())
	var specials []processor.PostToken
	for _, s := range []string{"[SEP]", "[CLS]", "[UNK]"} {
		id, ok := tk.TokenToId(s)
		if !ok {
			return nil, fmt.Errorf("tokenizer %s: no %s token in the vocabulary", path, s)
		}
		specials = append(specials, processor.PostToken{Id: id, Value: s})
	}
	tk.WithPostProcessor(processor.NewBertProcessing(specials[0], specials[1]))
	var added []tokenizer.AddedToken
	for _, s := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		if _, ok := tk.TokenToId(s); ok {
			added = append(added, tokenizer.NewAddedToken(s, true))
		}
	}
	tk.AddSpecialTokens(added)
	return tk, nil
}

// prefixBytes is how much of a long text Encode reads first per token kept:
// tokens of code average 3 to 4 bytes.
const prefixBytes = 4

// Path is the file the tokenizer was read from.
func (t *Tokenizer) Path() string { return t.path }

// Encode tokenizes text with the model's special tokens, keeping at most
// maxTokens of them (0: no limit); a longer text is cut and marked.
func (t *Tokenizer) Encode(text string, maxTokens int) (Encoded, error) {
	var enc *tokenizer.Encoding
	var err error
	cut := false
	if maxTokens > 0 && len(text) > prefixBytes*maxTokens {
		// A long text is read only as far as its tokens can reach: up to a
		// whitespace before prefixBytes bytes per token. Its words before
		// that point tokenize as in the whole text, so when they already
		// give more than maxTokens tokens, the cut text's encoding is the
		// whole text's (TestEncodePrefixIsExact); when they do not, the
		// whole text is read.
		if i := strings.LastIndexAny(text[:prefixBytes*maxTokens], " \t\n\r"); i > 0 {
			enc, err = t.encode(text[:i])
			cut = err == nil && len(enc.Ids) > maxTokens
		}
	}
	if !cut {
		enc, err = t.encode(text)
	}
	if err != nil {
		return Encoded{}, fmt.Errorf("tokenizer %s: %w", t.path, err)
	}
	ids, types := enc.Ids, enc.TypeIds
	var out Encoded
	if maxTokens > 0 && len(ids) > maxTokens {
		// Keep the head and the closing special token(s): what the
		// tokenizer adds after the text is its suffix.
		suffix := 0
		for i := len(ids) - 1; i >= 0 && i < len(enc.SpecialTokenMask) && enc.SpecialTokenMask[i] == 1; i-- {
			suffix++
		}
		suffix = min(suffix, maxTokens/2)
		ids = append(ids[:maxTokens-suffix:maxTokens-suffix], ids[len(ids)-suffix:]...)
		types = append(types[:maxTokens-suffix:maxTokens-suffix], types[len(types)-suffix:]...)
		out.Truncated = true
	}
	out.IDs, out.Types = make([]int64, len(ids)), make([]int64, len(ids))
	for i := range ids {
		out.IDs[i], out.Types[i] = int64(ids[i]), int64(types[i])
	}
	return out, nil
}

func (t *Tokenizer) encode(text string) (enc *tokenizer.Encoding, err error) {
	defer func() {
		if r := recover(); r != nil {
			enc, err = nil, fmt.Errorf("tokenizing failed: %v", r)
		}
	}()
	enc, err = t.tk.EncodeSingle(text, true)
	if err == nil && enc == nil {
		err = errors.New("tokenizing gave no encoding")
	}
	return enc, err
}

// Tokens is the token strings Encode would give for text (for tests and
// debugging).
func (t *Tokenizer) Tokens(text string) ([]string, error) {
	enc, err := t.encode(text)
	if err != nil {
		return nil, err
	}
	return enc.Tokens, nil
}

// EncodePairs encodes the pairs (a, b) for each b of bs as BERT does:
// [CLS] a [SEP] b [SEP], token types 0 up to the first [SEP] and 1 after
// it. a keeps at most maxA tokens (its [CLS] and [SEP] included), each b
// what is left of maxTokens; each is cut at its head, and a pair is marked
// truncated when either of its texts was. a is tokenized once. The
// tokenizer must add one token before and one after a text (BERT's
// template).
func (t *Tokenizer) EncodePairs(a string, bs []string, maxA, maxTokens int) ([]Encoded, error) {
	if maxA < 3 || maxTokens < maxA+2 {
		return nil, fmt.Errorf("tokenizer %s: pairs of at most %d tokens, the first text of at most %d: want the first at least 3 and room for 2 more", t.path, maxTokens, maxA)
	}
	ea, err := t.Encode(a, maxA)
	if err != nil {
		return nil, err
	}
	out := make([]Encoded, len(bs))
	for i, b := range bs {
		// b's own [CLS] is dropped: it keeps maxTokens-len(a)+1 tokens with it.
		eb, err := t.Encode(b, maxTokens-len(ea.IDs)+1)
		if err != nil {
			return nil, err
		}
		if len(ea.IDs) < 2 || len(eb.IDs) < 2 {
			return nil, fmt.Errorf("tokenizer %s: texts encode to %d and %d tokens: want the special tokens around each", t.path, len(ea.IDs), len(eb.IDs))
		}
		n := len(ea.IDs) + len(eb.IDs) - 1
		e := Encoded{IDs: make([]int64, 0, n), Types: make([]int64, n), Truncated: ea.Truncated || eb.Truncated}
		e.IDs = append(append(e.IDs, ea.IDs...), eb.IDs[1:]...)
		for j := len(ea.IDs); j < n; j++ {
			e.Types[j] = 1
		}
		out[i] = e
	}
	return out, nil
}
