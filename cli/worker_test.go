package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/testutil/testctx"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Without --temporal a worker says that it starts the embedded server and
// where others reach it.
func TestWorkerWithoutTemporalStartsEmbeddedServer(t *testing.T) {
	var errOut syncBuffer
	old := stderr
	stderr = &errOut
	defer func() { stderr = old }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runWorker(ctx, []string{"--data-dir", t.TempDir(), "--log-level", "error", "--embedded-address", "127.0.0.1:0"})
	}()
	deadline := testctx.New(t).Done()
	for !strings.Contains(errOut.String(), "Ctrl-C stops it") {
		select {
		case err := <-done:
			t.Fatalf("worker ended early: %v\n%s", err, errOut.String())
		case <-deadline:
			t.Fatalf("worker did not start:\n%s", errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	out := errOut.String()
	if !strings.Contains(out, "no --temporal given: starting the embedded Temporal server on 127.0.0.1:0") ||
		!strings.Contains(out, "embedded Temporal server listening on 127.0.0.1:") || strings.Contains(out, "listening on 127.0.0.1:0;") {
		t.Fatalf("worker output:\n%s", out)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker stopped with %v", err)
		}
	case <-testctx.New(t).Done():
		t.Fatal("worker did not stop after cancel")
	}
}

// With a --temporal nobody answers at, the worker fails with an error naming
// the address instead of waiting for it.
func TestWorkerRefusesUnreachableTemporal(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err = runWorker(ctx, []string{"--data-dir", t.TempDir(), "--log-level", "error", "--temporal", addr})
	if err == nil || !strings.Contains(errorMessage(err), "connect to Temporal at "+addr) {
		t.Fatalf("err = %v, want a connect error naming %s", err, addr)
	}
	if ctx.Err() != nil {
		t.Fatalf("took %s: failed only when the test's deadline ran out", time.Since(start))
	}
}
