package badinput

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
	"github.com/locus-dev/locus/internal/rank/crossenc"
)

// crossEncoderDir writes a cross-encoder directory into the sandbox (a
// manifest, an ONNX model and its vocab.txt) for edit to damage, and
// returns it.
func crossEncoderDir(s *sandbox, edit func(dir string)) string {
	dir := filepath.Join(s.dir, "ce")
	if err := onnxtest.WriteBERT(dir, onnxtest.BERTConfig{}); err != nil {
		s.t.Fatal(err)
	}
	sum := sha256.Sum256(onnxtest.BERTVocab)
	m, _ := json.Marshal(crossenc.Manifest{Format: crossenc.Format, MaxTokens: 128, MaxQueryTokens: 32, VocabSHA256: hex.EncodeToString(sum[:])})
	if err := os.WriteFile(filepath.Join(dir, crossenc.ManifestFile), m, 0o644); err != nil {
		s.t.Fatal(err)
	}
	edit(dir)
	return dir
}

// neuralCases are cross-encoder model directories the second stage cannot
// score with.
var neuralCases = []badCase{
	{
		name:  "cross-encoder-truncated",
		input: "`localize --method hybrid --cross-encoder DIR` with DIR/model.onnx cut to a third (a copy that stopped early)",
		want:  "exit 2 before any ranking, naming the file: not a readable ONNX model",
		setup: func(s *sandbox) []string {
			dir := crossEncoderDir(s, func(dir string) {
				path := filepath.Join(dir, crossenc.ModelFile)
				data, err := os.ReadFile(path)
				if err != nil {
					s.t.Fatal(err)
				}
				if err := os.WriteFile(path, data[:len(data)/3], 0o644); err != nil {
					s.t.Fatal(err)
				}
			})
			return []string{"localize", "--repo", baseRepo, "--method", "hybrid", "--cross-encoder", dir, "parse the numbers"}
		},
		code:  2,
		names: []string{filepath.Join("ce", crossenc.ModelFile), "not a readable ONNX model"},
	},
	{
		name:  "cross-encoder-no-vocab",
		input: "`--cross-encoder DIR` whose vocab.txt is missing",
		want:  "exit 2 before any ranking, naming DIR/vocab.txt",
		setup: func(s *sandbox) []string {
			dir := crossEncoderDir(s, func(dir string) {
				if err := os.Remove(filepath.Join(dir, crossenc.VocabFile)); err != nil {
					s.t.Fatal(err)
				}
			})
			return []string{"localize", "--repo", baseRepo, "--method", "hybrid", "--cross-encoder", dir, "parse the numbers"}
		},
		code:  2,
		names: []string{filepath.Join("ce", crossenc.VocabFile), "no such file"},
	},
	{
		name:  "cross-encoder-wrong-method",
		input: "`localize --method spisr --cross-encoder DIR`: a second stage for a method that has none",
		want:  "exit 2 before any ranking, saying which methods take a cross-encoder",
		setup: func(s *sandbox) []string {
			dir := crossEncoderDir(s, func(string) {})
			return []string{"localize", "--repo", baseRepo, "--method", "spisr", "--cross-encoder", dir, "parse the numbers"}
		},
		code:  2,
		names: []string{"--cross-encoder is for --method hybrid or learned, not spisr"},
	},
}
