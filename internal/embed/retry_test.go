package embed

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestErrorsNameTheEndpoint: every failure of a remote embedder carries the
// URL it went to and the HTTP status, and says both.
func TestErrorsNameTheEndpoint(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there any more
	for _, tc := range []struct {
		name      string
		script    []string
		base      string // "" = the fake
		tei       bool
		dim       int
		status    int
		retryable bool
		says      string
	}{
		{name: "openai 500", script: []string{"500"}, dim: 4, status: 500, retryable: true, says: "HTTP 500: boom"},
		{name: "tei 500", script: []string{"500"}, tei: true, dim: 4, status: 500, retryable: true, says: "HTTP 500: boom"},
		{name: "400", script: []string{"400"}, dim: 4, status: 400, says: `HTTP 400: {"error":"bad model"}`},
		{name: "wrong dimension", dim: 5, says: "vector 0 has 4 dimensions, the model is configured with 5"},
		{name: "connection refused", base: deadURL, dim: 4, retryable: true, says: "connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, 4, 0, tc.script...)
			base := f.URL
			if tc.base != "" {
				base = tc.base
			}
			opts := HTTPOptions{BaseURL: base, Model: "m", Dim: tc.dim}
			var e Embedder = &OpenAI{opts}
			want := base + "/v1/embeddings"
			if tc.tei {
				e, want = &TEI{opts}, base+"/embed"
			}
			if got := Endpoint(&Batched{E: e}); got != want {
				t.Errorf("Endpoint = %q, want %q", got, want)
			}
			_, err := e.Embed(context.Background(), texts(1))
			var ee *Error
			if !errors.As(err, &ee) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if ee.URL != want || ee.Status != tc.status || ee.Retryable != tc.retryable {
				t.Errorf("error %+v, want URL %s, status %d, retryable %v", ee, want, tc.status, tc.retryable)
			}
			if msg := err.Error(); !strings.Contains(msg, want) || !strings.Contains(msg, tc.says) || strings.Count(msg, want) != 1 {
				t.Errorf("error %q should name %s once and say %q", msg, want, tc.says)
			}
		})
	}
	if got := Endpoint(&Lexical{}); got != "" {
		t.Errorf("the lexical embedder has endpoint %q, want none", got)
	}
}

// TestRequestTimeoutIsRetryable: 408 is the server giving up on a slow
// request, not a bad one.
func TestRequestTimeoutIsRetryable(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "request timeout", http.StatusRequestTimeout)
	}))
	t.Cleanup(srv.Close)
	var waits []time.Duration
	b := &Batched{E: &OpenAI{HTTPOptions{BaseURL: srv.URL, Model: "m", Dim: 4}}, Opts: BatchOptions{Retries: 2, Sleep: noSleep(&waits)}}
	_, err := b.Embed(context.Background(), texts(1))
	var ee *Error
	if !errors.As(err, &ee) || ee.Status != 408 || !ee.Retryable {
		t.Fatalf("error %v, want a retryable HTTP 408", err)
	}
	if n.Load() != 3 || len(waits) != 2 {
		t.Errorf("%d requests, %d waits; want 3 and 2 (two retries)", n.Load(), len(waits))
	}
}

// TestRetryBudget: a request stops retrying once the next wait would end
// after its budget, and returns the last failure for the caller to retry.
func TestRetryBudget(t *testing.T) {
	t.Run("backoff", func(t *testing.T) {
		f := newFake(t, 4, 0, "500", "500", "500", "500", "500", "500", "500", "500", "500", "500")
		var waits []time.Duration
		sleep := func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			time.Sleep(d)
			return nil
		}
		// Waits of 20 ms then 40 ms: the second would end past 50 ms.
		b := &Batched{E: &OpenAI{HTTPOptions{BaseURL: f.URL, Model: "m", Dim: 4}},
			Opts: BatchOptions{Retries: 10, Backoff: 20 * time.Millisecond, RetryBudget: 50 * time.Millisecond, Sleep: sleep}}
		_, err := b.Embed(context.Background(), texts(1))
		if ee := (*Error)(nil); !errors.As(err, &ee) || ee.Status != 500 {
			t.Fatalf("error %v, want the last HTTP 500", err)
		}
		if f.requests.Load() != 2 || len(waits) != 1 || waits[0] != 20*time.Millisecond {
			t.Errorf("%d requests, waits %v; want 2 requests and one wait of 20ms", f.requests.Load(), waits)
		}
	})
	t.Run("retry-after beyond the budget", func(t *testing.T) {
		f := newFake(t, 4, 0, "429", "429") // Retry-After: 2
		var waits []time.Duration
		b := &Batched{E: &OpenAI{HTTPOptions{BaseURL: f.URL, Model: "m", Dim: 4}},
			Opts: BatchOptions{RetryBudget: time.Second, Sleep: noSleep(&waits)}}
		_, err := b.Embed(context.Background(), texts(1))
		if RetryAfter(err) != 2*time.Second || !IsRetryable(err) {
			t.Fatalf("error %v, want the 429 with its Retry-After of 2s for the caller", err)
		}
		if f.requests.Load() != 1 || len(waits) != 0 {
			t.Errorf("%d requests, waits %v; want 1 request and no wait", f.requests.Load(), waits)
		}
	})
	t.Run("default", func(t *testing.T) {
		o := BatchOptions{}
		o.defaults()
		if o.RetryBudget != time.Minute || o.Backoff != 500*time.Millisecond || o.Retries != 3 {
			t.Errorf("defaults: budget %v, backoff %v, retries %d; want 1m, 500ms, 3", o.RetryBudget, o.Backoff, o.Retries)
		}
	})
}
