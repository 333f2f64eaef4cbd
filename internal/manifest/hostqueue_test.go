package manifest

import (
	"context"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// The manifest records the host queue of the clone each index read; an
// update that names none (a publish from before it was passed) keeps it.
func TestPublishHostQueue(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	repo := schema.RepoName("acme/hosted")
	for i, tc := range []struct {
		name, queue, want string
	}{
		{"first index, recorded", "locus-host-a", "locus-host-a"},
		{"not given, kept", "", "locus-host-a"},
		{"cloned on another host", "locus-host-b", "locus-host-b"},
	} {
		m, err := Publish(ctx, b, Update{Repo: schema.RepoSpec{Name: repo, URL: "/src/hosted"}, HostQueue: tc.queue,
			IndexedAt: time.Unix(int64(i), 0)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		back, err := Read(ctx, b, repo)
		if err != nil {
			t.Fatal(err)
		}
		if m.HostQueue != tc.want || back.HostQueue != tc.want || back.Version != schema.ManifestVersion {
			t.Errorf("%s: host queue %q (read back %q, version %d), want %q", tc.name, m.HostQueue, back.HostQueue, back.Version, tc.want)
		}
	}
	// A manifest written before host queues were recorded reads with none.
	if err := b.WriteAll(ctx, schema.RepoName("acme/old").ManifestKey(), []byte(`{"version": 1, "repo": "acme/old", "url": "/src/old"}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := Read(ctx, b, "acme/old"); err != nil || m.HostQueue != "" {
		t.Errorf("old manifest: %+v, %v", m, err)
	}
}
