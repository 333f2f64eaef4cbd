package onnx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

// noNetwork is a hub that fails the test if it is asked anything.
func noNetwork(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("offline, yet the hub was asked for %s", r.URL.Path)
		http.Error(w, "offline", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHubOffline: with HF_HUB_OFFLINE=1 (or Offline) a model that is not in
// the cache is an error naming the model, the cache directory and offline
// mode, and the network is never touched; a cached one is used as it is.
func TestHubOffline(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	if err := onnxtest.WriteBERT(src, onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	cached := t.TempDir()
	srv, _ := hubServer(t, "acme/tiny", map[string]string{"onnx/model.onnx": filepath.Join(src, "model.onnx"), "vocab.txt": filepath.Join(src, "vocab.txt")})
	if _, err := (&Hub{Endpoint: srv.URL, Dir: cached}).Fetch(ctx, "acme/tiny", "", ""); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env string
		offline   bool
		dir       string
		revision  string
		want      []string // in the error; none: no error
	}{
		{"env, not cached", "1", false, t.TempDir(), "", []string{"acme/tiny", "not in the local model cache", "offline mode is on (HF_HUB_OFFLINE=1)"}},
		{"env true, not cached", "TRUE", false, t.TempDir(), "", []string{"acme/tiny", "HF_HUB_OFFLINE=TRUE"}},
		{"field, not cached", "", true, t.TempDir(), "", []string{"acme/tiny", "offline mode is on"}},
		{"env, another revision cached", "1", false, cached, "v2", []string{"acme/tiny", "revision v2 (the cache holds main)"}},
		{"env, cached", "1", false, cached, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(OfflineEnv, tc.env)
			hub := &Hub{Endpoint: noNetwork(t), Dir: tc.dir, Offline: tc.offline}
			dir, err := hub.Fetch(ctx, "acme/tiny", tc.revision, "")
			if tc.want == nil {
				if err != nil || dir != filepath.Join(tc.dir, "acme", "tiny") {
					t.Fatalf("Fetch = %s, %v; want the cached model", dir, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Fetch = %s, nil; want an error", dir)
			}
			for _, w := range append(tc.want, filepath.Join(tc.dir, "acme", "tiny")) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}
