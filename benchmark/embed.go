package benchmark

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/search"
)

// EmbedOptions configures Embed; zero fields take the defaults in their
// comments.
type EmbedOptions struct {
	GitDir string
	Head   gitrepo.Hash
	// Model is a model directory (model.onnx and its tokenizer); "" writes
	// a MiniLM-L6-shaped BERT with random weights (onnxtest.MiniLML6), which
	// costs what all-MiniLM-L6-v2 costs.
	Model string
	// Tokens: the max_tokens settings to time; default 256 and 128.
	Tokens []int
	// Int8 also times the generated model with int8 weights (dynamic
	// quantization's layout); only when Model is "".
	Int8 bool
	// Functions: how many of the commit's functions to embed, spread over
	// the graph; default 512.
	Functions int
	// Batch: texts per model run; default 16.
	Batch int
	// Others are more embedder URLs to time the same way (use-lite://).
	Others []string
}

// EmbedRun is one timed pass over the functions.
type EmbedRun struct {
	Embedder  string  `json:"embedder"`
	MaxTokens int     `json:"max_tokens,omitempty"`
	Texts     int     `json:"texts"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"functions_per_second"`
	// MeanTokens is the mean tokens per text after truncation; Truncated
	// counts texts cut to MaxTokens.
	MeanTokens float64 `json:"mean_tokens,omitempty"`
	Truncated  int     `json:"truncated"`
	// Ratio is Seconds over the lexical embedder's in the same run.
	Ratio float64 `json:"ratio_to_lexical"`
}

// EmbedResult is what Embed measured.
type EmbedResult struct {
	Repository string     `json:"repository"`
	Commit     string     `json:"commit"`
	Functions  int        `json:"functions_in_graph"`
	CPUs       int        `json:"cpus"`
	Model      string     `json:"model"`
	Runs       []EmbedRun `json:"runs"`
}

// Embed times local embedders on the functions of one commit, with the
// documents indexing embeds (search.Document): the lexical embedder as the
// peer, then the ONNX model at each token limit, each through embed.Open
// as `locus index --embedder onnx://…` runs it.
func Embed(ctx context.Context, o EmbedOptions) (*EmbedResult, error) {
	if len(o.Tokens) == 0 {
		o.Tokens = []int{256, 128}
	}
	if o.Functions <= 0 {
		o.Functions = 512
	}
	if o.Batch <= 0 {
		o.Batch = 16
	}
	snap, err := gitrepo.OpenSnapshot(ctx, o.GitDir, "", o.Head)
	if err != nil {
		return nil, fmt.Errorf("bench embed %s: %w", o.GitDir, err)
	}
	g, err := codegraph.Build(ctx, codegraph.GitFiles(snap), codegraph.Options{})
	snap.Close()
	if err != nil {
		return nil, fmt.Errorf("bench embed %s: %w", o.GitDir, err)
	}
	texts, total := functionDocs(g, o.Functions)
	if len(texts) == 0 {
		return nil, fmt.Errorf("bench embed %s: the graph at %s has no functions", o.GitDir, o.Head)
	}
	res := &EmbedResult{Repository: o.GitDir, Commit: o.Head.String(), Functions: total, CPUs: runtime.GOMAXPROCS(0), Model: o.Model}

	type variant struct {
		dir    string
		tokens int
		label  string
		full   bool // every text made long enough to be cut at tokens
	}
	var variants []variant
	if o.Model == "" {
		tmp, err := os.MkdirTemp("", "locus-bench-embed-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		kinds := []bool{false}
		if o.Int8 {
			kinds = append(kinds, true)
		}
		for _, int8 := range kinds {
			c := onnxtest.MiniLML6
			c.Int8 = int8
			dir, label := filepath.Join(tmp, "minilm-l6-f32"), "MiniLM-L6-shaped, float32"
			if int8 {
				dir, label = filepath.Join(tmp, "minilm-l6-int8"), "MiniLM-L6-shaped, int8"
			}
			if err := onnxtest.WriteBERT(dir, c); err != nil {
				return nil, fmt.Errorf("bench embed: write the model: %w", err)
			}
			for _, t := range o.Tokens {
				variants = append(variants, variant{dir, t, label, false})
			}
			for _, t := range o.Tokens {
				variants = append(variants, variant{dir, t, label + ", every text cut to max", true})
			}
		}
		c := onnxtest.MiniLML6
		res.Model = fmt.Sprintf("generated BERT, %d layers, hidden %d, %d heads, FFN %d, random weights (all-MiniLM-L6-v2's shape)", c.Layers, c.Hidden, c.Heads, c.FFN)
	} else {
		for _, t := range o.Tokens {
			variants = append(variants, variant{o.Model, t, filepath.Base(o.Model), false})
		}
	}

	lex := &embed.Lexical{}
	run, err := timeEmbed(ctx, lex, texts)
	if err != nil {
		return nil, err
	}
	run.Embedder = "lexical (hashing, no model)"
	res.Runs = append(res.Runs, run)
	for _, v := range variants {
		r, err := timeONNX(ctx, v.dir, v.tokens, o.Batch, v.full, texts)
		if err != nil {
			return nil, err
		}
		r.Embedder = v.label
		res.Runs = append(res.Runs, r)
		slog.Info("bench embed", "embedder", r.Embedder, "max_tokens", r.MaxTokens, "functions_per_second", fmt.Sprintf("%.1f", r.PerSecond))
	}
	for _, u := range o.Others {
		e, err := embed.Open(ctx, u)
		if err != nil {
			return nil, err
		}
		r, err := warmTimed(ctx, e, texts, o.Batch)
		if c, ok := e.(interface{ Close() error }); ok {
			c.Close()
		}
		if err != nil {
			return nil, err
		}
		r.Embedder = u
		res.Runs = append(res.Runs, r)
	}
	for i := range res.Runs {
		res.Runs[i].Ratio = res.Runs[i].Seconds / res.Runs[0].Seconds
	}
	return res, nil
}

// timeONNX times the model in dir at max tokens through embed.Open, as
// indexing runs it; with full, each text is first repeated until the
// tokenizer cuts it (the cost of long functions, every batch at the limit).
func timeONNX(ctx context.Context, dir string, tokens, batch int, full bool, texts []string) (EmbedRun, error) {
	u := (&url.URL{Scheme: "onnx", Path: dir, RawQuery: fmt.Sprintf("max_tokens=%d&batch=%d", tokens, batch)}).String()
	e, err := embed.Open(ctx, u)
	if err != nil {
		return EmbedRun{}, err
	}
	m := e.(*embed.Batched).E.(*embed.ONNX).M
	defer m.Close()
	in := texts
	if full {
		in = make([]string, len(texts))
		for i, t := range texts {
			for in[i] = t; ; in[i] += "\n" + t {
				enc, err := m.Tokenizer().Encode(in[i], m.MaxTokens())
				if err != nil {
					return EmbedRun{}, err
				}
				if enc.Truncated {
					break
				}
			}
		}
	}
	r, err := warmTimed(ctx, e, in, batch)
	if err != nil {
		return EmbedRun{}, err
	}
	// Mean tokens and texts cut, as the model's tokenizer reads them.
	var toks int
	for _, t := range in {
		enc, err := m.Tokenizer().Encode(t, m.MaxTokens())
		if err != nil {
			return EmbedRun{}, err
		}
		toks += len(enc.IDs)
		if enc.Truncated {
			r.Truncated++
		}
	}
	r.MaxTokens, r.MeanTokens = m.MaxTokens(), float64(toks)/float64(len(in))
	return r, nil
}

// functionDocs returns the documents of up to n of g's functions, spread
// evenly over the graph's order, and how many functions it has.
func functionDocs(g *codegraph.Graph, n int) ([]string, int) {
	classes := map[string]bool{}
	var fns []codegraph.Node
	for _, nd := range g.Nodes {
		switch nd.Type {
		case codegraph.TypeClass:
			classes[nd.ID] = true
		case codegraph.TypeFunction:
			fns = append(fns, nd)
		}
	}
	var docs []string
	step := max(1, len(fns)/n)
	for i := 0; i < len(fns) && len(docs) < n; i += step {
		docs = append(docs, search.Document(fns[i], classes))
	}
	return docs, len(fns)
}

// warmTimed embeds one untimed batch first (the runtime's first
// allocations), then times e on texts.
func warmTimed(ctx context.Context, e embed.Embedder, texts []string, batch int) (EmbedRun, error) {
	if _, err := e.Embed(ctx, texts[:min(len(texts), batch)]); err != nil {
		return EmbedRun{}, fmt.Errorf("bench embed %s: %w", e.Name(), err)
	}
	return timeEmbed(ctx, e, texts)
}

func timeEmbed(ctx context.Context, e embed.Embedder, texts []string) (EmbedRun, error) {
	start := time.Now()
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return EmbedRun{}, fmt.Errorf("bench embed %s: %w", e.Name(), err)
	}
	if len(vecs) != len(texts) {
		return EmbedRun{}, fmt.Errorf("bench embed %s: %d vectors for %d texts", e.Name(), len(vecs), len(texts))
	}
	s := time.Since(start).Seconds()
	return EmbedRun{Texts: len(texts), Seconds: s, PerSecond: float64(len(texts)) / s}, nil
}

// WriteEmbedTable prints r as an aligned table.
func WriteEmbedTable(w io.Writer, r *EmbedResult) error {
	fmt.Fprintf(w, "repository %s at %s: %d functions in the graph, %d embedded, %d CPUs; model: %s\n",
		r.Repository, r.Commit, r.Functions, r.Runs[0].Texts, r.CPUs, r.Model)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EMBEDDER\tMAX TOKENS\tMEAN TOKENS\tTRUNCATED\tSECONDS\tFUNCTIONS/S\tTIME / LEXICAL")
	for _, x := range r.Runs {
		mt, mean := "-", "-"
		if x.MaxTokens > 0 {
			mt, mean = fmt.Sprint(x.MaxTokens), fmt.Sprintf("%.0f", x.MeanTokens)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.1f\t%.1f\n", x.Embedder, mt, mean, x.Truncated, x.Seconds, x.PerSecond, x.Ratio)
	}
	return tw.Flush()
}
