package activities

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/snapshot"
	"github.com/locus-dev/locus/schema"
)

// Snapshot builds snapshots of commits other than the indexed head; it runs
// on the host queue, next to the clones.
type Snapshot struct {
	Git  *Git
	Deps search.Deps
}

// EnsureSnapshot returns the snapshot of a repository at a commit, building
// and publishing it when no verified one is stored. A commit that is not in
// the repository is a non-retryable error naming both.
func (a *Snapshot) EnsureSnapshot(ctx context.Context, in schema.EnsureSnapshotInput) (schema.SnapshotInfo, error) {
	dir, err := a.Git.clonePath(in.Repo)
	if err != nil {
		return schema.SnapshotInfo{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	if _, err := os.Stat(dir); err != nil {
		return schema.SnapshotInfo{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("snapshot %s@%s: no clone of %s on this host (%s) to build it from; the clone is a cache: locus index %s makes it again", in.Repo, in.Commit, in.Repo, a.Git.HostQueue, in.Repo), ErrTypeBadInput, nil)
	}
	stop := Heartbeat(ctx, nil)
	defer stop()
	deps := a.Deps
	deps.Bucket = a.Git.Bucket
	res, err := snapshot.Ensure(ctx, snapshot.Config{Bucket: a.Git.Bucket, GitDir: dir, Backend: a.Git.Backend, Deps: deps,
		Options: in.Options, Warn: logger(ctx).Warn}, in.Repo, in.Commit)
	if err != nil {
		switch {
		case errors.Is(err, snapshot.ErrUnknownCommit):
			return schema.SnapshotInfo{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
		case errors.Is(err, blob.ErrCorrupt):
			return schema.SnapshotInfo{}, err // damaged right after writing: retrying rebuilds it
		case embed.IsRetryable(err):
			return schema.SnapshotInfo{}, err
		}
		return schema.SnapshotInfo{}, permanent(err)
	}
	m := res.Manifest
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Info("snapshot", "repo", in.Repo, "commit", m.Commit, "reused", res.Reused, "functions", m.Search.Functions, "embedded", res.Embedded,
			"base", res.Base, "files", m.Graph.Files, "parsed", res.Parsed)
	}
	return schema.SnapshotInfo{Repo: in.Repo, Commit: m.Commit, Functions: m.Search.Functions, Reused: res.Reused, Embedded: res.Embedded}, nil
}
