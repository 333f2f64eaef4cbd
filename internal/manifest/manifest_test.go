package manifest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

func TestPublishReadList(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	repo := schema.RepoName("acme/one")
	if m, err := Read(ctx, b, repo); m != nil || err != nil {
		t.Fatalf("Read before publish = %v, %v; want nil, nil", m, err)
	}
	part := schema.Part{Key: repo.CommitsPartKey("a", "b"), First: "a", Last: "b", Commits: 2, Rows: 5}
	leftover := repo.CommitsPartKey("x", "y") // written by an interrupted run
	for _, k := range []string{part.Key, leftover, repo.FileIDsKey("b")} {
		if err := b.WriteAll(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, err := Publish(ctx, b, Update{Repo: schema.RepoSpec{Name: repo, URL: "/src/one"}, Head: "b", IndexedAt: at,
		Scrape: schema.ScrapeResult{Head: "b", NewCommits: 2, Rows: 5, Parts: []schema.Part{part}, FileIDs: repo.FileIDsKey("b")}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Head != "b" || m.Commits != 2 || m.Rows != 5 || len(m.Parts) != 1 || !m.IndexedAt.Equal(at) {
		t.Fatalf("manifest %+v", m)
	}
	if ok, _ := b.Exists(ctx, leftover); ok {
		t.Error("a part no manifest refers to survived publishing")
	}
	if ok, _ := b.Exists(ctx, part.Key); !ok {
		t.Error("a published part was swept")
	}
	// A stale scrape (based on another head) is refused and changes nothing.
	_, err = Publish(ctx, b, Update{Repo: schema.RepoSpec{Name: repo}, Head: "c",
		Scrape: schema.ScrapeResult{BaseHead: "not-b", Head: "c", NewCommits: 1}})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("stale publish: err = %v", err)
	}
	if again, _ := Read(ctx, b, repo); again.Head != "b" {
		t.Fatalf("stale publish changed the manifest: head %s", again.Head)
	}
	// Something that is not ours under repos/ is ignored by List.
	if err := b.WriteAll(ctx, "repos/bad name/manifest.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	all, err := List(ctx, b)
	if err != nil || len(all) != 1 || all[0].Repo != repo {
		t.Fatalf("List = %+v, %v", all, err)
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	repo := schema.RepoName("acme/two")
	for _, body := range []string{"{not json", `{"version": 99}`} {
		if err := b.WriteAll(ctx, repo.ManifestKey(), []byte(body)); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(ctx, b, repo); err == nil {
			t.Errorf("manifest %q accepted", body)
		}
	}
}
