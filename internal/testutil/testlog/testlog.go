// Package testlog routes slog output to a test's log.
package testlog

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// New returns a logger that writes records at level and above to t.Log until
// the test ends; servers and SDKs may log from their goroutines after that,
// which t.Log forbids, so later records are dropped.
func New(t testing.TB, level slog.Level) *slog.Logger {
	w := &writer{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type writer struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
