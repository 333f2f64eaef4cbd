package e2e

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/metrics"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
)

// metricValue is the value of the sample named name (labels included, as
// the exposition format writes them) in a /metrics page; -1 when absent.
func metricValue(page, name string) float64 {
	for _, l := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// TestMetricsEndpoint indexes a repository with the Temporal client's
// metrics handler and serves /metrics: locus's counters moved by the work
// done, and the SDK's own metrics are there.
func TestMetricsEndpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
	r.Commit("add helper")
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 3\n"})
	r.Commit("triple it")
	srv := startServer(t, t.TempDir())
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), MetricsHandler: metrics.SDKHandler()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr, stop, err := metrics.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func() string {
		t.Helper()
		resp, err := http.Get("http://" + addr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
		}
		return string(body)
	}
	before := get()
	b := blobtest.Bucket(t)
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b})
	if _, res := runFleet(ctx, t, c, "fleet-metrics", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "acme/metered", URL: r.Dir}}}); res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}
	after := get()
	for name, min := range map[string]float64{
		`locus_repos_indexed_total{status="ok"}`: 1,
		"locus_commits_scraped_total":            2,
		"locus_graph_files_parsed_total":         1,
		"locus_vectors_upserted_total":           1,
	} {
		was := max(metricValue(before, name), 0)
		if now := metricValue(after, name); now-was < min {
			t.Errorf("%s went from %v to %v, want at least +%v", name, was, now, min)
		}
	}
	// The Temporal SDK's metrics, through its tally handler.
	for _, want := range []string{"temporal_request", "temporal_workflow_completed", "temporal_activity_execution_latency"} {
		if !strings.Contains(after, want) {
			t.Errorf("/metrics lacks the SDK's %s", want)
		}
	}
}
