package onnx

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

// bertTokenizer is BERT's uncased tokenizer from its vocab.txt.
func bertTokenizer(t *testing.T) *Tokenizer {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), onnxtest.BERTVocab, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestEncodePairs: BERT's pair layout, [CLS] a [SEP] b [SEP] with types 0
// then 1, each text cut at its head to its share.
func TestEncodePairs(t *testing.T) {
	tok := bertTokenizer(t)
	// "hello world" is 7592 2088; "def get_user_name(x): return x+1" is
	// bertCases[1].
	got, err := tok.EncodePairs("Hello world", []string{"", "def get_user_name(x): return x+1"}, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{101, 7592, 102, 102}, {101, 7592, 102, 13366, 2131, 1035, 5310, 1035, 2171, 102}}
	wantTypes := [][]int64{{0, 0, 0, 1}, {0, 0, 0, 1, 1, 1, 1, 1, 1, 1}}
	for i, e := range got {
		if !slices.Equal(e.IDs, want[i]) || !slices.Equal(e.Types, wantTypes[i]) || !e.Truncated {
			t.Errorf("pair %d: ids %v types %v truncated %v; want %v, %v, true", i, e.IDs, e.Types, e.Truncated, want[i], wantTypes[i])
		}
	}
	full, err := tok.EncodePairs("Hello world", []string{"x"}, 64, 256)
	if err != nil {
		t.Fatal(err)
	}
	if e := full[0]; !slices.Equal(e.IDs, []int64{101, 7592, 2088, 102, 1060, 102}) || e.Truncated {
		t.Errorf("uncut pair: ids %v truncated %v", e.IDs, e.Truncated)
	}
	if _, err := tok.EncodePairs("a", []string{"b"}, 2, 10); err == nil {
		t.Error("a first text of 2 tokens: want an error")
	}
}

// TestOpenScorerRefusesEncoders: an embedding model (token states out) is
// not a cross-encoder; the error names the file and the output.
func TestOpenScorerRefusesEncoders(t *testing.T) {
	requireRuntime(t)
	dir := modelDir(t, onnxtest.BERTConfig{})
	s, err := OpenScorer(dir, Options{})
	if err == nil {
		s.Close()
		t.Fatal("opened an encoder as a scorer")
	}
	if !strings.Contains(err.Error(), filepath.Join(dir, "model.onnx")) || !strings.Contains(err.Error(), "one score per pair") {
		t.Errorf("error %q: want the file and what output is wanted", err)
	}
}
