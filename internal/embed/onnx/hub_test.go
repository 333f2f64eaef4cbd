package onnx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

// hubServer serves the files of dir as repository org/name at revision
// main, the Hugging Face hub's /ORG/NAME/resolve/REV/PATH layout; other
// paths are 404.
func hubServer(t *testing.T, repo string, files map[string]string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		p, ok := strings.CutPrefix(r.URL.Path, "/"+repo+"/resolve/main/")
		if local, found := files[p]; ok && found {
			http.ServeFile(w, r, local)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestHubFetch(t *testing.T) {
	src := t.TempDir()
	if err := onnxtest.WriteBERT(src, onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"onnx/model.onnx": filepath.Join(src, "model.onnx"), "vocab.txt": filepath.Join(src, "vocab.txt")}
	srv, requests := hubServer(t, "acme/tiny", files)
	var progressed atomic.Int32
	hub := &Hub{Endpoint: srv.URL, Dir: t.TempDir(), Progress: func(string, int64, int64) { progressed.Add(1) }}
	ctx := context.Background()
	dir, err := hub.Fetch(ctx, "acme/tiny", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(hub.Dir, "acme", "tiny") || progressed.Load() == 0 {
		t.Fatalf("dir %s, progress reports %d", dir, progressed.Load())
	}
	for _, f := range []string{"model.onnx", "vocab.txt", hubRecordFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after the download: %v", err)
		}
	}
	// Offline afterwards: the server is gone, the files are checked.
	srv.Close()
	n := requests.Load()
	if again, err := hub.Fetch(ctx, "acme/tiny", "", ""); err != nil || again != dir || requests.Load() != n {
		t.Fatalf("second fetch: %s, %v, %d more requests", again, err, requests.Load()-n)
	}
	// Another ONNX file of the repository, stored under its own path.
	q := &Hub{Endpoint: srv2(t, src), Dir: t.TempDir()}
	qdir, err := q.Fetch(ctx, "acme/tiny", "", "onnx/model.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(qdir, "onnx", "model.onnx")); err != nil {
		t.Errorf("file=onnx/model.onnx: %v", err)
	}
	if _, err := q.Fetch(ctx, "acme/other", "", "../model.onnx"); err == nil || !strings.Contains(err.Error(), "inside the repository") {
		t.Errorf("file=../model.onnx: %v", err)
	}
	// Another revision is downloaded anew, replacing the first.
	srvV2, _ := hubServer(t, "acme/tiny", nil)
	v2 := &Hub{Endpoint: srvV2.URL, Dir: hub.Dir}
	if _, err := v2.Fetch(ctx, "acme/tiny", "v2", ""); err == nil || !strings.Contains(err.Error(), "no ONNX export") {
		t.Fatalf("revision v2 on a hub without it: %v; want it looked for, not the main download reused", err)
	}
	// A changed file is found out.
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte("[PAD]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Fetch(ctx, "acme/tiny", "", ""); err == nil || !strings.Contains(err.Error(), "vocab.txt") || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("changed vocab.txt: %v", err)
	}
}

// srv2 serves src's model at onnx/model.onnx and its vocabulary.
func srv2(t *testing.T, src string) string {
	srv, _ := hubServer(t, "acme/tiny", map[string]string{"onnx/model.onnx": filepath.Join(src, "model.onnx"), "vocab.txt": filepath.Join(src, "vocab.txt")})
	return srv.URL
}

func TestHubFetchFailures(t *testing.T) {
	src := t.TempDir()
	if err := onnxtest.WriteBERT(src, onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	noModel, _ := hubServer(t, "acme/tiny", map[string]string{"vocab.txt": filepath.Join(src, "vocab.txt")})
	noTokenizer, _ := hubServer(t, "acme/tiny", map[string]string{"model.onnx": filepath.Join(src, "model.onnx")})
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, c := range []struct {
		name, endpoint, repo string
		want                 []string
	}{
		{"no ONNX export", noModel.URL, "acme/tiny", []string{"no ONNX export", "onnx/model.onnx", "by hand"}},
		{"no tokenizer", noTokenizer.URL, "acme/tiny", []string{"neither tokenizer.json nor vocab.txt", "by hand"}},
		{"hub unreachable", down.URL, "acme/tiny", []string{"acme/tiny", "download", "by hand"}},
		{"not org/name", noModel.URL, "acme/tiny/extra", []string{"organisation/name"}},
		{"escapes the directory", noModel.URL, "../tiny", []string{"organisation/name"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hub := &Hub{Endpoint: c.endpoint, Dir: t.TempDir()}
			_, err := hub.Fetch(ctx, c.repo, "", "")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			// Nothing half-downloaded is left to be taken for a model.
			if _, err := os.Stat(filepath.Join(hub.Dir, "acme", "tiny")); err == nil {
				t.Error("a model directory was left behind")
			}
		})
	}
	// Files placed by hand where the download would go are used as they are.
	hub := &Hub{Endpoint: down.URL, Dir: t.TempDir()}
	if err := onnxtest.WriteBERT(filepath.Join(hub.Dir, "acme", "tiny"), onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	if dir, err := hub.Fetch(ctx, "acme/tiny", "", ""); err != nil || dir != filepath.Join(hub.Dir, "acme", "tiny") {
		t.Errorf("hand-placed model: %s, %v", dir, err)
	}
}
