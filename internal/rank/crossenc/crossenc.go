// Package crossenc is locus's neural second stage: a small cross-encoder,
// trained from scratch on locus triplets (train.py, PyTorch), exported to
// ONNX and run through internal/embed/onnx to reorder a ranking's first
// candidates.
package crossenc

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/embed/onnx"
	"github.com/locus-dev/locus/internal/spider"
)

// Format names the model directory's layout (manifest.json, model.onnx,
// vocab.txt) and the document text of Document.
const Format = "locus-cross-encoder/1"

// Files of a model directory.
const (
	ManifestFile = "manifest.json"
	ModelFile    = "model.onnx"
	VocabFile    = "vocab.txt"
)

// DefaultTop is how many of the first stage's candidates the second stage
// rescores.
const DefaultTop = 50

// RRFK is the reciprocal-rank-fusion constant of Rerank (the value of the
// method's paper, not tuned here).
const RRFK = 60

// ErrBadModel: a model directory is incomplete, damaged or of another format.
var ErrBadModel = errors.New("bad cross-encoder model")

// Manifest describes a trained model: its shape, what it was trained on and
// how to train it again.
type Manifest struct {
	Format string `json:"format"`
	// MaxTokens bounds a pair, MaxQueryTokens the query's part of it
	// (special tokens included).
	MaxTokens      int `json:"max_tokens"`
	MaxQueryTokens int `json:"max_query_tokens"`
	// ModelSHA256 is model.onnx's digest: a file replaced or damaged after
	// training is refused.
	ModelSHA256 string `json:"model_sha256"`
	// VocabSHA256 is vocab.txt's: the model's token ids are its lines.
	VocabSHA256 string         `json:"vocab_sha256"`
	Params      map[string]any `json:"params"`
	Trained     Trained        `json:"trained"`
	// Result is the trainer's report: losses, held-out accuracy among each
	// query's candidates, the time it took.
	Result map[string]any `json:"result"`
}

// Trained says what a model was trained on.
type Trained struct {
	Data        string   `json:"data"` // the triplets file's base name
	DataSHA256  string   `json:"data_sha256"`
	Repos       []string `json:"repos"`
	Excluded    []string `json:"excluded,omitempty"` // left out by request
	Queries     int      `json:"queries"`
	Valid       int      `json:"valid_queries"`
	Negatives   int      `json:"negatives_per_query"`
	VocabSize   int      `json:"vocab_size"`
	Command     string   `json:"command,omitempty"`
	Seed        int64    `json:"seed"`
	Python      string   `json:"python"`
	TrainerSHA  string   `json:"trainer_sha256"`
	LinesRead   int      `json:"lines_read"`
	LinesNoNegs int      `json:"lines_without_negatives"`
}

// Document is the text a candidate is scored by: its path and qualified
// name, then its code (the training pairs are made by the same function).
func Document(id, code string) string {
	file, name := codegraph.SplitID(id)
	return file + " " + name + "\n" + code
}

// Scorer is an opened model; safe for concurrent use.
type Scorer struct {
	dir string
	m   Manifest
	s   *onnx.Scorer
}

// ReadManifest reads dir's manifest.json.
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("cross-encoder %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("cross-encoder %s: %w: %v", path, ErrBadModel, err)
	}
	if m.Format != Format {
		return Manifest{}, fmt.Errorf("cross-encoder %s: format %q, want %q: %w", path, m.Format, Format, ErrBadModel)
	}
	if m.MaxTokens < 8 || m.MaxQueryTokens < 3 || m.MaxQueryTokens+2 > m.MaxTokens {
		return Manifest{}, fmt.Errorf("cross-encoder %s: max_tokens %d, max_query_tokens %d: want a query part of at least 3 and room for a document: %w", path, m.MaxTokens, m.MaxQueryTokens, ErrBadModel)
	}
	return m, nil
}

// Open loads the model in dir (manifest.json, model.onnx, vocab.txt); a
// missing or damaged file is an error naming it. threads: ONNX Runtime's
// (0: the CPUs Go sees).
func Open(dir string, threads int) (*Scorer, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	// vocab.txt before the runtime: its absence must not read as a
	// tokenizer.json problem.
	vocab := filepath.Join(dir, VocabFile)
	vb, err := os.ReadFile(vocab)
	if err != nil {
		return nil, fmt.Errorf("cross-encoder %s: %w", dir, err)
	}
	if sum := sha256.Sum256(vb); hex.EncodeToString(sum[:]) != m.VocabSHA256 {
		return nil, fmt.Errorf("cross-encoder %s: %s is not the vocabulary the model was trained with (SHA-256 %.12s…, the manifest says %.12s…): %w",
			dir, vocab, hex.EncodeToString(sum[:]), m.VocabSHA256, ErrBadModel)
	}
	s, err := onnx.OpenScorer(dir, onnx.Options{File: ModelFile, MaxTokens: m.MaxTokens, Batch: 32, Threads: threads})
	if err != nil {
		return nil, fmt.Errorf("cross-encoder %s: %w", dir, err)
	}
	if s.SHA256() != m.ModelSHA256 {
		s.Close()
		return nil, fmt.Errorf("cross-encoder %s: %s has SHA-256 %.12s…, the manifest says %.12s…: replaced or damaged since training: %w",
			dir, filepath.Join(dir, ModelFile), s.SHA256(), m.ModelSHA256, ErrBadModel)
	}
	if s.MaxTokens() != m.MaxTokens {
		s.Close()
		return nil, fmt.Errorf("cross-encoder %s: the model has %d positions, the manifest says %d tokens: %w", dir, s.MaxTokens(), m.MaxTokens, ErrBadModel)
	}
	return &Scorer{dir: dir, m: m, s: s}, nil
}

// Close frees the runtime session.
func (s *Scorer) Close() error { return s.s.Close() }

// Manifest is the model's manifest.
func (s *Scorer) Manifest() Manifest { return s.m }

// Dir is the model's directory.
func (s *Scorer) Dir() string { return s.dir }

// Score scores each document against the query.
func (s *Scorer) Score(ctx context.Context, query string, docs []string) ([]float32, error) {
	enc, err := encode(s.s.Tokenizer(), s.m, query, docs)
	if err != nil {
		return nil, fmt.Errorf("cross-encoder %s: %w", s.dir, err)
	}
	out, err := s.s.ScoreEncoded(ctx, enc)
	if err != nil {
		return nil, fmt.Errorf("cross-encoder %s: %w", s.dir, err)
	}
	return out, nil
}

// encode is the pairs the model reads, in training and in Score.
func encode(tok *onnx.Tokenizer, m Manifest, query string, docs []string) ([]onnx.Encoded, error) {
	split := make([]string, len(docs))
	for i, d := range docs {
		split[i] = splitWords(d)
	}
	return tok.EncodePairs(splitWords(query), split, m.MaxQueryTokens, m.MaxTokens)
}

// Rerank reorders the first top (0: DefaultTop) of ranking: each keeps its
// first-stage rank r1 and gets the cross-encoder's rank r2 among them, and
// they are ordered by 1/(RRFK+r1) + 1/(RRFK+r2) (ties: the first stage's
// order), the fused value becoming their score; the rest follow in their
// order, scored 2/(RRFK+r1), below every rescored one.
// code gives a candidate's code ("" when it has none: it is scored by its
// path and name alone).
func (s *Scorer) Rerank(ctx context.Context, query string, ranking []spider.Scored, code func(id string) string, top int) ([]spider.Scored, error) {
	if top <= 0 {
		top = DefaultTop
	}
	n := min(top, len(ranking))
	if n < 2 {
		return ranking, nil
	}
	docs := make([]string, n)
	for i, c := range ranking[:n] {
		docs[i] = Document(c.ID, code(c.ID))
	}
	scores, err := s.Score(ctx, query, docs)
	if err != nil {
		return nil, err
	}
	return fuse(ranking, n, func(i int) float32 { return scores[i] }), nil
}

// fuse is Rerank's order of ranking given the cross-encoder's score of
// each of its first n.
func fuse(ranking []spider.Scored, n int, score func(i int) float32) []spider.Scored {
	byCE := make([]int, n)
	for i := range byCE {
		byCE[i] = i
	}
	slices.SortStableFunc(byCE, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
	fused := make([]float64, n)
	for r2, i := range byCE {
		// Ties (r1, r2 and r2, r1) go to the first stage's order, also
		// where the scores are sorted again (spider.TopK sorts by score).
		fused[i] = 1/float64(RRFK+i+1) + 1/float64(RRFK+r2+1) - float64(i)*1e-9
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fused[b], fused[a]) })
	out := make([]spider.Scored, 0, len(ranking))
	for _, i := range order {
		out = append(out, spider.Scored{ID: ranking[i].ID, Score: fused[i]})
	}
	for i := n; i < len(ranking); i++ {
		out = append(out, spider.Scored{ID: ranking[i].ID, Score: 2 / float64(RRFK+i+1)})
	}
	return out
}
