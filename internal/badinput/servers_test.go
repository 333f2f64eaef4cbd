package badinput

import (
	"encoding/json"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"sync"
	"testing"
)

// serveGit serves the bare repositories under projectRoot over smart HTTP
// with git's own http-backend, behind basic auth for user:pass.
func serveGit(t *testing.T, projectRoot, user, pass string) string {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + projectRoot, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// embedServer speaks the OpenAI /v1/embeddings protocol with vectors of dim
// numbers; every request waits until release is called, so a test can hold
// an index run in its embedding step.
type embedServer struct {
	URL     string
	dim     int
	gate    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	calls   int
	arrived chan struct{} // closed on the first request
	first   sync.Once
}

func newEmbedServer(t *testing.T, dim int) *embedServer {
	t.Helper()
	e := &embedServer{dim: dim, gate: make(chan struct{}), arrived: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e.mu.Lock()
		e.calls++
		e.mu.Unlock()
		e.first.Do(func() { close(e.arrived) })
		select {
		case <-e.gate:
		case <-r.Context().Done():
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Data []item `json:"data"`
		}{}
		for i, text := range req.Input {
			v := make([]float32, e.dim)
			for j := 0; j < len(text); j++ {
				v[int(text[j])%e.dim]++
			}
			v[0]++ // never the zero vector
			resp.Data = append(resp.Data, item{Index: i, Embedding: v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(func() { e.release(); srv.Close() })
	e.URL = srv.URL
	return e
}

func (e *embedServer) release() { e.once.Do(func() { close(e.gate) }) }

// chatServer speaks the OpenAI /v1/chat/completions protocol and answers
// every request with content (or with status when it is not 200).
type chatServer struct {
	URL   string
	mu    sync.Mutex
	calls int
}

func newChatServer(t *testing.T, status int, content string) *chatServer {
	t.Helper()
	c := &chatServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.calls++
		c.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"model overloaded"}}`, status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func (c *chatServer) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// failingEmbedServer answers every request with status.
func failingEmbedServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"internal"}`, status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
