package manifest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

func TestCheckIdentity(t *testing.T) {
	rootA, rootB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	held := &schema.Manifest{Repo: "repo", URL: "/x/flask/repo", Root: rootA}
	for _, tc := range []struct {
		name      string
		prev      *schema.Manifest
		url, root string
		refuse    bool
		says      []string
	}{
		{name: "nothing published", prev: nil, url: "/y/requests/repo", root: rootB},
		{name: "same root", prev: held, url: "/elsewhere/flask", root: rootA},
		{name: "old manifest without a root", prev: &schema.Manifest{Repo: "repo", URL: "/x"}, url: "/y", root: rootB},
		{name: "unknown new root", prev: held, url: "/y", root: ""},
		{name: "local path clash", prev: held, url: "/y/requests/repo", root: rootB, refuse: true,
			says: []string{`repository name "repo" already holds /x/flask/repo (root aaaaaaa); this is /y/requests/repo (root bbbbbbb)`, "requests/repo=/y/requests/repo"}},
		{name: "remote clash", prev: &schema.Manifest{Repo: "pallets/flask", URL: "https://github.com/pallets/flask", Root: rootA},
			url: "https://github.com/psf/flask", root: rootB, refuse: true, says: []string{"e.g. psf/flask=https://github.com/psf/flask"}},
		{name: "clash with no better name", prev: &schema.Manifest{Repo: "a/b", URL: "https://h/a/b", Root: rootA},
			url: "https://h/a/b", root: rootB, refuse: true, says: []string{"e.g. other/b=https://h/a/b"}},
	} {
		err := CheckIdentity(tc.prev, tc.url, tc.root)
		if !tc.refuse {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrOtherRepository) {
			t.Errorf("%s: err = %v, want ErrOtherRepository", tc.name, err)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, s)
			}
		}
	}
}

func TestPublishRecordsRootAndReplaces(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	repo := schema.RepoName("acme/one")
	spec := schema.RepoSpec{Name: repo, URL: "/src/one"}
	write := func(keys ...string) {
		for _, k := range keys {
			if err := b.WriteAll(ctx, k, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	root := strings.Repeat("1", 40)
	old := schema.Part{Key: repo.CommitsPartKey("r", "c7"), First: "r", Last: "c7", Commits: 7, Rows: 9}
	write(old.Key, repo.FileIDsKey("c7"))
	if _, err := Publish(ctx, b, Update{Repo: spec, Head: "c7", IndexedAt: time.Now(),
		Scrape: schema.ScrapeResult{Head: "c7", NewCommits: 7, Rows: 9, Parts: []schema.Part{old}, FileIDs: repo.FileIDsKey("c7"), Root: root}}); err != nil {
		t.Fatal(err)
	}
	// A replacing scrape writes its parts first: until it publishes, the old
	// manifest and every part it names are intact.
	repl := schema.Part{Key: repo.CommitsPartKey("r", "d8"), First: "r", Last: "d8", Commits: 8, Rows: 11}
	write(repl.Key, repo.FileIDsKey("d8"))
	if m, _ := Read(ctx, b, repo); m.Head != "c7" || m.Root != root {
		t.Fatalf("before publishing the replacement: %+v", m)
	}
	if ok, _ := b.Exists(ctx, old.Key); !ok {
		t.Fatal("old part gone before the replacement was published")
	}
	m, err := Publish(ctx, b, Update{Repo: spec, Head: "d8", IndexedAt: time.Now(),
		Scrape: schema.ScrapeResult{BaseHead: "c7", Head: "d8", NewCommits: 8, Rows: 11, Parts: []schema.Part{repl}, FileIDs: repo.FileIDsKey("d8"), Root: root, Replace: true}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Commits != 8 || m.Rows != 11 || len(m.Parts) != 1 || m.Parts[0].Key != repl.Key || m.Root != root {
		t.Fatalf("after replace: %+v, want only the replacement's 8 commits", m)
	}
	if ok, _ := b.Exists(ctx, old.Key); ok {
		t.Error("the replaced part survived the publish")
	}
	// An incremental publish without a root keeps the recorded one.
	next := schema.Part{Key: repo.CommitsPartKey("e9", "e9"), First: "e9", Last: "e9", Commits: 1, Rows: 1}
	write(next.Key)
	m, err = Publish(ctx, b, Update{Repo: spec, Head: "e9", Scrape: schema.ScrapeResult{BaseHead: "d8", Head: "e9", NewCommits: 1, Rows: 1, Parts: []schema.Part{next}}})
	if err != nil || m.Root != root || m.Commits != 9 || len(m.Parts) != 2 {
		t.Fatalf("incremental after replace: %+v %v", m, err)
	}
	// Another root is refused and nothing changes.
	_, err = Publish(ctx, b, Update{Repo: schema.RepoSpec{Name: repo, URL: "/src/two"}, Head: "z",
		Scrape: schema.ScrapeResult{BaseHead: "e9", Head: "z", NewCommits: 1, Root: strings.Repeat("2", 40), Replace: true}})
	if !errors.Is(err, ErrOtherRepository) {
		t.Fatalf("publishing another root: err = %v", err)
	}
	if again, _ := Read(ctx, b, repo); again.Head != "e9" || again.URL != "/src/one" || again.Commits != 9 {
		t.Fatalf("refused publish changed the manifest: %+v", again)
	}
}
