// Package e2e runs locus's indexing workflows end to end: the embedded Temporal
// server, real workers, real git repositories and a file object store.
package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workers/workerstest"
	"github.com/locus-dev/locus/workflows"
)

var update = flag.Bool("update", false, "record the histories of a real fleet run into workflows/testdata/histories for the replay test, and the Web UI screenshot docs/webui-workflows.png")

// historiesDir is where the replay test in workflows/ reads histories from.
var historiesDir = filepath.Join("..", "..", "workflows", "testdata", "histories")

func TestIndexFleetEndToEnd(t *testing.T) {
	t.Parallel()
	alpha := newAlpha(t)
	beta := newBeta(t)
	bogus := t.TempDir() // a directory, but not a repository
	specs := []schema.RepoSpec{spec(t, "fixtures/alpha", alpha.Dir), spec(t, "fixtures/beta", beta.Dir), spec(t, "fixtures/bogus", bogus)}

	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	bucket := blobtest.Bucket(t)
	startWorkers(t, c, t.TempDir(), bucket)
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	in := schema.IndexFleetInput{Repos: specs, Options: schema.FleetOptions{Window: 2, ContinueAsNewAfter: 2}}

	// First run: everything is new.
	run, res := runFleet(ctx, t, c, "e2e-fleet-1", in)
	if res.Total != 3 || res.Done != 2 || res.Failed != 1 {
		t.Fatalf("fleet result %+v, want 3 total, 2 done, 1 failed", res)
	}
	assertContinuedAsNew(ctx, t, c, run)
	sum := readSummary(ctx, t, bucket, res, run.id)
	byRepo := map[schema.RepoName]schema.RepoResult{}
	for _, r := range sum.Results {
		byRepo[r.Repo] = r
	}
	if r := byRepo["fixtures/bogus"]; r.OK || !strings.Contains(r.Error, bogus) {
		t.Errorf("bogus repository recorded as %+v, want a failure naming %s", r, bogus)
	}
	for _, fx := range []struct {
		name schema.RepoName
		repo *gitfixture.Repo
	}{{"fixtures/alpha", alpha}, {"fixtures/beta", beta}} {
		r := byRepo[fx.name]
		if !r.OK || r.Head != fx.repo.Head() || r.NewCommits != commitCount(t, fx.repo) {
			t.Errorf("%s recorded as %+v, want OK at %s with %d new commits", fx.name, r, fx.repo.Head(), commitCount(t, fx.repo))
		}
		m := checkIndexed(ctx, t, bucket, fx.name, fx.repo)
		if r.Rows != m.Rows {
			t.Errorf("%s: result rows %d, manifest rows %d", fx.name, r.Rows, m.Rows)
		}
	}
	checkRename(ctx, t, bucket, "fixtures/alpha", "util.go", "lib/util.go")
	checkMerge(ctx, t, bucket, "fixtures/alpha", alpha.Head())
	if ok, _ := bucket.Exists(ctx, schema.RepoName("fixtures/bogus").ManifestKey()); ok {
		t.Error("a manifest was published for the bogus repository")
	}
	if *update {
		recordHistories(ctx, t, c, run)
	}

	// Second run: one new commit in alpha, nothing new in beta.
	before := checkIndexed(ctx, t, bucket, "fixtures/alpha", alpha)
	alpha.Write(map[string]string{"main.go": "package main\n\nfunc main() { println(helper(2)) }\n"})
	alpha.Commit("print twice the helper")
	run2, res2 := runFleet(ctx, t, c, "e2e-fleet-2", in)
	if res2.Total != 3 || res2.Done != 2 || res2.Failed != 1 {
		t.Fatalf("second fleet result %+v, want 3 total, 2 done, 1 failed", res2)
	}
	sum2 := readSummary(ctx, t, bucket, res2, run2.id)
	got := map[schema.RepoName]schema.RepoResult{}
	for _, r := range sum2.Results {
		got[r.Repo] = r
	}
	for name, n := range map[schema.RepoName]int{"fixtures/alpha": 1, "fixtures/beta": 0} {
		if r := got[name]; !r.OK || r.NewCommits != n {
			t.Errorf("second run: %s recorded as %+v, want OK with %d new commits", name, r, n)
		}
	}
	after := checkIndexed(ctx, t, bucket, "fixtures/alpha", alpha)
	if after.Commits != before.Commits+1 || after.Head == before.Head {
		t.Errorf("alpha manifest went from %d commits at %s to %d at %s, want one more commit", before.Commits, before.Head, after.Commits, after.Head)
	}
	if len(after.Parts) != len(before.Parts)+1 {
		t.Errorf("alpha has %d parts after an incremental run, want %d", len(after.Parts), len(before.Parts)+1)
	}
	checkIndexed(ctx, t, bucket, "fixtures/beta", beta)
}

// TestIndexFleetSurvivesServerRestart starts a fleet while no worker runs,
// restarts the embedded server on the same data dir, and only then starts
// workers: the fleet must pick up where the database left it.
func TestIndexFleetSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	alpha := newAlpha(t)
	beta := newBeta(t)
	specs := []schema.RepoSpec{spec(t, "fixtures/alpha", alpha.Dir), spec(t, "fixtures/beta", beta.Dir)}
	serverDir := t.TempDir()
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	const id = "e2e-fleet-restart"

	a := startServer(t, serverDir)
	ca, err := client.Dial(client.Options{HostPort: a.Address(), Namespace: a.Namespace(),
		Logger: sdklog.NewStructuredLogger(testlog.New(t, slog.LevelWarn))})
	if err != nil {
		t.Fatal(err)
	}
	run, err := ca.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue},
		workflows.IndexFleet, schema.IndexFleetInput{Repos: specs, Options: schema.FleetOptions{Window: 1, ContinueAsNewAfter: 1}})
	if err != nil {
		t.Fatalf("start fleet: %v", err)
	}
	ca.Close()
	if err := a.Stop(); err != nil {
		t.Fatalf("stop server: %v", err)
	}

	b := startServer(t, serverDir)
	cb := dial(t, b)
	desc, err := cb.DescribeWorkflowExecution(ctx, id, run.GetRunID())
	if err != nil {
		t.Fatalf("describe after restart: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("after restart the fleet is %v, want running", st)
	}
	bucket := blobtest.Bucket(t)
	startWorkers(t, cb, t.TempDir(), bucket)
	var res workflows.FleetResult
	if err := cb.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatalf("fleet after restart: %v", err)
	}
	if res.Total != 2 || res.Done != 2 || res.Failed != 0 {
		t.Fatalf("fleet result %+v, want 2 done", res)
	}
	readSummary(ctx, t, bucket, res, id)
	checkIndexed(ctx, t, bucket, "fixtures/alpha", alpha)
	checkIndexed(ctx, t, bucket, "fixtures/beta", beta)
}

// newAlpha is a repository with a rename and a merge of a side branch.
func newAlpha(t *testing.T) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"main.go":   "package main\n\nfunc main() { println(helper(1)) }\n",
		"util.go":   "package main\n\n// helper doubles n.\nfunc helper(n int) int {\n\treturn n * 2\n}\n",
		"README.md": "# alpha\n",
	})
	r.Commit("initial import")
	if err := os.Mkdir(filepath.Join(r.Dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("mv", "util.go", "lib/util.go")
	r.Commit("move util into lib")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{"feature.go": "package main\n\nfunc feature() string { return \"on\" }\n"})
	r.Commit("add feature")
	r.Git("checkout", "-q", "main")
	r.Write(map[string]string{"README.md": "# alpha\n\nA fixture.\n"})
	r.Commit("describe alpha")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
	return r
}

// newBeta is a short linear history with a rename and a deletion.
func newBeta(t *testing.T) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 2\n"})
	r.Commit("start")
	r.Git("mv", "a.py", "first.py")
	r.Commit("rename a")
	r.Git("rm", "-q", "b.py")
	r.Write(map[string]string{"first.py": "def a():\n    return 10\n"})
	r.Commit("drop b, change a")
	return r
}

func spec(t *testing.T, name, url string) schema.RepoSpec {
	t.Helper()
	s, err := schema.ParseRepoSpec(name + "=" + url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func commitCount(t *testing.T, r *gitfixture.Repo) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(r.Git("rev-list", "--count", "HEAD")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fleetRun names the first run of a fleet; client.WorkflowRun's GetRunID
// moves on to the last run once Get has followed the continue-as-new chain.
type fleetRun struct{ id, firstRunID string }

// runFleet runs IndexFleet to the end, across its continue-as-new runs.
func runFleet(ctx context.Context, t *testing.T, c client.Client, id string, in schema.IndexFleetInput) (fleetRun, workflows.FleetResult) {
	t.Helper()
	begin := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue}, workflows.IndexFleet, in)
	if err != nil {
		t.Fatalf("start fleet %s: %v", id, err)
	}
	fr := fleetRun{id: run.GetID(), firstRunID: run.GetRunID()}
	var res workflows.FleetResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("fleet %s: %v", id, err)
	}
	t.Logf("fleet %s finished in %v: %+v", id, time.Since(begin).Round(time.Millisecond), res)
	return fr, res
}

// assertContinuedAsNew checks that the run we started handed over to a new run.
func assertContinuedAsNew(ctx context.Context, t *testing.T, c client.Client, run fleetRun) {
	t.Helper()
	desc, err := c.DescribeWorkflowExecution(ctx, run.id, run.firstRunID)
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		t.Errorf("first run of %s ended %v, want continued-as-new", run.id, st)
	}
}

func readSummary(ctx context.Context, t *testing.T, b *blob.Bucket, res workflows.FleetResult, fleetID string) schema.FleetSummary {
	t.Helper()
	if want := schema.RunPrefix(fleetID) + "summary.json"; res.SummaryKey != want {
		t.Errorf("summary key %q, want %q", res.SummaryKey, want)
	}
	data, err := b.ReadAll(ctx, res.SummaryKey)
	if err != nil {
		t.Fatalf("read summary: %v", err)
	}
	var s schema.FleetSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("summary %s: %v", res.SummaryKey, err)
	}
	if s.WorkflowID != fleetID || s.Total != res.Total || s.Done != res.Done || s.Failed != res.Failed || len(s.Results) != res.Total {
		t.Errorf("summary %+v does not match the fleet result %+v", s, res)
	}
	if s.StartedAt.IsZero() || s.FinishedAt.Before(s.StartedAt) {
		t.Errorf("summary times %v → %v", s.StartedAt, s.FinishedAt)
	}
	return s
}

// checkIndexed checks the manifest of repo against the fixture and reads every
// Parquet part back: the rows add up and every commit of the fixture is there.
func checkIndexed(ctx context.Context, t *testing.T, b *blob.Bucket, name schema.RepoName, repo *gitfixture.Repo) *schema.Manifest {
	t.Helper()
	m, err := manifest.Read(ctx, b, name)
	if err != nil || m == nil {
		t.Fatalf("manifest of %s: %v (nil: %v)", name, err, m == nil)
	}
	if m.Head != repo.Head() {
		t.Errorf("%s manifest head %s, want %s", name, m.Head, repo.Head())
	}
	if n := commitCount(t, repo); m.Commits != n {
		t.Errorf("%s manifest has %d commits, git rev-list --count HEAD says %d", name, m.Commits, n)
	}
	// The code graph of the head is published with it and readable.
	if m.Graph == nil || m.Graph.Commit != m.Head || m.Graph.Nodes == 0 {
		t.Errorf("%s: manifest graph %+v, want one at the head with nodes", name, m.Graph)
	} else if g, err := graphstore.Read(ctx, b, *m.Graph); err != nil {
		t.Errorf("%s: read stored graph: %v", name, err)
	} else if len(g.Nodes) != m.Graph.Nodes || len(g.Edges) != m.Graph.Edges {
		t.Errorf("%s: stored graph has %d nodes, %d edges; manifest says %d, %d", name, len(g.Nodes), len(g.Edges), m.Graph.Nodes, m.Graph.Edges)
	}
	rows := readRows(ctx, t, b, m)
	if int64(len(rows)) != m.Rows {
		t.Errorf("%s: %d rows in the parts, manifest says %d", name, len(rows), m.Rows)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.CommitID] = true
		if r.Repo != string(name) {
			t.Errorf("%s: row of commit %s has repo %q", name, r.CommitID, r.Repo)
		}
	}
	want := strings.Fields(repo.Git("rev-list", "HEAD"))
	for _, id := range want {
		if !seen[id] {
			t.Errorf("%s: commit %s is not in the commits table", name, id)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s: the commits table has %d distinct commits, the repository %d", name, len(seen), len(want))
	}
	return m
}

func readRows(ctx context.Context, t *testing.T, b *blob.Bucket, m *schema.Manifest) []schema.CommitFile {
	t.Helper()
	var all []schema.CommitFile
	for _, p := range m.Parts {
		ra, err := b.OpenReaderAt(ctx, p.Key)
		if err != nil {
			t.Fatalf("open part %s: %v", p.Key, err)
		}
		rows, err := parquet.Read[schema.CommitFile](ra, ra.Size())
		if err != nil {
			t.Fatalf("read part %s: %v", p.Key, err)
		}
		if int64(len(rows)) != p.Rows {
			t.Errorf("part %s has %d rows, the manifest says %d", p.Key, len(rows), p.Rows)
		}
		all = append(all, rows...)
	}
	return all
}

// checkRename checks that the rename from → to is recorded as one and keeps
// the file's identity.
func checkRename(ctx context.Context, t *testing.T, b *blob.Bucket, name schema.RepoName, from, to string) {
	t.Helper()
	m, err := manifest.Read(ctx, b, name)
	if err != nil || m == nil {
		t.Fatalf("manifest of %s: %v", name, err)
	}
	var added, renamed *schema.CommitFile
	rows := readRows(ctx, t, b, m)
	for i, r := range rows {
		switch {
		case r.Path == from && r.Status == schema.StatusAdded:
			added = &rows[i]
		case r.Path == to && r.Status == schema.StatusRenamed:
			renamed = &rows[i]
		}
	}
	if added == nil || renamed == nil {
		t.Fatalf("%s: want an added row for %s and a renamed row for %s; added=%v renamed=%v", name, from, to, added != nil, renamed != nil)
	}
	if renamed.PreviousPath != from || renamed.FileID != added.FileID {
		t.Errorf("%s: rename row previous path %q file id %q, want %q and the added file's id %q",
			name, renamed.PreviousPath, renamed.FileID, from, added.FileID)
	}
}

// checkMerge checks that the rows of merge commit id say it is one.
func checkMerge(ctx context.Context, t *testing.T, b *blob.Bucket, name schema.RepoName, id string) {
	t.Helper()
	m, err := manifest.Read(ctx, b, name)
	if err != nil || m == nil {
		t.Fatalf("manifest of %s: %v", name, err)
	}
	n := 0
	for _, r := range readRows(ctx, t, b, m) {
		if r.CommitID != id {
			continue
		}
		n++
		if !r.IsMerge || r.NumParents != 2 || r.ParentID == "" {
			t.Errorf("%s: row %s of merge %s has is_merge %v, %d parents, first parent %q", name, r.Path, id, r.IsMerge, r.NumParents, r.ParentID)
		}
	}
	if n == 0 {
		t.Errorf("%s: no rows for merge commit %s", name, id)
	}
}

// recordHistories writes the histories the replay test replays: both runs of
// the fleet (the first ends in continue-as-new), and an IndexRepo child that
// indexed and one that failed.
func recordHistories(ctx context.Context, t *testing.T, c client.Client, run fleetRun) {
	t.Helper()
	for _, h := range []struct{ file, id, runID string }{
		{"indexfleet-continued-as-new.json", run.id, run.firstRunID},
		{"indexfleet-completed.json", run.id, ""},
		{"indexrepo-indexed.json", workflows.RepoWorkflowID("fixtures/alpha"), ""},
		{"indexrepo-failed.json", workflows.RepoWorkflowID("fixtures/bogus"), ""},
	} {
		writeHistory(ctx, t, c, h.file, h.id, h.runID)
	}
}

// writeHistory records the history of workflow id (its latest run when
// runID is empty) as historiesDir/file, with local paths scrubbed.
func writeHistory(ctx context.Context, t *testing.T, c client.Client, file, id, runID string) {
	t.Helper()
	if err := os.MkdirAll(historiesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var hist historypb.History
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		hist.Events = append(hist.Events, ev)
	}
	data, err := protojson.Marshal(&hist)
	if err != nil {
		t.Fatal(err)
	}
	if data, err = scrubPaths(data); err != nil {
		t.Fatal(err)
	}
	// protojson varies its spacing from build to build; indent it stably
	// so that re-recording only shows real changes.
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	path := filepath.Join(historiesDir, file)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d events)", path, len(hist.Events))
}

// tempPath matches the temporary directories of this machine's test run.
var tempPath = regexp.MustCompile(regexp.QuoteMeta(filepath.ToSlash(os.TempDir())) + `/[A-Za-z0-9_.-]+/`)

// scrubPaths rewrites this machine's temporary paths in a recorded history —
// in plain strings (failure messages) and inside base64 payloads — to
// /fixtures/, so that committed testdata carries no local path. Replay only
// compares commands, so consistent rewriting keeps the history valid.
func scrubPaths(data []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				if s, ok := e.(string); ok && k == "data" {
					if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
						t[k] = base64.StdEncoding.EncodeToString(tempPath.ReplaceAll(raw, []byte("/fixtures/")))
						continue
					}
				}
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case string:
			return tempPath.ReplaceAllString(t, "/fixtures/")
		}
		return x
	}
	return json.Marshal(walk(v))
}

func startServer(t *testing.T, dir string) *devserver.Server { return workerstest.Server(t, dir) }

func dial(t *testing.T, s *devserver.Server) client.Client { return workerstest.Dial(t, s) }

func startWorkers(t *testing.T, c client.Client, dataDir string, b *blob.Bucket) {
	t.Helper()
	workerstest.Workers(t, c, workers.Config{DataDir: dataDir, Bucket: b})
}

// startWorkersWith starts workers as cfg says and stops them when the test ends.
func startWorkersWith(t *testing.T, c client.Client, cfg workers.Config) {
	t.Helper()
	workerstest.Workers(t, c, cfg)
}
