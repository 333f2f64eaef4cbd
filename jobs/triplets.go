package jobs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// TripletsRun is one triplet-mining run to start.
type TripletsRun struct {
	Repos   []schema.RepoName
	Options workflows.TripletsOptions
}

// TripletsID is the workflow id of a mining run: a hash of its input, so
// the same command resumes (or reads back) the same run.
func TripletsID(in TripletsRun) string {
	data, _ := json.Marshal(in)
	sum := sha256.Sum256(data)
	return "triplets-" + hex.EncodeToString(sum[:6])
}

// StartTriplets starts a BuildTriplets run, or joins the one in progress
// with the same input. A finished run is run again (its parts are
// replaced chunk by chunk), so a repository that failed gets another try.
func StartTriplets(ctx context.Context, c client.Client, in TripletsRun) (Started, error) {
	id := TripletsID(in)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.IndexQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, workflows.BuildTriplets, workflows.BuildTripletsInput{Run: id, Repos: in.Repos, Options: in.Options})
	if err != nil {
		return Started{}, fmt.Errorf("start triplets %s: %w", id, err)
	}
	return Started{ID: id, Run: run}, nil
}

// Collected is a finished run's output after the whole-output dedup.
type Collected struct {
	Records []triplets.Record
	Repos   []activities.TripletsRepoResult
	// Dropped counts the records the dedup left out, by why.
	Dropped map[triplets.Skip]int
}

// CollectTriplets reads every part of a finished run, repository by
// repository in name order and chunk by chunk (size and SHA-256 checked),
// and keeps what d keeps. The run stores its repositories in the order
// they finished, which a lost worker or a slow host changes; the dedup
// keeps the first of repeats, so reading in that order would make the
// records depend on it.
func CollectTriplets(ctx context.Context, b *blob.Bucket, res workflows.TripletsResult, d *triplets.Dedup) (Collected, error) {
	repos, err := activities.ReadTripletsResults(ctx, b, res.ResultKeys)
	if err != nil {
		return Collected{}, err
	}
	slices.SortStableFunc(repos, func(a, b activities.TripletsRepoResult) int { return cmp.Compare(a.Repo, b.Repo) })
	out := Collected{Repos: repos, Dropped: map[triplets.Skip]int{}}
	for _, r := range repos {
		for _, p := range r.Parts {
			recs, err := triplets.ReadPart(ctx, b, p)
			if err != nil {
				return Collected{}, fmt.Errorf("triplets %s: %w", r.Repo, err)
			}
			for i := range recs {
				if why := d.Keep(&recs[i]); why != "" {
					out.Dropped[why]++
					continue
				}
				out.Records = append(out.Records, recs[i])
			}
		}
	}
	return out, nil
}

// TripletsChunkProgress is a mining run's progress in chunks: those of
// every repository planned so far (each child's own progress), so the
// total grows as repositories start; about two chunks per running
// repository are in flight. A run of more than MaxChunkProgressRepos
// repositories is followed by repositories instead (one query per
// repository each poll would cost too much).
func TripletsChunkProgress(ctx context.Context, c client.Client, id string, repos []schema.RepoName) (schema.FleetProgress, string, error) {
	p, err := QueryProgress[workflows.TripletsProgress](ctx, c, id)
	if err != nil {
		return schema.FleetProgress{}, "", err
	}
	if len(repos) > MaxChunkProgressRepos {
		return schema.FleetProgress{Total: p.Repos, Done: p.Done, Failed: p.Failed, Running: p.Running,
			Pending: p.Repos - p.Done - p.Failed - p.Running}, "repositories", nil
	}
	var out schema.FleetProgress
	running := 0
	for _, r := range repos {
		rp, err := QueryProgress[workflows.RepoTripletsProgress](ctx, c, workflows.TripletsChildID(id, r))
		if err != nil {
			continue // not started or not planned yet
		}
		out.Total += rp.Chunks
		out.Done += rp.Done
		if rp.Done < rp.Chunks {
			running++
		}
	}
	out.Running = min(workflows.DefaultTripletsChunkPar*running, out.Total-out.Done)
	out.Pending = out.Total - out.Done - out.Running
	return out, "chunks", nil
}

// MaxChunkProgressRepos bounds the runs TripletsChunkProgress follows by chunk.
const MaxChunkProgressRepos = 50
