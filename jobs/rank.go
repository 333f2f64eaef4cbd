package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// RankTraining is one training run of a fleet's learned ranker to start.
type RankTraining struct {
	// Fleet names the published model; default "default".
	Fleet   string
	Records []triplets.Record
	Options fit.Options
	// LeaveOut: repositories to also train a model without.
	LeaveOut []schema.RepoName
	Train    rank.TrainConfig
	Window   int
}

// DefaultFleet is the fleet name of a model trained without one.
const DefaultFleet = "default"

// StartRankTraining stores each repository's records and starts a
// TrainRanker run, or joins the one in progress with the same input. Its
// id is a hash of the fleet, the records and the settings, so running the
// same command again resumes the run (featurised repositories are not
// featurised again).
func StartRankTraining(ctx context.Context, c client.Client, b *blob.Bucket, in RankTraining) (Started, error) {
	if in.Fleet == "" {
		in.Fleet = DefaultFleet
	}
	byRepo := map[schema.RepoName][]triplets.Record{}
	for _, r := range in.Records {
		byRepo[schema.RepoName(r.Repo)] = append(byRepo[schema.RepoName(r.Repo)], r)
	}
	repos := slices.Sorted(maps.Keys(byRepo))
	h := sha256.New()
	settings, err := json.Marshal(struct {
		Fleet    string
		Options  fit.Options
		LeaveOut []schema.RepoName
		Train    rank.TrainConfig
		Version  int
	}{in.Fleet, in.Options, in.LeaveOut, in.Train, rank.FeatureVersion})
	if err != nil {
		return Started{}, err
	}
	h.Write(settings)
	for _, r := range repos {
		for _, rec := range byRepo[r] {
			fmt.Fprintf(h, "\n%s %s %s %d %d", rec.QueryID, rec.Parent, rec.Source, len(rec.Positives), len(rec.Negatives))
		}
	}
	id := "rank-" + hex.EncodeToString(h.Sum(nil)[:6])
	wf := workflows.TrainRankerInput{Run: id, Fleet: in.Fleet, Options: in.Options, LeaveOut: in.LeaveOut, Train: in.Train, Window: in.Window}
	for _, r := range repos {
		part, err := triplets.WritePart(ctx, b, schema.RankRecordsKey(id, r), byRepo[r])
		if err != nil {
			return Started{}, fmt.Errorf("train ranker: store the records of %s: %w", r, err)
		}
		wf.Repos = append(wf.Repos, workflows.RankRepo{Repo: r, Records: part, Queries: fit.FeaturesTotal(byRepo[r], in.Options)})
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.IndexQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, workflows.TrainRanker, wf)
	if err != nil {
		return Started{}, fmt.Errorf("start ranker training %s: %w", id, err)
	}
	return Started{ID: id, Run: run}, nil
}

// RankProgress is a TrainRanker run's progress: its phase, and in the
// features phase its queries, counting those its running activities have
// reported in their heartbeats.
func RankProgress(ctx context.Context, c client.Client, id string) (workflows.RankProgress, schema.FleetProgress, error) {
	p, err := QueryProgress[workflows.RankProgress](ctx, c, id)
	if err != nil {
		return p, schema.FleetProgress{}, err
	}
	if p.Phase != workflows.RankPhaseFeatures {
		return p, schema.FleetProgress{Total: p.Models, Done: p.ModelsDone, Running: min(1, p.Models-p.ModelsDone),
			Pending: max(p.Models-p.ModelsDone-1, 0)}, nil
	}
	fp := schema.FleetProgress{Total: p.Queries, Done: p.QueriesDone}
	if d, err := c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
		for _, a := range d.GetPendingActivities() {
			if !strings.HasPrefix(a.GetActivityId(), workflows.FeaturesActivityID("")) || a.GetHeartbeatDetails() == nil {
				continue
			}
			for _, pl := range a.GetHeartbeatDetails().GetPayloads() {
				var s string
				var done, total int
				if json.Unmarshal(pl.GetData(), &s) == nil {
					if _, err := fmt.Sscanf(s, "%d/%d queries", &done, &total); err == nil {
						fp.Done += done
						fp.Running += max(total-done, 0)
					}
				}
			}
		}
	}
	fp.Done = min(fp.Done, fp.Total)
	fp.Running = min(fp.Running, fp.Total-fp.Done)
	fp.Pending = fp.Total - fp.Done - fp.Running
	return p, fp, nil
}
