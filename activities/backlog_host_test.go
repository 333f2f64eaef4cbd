package activities

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// LoadBacklogIssues sends snapshot builds to the host whose clone the
// repository's manifest names, and to its own host only for manifests
// written before the host was recorded.
func TestLoadBacklogIssuesHostQueue(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	manifests := map[schema.RepoName]string{
		"acme/remote":  `{"version": 2, "repo": "acme/remote", "url": "/src/remote", "ref": "main", "head": "h1", "graph": {"commit": "h1"}, "host_queue": "locus-host-remote"}`,
		"acme/old":     `{"version": 1, "repo": "acme/old", "head": "h2", "graph": {"commit": "h2"}}`,
		"acme/nograph": `{"version": 2, "repo": "acme/nograph", "head": "h3", "host_queue": "locus-host-remote"}`,
	}
	for repo, m := range manifests {
		if err := b.WriteAll(ctx, repo.ManifestKey(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	base := "0123456789abcdef0123456789abcdef01234567"
	issues := []schema.BacklogIssue{
		{ID: "1", Repo: "acme/remote", Text: "a", BaseCommit: base},
		{ID: "2", Repo: "acme/remote", Text: "b", CloneURL: "/elsewhere"}, // what the input said is not kept
		{ID: "3", Repo: "acme/old", Text: "c", BaseCommit: base},
		{ID: "4", Repo: "acme/nograph", Text: "d", BaseCommit: base},
		{ID: "5", Repo: "acme/unindexed", Text: "e", BaseCommit: base},
	}
	data, err := json.Marshal(issues)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "runs/r/issues.json", data); err != nil {
		t.Fatal(err)
	}
	a := &Store{Bucket: b, HostQueue: "locus-host-self"}
	got, err := a.LoadBacklogIssues(ctx, LoadBacklogInput{Key: "runs/r/issues.json", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ head, queue, url, ref string }{
		{"h1", "locus-host-remote", "/src/remote", "main"}, // the clone's host and source, from the manifest
		{"h1", "", "", ""},                // no base commit: no snapshot to build
		{"h2", "locus-host-self", "", ""}, // manifest from before: this host
		{"", "", "", ""},                  // no graph: not indexed for ranking
		{"", "", "", ""},                  // no manifest
	}
	if len(got) != len(want) {
		t.Fatalf("%d issues, want %d", len(got), len(want))
	}
	for i, w := range want {
		if g := got[i]; g.Head != w.head || g.HostQueue != w.queue || g.CloneURL != w.url || g.CloneRef != w.ref {
			t.Errorf("issue %s of %s: head %q, host queue %q, clone %q#%q; want %q, %q, %q#%q",
				g.ID, g.Repo, g.Head, g.HostQueue, g.CloneURL, g.CloneRef, w.head, w.queue, w.url, w.ref)
		}
	}
}

// With a private embedded server this process's workers are the only ones:
// a manifest naming another host (a store moved from elsewhere) must not
// send the build to a queue nobody polls.
func TestLoadBacklogIssuesOnlyHost(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	m := `{"version": 2, "repo": "acme/remote", "head": "h1", "graph": {"commit": "h1"}, "host_queue": "locus-host-remote"}`
	if err := b.WriteAll(ctx, schema.RepoName("acme/remote").ManifestKey(), []byte(m)); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal([]schema.BacklogIssue{{ID: "1", Repo: "acme/remote", Text: "a", BaseCommit: "0123456789abcdef0123456789abcdef01234567"}})
	if err := b.WriteAll(ctx, "runs/r/issues.json", data); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		only bool
		want string
	}{{false, "locus-host-remote"}, {true, "locus-host-self"}} {
		a := &Store{Bucket: b, HostQueue: "locus-host-self", OnlyHost: tc.only}
		got, err := a.LoadBacklogIssues(ctx, LoadBacklogInput{Key: "runs/r/issues.json", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].HostQueue != tc.want {
			t.Errorf("only host %v: %+v, want host queue %s", tc.only, got, tc.want)
		}
	}
}
