// Package onnxtest writes BERT encoders in ONNX with deterministic random
// weights and BERT's uncased vocabulary: models whose vectors mean nothing,
// for the onnx package's tests and the embedding speed benchmark, where a
// real model's weights cannot be had.
package onnxtest

import (
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// BERTConfig shapes a BERT encoder written by WriteBERT. The zero value of
// each field takes the default in its comment.
type BERTConfig struct {
	Vocab        int    // token ids; default 30522 (BERT's uncased vocabulary)
	Hidden       int    // default 32
	Layers       int    // default 2
	Heads        int    // default 4; must divide Hidden
	FFN          int    // feed-forward width; default 4×Hidden
	MaxPositions int    // default 512
	Seed         uint64 // weights are drawn from a PCG seeded with it; default 1
	// Int8: the dense layers' weights are int8 and their inputs quantized
	// at run time (DynamicQuantizeLinear, MatMulInteger), as ONNX
	// Runtime's dynamic quantization writes them; default float32.
	Int8 bool

	// Broken models, for tests of what onnx.Open and Embed refuse:
	NaN    bool // a NaN weight, so every output is NaN
	Pooled bool // the output is [batch, hidden], not token states
}

// MiniLML6 is the shape of all-MiniLM-L6-v2 (6 layers, 384 wide, 12 heads).
var MiniLML6 = BERTConfig{Vocab: 30522, Hidden: 384, Layers: 6, Heads: 12, FFN: 1536, MaxPositions: 512}

func (c *BERTConfig) defaults() {
	if c.Vocab <= 0 {
		c.Vocab = 30522
	}
	if c.Hidden <= 0 {
		c.Hidden = 32
	}
	if c.Layers <= 0 {
		c.Layers = 2
	}
	if c.Heads <= 0 {
		c.Heads = 4
	}
	if c.FFN <= 0 {
		c.FFN = 4 * c.Hidden
	}
	if c.MaxPositions <= 0 {
		c.MaxPositions = 512
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// WriteBERT writes model.onnx and vocab.txt (BERTVocab) into dir: a BERT encoder of the given shape
// with deterministic random weights, taking input_ids, attention_mask and
// token_type_ids ([batch, sequence] int64) and giving last_hidden_state
// ([batch, sequence, hidden] float32), the layout of the Hugging Face ONNX
// exports. Its vectors mean nothing; it is for tests and speed
// measurements, where a real model's weights cannot be had.
func WriteBERT(dir string, c BERTConfig) error {
	c.defaults()
	if c.Hidden%c.Heads != 0 {
		return fmt.Errorf("tiny BERT: %d heads do not divide hidden size %d", c.Heads, c.Hidden)
	}
	b := buildBERT(c)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"model.onnx": b, "vocab.txt": BERTVocab} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return err
		}
	}
	return nil
}

func buildBERT(c BERTConfig) []byte {
	rng := rand.New(rand.NewPCG(c.Seed, 0x10c05))
	H, hd := int64(c.Hidden), int64(c.Hidden/c.Heads)
	rnd := func(n int, scale float32) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = (2*rng.Float32() - 1) * scale
		}
		return out
	}
	fill := func(n int, v float32) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	g := &graphWriter{}
	syms := []string{"batch", "sequence", ""}
	for _, in := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		g.inputs = append(g.inputs, valueInfo(in, elemInt64, []int64{-1, -1}, syms))
	}
	if c.Pooled {
		g.outputs = append(g.outputs, valueInfo("pooler_output", elemFloat, []int64{-1, H}, syms))
	} else {
		g.outputs = append(g.outputs, valueInfo("last_hidden_state", elemFloat, []int64{-1, -1, H}, syms))
	}

	// Embeddings: word + position + token type, then LayerNorm.
	word := g.floats("embeddings.word_embeddings.weight", rnd(c.Vocab*c.Hidden, 0.5), int64(c.Vocab), H)
	posE := g.floats("embeddings.position_embeddings.weight", rnd(c.MaxPositions*c.Hidden, 0.5), int64(c.MaxPositions), H)
	typE := g.floats("embeddings.token_type_embeddings.weight", rnd(2*c.Hidden, 0.5), 2, H)
	one64 := g.int64s("const.one", []int64{1})
	zero64 := g.int64s("const.zero", []int64{0})
	seq := g.op("Gather", []string{g.op("Shape", []string{"input_ids"}), one64}) // scalar
	pos := g.op("Range", []string{zero64, seq, one64})
	x := g.op("Add", []string{
		g.op("Add", []string{g.op("Gather", []string{word, "input_ids"}), g.op("Gather", []string{posE, pos})}),
		g.op("Gather", []string{typE, "token_type_ids"}),
	})
	ln := func(name, in string) string {
		gm := g.floats(name+".weight", fill(c.Hidden, 1), H)
		bt := g.floats(name+".bias", fill(c.Hidden, 0), H)
		return g.op("LayerNormalization", []string{in, gm, bt}, iattr("axis", -1), fattr("epsilon", 1e-12))
	}
	x = ln("embeddings.LayerNorm", x)

	// Padding positions get -10000 before the softmax: [batch, 1, 1, sequence].
	m := g.op("Cast", []string{"attention_mask"}, iattr("to", elemFloat))
	m = g.op("Unsqueeze", []string{m, g.int64s("const.axes12", []int64{1, 2}, 2)})
	neg := g.op("Mul", []string{g.op("Sub", []string{g.floats("const.onef", []float32{1}), m}), g.floats("const.neg", []float32{-10000})})

	heads := g.int64s("const.heads", []int64{0, 0, int64(c.Heads), hd}, 4)
	flat := g.int64s("const.flat", []int64{0, 0, H}, 3)
	scale := g.floats("const.scale", []float32{float32(1 / math.Sqrt(float64(hd)))})
	linear := func(name, in string, from, to int) string {
		wv := rnd(from*to, float32(1/math.Sqrt(float64(from))))
		var y string
		if c.Int8 {
			// Per-tensor symmetric weights: w ≈ ws · wq.
			var amax float32
			for _, v := range wv {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			ws := amax / 127
			wq := make([]int8, len(wv))
			for i, v := range wv {
				wq[i] = int8(math.Round(float64(v / ws)))
			}
			q := g.opN("DynamicQuantizeLinear", []string{in}, 3) // x ≈ xs · (xq − xz)
			mm := g.op("MatMulInteger", []string{q[0], g.int8s(name+".weight_q", wq, int64(from), int64(to)), q[2], g.int8s(name+".weight_zero", []int8{0})})
			s := g.op("Mul", []string{q[1], g.floats(name+".weight_scale", []float32{ws})})
			y = g.op("Mul", []string{g.op("Cast", []string{mm}, iattr("to", elemFloat)), s})
		} else {
			y = g.op("MatMul", []string{in, g.floats(name+".weight", wv, int64(from), int64(to))})
		}
		bv := rnd(to, 0.02)
		if c.NaN {
			bv[0] = float32(math.NaN())
		}
		return g.op("Add", []string{y, g.floats(name+".bias", bv, int64(to))})
	}
	split := func(in string, perm ...int64) string {
		return g.op("Transpose", []string{g.op("Reshape", []string{in, heads})}, intsAttr("perm", perm...))
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		q := split(linear(p+"attention.self.query", x, c.Hidden, c.Hidden), 0, 2, 1, 3)
		k := split(linear(p+"attention.self.key", x, c.Hidden, c.Hidden), 0, 2, 3, 1)
		v := split(linear(p+"attention.self.value", x, c.Hidden, c.Hidden), 0, 2, 1, 3)
		s := g.op("Add", []string{g.op("Mul", []string{g.op("MatMul", []string{q, k}), scale}), neg})
		ctx := g.op("MatMul", []string{g.op("Softmax", []string{s}, iattr("axis", -1)), v})
		ctx = g.op("Reshape", []string{g.op("Transpose", []string{ctx}, intsAttr("perm", 0, 2, 1, 3)), flat})
		x = ln(p+"attention.output.LayerNorm", g.op("Add", []string{linear(p+"attention.output.dense", ctx, c.Hidden, c.Hidden), x}))
		f := linear(p+"intermediate.dense", x, c.Hidden, c.FFN)
		// GELU: x/2 · (1 + erf(x/√2))
		erf := g.op("Erf", []string{g.op("Div", []string{f, g.floats(p+"const.sqrt2", []float32{float32(math.Sqrt2)})})})
		f = g.op("Mul", []string{g.op("Mul", []string{f, g.floats(p+"const.half", []float32{0.5})}),
			g.op("Add", []string{erf, g.floats(p+"const.one", []float32{1})})})
		x = ln(p+"output.LayerNorm", g.op("Add", []string{linear(p+"output.dense", f, c.FFN, c.Hidden), x}))
	}
	// The graph's output is named as the exports name it.
	out := pb(nil).str(nodeInput, x).str(nodeOutput, "last_hidden_state").str(nodeName, "output").str(nodeOpType, "Identity")
	if c.Pooled {
		out = pb(nil).str(nodeInput, x).str(nodeOutput, "pooler_output").str(nodeName, "output").str(nodeOpType, "ReduceMean").
			bytes(nodeAttribute, intsAttr("axes", 1).encode()).bytes(nodeAttribute, iattr("keepdims", 0).encode())
	}
	g.nodes = append(g.nodes, out)
	return g.model("tinybert", 17)
}

// BERTVocab is BERT's uncased WordPiece vocabulary (30,522 tokens; the one
// all-MiniLM-L6-v2, bge-small-en-v1.5 and gte-small use), for models that
// WriteBERT writes.
//
//go:embed bertvocab.txt
var BERTVocab []byte
