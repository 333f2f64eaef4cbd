// Package onnx embeds text on the CPU with an exported transformer encoder
// (model.onnx plus tokenizer.json or vocab.txt, the layout of the Hugging
// Face ONNX exports of all-MiniLM-L6-v2, bge-small-en-v1.5, gte-small and
// others) run by ONNX Runtime through github.com/yalue/onnxruntime_go.
//
// The runtime is a shared library loaded when the first model opens:
// LOCUS_ONNXRUNTIME_LIB, or $HOME/.local/lib/locus/libonnxruntime.so.1 where
// tools/install-onnxruntime.sh puts it, or the system's libonnxruntime.so.1.
package onnx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/encoding/protowire"
)

// Options configure a Model; each field's zero value takes the default in
// its comment.
type Options struct {
	// Pool: "mean" (over the attention mask) or "cls"; default mean.
	Pool string
	// MaxTokens per text, special tokens included; default 256, and never
	// more than the model's positions.
	MaxTokens int
	// Batch: texts per model run; default 16. Texts are sorted by length
	// first so that a batch pads little.
	Batch int
	// Threads: ONNX Runtime's intra-op threads; default the CPUs Go sees.
	Threads int
	// Library: the ONNX Runtime shared library; default as the package
	// comment says.
	Library string
	// File is the model within the directory, for exports that ship
	// several (onnx/model_quantized.onnx, an int8 one); default model.onnx,
	// else onnx/model.onnx.
	File string
}

// Model is an opened encoder; it is safe for concurrent use.
type Model struct {
	dir, file string
	tok       *Tokenizer
	opts      Options
	sess      *ort.DynamicAdvancedSession
	inputs    []string // input_ids, attention_mask[, token_type_ids]
	output    string
	dim       int
	name      string
	mu        sync.Mutex // one run at a time: Runtime uses the cores itself
	truncated atomic.Int64
	texts     atomic.Int64
}

// DefaultLibrary is where tools/install-onnxruntime.sh puts the runtime.
func DefaultLibrary() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "lib", "locus", "libonnxruntime.so.1")
}

var (
	initMu  sync.Mutex
	initLib string // the library the environment was started with
)

// ErrNoRuntime: the ONNX Runtime library was not found or did not load.
var ErrNoRuntime = errors.New("ONNX Runtime not available")

// initRuntime loads the shared library once per process.
func initRuntime(lib string) error {
	initMu.Lock()
	defer initMu.Unlock()
	if lib == "" {
		lib = os.Getenv("LOCUS_ONNXRUNTIME_LIB")
	}
	if lib == "" {
		if _, err := os.Stat(DefaultLibrary()); err == nil {
			lib = DefaultLibrary()
		} else {
			lib = "libonnxruntime.so.1" // the dynamic loader's search path
		}
	}
	if ort.IsInitialized() {
		if lib != initLib {
			return fmt.Errorf("%w: %s requested, but this process already runs %s", ErrNoRuntime, lib, initLib)
		}
		return nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("%w: loading %s: %v (install it with tools/install-onnxruntime.sh, or set LOCUS_ONNXRUNTIME_LIB)", ErrNoRuntime, lib, err)
	}
	initLib = lib
	return nil
}

// Open loads the model in dir: dir/model.onnx (or dir/onnx/model.onnx) and
// its tokenizer.
func Open(dir string, opts Options) (*Model, error) {
	if opts.Pool == "" {
		opts.Pool = "mean"
	}
	if opts.Pool != "mean" && opts.Pool != "cls" {
		return nil, fmt.Errorf("onnx model %s: pool=%q: want mean or cls", dir, opts.Pool)
	}
	o, err := openSession(dir, opts, func(file string, outs []ort.InputOutputInfo) (ort.InputOutputInfo, error) {
		out := outs[0]
		for _, o := range outs {
			if o.Name == "last_hidden_state" {
				out = o
			}
		}
		if len(out.Dimensions) != 3 || out.Dimensions[2] <= 0 || out.DataType != ort.TensorElementDataTypeFloat {
			return out, fmt.Errorf("onnx model %s: output %s is %s %v; want float [batch, tokens, dim] token states", file, out.Name, out.DataType, out.Dimensions)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	m := &Model{dir: dir, file: o.file, tok: o.tok, opts: o.opts, sess: o.sess, inputs: o.inputs, output: o.output.Name, dim: int(o.output.Dimensions[2])}
	m.name = fmt.Sprintf("onnx:%s@%s/%s/%d", filepath.Base(filepath.Clean(dir)), o.sum[:12], m.opts.Pool, m.opts.MaxTokens)
	return m, nil
}

// opened is a model file's runtime session with its tokenizer: what Model
// and Scorer share.
type opened struct {
	file   string
	tok    *Tokenizer
	opts   Options // defaults filled in
	sess   *ort.DynamicAdvancedSession
	inputs []string // input_ids, attention_mask[, token_type_ids]
	output ort.InputOutputInfo
	sum    string // the file's SHA-256
}

// openSession opens the model file in dir (see Open) with its tokenizer and
// a session computing the output that pick chooses of the graph's outputs
// (never none).
func openSession(dir string, opts Options, pick func(file string, outs []ort.InputOutputInfo) (ort.InputOutputInfo, error)) (*opened, error) {
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 256
	}
	if opts.Batch <= 0 {
		opts.Batch = 16
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	file := filepath.Join(dir, "model.onnx")
	if opts.File != "" {
		if !filepath.IsLocal(opts.File) {
			return nil, fmt.Errorf("onnx model %s: file=%q: want a path inside the model directory", dir, opts.File)
		}
		file = filepath.Join(dir, opts.File)
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("onnx model: %w", err)
		}
	} else if _, err := os.Stat(file); err != nil {
		alt := filepath.Join(dir, "onnx", "model.onnx")
		if _, err2 := os.Stat(alt); err2 != nil {
			return nil, fmt.Errorf("onnx model: %w", err)
		}
		file = alt
	}
	o := &opened{file: file}
	info, sum, data, err := inspect(dir, file)
	if err != nil {
		return nil, err
	}
	o.sum = sum
	if o.tok, err = LoadTokenizer(dir); err != nil {
		return nil, err
	}
	if info.vocab > 0 && o.tok.MaxID >= info.vocab {
		return nil, fmt.Errorf("onnx model %s: tokenizer %s has token ids up to %d, but the model's embeddings have %d rows: they do not belong together",
			file, o.tok.Path(), o.tok.MaxID, info.vocab)
	}
	if info.positions > 0 && opts.MaxTokens > info.positions {
		opts.MaxTokens = info.positions
	}
	o.opts = opts
	if err := initRuntime(opts.Library); err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(data)
	if err != nil {
		return nil, fmt.Errorf("onnx model %s: %w", file, err)
	}
	has := map[string]bool{}
	for _, in := range ins {
		has[in.Name] = true
		if in.DataType != ort.TensorElementDataTypeInt64 {
			return nil, fmt.Errorf("onnx model %s: input %s is %s; want int64 token ids and masks", file, in.Name, in.DataType)
		}
	}
	for _, want := range []string{"input_ids", "attention_mask"} {
		if !has[want] {
			return nil, fmt.Errorf("onnx model %s: no %s input (inputs: %s)", file, want, names(ins))
		}
	}
	o.inputs = []string{"input_ids", "attention_mask"}
	if has["token_type_ids"] {
		o.inputs = append(o.inputs, "token_type_ids")
	}
	if len(ins) != len(o.inputs) {
		return nil, fmt.Errorf("onnx model %s: inputs %s: want input_ids, attention_mask and optionally token_type_ids", file, names(ins))
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("onnx model %s: no outputs", file)
	}
	if o.output, err = pick(file, outs); err != nil {
		return nil, err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx model %s: %w", file, err)
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(opts.Threads); err != nil {
		return nil, fmt.Errorf("onnx model %s: %w", file, err)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("onnx model %s: %w", file, err)
	}
	if o.sess, err = ort.NewDynamicAdvancedSessionWithONNXData(data, o.inputs, []string{o.output.Name}, so); err != nil {
		return nil, fmt.Errorf("onnx model %s: %w", file, err)
	}
	return o, nil
}

func names(infos []ort.InputOutputInfo) string {
	var s []string
	for _, i := range infos {
		s = append(s, i.Name)
	}
	return strings.Join(s, ", ")
}

// Close frees the session.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sess == nil {
		return nil
	}
	err := m.sess.Destroy()
	m.sess = nil
	return err
}

// Name identifies the model file (by content), pooling and token limit.
func (m *Model) Name() string { return m.name }

// Dim is the vectors' length.
func (m *Model) Dim() int { return m.dim }

// MaxTokens is the limit texts are cut to.
func (m *Model) MaxTokens() int { return m.opts.MaxTokens }

// Truncated counts texts cut to MaxTokens so far, of Texts embedded.
func (m *Model) Truncated() (cut, texts int64) { return m.truncated.Load(), m.texts.Load() }

// Tokenizer is the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Embed returns one L2-normalised vector per text, in order. On any error
// no vector is returned.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	enc := make([]Encoded, len(texts))
	var cut int64
	for i, t := range texts {
		e, err := m.tok.Encode(t, m.opts.MaxTokens)
		if err != nil {
			return nil, err
		}
		if e.Truncated {
			cut++
		}
		enc[i] = e
	}
	out, err := byLength(ctx, enc, m.opts.Batch, m.run)
	if err != nil {
		return nil, err
	}
	m.truncated.Add(cut)
	m.texts.Add(int64(len(texts)))
	return out, nil
}

// byLength runs run over enc in batches of at most n, encodings of similar
// lengths together (a batch pads little), and gives the results back in
// enc's order.
func byLength[T any](ctx context.Context, enc []Encoded, n int, run func([]Encoded) ([]T, error)) ([]T, error) {
	order := make([]int, len(enc))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(enc[order[a]].IDs) < len(enc[order[b]].IDs) })
	out := make([]T, len(enc))
	for s := 0; s < len(order); s += n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := order[s:min(s+n, len(order))]
		batch := make([]Encoded, len(idx))
		for j, i := range idx {
			batch[j] = enc[i]
		}
		res, err := run(batch)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			out[i] = res[j]
		}
	}
	return out, nil
}

// run embeds one batch, padded to its longest text.
func (m *Model) run(batch []Encoded) ([][]float32, error) {
	out, L, err := runBatch(&m.mu, &m.sess, m.file, m.inputs, batch)
	if err != nil {
		return nil, err
	}
	defer out.Destroy()
	n := len(batch)
	t, ok := out.(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("onnx model %s: output %s is not a float tensor", m.file, m.output)
	}
	if s := t.GetShape(); len(s) != 3 || s[0] != int64(n) || s[1] != int64(L) || s[2] != int64(m.dim) {
		return nil, fmt.Errorf("onnx model %s: output %s has shape %v; want [%d %d %d]", m.file, m.output, s, n, L, m.dim)
	}
	lengths := make([]int, n)
	for b, e := range batch {
		lengths[b] = len(e.IDs)
	}
	vecs, err := pool(t.GetData(), lengths, L, m.dim, m.opts.Pool)
	if err != nil {
		return nil, fmt.Errorf("onnx model %s: %w", m.file, err)
	}
	return vecs, nil
}

// runBatch runs sess (guarded by mu; nil when closed) on batch, padded to
// its longest text of L tokens, and returns its one output, which the
// caller destroys.
func runBatch(mu *sync.Mutex, sess **ort.DynamicAdvancedSession, file string, inputNames []string, batch []Encoded) (ort.Value, int, error) {
	n, L := len(batch), 0
	for _, e := range batch {
		L = max(L, len(e.IDs))
	}
	ids, mask, types := make([]int64, n*L), make([]int64, n*L), make([]int64, n*L)
	for b, e := range batch {
		copy(ids[b*L:], e.IDs)
		copy(types[b*L:], e.Types)
		for t := range e.IDs {
			mask[b*L+t] = 1
		}
	}
	shape := ort.NewShape(int64(n), int64(L))
	var inputs []ort.Value
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, data := range [][]int64{ids, mask, types}[:len(inputNames)] {
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, 0, fmt.Errorf("onnx model %s: %w", file, err)
		}
		inputs = append(inputs, t)
	}
	outputs := []ort.Value{nil}
	mu.Lock()
	var err error
	if *sess == nil {
		err = errors.New("the model is closed")
	} else {
		err = (*sess).Run(inputs, outputs)
	}
	mu.Unlock()
	if err != nil {
		if outputs[0] != nil {
			outputs[0].Destroy()
		}
		return nil, 0, fmt.Errorf("onnx model %s: run on %d texts of up to %d tokens: %w", file, n, L, err)
	}
	return outputs[0], L, nil
}

// pool turns token states ([batch, L, dim], row-major) into one
// L2-normalised vector per text: the mean of its lengths[b] real tokens'
// states, or its first token's (cls). NaN, Inf or an all-zero vector is an
// error: no vector of the batch is returned.
func pool(states []float32, lengths []int, L, dim int, mode string) ([][]float32, error) {
	vecs := make([][]float32, len(lengths))
	v := make([]float64, dim)
	for b, rows := range lengths {
		if mode == "cls" {
			rows = 1
		}
		clear(v)
		for r := 0; r < rows; r++ {
			for k, x := range states[(b*L+r)*dim : (b*L+r+1)*dim] {
				v[k] += float64(x)
			}
		}
		var norm float64
		for k := range v {
			v[k] /= float64(rows)
			norm += v[k] * v[k]
		}
		norm = math.Sqrt(norm)
		if math.IsNaN(norm) || math.IsInf(norm, 0) {
			return nil, fmt.Errorf("the output holds NaN or Inf (text %d of a batch of %d)", b+1, len(lengths))
		}
		if norm == 0 {
			return nil, fmt.Errorf("the output is all zeros (text %d of a batch of %d)", b+1, len(lengths))
		}
		vec := make([]float32, dim)
		for k := range v {
			vec[k] = float32(v[k] / norm)
		}
		vecs[b] = vec
	}
	return vecs, nil
}

// modelInfo is what the graph says about its inputs' limits: the rows of
// the embedding tables that input_ids and the positions index.
type modelInfo struct {
	vocab, positions int
}

// inspect reads file's graph for modelInfo (and dir's config.json where
// the graph does not tell the positions) and returns the file's bytes,
// which the runtime is then given, and their SHA-256.
func inspect(dir, file string) (modelInfo, string, []byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return modelInfo{}, "", nil, fmt.Errorf("onnx model: %w", err)
	}
	info, err := graphInfo(b)
	if err != nil {
		return modelInfo{}, "", nil, fmt.Errorf("onnx model %s: not a readable ONNX model (%v)", file, err)
	}
	if info.positions == 0 {
		// Exports that fold positions into constants still ship config.json.
		if cb, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
			var cfg struct {
				MaxPositions int `json:"max_position_embeddings"`
			}
			if json.Unmarshal(cb, &cfg) == nil {
				info.positions = cfg.MaxPositions
			}
		}
	}
	sum := sha256.Sum256(b)
	return info, hex.EncodeToString(sum[:]), b, nil
}

// graphInfo finds the Gather nodes that read input_ids and positions from
// initializers and takes those tables' first dimensions.
func graphInfo(model []byte) (modelInfo, error) {
	var graph []byte
	err := fields(model, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == modelGraph && typ == protowire.BytesType {
			graph = v
		}
		return nil
	})
	if err != nil {
		return modelInfo{}, err
	}
	if graph == nil {
		return modelInfo{}, errors.New("no graph")
	}
	type gather struct{ table, index string }
	var gathers []gather
	rows := map[string]int{} // initializer → first dimension
	err = fields(graph, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == graphNode && typ == protowire.BytesType:
			var op string
			var ins []string
			if err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
				switch n {
				case nodeOpType:
					op = string(v)
				case nodeInput:
					ins = append(ins, string(v))
				}
				return nil
			}); err != nil {
				return err
			}
			if op == "Gather" && len(ins) == 2 {
				gathers = append(gathers, gather{ins[0], ins[1]})
			}
		case num == graphInitializer && typ == protowire.BytesType:
			var name string
			var dims []int64
			if err := fields(v, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
				switch {
				case n == tensorName:
					name = string(v)
				case n == tensorDims && t == protowire.VarintType:
					dims = append(dims, int64(x))
				case n == tensorDims && t == protowire.BytesType: // packed
					for len(v) > 0 {
						d, k := protowire.ConsumeVarint(v)
						if k < 0 {
							return protowire.ParseError(k)
						}
						dims, v = append(dims, int64(d)), v[k:]
					}
				}
				return nil
			}); err != nil {
				return err
			}
			if len(dims) == 2 {
				rows[name] = int(dims[0])
			}
		}
		return nil
	})
	if err != nil {
		return modelInfo{}, err
	}
	var info modelInfo
	for _, g := range gathers {
		n, ok := rows[g.table]
		switch {
		case !ok:
		case g.index == "input_ids":
			info.vocab = n
		case strings.Contains(g.table, "position"):
			info.positions = n
		}
	}
	return info, nil
}

// Available loads the runtime library (lib, or as the package comment
// says) and reports why it cannot be used, if it cannot.
func Available(lib string) error { return initRuntime(lib) }
