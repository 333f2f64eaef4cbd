package manifest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
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

// TestSetAsideDamaged: a manifest that is not JSON is moved to the damaged
// key (its bytes kept) so the repository reads as not indexed; a readable
// one, or one a newer locus wrote, stays; no manifest is nothing to do.
func TestSetAsideDamaged(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		moved      bool
	}{
		{"garbage", "{not json", true},
		{"cut short", `{"version": 1, "repo": "acme/three", "head": "ab`, true},
		{"readable", `{"version": 1, "repo": "acme/three"}`, false},
		{"newer version", `{"version": 99}`, false},
		{"none", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := blobtest.Bucket(t)
			repo := schema.RepoName("acme/three")
			if tc.body != "" {
				if err := b.WriteAll(ctx, repo.ManifestKey(), []byte(tc.body)); err != nil {
					t.Fatal(err)
				}
			}
			_, rerr := Read(ctx, b, repo)
			if errors.Is(rerr, ErrDamaged) != tc.moved {
				t.Errorf("Read: %v; damaged: want %v", rerr, tc.moved)
			}
			moved, err := SetAsideDamaged(ctx, b, repo)
			if err != nil || moved != tc.moved {
				t.Fatalf("SetAsideDamaged = %v, %v; want %v", moved, err, tc.moved)
			}
			kept, kerr := b.ReadAll(ctx, repo.DamagedManifestKey())
			left, lerr := b.ReadAll(ctx, repo.ManifestKey())
			switch {
			case tc.moved && (kerr != nil || string(kept) != tc.body || !errors.Is(lerr, blob.ErrNotFound)):
				t.Errorf("kept %q (%v), manifest left %q (%v); want the bytes kept and no manifest", kept, kerr, left, lerr)
			case !tc.moved && tc.body != "" && (lerr != nil || string(left) != tc.body || !errors.Is(kerr, blob.ErrNotFound)):
				t.Errorf("manifest %q (%v), kept %q (%v); want it untouched and nothing kept", left, lerr, kept, kerr)
			}
			if m, err := Read(ctx, b, repo); tc.moved && (m != nil || err != nil) {
				t.Errorf("after setting aside: Read = %v, %v; want nothing indexed", m, err)
			}
		})
	}
}
