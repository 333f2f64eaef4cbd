// Package metrics is what a locus process serves to Prometheus: the
// Temporal SDK's own metrics (through its tally handler, for workflows,
// activities, task queues and requests, latencies included) and locus's
// counters of the work it does.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// locus's counters. They count in every process; only a process that
// serves metrics exposes them.
var (
	ReposIndexed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "locus_repos_indexed_total", Help: "Repositories a fleet run finished, by status (ok, failed).",
	}, []string{"status"})
	CommitsScraped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "locus_commits_scraped_total", Help: "New commits scraped into the history tables.",
	})
	FilesParsed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "locus_graph_files_parsed_total", Help: "Files parsed into code graphs.",
	})
	FilesReused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "locus_graph_files_reused_total", Help: "Files whose extraction a graph build took from the previous build.",
	})
	FunctionsEmbedded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "locus_functions_embedded_total", Help: "Function documents sent to the embedder (not found in the embedding cache).",
	})
	VectorsUpserted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "locus_vectors_upserted_total", Help: "Vectors written to the vector index.",
	})
	LLMTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "locus_llm_tokens_total", Help: "LLM tokens used, by kind (prompt, completion).",
	}, []string{"kind"})
	LLMCalls = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "locus_llm_calls_total", Help: "LLM calls made, retries and repairs included.",
	})
)

var (
	once     sync.Once
	registry *prometheus.Registry
	handler  client.MetricsHandler
)

func setup() {
	registry = prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		ReposIndexed, CommitsScraped, FilesParsed, FilesReused, FunctionsEmbedded, VectorsUpserted, LLMTokens, LLMCalls)
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: registry})
	scope, _ := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	handler = sdktally.NewMetricsHandler(scope)
}

// Registry is the process's registry: locus's counters and Go's runtime.
func Registry() *prometheus.Registry {
	once.Do(setup)
	return registry
}

// SDKHandler is the Temporal client's metrics handler
// (client.Options.MetricsHandler), reporting into Registry.
func SDKHandler() client.MetricsHandler {
	once.Do(setup)
	return handler
}

// Serve serves Registry at http://addr/metrics until ctx ends or stop is
// called; it returns the address it listens on (addr may name port 0).
func Serve(ctx context.Context, addr string) (net.Addr, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry(), promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener was closed under it; nothing to report to
		}
	}()
	stopped := make(chan struct{})
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			close(stopped)
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-stopped:
		}
	}()
	return ln.Addr(), stop, nil
}
