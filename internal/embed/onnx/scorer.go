package onnx

import (
	"context"
	"fmt"
	"math"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Scorer scores text pairs with an exported cross-encoder: a model whose
// inputs are Model's and whose output is one float per pair ([batch] or
// [batch, 1]), fed [CLS] a [SEP] b [SEP] with token types 0 then 1. It is
// safe for concurrent use.
type Scorer struct {
	file   string
	tok    *Tokenizer
	opts   Options
	sess   *ort.DynamicAdvancedSession
	inputs []string
	output string
	sum    string
	mu     sync.Mutex
}

// OpenScorer loads the cross-encoder in dir (files as Open reads them;
// Options.Pool is not used). MaxTokens bounds a pair, special tokens
// included.
func OpenScorer(dir string, opts Options) (*Scorer, error) {
	o, err := openSession(dir, opts, func(file string, outs []ort.InputOutputInfo) (ort.InputOutputInfo, error) {
		out := outs[0]
		d := out.Dimensions
		if out.DataType != ort.TensorElementDataTypeFloat || len(d) < 1 || len(d) > 2 || len(d) == 2 && d[1] != 1 {
			return out, fmt.Errorf("onnx model %s: output %s is %s %v; want float [batch] or [batch, 1]: one score per pair", file, out.Name, out.DataType, d)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return &Scorer{file: o.file, tok: o.tok, opts: o.opts, sess: o.sess, inputs: o.inputs, output: o.output.Name, sum: o.sum}, nil
}

// Close frees the session.
func (s *Scorer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	return err
}

// SHA256 is the model file's digest.
func (s *Scorer) SHA256() string { return s.sum }

// MaxTokens bounds a pair's tokens.
func (s *Scorer) MaxTokens() int { return s.opts.MaxTokens }

// Tokenizer is the model's tokenizer.
func (s *Scorer) Tokenizer() *Tokenizer { return s.tok }

// Score returns the model's score of each pair (a, bs[i]), in order: a is
// cut to at most maxA tokens (0: half of MaxTokens), each b to what is left.
// NaN or Inf in the output is an error; on any error no score is returned.
func (s *Scorer) Score(ctx context.Context, a string, bs []string, maxA int) ([]float32, error) {
	if maxA <= 0 {
		maxA = s.opts.MaxTokens / 2
	}
	enc, err := s.tok.EncodePairs(a, bs, maxA, s.opts.MaxTokens)
	if err != nil {
		return nil, err
	}
	return s.ScoreEncoded(ctx, enc)
}

// ScoreEncoded scores pairs already encoded (EncodePairs).
func (s *Scorer) ScoreEncoded(ctx context.Context, enc []Encoded) ([]float32, error) {
	return byLength(ctx, enc, s.opts.Batch, s.run)
}

func (s *Scorer) run(batch []Encoded) ([]float32, error) {
	out, _, err := runBatch(&s.mu, &s.sess, s.file, s.inputs, batch)
	if err != nil {
		return nil, err
	}
	defer out.Destroy()
	t, ok := out.(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("onnx model %s: output %s is not a float tensor", s.file, s.output)
	}
	data := t.GetData()
	if len(data) != len(batch) {
		return nil, fmt.Errorf("onnx model %s: output %s has shape %v; want one score for each of %d pairs", s.file, s.output, t.GetShape(), len(batch))
	}
	scores := make([]float32, len(data))
	for i, v := range data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("onnx model %s: the output holds NaN or Inf (pair %d of a batch of %d)", s.file, i+1, len(batch))
		}
		scores[i] = v
	}
	return scores, nil
}
