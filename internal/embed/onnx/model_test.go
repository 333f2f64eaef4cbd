package onnx

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

// requireRuntime skips when the ONNX Runtime library is missing here; CI
// installs it (tools/install-onnxruntime.sh) and fails any such skip.
func requireRuntime(t *testing.T) {
	t.Helper()
	if err := initRuntime(""); err != nil {
		t.Skipf("%v", err)
	}
}

// modelDir writes a model of shape c with BERT's uncased vocabulary.
func modelDir(t *testing.T, c onnxtest.BERTConfig) string {
	t.Helper()
	dir := t.TempDir()
	if err := onnxtest.WriteBERT(dir, c); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openModel(t *testing.T, dir string, o Options) *Model {
	t.Helper()
	m, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestEmbedShapesAndNorms(t *testing.T) {
	requireRuntime(t)
	dir := modelDir(t, onnxtest.BERTConfig{})
	mean := openModel(t, dir, Options{})
	cls := openModel(t, dir, Options{Pool: "cls"})
	if mean.Dim() != 32 || mean.MaxTokens() != 256 {
		t.Fatalf("dim %d, max tokens %d; want 32, 256", mean.Dim(), mean.MaxTokens())
	}
	if mean.Name() == cls.Name() || !strings.HasPrefix(mean.Name(), "onnx:") {
		t.Errorf("names %q and %q: want distinct onnx: names", mean.Name(), cls.Name())
	}
	texts := []string{"def get_user(x): return x", "", "class A:\n    pass", "Café 中文 😁"}
	ctx := context.Background()
	a, err := mean.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cls.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if len(a[i]) != 32 || math.Abs(norm(a[i])-1) > 1e-5 || math.Abs(norm(b[i])-1) > 1e-5 {
			t.Errorf("text %d: len %d, norms %.6f %.6f; want 32, unit vectors", i, len(a[i]), norm(a[i]), norm(b[i]))
		}
		if maxDiff(a[i], b[i]) < 1e-3 {
			t.Errorf("text %d: mean and cls pooling gave the same vector", i)
		}
	}
	if maxDiff(a[0], a[2]) < 1e-3 {
		t.Error("two different texts gave the same vector")
	}
	// The same model file and options give the same vectors.
	again, err := openModel(t, dir, Options{}).Embed(ctx, texts[:1])
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(again[0], a[0]); d > 1e-6 {
		t.Errorf("re-opened model differs by %g", d)
	}
}

// A batch of 16 texts of different lengths (so most are padded) gives the
// vectors each text gives alone.
func TestEmbedBatchEqualsSingles(t *testing.T) {
	requireRuntime(t)
	m := openModel(t, modelDir(t, onnxtest.BERTConfig{}), Options{Batch: 16})
	var texts []string
	for i := 0; i < 16; i++ {
		texts = append(texts, strings.Repeat("def f(x): return x + 1\n", i%5+1)+strings.Repeat("y ", i))
	}
	ctx := context.Background()
	batch, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		single, err := m.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(single[0], batch[i]); d > 1e-5 {
			t.Errorf("text %d: batch and single differ by %g", i, d)
		}
	}
}

func TestPool(t *testing.T) {
	// Two texts, L=3, dim=2: the second text has one real token and two pads.
	states := []float32{
		1, 0, 3, 4, 2, 0, // text 1: tokens (1,0) (3,4) (2,0)
		0, 2, 9, 9, 9, 9, // text 2: token (0,2), then padding
	}
	mean, err := pool(states, []int{3, 1}, 3, 2, "mean")
	if err != nil {
		t.Fatal(err)
	}
	// text 1 mean (2, 4/3) normalised; text 2 (0, 2) → (0, 1).
	n := math.Hypot(2, 4.0/3)
	want := [][]float32{{float32(2 / n), float32(4.0 / 3 / n)}, {0, 1}}
	for i := range want {
		if maxDiff(mean[i], want[i]) > 1e-6 {
			t.Errorf("mean %d = %v, want %v", i, mean[i], want[i])
		}
	}
	cls, err := pool(states, []int{3, 1}, 3, 2, "cls")
	if err != nil {
		t.Fatal(err)
	}
	if maxDiff(cls[0], []float32{1, 0}) > 1e-6 || maxDiff(cls[1], []float32{0, 1}) > 1e-6 {
		t.Errorf("cls = %v", cls)
	}
	for _, bad := range [][]float32{{float32(math.NaN()), 0}, {0, float32(math.Inf(1))}, {0, 0}} {
		if _, err := pool(bad, []int{1}, 1, 2, "mean"); err == nil {
			t.Errorf("pool(%v): no error", bad)
		}
	}
}

// Texts longer than the model's positions are cut, counted, and keep their
// closing [SEP].
func TestEmbedTruncates(t *testing.T) {
	requireRuntime(t)
	m := openModel(t, modelDir(t, onnxtest.BERTConfig{MaxPositions: 64}), Options{MaxTokens: 256})
	if m.MaxTokens() != 64 {
		t.Fatalf("MaxTokens = %d; want the model's 64 positions", m.MaxTokens())
	}
	long := strings.Repeat("word ", 300)
	enc, err := m.Tokenizer().Encode(long, m.MaxTokens())
	if err != nil {
		t.Fatal(err)
	}
	if len(enc.IDs) != 64 || !enc.Truncated || enc.IDs[0] != 101 || enc.IDs[63] != 102 {
		t.Fatalf("encoded %d tokens (truncated %v), first %d last %d; want 64, true, [CLS]=101, [SEP]=102",
			len(enc.IDs), enc.Truncated, enc.IDs[0], enc.IDs[len(enc.IDs)-1])
	}
	if _, err := m.Embed(context.Background(), []string{long, "short"}); err != nil {
		t.Fatal(err)
	}
	if cut, texts := m.Truncated(); cut != 1 || texts != 2 {
		t.Errorf("Truncated() = %d of %d; want 1 of 2", cut, texts)
	}
}

func TestOpenRefusesBadModels(t *testing.T) {
	requireRuntime(t)
	good := modelDir(t, onnxtest.BERTConfig{})
	model, err := os.ReadFile(filepath.Join(good, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		dir  func() string
		want string // in the error
	}{
		{"no model", func() string {
			d := modelDir(t, onnxtest.BERTConfig{})
			os.Remove(filepath.Join(d, "model.onnx"))
			return d
		}, "model.onnx"},
		{"garbage model", func() string {
			d := modelDir(t, onnxtest.BERTConfig{})
			os.WriteFile(filepath.Join(d, "model.onnx"), []byte("this is not a protobuf \xff\xfe"), 0o644)
			return d
		}, "model.onnx"},
		{"truncated model", func() string {
			d := modelDir(t, onnxtest.BERTConfig{})
			os.WriteFile(filepath.Join(d, "model.onnx"), model[:len(model)/2], 0o644)
			return d
		}, "model.onnx"},
		{"no tokenizer", func() string {
			d := modelDir(t, onnxtest.BERTConfig{})
			os.Remove(filepath.Join(d, "vocab.txt"))
			return d
		}, "vocab.txt"},
		{"malformed tokenizer.json", func() string {
			d := modelDir(t, onnxtest.BERTConfig{})
			os.WriteFile(filepath.Join(d, "tokenizer.json"), []byte(`{"model": {"type": "WordPiece", "vocab": 7}}`), 0o644)
			return d
		}, "tokenizer.json"},
		{"tokenizer of another model", func() string { return modelDir(t, onnxtest.BERTConfig{Vocab: 1000}) }, "do not belong together"},
		{"pooled output", func() string { return modelDir(t, onnxtest.BERTConfig{Pooled: true}) }, "[batch, tokens, dim]"},
		{"bad pooling", func() string { return good }, "pool"},
		{"file outside the directory", func() string { return good }, "inside the model directory"},
		{"file missing", func() string { return good }, "model_quantized.onnx"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Options{}
			switch c.name {
			case "bad pooling":
				o.Pool = "max"
			case "file outside the directory":
				o.File = "../model.onnx"
			case "file missing":
				o.File = "onnx/model_quantized.onnx"
			}
			m, err := Open(c.dir(), o)
			if err == nil {
				m.Close()
				t.Fatal("Open succeeded")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
		})
	}
}

// A model whose output holds NaN gives an error naming it, and no vectors.
func TestEmbedRefusesNaN(t *testing.T) {
	requireRuntime(t)
	m := openModel(t, modelDir(t, onnxtest.BERTConfig{NaN: true}), Options{})
	vecs, err := m.Embed(context.Background(), []string{"a", "b"})
	if err == nil || vecs != nil || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), "model.onnx") {
		t.Fatalf("Embed = %d vectors, %v; want no vectors and a NaN error naming the model", len(vecs), err)
	}
}

// Without the runtime library, opening a model says what is missing and how
// to install it. Run in a child process: the library loads once per process.
func TestMissingRuntime(t *testing.T) {
	if os.Getenv("LOCUS_ONNX_CHILD") == "1" {
		_, err := Open(modelDir(t, onnxtest.BERTConfig{}), Options{})
		if !errors.Is(err, ErrNoRuntime) || !strings.Contains(err.Error(), "/nonexistent/libonnxruntime.so.1") ||
			!strings.Contains(err.Error(), "install-onnxruntime.sh") {
			t.Fatalf("Open without the library: %v", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingRuntime$")
	cmd.Env = append(os.Environ(), "LOCUS_ONNX_CHILD=1", "LOCUS_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestGraphInfo(t *testing.T) {
	dir := t.TempDir()
	if err := onnxtest.WriteBERT(dir, onnxtest.BERTConfig{Vocab: 777, MaxPositions: 99}); err != nil {
		t.Fatal(err)
	}
	info, _, _, err := inspect(dir, filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if info != (modelInfo{vocab: 777, positions: 99}) {
		t.Errorf("graphInfo = %+v; want vocab 777, positions 99", info)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// An int8 model (dynamic quantization's layout) runs, and its vectors stay
// close to the float model's with the same weights.
func TestEmbedInt8(t *testing.T) {
	requireRuntime(t)
	// One directory with both files, as the exports ship them.
	dir := modelDir(t, onnxtest.BERTConfig{})
	if err := onnxtest.WriteBERT(filepath.Join(dir, "onnx"), onnxtest.BERTConfig{Int8: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "onnx", "model.onnx"), filepath.Join(dir, "onnx", "model_quantized.onnx")); err != nil {
		t.Fatal(err)
	}
	f32 := openModel(t, dir, Options{})
	i8 := openModel(t, dir, Options{File: "onnx/model_quantized.onnx"})
	if f32.Name() == i8.Name() {
		t.Errorf("the float and int8 models have one name, %s", f32.Name())
	}
	texts := []string{"def get_user(x): return x", "class A:\n    pass"}
	a, err := f32.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := i8.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		var dot float64
		for k := range a[i] {
			dot += float64(a[i][k]) * float64(b[i][k])
		}
		if dot < 0.95 || maxDiff(a[i], b[i]) == 0 {
			t.Errorf("text %d: cosine(float, int8) = %.4f; want ≥ 0.95 and not identical", i, dot)
		}
	}
}
