// Package workerstest starts what locus's workflows need in a test: the
// embedded Temporal server, a client, and workers serving every queue, all
// stopped when the test ends.
package workerstest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/workers"
)

// Server starts the embedded Temporal server with its data in dir.
func Server(t testing.TB, dir string) *devserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := devserver.Start(ctx, devserver.Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Logf("server at %s started in %v", s.Address(), time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	return s
}

// Dial connects a client to s.
func Dial(t testing.TB, s *devserver.Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(),
		Logger: sdklog.NewStructuredLogger(testlog.New(t, slog.LevelWarn))})
	if err != nil {
		t.Fatalf("dial %s: %v", s.Address(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// Workers starts workers as cfg says and stops them when the test ends.
func Workers(t testing.TB, c client.Client, cfg workers.Config) {
	t.Helper()
	ws, err := workers.Start(cfg, c)
	if err != nil {
		t.Fatalf("start workers: %v", err)
	}
	t.Cleanup(func() {
		for _, w := range ws {
			w.Stop()
		}
	})
}

// Start starts a server (its data under a temporary directory), a client,
// and workers as cfg says; cfg.DataDir defaults to a temporary directory.
func Start(t testing.TB, cfg workers.Config) client.Client {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	c := Dial(t, Server(t, t.TempDir()))
	Workers(t, c, cfg)
	return c
}
