package onnx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

// BERT's uncased vocabulary (all-MiniLM-L6-v2, bge-small and gte-small use
// it): the ids are the tokens' line numbers in onnxtest.BERTVocab
// (0-based), split as the Hugging Face BertTokenizer splits: lower case,
// accents stripped, punctuation and CJK characters alone, WordPiece
// continuations, [UNK] for what the vocabulary lacks.
var bertCases = []struct {
	text string
	ids  []int64
}{
	{"Hello world, tokenization!", []int64{101, 7592, 2088, 1010, 19204, 3989, 999, 102}},
	{"def get_user_name(x): return x+1", []int64{101, 13366, 2131, 1035, 5310, 1035, 2171, 1006, 1060, 1007, 1024, 2709, 1060, 1009, 1015, 102}},
	{"Café 中文 😁", []int64{101, 7668, 1746, 1861, 100, 102}},
	{"", []int64{101, 102}},
}

func TestBERTVocabTokenIDs(t *testing.T) {
	tok := bertTokenizer(t)
	if tok.MaxID != 30521 {
		t.Errorf("MaxID = %d, want 30521", tok.MaxID)
	}
	for _, c := range bertCases {
		enc, err := tok.Encode(c.text, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(enc.IDs, c.ids) || enc.Truncated {
			toks, _ := tok.Tokens(c.text)
			t.Errorf("%q: ids %v (%q), want %v", c.text, enc.IDs, toks, c.ids)
		}
		if len(enc.Types) != len(enc.IDs) || slices.ContainsFunc(enc.Types, func(x int64) bool { return x != 0 }) {
			t.Errorf("%q: token types %v, want all 0", c.text, enc.Types)
		}
	}
}

// writeJSON writes v as dir/tokenizer.json.
func writeJSON(t *testing.T, dir string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The same vocabulary as a tokenizer.json (the Hugging Face layout of the
// MiniLM exports) tokenizes as vocab.txt does.
func TestTokenizerJSONWordPiece(t *testing.T) {
	vocab := map[string]int{}
	for s := bufio.NewScanner(bytes.NewReader(onnxtest.BERTVocab)); s.Scan(); {
		vocab[s.Text()] = len(vocab)
	}
	dir := t.TempDir()
	writeJSON(t, dir, map[string]any{
		"version": "1.0",
		"added_tokens": []map[string]any{
			{"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
			{"id": 100, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
			{"id": 101, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
			{"id": 102, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
		},
		"normalizer":     map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 102}, "cls": []any{"[CLS]", 101}},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
		// Exports often pad to a fixed length; padding is per batch here.
		"padding": map[string]any{"strategy": map[string]any{"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": nil, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
	})
	tok, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Path() != filepath.Join(dir, "tokenizer.json") {
		t.Errorf("read %s, want the tokenizer.json", tok.Path())
	}
	for _, c := range bertCases {
		enc, err := tok.Encode(c.text, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(enc.IDs, c.ids) {
			t.Errorf("%q: ids %v, want %v", c.text, enc.IDs, c.ids)
		}
	}
}

// BPE and Unigram tokenizer.json models, on vocabularies small enough to
// work out by hand.
func TestTokenizerJSONBPEAndUnigram(t *testing.T) {
	cases := []struct {
		name  string
		json  map[string]any
		text  string
		ids   []int64
		maxID int
	}{
		{"BPE", map[string]any{
			"pre_tokenizer": map[string]any{"type": "Whitespace"},
			"model": map[string]any{"type": "BPE", "unk_token": "<unk>", "fuse_unk": false, "dropout": nil,
				"continuing_subword_prefix": nil, "end_of_word_suffix": nil,
				"vocab":  map[string]int{"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 5, "d": 6},
				"merges": []string{"a b", "ab c"}},
		}, "abc abd", []int64{5, 4, 6}, 6},
		{"Unigram", map[string]any{
			"pre_tokenizer": map[string]any{"type": "Metaspace", "replacement": "▁", "add_prefix_space": true, "prepend_scheme": "always"},
			"model": map[string]any{"type": "Unigram", "unk_id": 0,
				"vocab": [][]any{{"<unk>", 0.0}, {"▁ab", -1.0}, {"▁a", -2.0}, {"b", -2.0}, {"c", -3.0}, {"▁abc", -1.5}, {"▁", -4.0}}},
		}, "abc ab", []int64{5, 1}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.json["version"] = "1.0"
			writeJSON(t, dir, c.json)
			tok, err := LoadTokenizer(dir)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := tok.Encode(c.text, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(enc.IDs, c.ids) || tok.MaxID != c.maxID {
				toks, _ := tok.Tokens(c.text)
				t.Errorf("%q: ids %v (%q), max id %d; want %v, %d", c.text, enc.IDs, toks, tok.MaxID, c.ids, c.maxID)
			}
			// Cut to two tokens: no special tokens to keep at the end.
			if enc, _ := tok.Encode(c.text, 1); len(enc.IDs) != 1 || !enc.Truncated {
				t.Errorf("Encode(%q, 1) = %v, truncated %v", c.text, enc.IDs, enc.Truncated)
			}
		})
	}
}

// vocab.txt with tokenizer_config.json do_lower_case false keeps case.
func TestVocabKeepsCase(t *testing.T) {
	dir := t.TempDir()
	vocab := "[PAD]\n[UNK]\n[CLS]\n[SEP]\nHello\nhello\n"
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(vocab), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"do_lower_case": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := tok.Encode("Hello hello", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{2, 4, 5, 3}; !slices.Equal(enc.IDs, want) {
		t.Errorf("ids %v, want %v", enc.IDs, want)
	}
}

// Encode reads only a prefix of a long text; the ids must be those of the
// whole text cut to the limit, for each kind of tokenizer, on code.
func TestEncodePrefixIsExact(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), onnxtest.BERTVocab, 0o644); err != nil {
		t.Fatal(err)
	}
	bert, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A byte-level-free BPE over letters and a Unigram over words: both
	// split at whitespace first, as every tokenizer here does.
	bpeDir := t.TempDir()
	vocab := map[string]int{"<unk>": 0}
	for c := 'a'; c <= 'z'; c++ {
		vocab[string(c)] = len(vocab)
	}
	vocab["de"], vocab["def"], vocab["re"], vocab["ret"] = len(vocab), len(vocab)+1, len(vocab)+2, len(vocab)+3
	writeJSON(t, bpeDir, map[string]any{"version": "1.0", "pre_tokenizer": map[string]any{"type": "Whitespace"},
		"model": map[string]any{"type": "BPE", "unk_token": "<unk>", "fuse_unk": false, "dropout": nil, "continuing_subword_prefix": nil, "end_of_word_suffix": nil,
			"vocab": vocab, "merges": []string{"d e", "de f", "r e", "re t"}}})
	bpe, err := LoadTokenizer(bpeDir)
	if err != nil {
		t.Fatal(err)
	}
	var src []byte
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	checked := 0
	defer func() {
		if checked < 20 {
			t.Errorf("checked %d texts; want at least 20", checked)
		}
	}()
	for _, tok := range []*Tokenizer{bert, bpe} {
		for _, max := range []int{8, 64, 256} {
			for start := 0; start < len(src)-20000; start += 9999 {
				text := string(src[start : start+20000])
				checked++
				fast, err := tok.Encode(text, max)
				if err != nil {
					t.Fatal(err)
				}
				full, err := tok.encode(text)
				if err != nil {
					t.Fatal(err)
				}
				want := slices.Clone(full.Ids[:max-1])
				want = append(want, full.Ids[len(full.Ids)-1]) // the closing special token, or the last
				if tok == bpe {
					want = full.Ids[:max]
				}
				got := make([]int, len(fast.IDs))
				for i, id := range fast.IDs {
					got[i] = int(id)
				}
				if !slices.Equal(got, want) || !fast.Truncated {
					t.Fatalf("%s, max %d, text at %d: prefix gives %v, whole text %v", tok.Path(), max, start, got, want)
				}
			}
		}
	}
}
