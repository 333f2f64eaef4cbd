package embed

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/embed/onnx"
)

// ONNX embeds on this machine's CPU with an exported encoder (package
// onnx); Open gives it for onnx:///model-dir URLs.
type ONNX struct{ M *onnx.Model }

func (o *ONNX) Name() string { return o.M.Name() }
func (o *ONNX) Dim() int     { return o.M.Dim() }
func (o *ONNX) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.M.Embed(ctx, texts)
}

// Close frees the model's runtime session.
func (o *ONNX) Close() error { return o.M.Close() }

// ModelDir keeps models downloaded by Hugging Face id (onnx://hf/org/name);
// default $LOCUS_HOME/models, else .locus/models. Commands set it from
// their --data-dir.
var ModelDir = ""

func modelDir() string {
	if ModelDir != "" {
		return ModelDir
	}
	if h := os.Getenv("LOCUS_HOME"); h != "" {
		return filepath.Join(h, "models")
	}
	return filepath.Join(".locus", "models")
}

// openONNX reads onnx:///DIR?pool=mean&max_tokens=256&batch=16&threads=N&lib=PATH&file=F
// (also onnx://./relative/dir), or onnx://hf/ORG/NAME[?revision=R&…], which
// downloads the model once into ModelDir. dim, when given, must be the
// model's.
func openONNX(ctx context.Context, raw string, u *url.URL, dim int) (Embedder, error) {
	dir := filepath.FromSlash(u.Host + u.Path)
	if u.Host == "hf" {
		var err error
		hub := &onnx.Hub{Dir: modelDir()}
		if dir, err = hub.Fetch(ctx, strings.Trim(u.Path, "/"), u.Query().Get("revision"), u.Query().Get("file")); err != nil {
			return nil, fmt.Errorf("embedder URL %q: %w", raw, err)
		}
	}
	if dir == "" {
		return nil, fmt.Errorf("embedder URL %q: no model directory (want onnx:///path/to/model-dir)", raw)
	}
	q := u.Query()
	opts := onnx.Options{Pool: q.Get("pool"), Library: q.Get("lib"), File: q.Get("file")}
	for name, dst := range map[string]*int{"max_tokens": &opts.MaxTokens, "batch": &opts.Batch, "threads": &opts.Threads} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("embedder URL %q: %s=%q: want a positive integer", raw, name, v)
			}
			*dst = n
		}
	}
	m, err := onnx.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("embedder URL %q: %w", raw, err)
	}
	if dim != 0 && dim != m.Dim() {
		m.Close()
		return nil, fmt.Errorf("embedder URL %q: dim=%d, but the model gives %d", raw, dim, m.Dim())
	}
	return &ONNX{M: m}, nil
}
