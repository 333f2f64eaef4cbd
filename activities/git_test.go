package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// indexer runs IndexRepo's git and publish activities in order (no graph),
// the way the workflow does, against one store.
type indexer struct {
	t     *testing.T
	env   *testsuite.TestActivityEnvironment
	git   *Git
	store *Store
}

func newIndexer(t *testing.T, b *blob.Bucket) *indexer {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	g := &Git{CloneDir: filepath.Join(t.TempDir(), "clones"), HostQueue: "q", Bucket: b}
	st := &Store{Bucket: b}
	env.RegisterActivity(g)
	env.RegisterActivity(st)
	return &indexer{t: t, env: env, git: g, store: st}
}

// index resolves spec as the CLI does and indexes it; the result says whether
// the history was replaced.
func (ix *indexer) index(specText string) (schema.Manifest, schema.ScrapeResult, error) {
	ix.t.Helper()
	spec, err := gitrepo.ResolveSpec(specText)
	if err != nil {
		ix.t.Fatal(err)
	}
	var synced schema.SyncResult
	v, err := ix.env.ExecuteActivity(ix.git.Sync, schema.SyncInput{Repo: spec})
	if err != nil {
		return schema.Manifest{}, schema.ScrapeResult{}, err
	}
	v.Get(&synced)
	var scraped schema.ScrapeResult
	if !synced.Empty {
		v, err := ix.env.ExecuteActivity(ix.git.ScrapeCommits, schema.ScrapeInput{Repo: spec.Name, URL: spec.URL, Head: synced.Head})
		if err != nil {
			return schema.Manifest{}, scraped, err
		}
		v.Get(&scraped)
	}
	v, err = ix.env.ExecuteActivity(ix.store.PublishManifest, PublishInput{Repo: spec, Head: synced.Head, Scrape: scraped, IndexedAt: time.Unix(1700000000, 0)})
	if err != nil {
		return schema.Manifest{}, scraped, err
	}
	var m schema.Manifest
	v.Get(&m)
	return m, scraped, nil
}

// repoAt makes a working copy at dir with n commits.
func repoAt(t *testing.T, dir string, n int, tag string) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.Dir, dir); err != nil {
		t.Fatal(err)
	}
	r.Dir = dir
	for i := 0; i < n; i++ {
		r.Write(map[string]string{tag + ".txt": strings.Repeat(tag+"\n", i+1)})
		r.Commit(tag + " commit")
	}
	return r
}

func nonRetryable(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.NonRetryable()
}

func TestIndexRefusesAnotherRepositoryUnderTheSameName(t *testing.T) {
	base := t.TempDir()
	flask := repoAt(t, filepath.Join(base, "x", "flask", "repo"), 3, "flask")
	requests := repoAt(t, filepath.Join(base, "y", "requests", "repo"), 2, "requests")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	ctx := context.Background()

	m, _, err := ix.index(flask.Dir)
	if err != nil {
		t.Fatal(err)
	}
	flaskRoot := strings.TrimSpace(flask.Git("rev-list", "--max-parents=0", "HEAD"))
	if m.Repo != "repo" || m.Commits != 3 || m.Root != flaskRoot || m.URL != flask.Dir {
		t.Fatalf("first index: %+v, want repo with 3 commits, root %s, url %s", m, flaskRoot, flask.Dir)
	}

	// Both directories are called "repo": the second is refused, clearly.
	_, _, err = ix.index(requests.Dir)
	if err == nil || !nonRetryable(err) {
		t.Fatalf("indexing another repository as repo: err = %v, want a non-retryable error", err)
	}
	for _, want := range []string{`repository name "repo" already holds ` + flask.Dir, "(root " + flaskRoot[:7] + ")",
		"this is " + requests.Dir, "requests/repo=" + requests.Dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got, _ := manifest.Read(ctx, b, "repo"); got == nil || got.Commits != 3 || got.URL != flask.Dir || got.Head != flask.Head() {
		t.Errorf("after the refusal the manifest is %+v, want flask's untouched", got)
	}

	// The suggested name works; "." in the directory resolves the same way.
	if m, _, err := ix.index("requests/repo=" + requests.Dir); err != nil || m.Commits != 2 {
		t.Fatalf("with a name: %+v %v", m, err)
	}
	t.Chdir(flask.Dir)
	flask.Write(map[string]string{"more.txt": "more\n"})
	flask.Commit("more")
	if m, _, err := ix.index("."); err != nil || m.Repo != "repo" || m.Commits != 4 {
		t.Fatalf(`index "." in flask: %+v %v, want repo with 4 commits`, m, err)
	}
	t.Chdir(requests.Dir)
	if _, _, err := ix.index("."); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Fatalf(`index "." in requests: err = %v, want a refusal`, err)
	}

	// With an origin remote, the name is owner/name and the clash never happens.
	requests.Git("remote", "add", "origin", "https://github.com/psf/requests.git")
	if m, _, err := ix.index(requests.Dir); err != nil || m.Repo != "psf/requests" || m.Commits != 2 {
		t.Fatalf("with an origin: %+v %v, want psf/requests", m, err)
	}

	// An empty repository under a name that holds history is refused too.
	empty := gitfixture.New(t)
	if _, _, err := ix.index("repo=" + empty.Dir); err == nil || !strings.Contains(err.Error(), "has no commits") || !nonRetryable(err) {
		t.Fatalf("empty repository under repo: err = %v, want a non-retryable refusal", err)
	}
	if got, _ := manifest.Read(ctx, b, "repo"); got == nil || got.Commits != 4 || got.URL != flask.Dir {
		t.Errorf("after the refusal the manifest is %+v, want flask's", got)
	}
}

func TestIndexFillsRootOfOldManifests(t *testing.T) {
	r := repoAt(t, filepath.Join(t.TempDir(), "acme"), 2, "a")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	ctx := context.Background()
	if _, _, err := ix.index(r.Dir); err != nil {
		t.Fatal(err)
	}
	// A manifest written before roots were recorded.
	m, _ := manifest.Read(ctx, b, "acme")
	m.Root = ""
	writeManifest(t, b, m)
	r.Write(map[string]string{"b.txt": "b\n"})
	r.Commit("three")
	got, _, err := ix.index(r.Dir)
	root := strings.TrimSpace(r.Git("rev-list", "--max-parents=0", "HEAD"))
	if err != nil || got.Root != root || got.Commits != 3 {
		t.Fatalf("re-index of an old manifest: %+v %v, want root %s filled and 3 commits", got, err, root)
	}
}

func TestIndexReplacesRewrittenHistory(t *testing.T) {
	r := repoAt(t, filepath.Join(t.TempDir(), "acme"), 7, "a")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	ctx := context.Background()
	m, _, err := ix.index(r.Dir)
	if err != nil || m.Commits != 7 {
		t.Fatalf("first index: %+v %v", m, err)
	}
	old, _ := manifest.Read(ctx, b, "acme")

	// Rewrite: drop the last three commits, add four others.
	r.Git("reset", "-q", "--hard", "HEAD~3")
	for i := 0; i < 4; i++ {
		r.Write(map[string]string{"b.txt": strings.Repeat("b\n", i+1)})
		r.Commit("rewritten")
	}
	m, scraped, err := ix.index(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !scraped.Replace || scraped.NewCommits != 8 || scraped.ReplaceReason != schema.ReplaceRewritten {
		t.Errorf("scrape after force-push: replace=%v (%q) new=%d, want a replacing scrape of all 8 commits for %q",
			scraped.Replace, scraped.ReplaceReason, scraped.NewCommits, schema.ReplaceRewritten)
	}

	// The same history indexed from scratch into another store.
	fresh := blobtest.Bucket(t)
	want, _, err := newIndexer(t, fresh).index(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Commits != want.Commits || m.Rows != want.Rows || m.Head != want.Head || m.Root != want.Root {
		t.Errorf("after force-push: %d commits %d rows head %s root %s; fresh index: %d commits %d rows head %s root %s",
			m.Commits, m.Rows, m.Head, m.Root, want.Commits, want.Rows, want.Head, want.Root)
	}
	got, _ := manifest.Read(ctx, b, "acme")
	ids := func(b *blob.Bucket, m *schema.Manifest) []string {
		seen := map[string]bool{}
		if err := commits.ReadAll(ctx, b, m, func(c *schema.CommitFile) error { seen[c.CommitID] = true; return nil }); err != nil {
			t.Fatal(err)
		}
		var out []string
		for id := range seen {
			out = append(out, id)
		}
		sort.Strings(out)
		return out
	}
	wantM, _ := manifest.Read(ctx, fresh, "acme")
	if g, w := ids(b, got), ids(fresh, wantM); strings.Join(g, ",") != strings.Join(w, ",") || len(g) != 8 {
		t.Errorf("commits in the store after force-push = %d %v, want the %d of a fresh index", len(g), g, len(w))
	}
	// The old parts are gone; only the new manifest's remain.
	objs, err := b.List(ctx, schema.RepoName("acme").CommitsPrefix())
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{got.FileIDs: true}
	for _, p := range got.Parts {
		keep[p.Key] = true
	}
	for _, o := range objs {
		if !keep[o.Key] {
			t.Errorf("%s left in the store after the replace", o.Key)
		}
	}
	if len(old.Parts) == 0 || old.Parts[0].Key == got.Parts[0].Key {
		t.Errorf("old parts %v, new %v: want different parts", old.Parts, got.Parts)
	}

	// A plain fast-forward afterwards is incremental again.
	r.Write(map[string]string{"c.txt": "c\n"})
	r.Commit("after")
	if m, scraped, err := ix.index(r.Dir); err != nil || scraped.Replace || scraped.NewCommits != 1 || m.Commits != 9 {
		t.Errorf("fast-forward after the rewrite: %+v %+v %v, want 1 new commit, 9 in all", m, scraped, err)
	}
}

func writeManifest(t *testing.T, b *blob.Bucket, m *schema.Manifest) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(context.Background(), m.Repo.ManifestKey(), data); err != nil {
		t.Fatal(err)
	}
}
