package manifest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// TestListAllIsolatesDamagedManifests: one damaged manifest is reported for
// its repository alone; the others are still listed.
func TestListAllIsolatesDamagedManifests(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	repos := []schema.RepoName{"acme/good", "acme/garbage", "acme/truncated", "other/good", "solo", "zeta/future"}
	for _, r := range repos {
		if _, err := Publish(ctx, b, Update{Repo: schema.RepoSpec{Name: r, URL: "/src/" + string(r)}, IndexedAt: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	damage := map[schema.RepoName]func([]byte) []byte{
		"acme/garbage":   func([]byte) []byte { return []byte("\x00\x01 not json") },
		"acme/truncated": func(d []byte) []byte { return d[:len(d)/2] },
		"zeta/future":    func([]byte) []byte { return []byte(`{"version": 99, "repo": "zeta/future"}`) },
	}
	for r, f := range damage {
		data, err := b.ReadAll(ctx, r.ManifestKey())
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteAll(ctx, r.ManifestKey(), f(data)); err != nil {
			t.Fatal(err)
		}
	}
	// Not manifests of ours: ignored, not errors.
	for _, k := range []string{"repos/acme/good/graph/manifest.json", "repos/Bad Name/manifest.json"} {
		if err := b.WriteAll(ctx, k, []byte("junk")); err != nil {
			t.Fatal(err)
		}
	}

	ms, bad, err := ListAll(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, string(m.Repo))
	}
	if want := "acme/good other/good solo"; strings.Join(got, " ") != want {
		t.Errorf("listed %v, want %s", got, want)
	}
	var gotBad []string
	for _, e := range bad {
		gotBad = append(gotBad, string(e.Repo))
		if e.Key != e.Repo.ManifestKey() || !strings.Contains(e.Error(), e.Key) {
			t.Errorf("%s: error %q (key %s) does not name its manifest", e.Repo, e.Error(), e.Key)
		}
	}
	if want := "acme/garbage acme/truncated zeta/future"; strings.Join(gotBad, " ") != want {
		t.Errorf("damaged %v, want %s", gotBad, want)
	}
	if _, err := List(ctx, b); err == nil || !strings.Contains(err.Error(), "acme/garbage") {
		t.Errorf("List = %v, want the first damaged manifest's error", err)
	}
}
