package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
)

// fakeEmbedder speaks OpenAI-compatible /v1/embeddings: with status 0 it
// answers vectors of dim 8, else it answers every request with that status.
type fakeEmbedder struct {
	*httptest.Server
	status   atomic.Int32
	requests atomic.Int32
}

func newFakeEmbedder(t *testing.T) *fakeEmbedder {
	f := &fakeEmbedder{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		f.requests.Add(1)
		if st := int(f.status.Load()); st != 0 {
			http.Error(w, `{"error":"the fake says `+http.StatusText(st)+`"}`, st)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			v := make([]float32, 8)
			for j, c := range text {
				v[(j+int(c))%8]++
			}
			data[i] = item{i, v}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(f.Close)
	return f
}

// logRecorder keeps the messages of records at WARN and above and passes
// every record on.
type logRecorder struct {
	slog.Handler
	mu   *sync.Mutex
	recs *[]slog.Record
}

func (h logRecorder) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.mu.Lock()
		*h.recs = append(*h.recs, r.Clone())
		h.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return logRecorder{h.Handler.WithAttrs(as), h.mu, h.recs}
}

func (h logRecorder) WithGroup(name string) slog.Handler {
	return logRecorder{h.Handler.WithGroup(name), h.mu, h.recs}
}

// TestIndexEmbedderUnavailable indexes a repository with a healthy
// OpenAI-compatible embedder, then adds a function and indexes again while
// the embedder answers only 500, then only 400. With the embedder failing,
// IndexRepo fails after a bounded number of attempts (4 for a 500, each
// retrying its request 3 times itself; 1 request for a 400) with an error
// naming the embedder's URL and the status; one WARN line tells of the
// retries, the SDK logs no ERROR, and the previously published manifest is
// untouched. Once the embedder is healthy again the repository indexes.
func TestIndexEmbedderUnavailable(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	r.Write(map[string]string{"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n"})
	r.Commit("cache")
	fake := newFakeEmbedder(t)
	endpoint := fake.URL + "/v1/embeddings"

	srv := startServer(t, t.TempDir())
	var mu sync.Mutex
	var recs []slog.Record
	var errorLogs atomic.Int64
	h := levelCounter{logRecorder{testlog.New(t, slog.LevelDebug).Handler(), &mu, &recs}, &errorLogs}
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: sdklog.NewStructuredLogger(slog.New(h))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := blobtest.Bucket(t)
	// As the CLI does for --embedder (workerConfig): embed.Open, then the
	// workers get it as their search dependency. The in-request backoff is
	// shortened; the budget and the retry counts are the defaults.
	e, err := embed.Open(ctx, "openai+http://"+strings.TrimPrefix(fake.URL, "http://")+"?model=m&dim=8")
	if err != nil {
		t.Fatal(err)
	}
	batched, ok := e.(*embed.Batched)
	if !ok {
		t.Fatalf("embed.Open returned %T, want *embed.Batched", e)
	}
	batched.Opts.Backoff = 5 * time.Millisecond
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b, Search: search.Deps{Embedder: e}})
	name := schema.RepoName("acme/cache")
	in := schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: r.Dir}},
		Options: schema.FleetOptions{Index: schema.IndexOptions{EmbedRetry: &schema.RetryOptions{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 4}}}}

	if _, res := runFleet(ctx, t, c, "fleet-embed-ok", in); res.Done != 1 {
		t.Fatalf("indexing with a healthy embedder: %+v", res)
	}
	if fake.requests.Load() == 0 {
		t.Fatal("the first index run never asked the embedder")
	}
	published := readManifestBytes(ctx, t, b, name)
	oldHead := r.Head()

	// A new function, so that the next run has something to embed.
	r.Write(map[string]string{"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n"})
	r.Commit("queue")

	for _, tc := range []struct {
		name     string
		status   int
		requests int32    // reaching the server
		says     []string // in the repository's error
		warn     string   // the one WARN line; "" for none about retries
	}{
		{name: "500", status: 500, requests: 4 * 4, says: []string{"embedder at " + endpoint + " unavailable after 4 attempts over ", "HTTP 500", "the fake says Internal Server Error"},
			warn: "embedder at " + endpoint + " answers HTTP 500 (attempt 2 of 4); retrying"},
		{name: "400", status: 400, requests: 1, says: []string{"embedder at " + endpoint + " rejected the request: HTTP 400", "the fake says Bad Request"},
			warn: "embedder at " + endpoint + " rejected the request: HTTP 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake.status.Store(int32(tc.status))
			fake.requests.Store(0)
			mu.Lock()
			recs = nil
			mu.Unlock()
			errsBefore := errorLogs.Load()
			begin := time.Now()
			run, res := runFleet(ctx, t, c, "fleet-embed-"+tc.name, in)
			took := time.Since(begin)
			if res.Failed != 1 {
				t.Fatalf("fleet result %+v, want the repository failed", res)
			}
			if took > 20*time.Second {
				t.Errorf("the run took %v; a failing embedder must fail it within 20 s with these retry options", took)
			}
			sum := readSummary(ctx, t, b, res, run.id)
			msg := sum.Results[0].Error
			t.Logf("error: %s", msg)
			for _, want := range tc.says {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if tc.status == 500 {
				m := regexp.MustCompile(`over ([0-9.]+) s`).FindStringSubmatch(msg)
				if m == nil {
					t.Errorf("error %q does not say how long the attempts took", msg)
				} else if secs, err := strconv.ParseFloat(m[1], 64); err != nil || secs <= 0 || secs > took.Seconds() {
					t.Errorf("error %q: want the time over all attempts, more than 0 and at most the run's %v", msg, took)
				}
			}
			if got := fake.requests.Load(); got != tc.requests {
				t.Errorf("the embedder saw %d requests, want %d", got, tc.requests)
			}
			mu.Lock()
			var warns []string
			for _, rec := range recs {
				if strings.Contains(rec.Message, "embedder at ") {
					warns = append(warns, rec.Message)
				}
			}
			mu.Unlock()
			if len(warns) != 1 || !strings.HasPrefix(warns[0], tc.warn) {
				t.Errorf("WARN lines about the embedder: %q; want one starting %q", warns, tc.warn)
			}
			if n := errorLogs.Load() - errsBefore; n != 0 {
				t.Errorf("%d ERROR log records for an embedder outage the run reports; want 0", n)
			}
			if now := readManifestBytes(ctx, t, b, name); !bytes.Equal(now, published) {
				t.Errorf("the published manifest changed:\nbefore %s\nafter  %s", published, now)
			}
		})
	}
	m := checkManifestReadable(ctx, t, b, name)
	if m.Head != oldHead {
		t.Errorf("manifest head %s after the failed runs, want the previous %s", m.Head, oldHead)
	}

	// Healthy again: the new commit is indexed.
	fake.status.Store(0)
	if _, res := runFleet(ctx, t, c, "fleet-embed-recovered", in); res.Done != 1 {
		t.Fatalf("indexing after the embedder recovered: %+v", res)
	}
	checkIndexed(ctx, t, b, name, r)
}

func readManifestBytes(ctx context.Context, t *testing.T, b *blob.Bucket, name schema.RepoName) []byte {
	t.Helper()
	data, err := b.ReadAll(ctx, name.ManifestKey())
	if err != nil {
		t.Fatalf("read the manifest of %s: %v", name, err)
	}
	return data
}

// checkManifestReadable reads every part the manifest names.
func checkManifestReadable(ctx context.Context, t *testing.T, b *blob.Bucket, name schema.RepoName) *schema.Manifest {
	t.Helper()
	m, err := manifest.Read(ctx, b, name)
	if err != nil || m == nil {
		t.Fatalf("manifest of %s: %v (nil: %v)", name, err, m == nil)
	}
	if rows := readRows(ctx, t, b, m); int64(len(rows)) != m.Rows {
		t.Errorf("%s: %d rows in the parts, the manifest says %d", name, len(rows), m.Rows)
	}
	return m
}
