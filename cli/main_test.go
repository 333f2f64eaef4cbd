package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers/workerstest"
	"github.com/locus-dev/locus/workflows"
)

// capture runs fn with stdout redirected to a buffer.
func capture(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	old := stdout
	stdout = &buf
	defer func() { stdout = old }()
	err := fn()
	return buf.String(), err
}

func TestIndexThenStatus(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.go": "package a\n"})
	first := r.Commit("one")
	r.Write(map[string]string{"a.go": "package a\n\nfunc A() {}\n\nfunc B() { A() }\n"})
	head := r.Commit("two")
	data := t.TempDir()
	ctx := context.Background()

	out, err := capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "warn", "--json", "acme/widgets=" + r.Dir, "bogus=" + t.TempDir()})
	})
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(ee.msg, "1 of 2") {
		t.Fatalf("index with one bad repository: err = %v, want exit 1 naming 1 of 2 failed", err)
	}
	var sum schema.FleetSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if sum.Done != 1 || sum.Failed != 1 {
		t.Fatalf("summary %+v", sum)
	}

	out, err = capture(t, func() error { return runStatus(ctx, []string{"--data-dir", data, "--json"}) })
	if err != nil {
		t.Fatal(err)
	}
	var ms []schema.Manifest
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(ms) != 1 || ms[0].Repo != "acme/widgets" || ms[0].Head != head || ms[0].Commits != 2 {
		t.Fatalf("status = %+v", ms)
	}
	if ms[0].Search == nil || ms[0].Search.Vectors != "local" || ms[0].Graph == nil || ms[0].Graph.Languages["go"] != 1 {
		t.Fatalf("status records search %+v, graph %+v; want the local vector store and one go file", ms[0].Search, ms[0].Graph)
	}
	// The table shows the graph, the embedder and the vector store; a Go
	// repository draws no language warning.
	var errBuf bytes.Buffer
	oldErr := stderr
	stderr = &errBuf
	out, err = capture(t, func() error { return runStatus(ctx, []string{"--data-dir", data}) })
	stderr = oldErr
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GRAPH FILES", "NODES", "EMBEDDER", "VECTORS", "go:1", ms[0].Search.Model, "local", "LAST RUN", sum.WorkflowID} {
		if !strings.Contains(out, want) {
			t.Errorf("status table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(errBuf.String(), "warning") {
		t.Errorf("status warns about a Go repository: %s", errBuf.String())
	}
	// The repository that failed is not indexed; status says why, from
	// its last run.
	for _, r := range sum.Results {
		if r.OK {
			continue
		}
		_, err := capture(t, func() error { return runStatus(ctx, []string{"--data-dir", data, string(r.Repo)}) })
		if err == nil || !strings.Contains(err.Error(), "its last run, "+sum.WorkflowID+", failed: ") {
			t.Errorf("status of the repository that failed: %v", err)
		}
	}
	// The index answers queries: the function the issue names ranks first.
	out, err = capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--json", "--repo", "acme/widgets", "--k", "3", "--c", "1", "the A function in a.go"})
	})
	if err != nil {
		t.Fatal(err)
	}
	var loc struct {
		Method   string `json:"method"`
		Selector string `json:"selector"`
		Items    []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &loc); err != nil {
		t.Fatalf("localize --json: %v\n%s", err, out)
	}
	if loc.Method != "hybrid" || len(loc.Items) == 0 || loc.Items[0].ID != "a.go:A" || !strings.Contains(loc.Selector, "heuristic") {
		t.Fatalf("localize = %+v", loc)
	}
	// --ref ranks the code of another commit (a snapshot, built on demand).
	out, err = capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--json", "--repo", "acme/widgets", "--ref", first[:7], "the A function in a.go"})
	})
	if err != nil {
		t.Fatal(err)
	}
	var at struct {
		Commit string `json:"commit"`
	}
	if err := json.Unmarshal([]byte(out), &at); err != nil || at.Commit != first {
		t.Fatalf("localize --ref %s answered at %q (%v)", first[:7], at.Commit, err)
	}
	// A query at a commit that is not in the repository is refused.
	_, err = capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--repo", "acme/widgets", "--ref", "0000000", "A"})
	})
	const notIn = "base_commit 0000000 is not a commit of acme/widgets"
	if err == nil || !strings.Contains(err.Error(), notIn) {
		t.Fatalf("localize --ref of no commit: %v", err)
	}
	// The user reads the failing step's message once, not Temporal's chain.
	if msg := errorMessage(err); strings.Count(msg, notIn) != 1 || strings.Contains(msg, "workflow execution error") ||
		strings.Contains(msg, "(type:") || !strings.HasPrefix(msg, "localize acme/widgets: ") {
		t.Fatalf("localize --ref at another commit reads %q", msg)
	}
	// The same command again resumes nothing and scrapes nothing new.
	out, err = capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "warn", "acme/widgets=" + r.Dir})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "acme/widgets") || !strings.Contains(out, "1 done, 0 failed") {
		t.Fatalf("second run output:\n%s", out)
	}
	// With --temporal, status shows the next run of the schedule that
	// indexes the repository (status never starts a server of its own).
	srv := workerstest.Server(t, t.TempDir())
	c := workerstest.Dial(t, srv)
	in := workflows.ScheduledIndexInput{Repos: []schema.RepoSpec{{Name: "acme/widgets", URL: r.Dir}}}
	if err := jobs.CreateSchedule(ctx, c, "nightly", jobs.ScheduleSpec{Cron: "0 3 * * *"}, in); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ { // the server's schedule listing is eventually consistent
		out, err = capture(t, func() error { return runStatus(ctx, []string{"--data-dir", data, "--temporal", srv.Address()}) })
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "(nightly)") || i == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out, "NEXT SCHEDULED") || !strings.Contains(out, "(nightly)") {
		t.Errorf("status with --temporal lacks the schedule's next run:\n%s", out)
	}
}

func TestRepoSpecs(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "fleet.txt")
	os.WriteFile(list, []byte("# comment\n\nacme/a=/src/a\nhttps://example.com/acme/b.git\n"), 0o644)
	specs, err := gitrepo.ReadSpecs([]string{"/src/c"}, list, "")
	if err != nil || len(specs) != 3 || specs[1].Name != "acme/a" || specs[2].Name != "acme/b" {
		t.Fatalf("specs = %+v, %v", specs, err)
	}
	if _, err := gitrepo.ReadSpecs([]string{"/x/same", "/y/same"}, "", ""); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate names: err = %v", err)
	}
	if _, err := gitrepo.ReadSpecs([]string{"../../etc/passwd=/x"}, "", ""); err == nil {
		t.Fatal("an escaping name was accepted")
	}
}

func TestEnvironmentFillsFlags(t *testing.T) {
	var g Globals
	fs := newFlags("status", &g)
	t.Setenv("LOCUS_NAMESPACE", "from-env")
	t.Setenv("LOCUS_LOG_LEVEL", "debug")
	if err := parse(fs, []string{"--log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	if g.namespace != "from-env" || g.logLevel != "warn" {
		t.Fatalf("namespace %q (want from env), log level %q (want the flag)", g.namespace, g.logLevel)
	}
}

func TestLLMConcurrencyReachesWorkers(t *testing.T) {
	var g Globals
	fs := newFlags("localize", &g)
	workerFlags(fs, &g)
	if err := parse(fs, []string{"--llm-concurrency", "7"}); err != nil {
		t.Fatal(err)
	}
	wc, err := g.workerConfig(context.Background(), blobtest.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	if wc.LLMConcurrency != 7 {
		t.Fatalf("workers.Config.LLMConcurrency = %d, want the flag's 7", wc.LLMConcurrency)
	}
}

// TestIndexWarnsOfUnsupportedLanguage: a repository mostly in a language
// without a graph indexes, and index, status and localize each say so.
func TestIndexWarnsOfUnsupportedLanguage(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"app/Main.kt":   strings.Repeat("fun main() { println(\"slug\") }\n", 40),
		"tools/slug.py": "def slugify(s):\n    return s.strip('-')\n",
	})
	r.Commit("one")
	data := t.TempDir()
	ctx := context.Background()
	var errBuf bytes.Buffer
	oldErr := stderr
	stderr = &errBuf
	defer func() { stderr = oldErr }()
	const want = "acme/kt: graph: unsupported language kotlin, 97% of code"
	if _, err := capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "error", "acme/kt=" + r.Dir})
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errBuf.String(), "warning: "+want) {
		t.Errorf("index does not warn %q:\n%s", want, errBuf.String())
	}
	errBuf.Reset()
	if _, err := capture(t, func() error { return runStatus(ctx, []string{"--data-dir", data}) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errBuf.String(), "warning: "+want) {
		t.Errorf("status does not warn %q:\n%s", want, errBuf.String())
	}
	errBuf.Reset()
	out, err := capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--repo", "acme/kt", "--method", "sr", "slugify strips dashes"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errBuf.String(), "graph: unsupported language kotlin") || !strings.Contains(out, "tools/slug.py:slugify") {
		t.Errorf("localize: stderr %q, stdout:\n%s", errBuf.String(), out)
	}
}
