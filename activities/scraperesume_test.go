package activities

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// TestScrapeResumesFromHeartbeat: an attempt of ScrapeCommits that finds a
// checkpoint in the last attempt's heartbeat details continues after its
// parts, and the published history is whole, each commit once.
func TestScrapeResumesFromHeartbeat(t *testing.T) {
	r := repoAt(t, filepath.Join(t.TempDir(), "acme", "widgets"), 7, "w")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	spec, err := gitrepo.ResolveSpec("acme/widgets=" + r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ix.env.ExecuteActivity(ix.git.Sync, schema.SyncInput{Repo: spec})
	if err != nil {
		t.Fatal(err)
	}
	var synced schema.SyncResult
	v.Get(&synced)
	opts := schema.IndexOptions{CommitsPerPart: 2}

	// The lost attempt: two whole parts written, stopped in the third.
	dir, err := ix.git.clonePath(spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var cp *commits.Checkpoint
	_, err = commits.Scrape(ctx, commits.Config{Bucket: b, Repo: spec.Name, GitDir: dir, Head: synced.Head, Options: opts,
		Checkpoint: func(c commits.Checkpoint) { cp = &c },
		Progress: func(done, _ int) {
			if done == 5 {
				stop()
			}
		}})
	if err == nil || cp == nil || cp.Commits != 4 {
		t.Fatalf("interrupted scrape: %v, checkpoint %+v", err, cp)
	}

	ix.env.SetHeartbeatDetails(ScrapeProgress{Done: 5, Total: 7, Checkpoint: cp})
	v, err = ix.env.ExecuteActivity(ix.git.ScrapeCommits, schema.ScrapeInput{Repo: spec.Name, URL: spec.URL, Head: synced.Head, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	var scraped schema.ScrapeResult
	v.Get(&scraped)
	if scraped.Resumed != 4 || scraped.NewCommits != 7 || len(scraped.Parts) != 4 {
		t.Fatalf("resumed attempt: %+v, want 4 of 7 commits resumed, 4 parts", scraped)
	}
	_, err = ix.env.ExecuteActivity(ix.store.PublishManifest, PublishInput{Repo: spec, Head: synced.Head, Scrape: scraped, IndexedAt: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifestOf(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	if err := commits.ReadAll(context.Background(), b, m, func(row *schema.CommitFile) error { seen[row.CommitID]++; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 7 || m.Commits != 7 {
		t.Fatalf("%d distinct commits published (manifest says %d), want 7", len(seen), m.Commits)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("commit %s in %d rows, want 1", id, n)
		}
	}
	// The checkpoints' file-id maps are swept with the publish.
	objs, _ := b.List(context.Background(), spec.Name.CommitsPrefix())
	if len(objs) != len(m.Parts)+1 {
		t.Errorf("%d objects under commits/, want %d parts and the file-id map", len(objs), len(m.Parts))
	}
}
