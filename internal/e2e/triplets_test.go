package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

// tripletsRepo is a project whose history holds fixes worth learning from,
// a bot commit and a formatting-only commit.
func tripletsRepo(t *testing.T) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	files := map[string]string{
		"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store[key]\n\n    def put(self, key, value):\n        self.store[key] = value\n\n    def evict(self, key):\n        del self.store[key]\n",
		"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items.clear()\n\n    def peek(self):\n        return self.items[0]\n",
		"pkg/keys.py":  "def parse_key(text):\n    return text.strip()\n\ndef key_of(entry):\n    return entry.key\n",
	}
	r.Write(files)
	r.Commit("initial layout")
	edit := func(path, old, new, msg string) {
		files[path] = strings.Replace(files[path], old, new, 1)
		r.Write(map[string]string{path: files[path]})
		r.Commit(msg)
	}
	edit("pkg/cache.py", "return self.store[key]", "return self.store.get(key)", "Cache get returns None for a missing key instead of raising KeyError (#4)")
	edit("pkg/queue.py", "return self.items[0]", "return self.items[0] if self.items else None", "Peek on an empty queue returns None")
	edit("pkg/keys.py", "return text.strip()", "return text.strip().lower()", "Parse keys case-insensitively\n\nSigned-off-by: A Dev <a@example.com>")
	edit("pkg/cache.py", "del self.store[key]", "self.store.pop(key, None)", "Evicting a missing key from the cache must not raise")
	return r
}

// tripletsFixture is tripletsRepo indexed as acme/widgets by a real server
// and workers.
type tripletsFixture struct {
	repo    *gitfixture.Repo
	c       client.Client
	b       *blob.Bucket
	dataDir string
	name    schema.RepoName
}

// indexedTripletsRepo starts a server and workers and indexes tripletsRepo
// with a fleet run of id fleetID.
func indexedTripletsRepo(ctx context.Context, t *testing.T, fleetID string) tripletsFixture {
	t.Helper()
	f := tripletsFixture{repo: tripletsRepo(t), b: blobtest.Bucket(t), dataDir: t.TempDir(), name: "acme/widgets"}
	f.c = dial(t, startServer(t, t.TempDir()))
	startWorkersWith(t, f.c, workers.Config{DataDir: f.dataDir, Bucket: f.b})
	if _, res := runFleet(ctx, t, f.c, fleetID, schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: f.name, URL: f.repo.Dir}}}); res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}
	return f
}

// collectRun waits for a started triplets run and collects its records.
func collectRun(ctx context.Context, t *testing.T, b *blob.Bucket, st jobs.Started) (workflows.TripletsResult, jobs.Collected) {
	t.Helper()
	var res workflows.TripletsResult
	if err := st.Run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	col, err := jobs.CollectTriplets(ctx, b, res, &triplets.Dedup{})
	if err != nil {
		t.Fatal(err)
	}
	return res, col
}

// TestTriplets mines a real indexed repository through BuildTriplets and
// MineRepoTriplets on an embedded Temporal server: every fix becomes a
// record whose positive is the function it edited, with its code before
// the fix, and BM25 negatives; a repository that is not indexed fails
// alone, naming itself; running the same command again replaces the parts
// rather than adding rows; the exclusion leaves out a benchmark's commits.
func TestTriplets(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	f := indexedTripletsRepo(ctx, t, "fleet-triplets")
	r, c, b, dataDir, name := f.repo, f.c, f.b, f.dataDir, f.name
	run := func(in jobs.TripletsRun) (workflows.TripletsResult, jobs.Collected) {
		t.Helper()
		st, err := jobs.StartTriplets(ctx, c, in)
		if err != nil {
			t.Fatal(err)
		}
		res, col := collectRun(ctx, t, b, st)
		if len(in.Repos) == 2 {
			// Finished: every planned chunk done (5 commits in chunks of 2;
			// the repository that is not indexed plans none).
			p, noun, err := jobs.TripletsChunkProgress(ctx, c, st.ID, in.Repos)
			if err != nil || noun != "chunks" || p.Total != 3 || p.Done != 3 || p.Running != 0 || p.Pending != 0 {
				t.Errorf("chunk progress %+v (%s), %v", p, noun, err)
			}
		}
		if *update && len(in.Repos) == 2 {
			writeHistory(ctx, t, c, "triplets-completed.json", st.ID, "")
			writeHistory(ctx, t, c, "minerepotriplets-completed.json", workflows.TripletsChildID(st.ID, name), "")
		}
		return res, col
	}
	in := jobs.TripletsRun{Repos: []schema.RepoName{name, "acme/never-indexed"},
		Options: workflows.TripletsOptions{ChunkSize: 2, Mine: triplets.Options{Negatives: 3}}}
	res, col := run(in)
	if res.Repos != 2 || res.Done != 1 || res.Failed != 1 || res.Commits != 5 {
		t.Fatalf("result %+v", res)
	}
	var widgets, missing *struct{ err string }
	for _, rr := range col.Repos {
		switch rr.Repo {
		case name:
			widgets = &struct{ err string }{rr.Error}
			if len(rr.Parts) != 3 { // 5 commits in chunks of 2
				t.Errorf("parts %+v", rr.Parts)
			}
		case "acme/never-indexed":
			missing = &struct{ err string }{rr.Error}
		}
	}
	if widgets == nil || widgets.err != "" || missing == nil || !strings.Contains(missing.err, "acme/never-indexed") || !strings.Contains(missing.err, "no history in the store") {
		t.Fatalf("repository results %+v", col.Repos)
	}
	byQuery := map[string]triplets.Record{}
	for _, rec := range col.Records {
		byQuery[rec.Query] = rec
	}
	if len(col.Records) != 4 {
		t.Fatalf("%d records, want the 4 fixes: %+v\nrepos %+v\ndropped %v", len(col.Records), byQuery, col.Repos, col.Dropped)
	}
	fix, ok := byQuery["Cache get returns None for a missing key instead of raising KeyError"]
	if !ok || len(fix.Positives) != 1 || fix.Positives[0].ID != "pkg/cache.py:Cache.get" || !strings.Contains(fix.Positives[0].Code, "self.store[key]") || len(fix.Negatives) == 0 {
		t.Fatalf("the get fix: %+v", fix)
	}
	if _, ok := byQuery["Parse keys case-insensitively"]; !ok {
		t.Errorf("the sign-off was not cleaned: %v", byQuery)
	}
	// The records rank at their parents for fitting the hybrid weights:
	// memory holds only the commits before the parent, so the evict fix's
	// memory points at the get fix before it, never at its own commit.
	gitDir, err := activities.ClonePath(workers.CloneDir(dataDir), name)
	if err != nil {
		t.Fatal(err)
	}
	qs, fst, err := fit.Prepare(ctx, fit.Config{Bucket: b, Repo: name, GitDir: gitDir, Records: col.Records})
	if err != nil || len(qs) != 4 || fst.Ranked != 4 || fst.NoMemory != 0 || fst.Failed != 0 {
		t.Fatalf("fit.Prepare: %d queries, %+v, %v", len(qs), fst, err)
	}
	evict := byQuery["Evicting a missing key from the cache must not raise"]
	for _, q := range qs {
		if q.ID != evict.QueryID {
			continue
		}
		if len(q.Rankings.Code) == 0 || len(q.Rankings.Memory) == 0 || q.Rankings.Memory[0].ID != "pkg/cache.py:Cache.get" ||
			slices.ContainsFunc(q.Rankings.Memory, func(s spider.Scored) bool { return s.ID == "pkg/cache.py:Cache.evict" }) {
			t.Errorf("evict fix ranked at its parent: %+v", q.Rankings)
		}
		if !slices.Equal(q.Positives, []string{"pkg/cache.py:Cache.evict"}) {
			t.Errorf("evict fix positives %v", q.Positives)
		}
	}
	// A memory gap longer than the history (a commit a minute) moves every
	// query's memory back to the first commit: nothing before it to rank.
	qs, _, err = fit.Prepare(ctx, fit.Config{Bucket: b, Repo: name, GitDir: gitDir, Records: col.Records, Options: fit.Options{MemoryGap: time.Hour}})
	if err != nil || len(qs) != 4 {
		t.Fatalf("fit.Prepare with a memory gap: %d queries, %v", len(qs), err)
	}
	for _, q := range qs {
		if len(q.Rankings.Memory) != 0 || len(q.Rankings.Hotspots) != 0 {
			t.Errorf("%s: memory an hour before its parent ranks %+v", q.ID, q.Rankings)
		}
	}
	if _, bad, err := fit.Prepare(ctx, fit.Config{Bucket: b, Repo: "acme/never-indexed", GitDir: gitDir, Records: col.Records}); !errors.Is(err, fit.ErrNoMemory) || !strings.Contains(err.Error(), "acme/never-indexed") {
		t.Errorf("fit on a repository without memory: %+v, %v", bad, err)
	}
	// Again: the same parts, replaced, the same records.
	_, again := run(in)
	if !reflect.DeepEqual(again.Records, col.Records) {
		t.Errorf("a second run gave %d records, the first %d: parts must be replaced, never added to", len(again.Records), len(col.Records))
	}
	// Excluding the fix's commit as a benchmark base leaves it and all later out.
	st, err := triplets.ReadIndex(ctx, b, name)
	if err != nil {
		t.Fatal(err)
	}
	x := triplets.NewExclusion([]triplets.Named{{Repo: string(name), Commit: st.Keys[3].CommitID}})
	_, ex := run(jobs.TripletsRun{Repos: []schema.RepoName{name}, Options: workflows.TripletsOptions{Exclude: x.Entries(), Mine: triplets.Options{Negatives: 3}}})
	if len(ex.Records) != 2 {
		t.Errorf("with the 4th commit excluded: %d records, want the 2 fixes before it", len(ex.Records))
	}
	// Dense negatives through the workflow, from the workers' embedder (the
	// lexical default here), taken in turn with BM25's.
	_, dn := run(jobs.TripletsRun{Repos: []schema.RepoName{name}, Options: workflows.TripletsOptions{Mine: triplets.Options{Negatives: 4, HardFrom: []string{triplets.SourceBM25, triplets.SourceDense}}}})
	sources := map[string]int{}
	for _, rec := range dn.Records {
		for _, n := range rec.Negatives {
			sources[n.Source]++
		}
	}
	if len(dn.Records) != 4 || sources[triplets.SourceDense] == 0 || sources[triplets.SourceBM25] == 0 {
		t.Errorf("bm25 and dense: %d records, negatives by source %v", len(dn.Records), sources)
	}
	// Benchmark instances of the repository become queries too.
	inst := []dataset.SWEInstance{{InstanceID: "acme__widgets-7", Repo: string(name), BaseCommit: st.Keys[0].CommitID,
		ProblemStatement: "KeyError from the cache for keys it does not hold", Patch: r.Git("diff", st.Keys[0].CommitID, st.Keys[1].CommitID)}}
	data, err := json.Marshal(inst)
	if err != nil {
		t.Fatal(err)
	}
	key := triplets.InstancesKey(data)
	if err := b.WriteAll(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	_, wi := run(jobs.TripletsRun{Repos: []schema.RepoName{name}, Options: workflows.TripletsOptions{InstancesKey: key, Mine: triplets.Options{Negatives: 3}}})
	found := false
	for _, rec := range wi.Records {
		if rec.Source == "instance" {
			found = rec.QueryID == "acme__widgets-7" && len(rec.Positives) == 1 && rec.Positives[0].ID == "pkg/cache.py:Cache.get"
		}
	}
	if !found {
		t.Errorf("no instance record in %d records", len(wi.Records))
	}
	// The exports read back.
	files, err := triplets.Export(t.TempDir(), triplets.FormatBEIR, col.Records)
	if err != nil || len(files) != 3 || filepath.Base(files[2]) != "test.tsv" {
		t.Errorf("beir export %v, %v", files, err)
	}
}

// TestTripletsResumesAfterWorkerLoss stops the workers of the clone's host
// while the run's chunks are being mined (Worker.Stop: an attempt it cuts
// short is retried elsewhere), then starts new ones: the run finishes with
// one part per chunk and exactly the records of an uninterrupted run.
func TestTripletsResumesAfterWorkerLoss(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("pkg/m%d.py", i)] = fmt.Sprintf("def load_%d(key):\n    return store[key]\n\ndef save_%d(key, value):\n    store[key] = value\n", i, i)
	}
	r.Write(files)
	r.Commit("initial layout")
	const fixes = 24
	for i := range fixes {
		p := fmt.Sprintf("pkg/m%d.py", i%6)
		files[p] = strings.Replace(files[p], "return store[key]", fmt.Sprintf("return store.get(key, %d)", i), 1)
		files[p] = strings.Replace(files[p], fmt.Sprintf("store.get(key, %d)", i-6), fmt.Sprintf("store.get(key, %d)", i), 1)
		r.Write(map[string]string{p: files[p]})
		r.Commit(fmt.Sprintf("load_%d returns the %s default for a missing key", i%6, strings.Repeat("x", i+1)))
	}
	srv := startServer(t, t.TempDir())
	c := dial(t, srv)
	b := blobtest.Bucket(t)
	host := workers.Config{DataDir: t.TempDir(), Bucket: b}
	first, err := workers.Start(host, c)
	if err != nil {
		t.Fatal(err)
	}
	name := schema.RepoName("acme/many")
	if _, res := runFleet(ctx, t, c, "fleet-triplets-loss", schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: r.Dir}}}); res.Done != 1 {
		t.Fatalf("indexing failed: %+v", res)
	}
	for _, w := range first {
		w.Stop()
	}
	// Workers of another host: they plan, but the chunks wait for the clone's host.
	startWorkersWith(t, c, workers.Config{DataDir: t.TempDir(), Bucket: b})
	in := jobs.TripletsRun{Repos: []schema.RepoName{name}, Options: workflows.TripletsOptions{ChunkSize: 1, Mine: triplets.Options{Negatives: 3}}}
	st, err := jobs.StartTriplets(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	progress := func() workflows.RepoTripletsProgress {
		p, err := jobs.QueryProgress[workflows.RepoTripletsProgress](ctx, c, workflows.TripletsChildID(st.ID, name))
		if err != nil {
			return workflows.RepoTripletsProgress{}
		}
		return p
	}
	for progress().Chunks == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	second, err := workers.Start(host, c)
	if err != nil {
		t.Fatal(err)
	}
	for p := progress(); p.Done < 3; p = progress() {
		time.Sleep(5 * time.Millisecond)
	}
	for _, w := range second {
		w.Stop()
	}
	if p := progress(); p.Done >= p.Chunks {
		t.Fatalf("every chunk was done before the stop (%+v): nothing was interrupted", p)
	}
	startWorkersWith(t, c, host)
	res, col := collectRun(ctx, t, b, st)
	if res.Done != 1 || len(col.Repos) != 1 || len(col.Repos[0].Parts) != fixes+1 {
		t.Fatalf("result %+v, parts %d, want one per commit", res, len(col.Repos[0].Parts))
	}
	seen := map[string]int{}
	for _, rec := range col.Records {
		seen[rec.QueryID]++
	}
	for q, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d records", q, n)
		}
	}
	if len(col.Records) != fixes {
		t.Errorf("%d records for %d fixes: stats %+v, dropped %v", len(col.Records), fixes, col.Repos[0].Stats, col.Dropped)
	}
	// The same run mined anew without a loss gives the same records.
	st, err = jobs.StartTriplets(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	_, again := collectRun(ctx, t, b, st)
	if !reflect.DeepEqual(again.Records, col.Records) {
		t.Errorf("an uninterrupted run gave %d records, the interrupted one %d", len(again.Records), len(col.Records))
	}
}
