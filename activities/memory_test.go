package activities

import (
	"context"
	"slices"
	"testing"

	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// Indexing builds repository memory from the commits table and the clone's
// commit graph (every parent of a merge), adds only new commits on the next
// run, and builds it for a repository indexed before memory existed
// without re-scraping.
func TestIndexBuildsMemory(t *testing.T) {
	ctx := context.Background()
	r := repoAt(t, t.TempDir()+"/acme/cache", 0, "c")
	r.Write(map[string]string{"cache.py": "def get(key):\n    return store[key]\n"})
	r.Commit("add the cache")
	r.Git("checkout", "-q", "-b", "side")
	r.Write(map[string]string{"cache.py": "def get(key):\n    return store.get(key)\n"})
	r.Commit("get returns None for a missing key")
	r.Git("checkout", "-q", "-")
	r.Write(map[string]string{"util.py": "def parse(text):\n    return text\n"})
	r.Commit("add parse")
	r.Git("merge", "-q", "--no-edit", "side")
	b := blobtest.Bucket(t)
	ix := newIndexer(t, b)
	m, scraped, err := ix.index("acme/cache=" + r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Memory == nil || scraped.Memory == nil || m.Memory.Commits != 4 || m.Memory.Key != schema.RepoName("acme/cache").MemoryKey(m.Head) {
		t.Fatalf("memory %+v after the first index, want 4 commits at the head", m.Memory)
	}
	tb, err := memory.Read(ctx, b, *m.Memory)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tb.Commits(), func(c memory.Commit) bool { return c.ID == m.Head })
	if i < 0 || len(tb.Commits()[i].Parents) != 2 {
		t.Errorf("the merge at the head is row %d of %+v, want it with both parents", i, tb.Commits())
	}
	for _, c := range tb.Commits() {
		if c.Message == "get returns None for a missing key\n" && !slices.Contains(c.Functions, "cache.py:get") {
			t.Errorf("commit %q changed %v, want cache.py:get", c.Message, c.Functions)
		}
	}

	// No new commit: the published memory stays.
	again, scraped, err := ix.index("acme/cache=" + r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if scraped.Memory != nil || again.Memory == nil || *again.Memory != *m.Memory {
		t.Errorf("memory %+v (scrape %+v) after an index with nothing new, want the published %+v", again.Memory, scraped.Memory, m.Memory)
	}
	// One new commit: added to the published memory.
	r.Write(map[string]string{"util.py": "def parse(text):\n    return text.strip()\n"})
	r.Commit("parse strips the text")
	next, _, err := ix.index("acme/cache=" + r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if next.Memory == nil || next.Memory.Commits != 5 || next.Memory.Key == m.Memory.Key {
		t.Fatalf("memory %+v after a new commit, want 5 commits under the new head", next.Memory)
	}
	if ok, _ := b.Exists(ctx, m.Memory.Key); ok {
		t.Error("the previous head's memory was not swept")
	}
	// Indexed before memory existed: the next run builds it from the parts.
	cur, err := manifest.Read(ctx, b, "acme/cache")
	if err != nil {
		t.Fatal(err)
	}
	cur.Memory = nil
	writeManifest(t, b, cur)
	built, scraped, err := ix.index("acme/cache=" + r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if scraped.NewCommits != 0 || built.Memory == nil || built.Memory.Commits != 5 || built.Memory.Layout != schema.MemoryLayout {
		t.Errorf("memory %+v after indexing a repository without it (%d new commits), want 5 commits and no re-scrape", built.Memory, scraped.NewCommits)
	}
	// A memory of an older layout (before renames were kept) is rebuilt
	// the same way; one of this layout stays.
	r.Git("mv", "util.py", "text.py")
	r.Commit("move parse to text.py")
	if _, _, err := ix.index("acme/cache=" + r.Dir); err != nil {
		t.Fatal(err)
	}
	cur, err = manifest.Read(ctx, b, "acme/cache")
	if err != nil {
		t.Fatal(err)
	}
	cur.Memory.Layout = 0
	writeManifest(t, b, cur)
	rebuilt, scraped, err := ix.index("acme/cache=" + r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if scraped.NewCommits != 0 || scraped.Memory == nil || rebuilt.Memory.Layout != schema.MemoryLayout || rebuilt.Memory.Commits != 6 {
		t.Fatalf("memory %+v (scrape %+v) after indexing one of an older layout", rebuilt.Memory, scraped.Memory)
	}
	tb, err = memory.Read(ctx, b, *rebuilt.Memory)
	if err != nil {
		t.Fatal(err)
	}
	if rs := tb.Renames(); len(rs) != 1 || rs[0].Old != "util.py" || rs[0].New != "text.py" {
		t.Errorf("renames %+v, want util.py → text.py", rs)
	}
}
