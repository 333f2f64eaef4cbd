package embed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks OpenAI-compatible /v1/embeddings and TEI /embed. Each
// request takes the next scripted failure, if any; a batch over maxBatch
// texts is refused with 413, as real servers do.
type fakeServer struct {
	*httptest.Server
	dim      int
	maxBatch int
	mu       sync.Mutex
	script   []string // "429", "500", "malformed", "slow", "" (ok)
	requests atomic.Int32
	texts    atomic.Int32
}

func newFake(t *testing.T, dim, maxBatch int, script ...string) *fakeServer {
	f := &fakeServer{dim: dim, maxBatch: maxBatch, script: script}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) vector(text string) []float32 {
	v := make([]float32, f.dim)
	for i, r := range text {
		v[(i+int(r))%f.dim] += 1
	}
	return v
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	step := ""
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	switch step {
	case "429":
		w.Header().Set("Retry-After", "2")
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
		return
	case "500":
		http.Error(w, "boom", http.StatusInternalServerError)
		return
	case "400":
		http.Error(w, `{"error":"bad model"}`, http.StatusBadRequest)
		return
	case "malformed":
		w.Write([]byte(`{"data": [{"embedding": [1, 2`))
		return
	case "slow":
		time.Sleep(300 * time.Millisecond)
	}
	var texts []string
	var body map[string]json.RawMessage
	json.NewDecoder(r.Body).Decode(&body)
	switch r.URL.Path {
	case "/v1/embeddings":
		json.Unmarshal(body["input"], &texts)
	case "/embed":
		json.Unmarshal(body["inputs"], &texts)
	default:
		http.NotFound(w, r)
		return
	}
	if f.maxBatch > 0 && len(texts) > f.maxBatch {
		http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
		return
	}
	f.texts.Add(int32(len(texts)))
	if r.URL.Path == "/embed" {
		var out [][]float32
		for _, t := range texts {
			out = append(out, f.vector(t))
		}
		json.NewEncoder(w).Encode(out)
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(texts) - 1; i >= 0; i-- { // out of order, as servers may answer
		data = append(data, item{i, f.vector(texts[i])})
	}
	json.NewEncoder(w).Encode(map[string]any{"data": data})
}

func noSleep(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(_ context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return nil
	}
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("x", i%7) + "def f" + string(rune('a'+i%26)) + "():"
	}
	return out
}

func TestClientsAndBatching(t *testing.T) {
	for _, proto := range []string{"openai", "tei"} {
		t.Run(proto, func(t *testing.T) {
			f := newFake(t, 8, 0)
			opts := HTTPOptions{BaseURL: f.URL, Model: "m", Dim: 8}
			var e Embedder = &OpenAI{opts}
			if proto == "tei" {
				e = &TEI{opts}
			}
			b := &Batched{E: e, Opts: BatchOptions{MaxTexts: 4, Concurrency: 2}}
			in := texts(10)
			out, err := b.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range out {
				want := f.vector(in[i])
				for j := range v {
					if v[j] != want[j] {
						t.Fatalf("vector %d out of order or wrong", i)
					}
				}
			}
			if got := f.requests.Load(); got != 3 {
				t.Errorf("%d requests for 10 texts at 4 per batch, want 3", got)
			}
		})
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	f := newFake(t, 4, 0, "429", "500", "malformed")
	var waits []time.Duration
	b := &Batched{E: &OpenAI{HTTPOptions{BaseURL: f.URL, Model: "m", Dim: 4}}, Opts: BatchOptions{Sleep: noSleep(&waits)}}
	if _, err := b.Embed(context.Background(), texts(3)); err != nil {
		t.Fatal(err)
	}
	if f.requests.Load() != 4 {
		t.Errorf("%d requests, want 4 (three failures, then success)", f.requests.Load())
	}
	if len(waits) != 3 || waits[0] != 2*time.Second || waits[1] != time.Second || waits[2] != 2*time.Second {
		t.Errorf("waits %v, want [2s (Retry-After) 1s 2s]", waits)
	}
}

func TestTooLargeSplits(t *testing.T) {
	f := newFake(t, 4, 3)
	var waits []time.Duration
	b := &Batched{E: &TEI{HTTPOptions{BaseURL: f.URL, Model: "m", Dim: 4}}, Opts: BatchOptions{MaxTexts: 16, Sleep: noSleep(&waits)}}
	out, err := b.Embed(context.Background(), texts(10))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 10 || f.texts.Load() != 10 {
		t.Fatalf("got %d vectors, server embedded %d texts; want 10 and 10", len(out), f.texts.Load())
	}
	if len(waits) != 0 {
		t.Errorf("a 413 must split, not wait: waits %v", waits)
	}
}

func TestPermanentFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script []string
		dim    int
	}{
		{"400 is not retried", []string{"400"}, 4},
		{"wrong dimension", nil, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, 4, 0, tc.script...)
			var waits []time.Duration
			b := &Batched{E: &OpenAI{HTTPOptions{BaseURL: f.URL, Model: "m", Dim: tc.dim}}, Opts: BatchOptions{Sleep: noSleep(&waits)}}
			_, err := b.Embed(context.Background(), texts(2))
			var e *Error
			if !errors.As(err, &e) || e.Retryable || f.requests.Load() != 1 {
				t.Fatalf("err %v after %d requests; want one non-retryable failure", err, f.requests.Load())
			}
		})
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	f := newFake(t, 4, 0, "slow")
	var waits []time.Duration
	b := &Batched{E: &OpenAI{HTTPOptions{BaseURL: f.URL, Model: "m", Dim: 4, Timeout: 50 * time.Millisecond}}, Opts: BatchOptions{Sleep: noSleep(&waits)}}
	if _, err := b.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 {
		t.Errorf("a timeout should be retried once here: waits %v", waits)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"3": 3 * time.Second, "": 0, "soon": 0,
		now.Add(90 * time.Second).Format(time.RFC1123): 90 * time.Second,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLexical(t *testing.T) {
	l := &Lexical{Dims: 256}
	vs, err := l.Embed(context.Background(), []string{
		"def get_user_name(user): return user.name",
		"def getUserName(user) { return user.name }",
		"compile the regular expression cache",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs[0]) != 256 || l.Name() != "lexical-hash-256" {
		t.Fatalf("dim %d name %s", len(vs[0]), l.Name())
	}
	same, other := Cosine(vs[0], vs[1]), Cosine(vs[0], vs[2])
	if same <= other || same < 0.5 {
		t.Errorf("snake_case and camelCase spellings should be close: %.2f vs unrelated %.2f", same, other)
	}
	again, _ := l.Embed(context.Background(), []string{"def get_user_name(user): return user.name"})
	if Cosine(vs[0], again[0]) < 0.999999 {
		t.Error("not deterministic")
	}
}

func TestDocumentAndTruncate(t *testing.T) {
	if got := Document("a/b.py", "C", "def m(self): pass"); got != "a/b.py\nclass C:\ndef m(self): pass" {
		t.Errorf("Document = %q", got)
	}
	if got := Truncate("héllo", 2); got != "h" {
		t.Errorf("Truncate cut a rune: %q", got)
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	for raw, name := range map[string]string{
		"":                                   "lexical-hash-512",
		"lexical://?dim=64":                  "lexical-hash-64",
		"openai+http://h:8080?model=m&dim=8": "m",
		"tei://h:8080?model=bge&dim=8":       "bge",
	} {
		e, err := Open(ctx, raw)
		if err != nil || e.Name() != name {
			t.Errorf("Open(%q) = %v, %v; want %s", raw, e, err, name)
		}
	}
	for _, raw := range []string{"openai+http://h?model=m", "tei://h?dim=8", "ftp://h?model=m&dim=8", "openai+http://h?model=m&dim=x"} {
		if _, err := Open(ctx, raw); err == nil {
			t.Errorf("Open(%q) accepted", raw)
		}
	}
	// The opened embedder talks to a real server through the batching layer.
	f := newFake(t, 4, 2)
	e, err := Open(ctx, "openai+http://"+strings.TrimPrefix(f.URL, "http://")+"?model=m&dim=4&batch=8")
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := e.Embed(ctx, texts(5)); err != nil || len(vs) != 5 {
		t.Fatalf("embed through Open: %d vectors, %v", len(vs), err)
	}
}
