package embed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx"
	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

// An onnx:// URL opens a local encoder that goes through the content-hash
// cache like any embedder: a second run embeds only what changed.
func TestOpenONNXWithCache(t *testing.T) {
	if err := onnx.Available(""); err != nil {
		t.Skipf("%v", err) // CI installs the runtime and fails this skip
	}
	dir := t.TempDir()
	if err := onnxtest.WriteBERT(dir, onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, bad := range []string{"onnx://" + dir + "?pool=max", "onnx://" + dir + "?max_tokens=0", "onnx://" + dir + "?dim=384", "onnx://" + dir + "/missing"} {
		if _, err := Open(ctx, bad); err == nil {
			t.Errorf("Open(%q): no error", bad)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("Open(%q): error %q does not name the URL", bad, err)
		}
	}
	e, err := Open(ctx, "onnx://"+dir+"?max_tokens=128&batch=4")
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 16 || !strings.Contains(e.Name(), "/mean/128") {
		t.Fatalf("Dim %d, Name %q", e.Dim(), e.Name())
	}
	model := e.(*Batched).E.(*ONNX).M
	c := &Cache{Bucket: blobtest.Bucket(t), Repo: "acme/one", Model: e.Name()}
	items := []Item{{"a1", "def a(): pass"}, {"b2", "def b(): return 2"}, {"c3", "class C: pass"}}
	first, n, err := EmbedCached(ctx, e, c, items)
	if err != nil || n != 3 {
		t.Fatalf("first run: %d embedded, %v", n, err)
	}
	items = append(items[:2], Item{"d4", "def d(): return 4"})
	second, n, err := EmbedCached(ctx, e, c, items)
	if _, texts := model.Truncated(); err != nil || n != 1 || texts != 4 {
		t.Fatalf("second run: %d embedded (model saw %d texts in all), %v; want 1 (4)", n, texts, err)
	}
	if Cosine(first["a1"], second["a1"]) < 0.999999 {
		t.Error("a cached vector changed")
	}
}

// onnx://hf/ORG/NAME downloads the model from the hub once into ModelDir.
func TestOpenONNXFromHub(t *testing.T) {
	if err := onnx.Available(""); err != nil {
		t.Skipf("%v", err) // CI installs the runtime and fails this skip
	}
	src := t.TempDir()
	if err := onnxtest.WriteBERT(src, onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch r.URL.Path {
		case "/acme/tiny/resolve/v2/onnx/model.onnx":
			http.ServeFile(w, r, filepath.Join(src, "model.onnx"))
		case "/acme/tiny/resolve/v2/vocab.txt":
			http.ServeFile(w, r, filepath.Join(src, "vocab.txt"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	t.Setenv("LOCUS_HF_ENDPOINT", srv.URL)
	ModelDir = t.TempDir()
	defer func() { ModelDir = "" }()
	ctx := context.Background()
	e, err := Open(ctx, "onnx://hf/acme/tiny?revision=v2&max_tokens=64")
	if err != nil {
		t.Fatal(err)
	}
	defer e.(*Batched).Close()
	if v, err := e.Embed(ctx, []string{"def a(): pass"}); err != nil || len(v) != 1 || len(v[0]) != 16 {
		t.Fatalf("Embed: %v, %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(ModelDir, "acme", "tiny", "model.onnx")); err != nil {
		t.Fatal(err)
	}
	n := requests.Load()
	e2, err := Open(ctx, "onnx://hf/acme/tiny?revision=v2")
	if err != nil || requests.Load() != n {
		t.Fatalf("second open: %v, %d more requests; want none", err, requests.Load()-n)
	}
	e2.(*Batched).Close()
}
