package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/metrics"
	"github.com/locus-dev/locus/schema"
)

// Store holds the object store for activities that only read and write it.
type Store struct {
	Bucket *blob.Bucket
	// HostQueue is the task queue of this worker's host, whose clones
	// EnsureSnapshot reads; LoadBacklogIssues hands it to the workflow.
	HostQueue string
	// OnlyHost: this process's workers are the only ones (a private
	// embedded server), so every snapshot is built here, whatever host a
	// manifest names (a store moved from another data directory or machine
	// names a host queue nobody polls).
	OnlyHost bool
}

// PublishInput is PublishManifest's argument.
type PublishInput struct {
	Repo      schema.RepoSpec     `json:"repo"`
	Head      string              `json:"head"`
	Scrape    schema.ScrapeResult `json:"scrape"`
	Graph     *schema.GraphInfo   `json:"graph,omitempty"`
	Search    *schema.SearchInfo  `json:"search,omitempty"`
	IndexedAt time.Time           `json:"indexed_at"`
	// HostQueue is the task queue of the host with the clone (Sync's
	// SyncResult.HostQueue), recorded in the manifest; "" in inputs
	// recorded before it was passed.
	HostQueue string `json:"host_queue,omitempty"`
}

// PublishManifest writes the repository's manifest last, making the new parts visible.
func (a *Store) PublishManifest(ctx context.Context, in PublishInput) (schema.Manifest, error) {
	stop := Heartbeat(ctx, nil) // the sweep lists and deletes
	defer stop()
	m, err := manifest.Publish(ctx, a.Bucket, manifest.Update{Repo: in.Repo, Head: in.Head, Scrape: in.Scrape, Graph: in.Graph, Search: in.Search, IndexedAt: in.IndexedAt, HostQueue: in.HostQueue})
	if errors.Is(err, manifest.ErrStale) || errors.Is(err, manifest.ErrOtherRepository) {
		return schema.Manifest{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	if err != nil {
		return schema.Manifest{}, err
	}
	m.Parts = nil // keep the payload small; the store has them
	return *m, nil
}

// FleetResultsInput is WriteFleetResults's argument.
type FleetResultsInput struct {
	FleetID string              `json:"fleet_id"`
	Seq     int                 `json:"seq"`
	Results []schema.RepoResult `json:"results"`
}

// WriteFleetResults stores the results of one run of a fleet (between two
// continue-as-new points) and returns the key.
func (a *Store) WriteFleetResults(ctx context.Context, in FleetResultsInput) (string, error) {
	defer Heartbeat(ctx, nil)()
	key := schema.FleetResultsKey(in.FleetID, in.Seq)
	if err := a.writeJSON(ctx, key, in.Results); err != nil {
		return "", err
	}
	// Each repository's last run, for locus status.
	now := time.Now().UTC()
	for _, r := range in.Results {
		metrics.ReposIndexed.WithLabelValues(map[bool]string{true: "ok", false: "failed"}[r.OK]).Inc()
		if _, err := schema.ParseRepoName(string(r.Repo)); err != nil {
			continue // a name refused before anything was stored
		}
		lr := schema.LastRun{Fleet: in.FleetID, At: now, OK: r.OK, Error: r.Error, Head: r.Head}
		if err := a.writeJSON(ctx, r.Repo.LastRunKey(), lr); err != nil {
			return "", err
		}
	}
	return key, nil
}

// writeJSON stores v as JSON at key.
func (a *Store) writeJSON(ctx context.Context, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return a.Bucket.WriteAll(ctx, key, data)
}

// FleetSummaryInput is WriteFleetSummary's argument.
type FleetSummaryInput struct {
	FleetID    string    `json:"fleet_id"`
	ResultKeys []string  `json:"result_keys"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Total      int       `json:"total"`
}

// WriteFleetSummary merges the result parts into runs/<fleet>/summary.json.
func (a *Store) WriteFleetSummary(ctx context.Context, in FleetSummaryInput) (string, error) {
	defer Heartbeat(ctx, nil)()
	s := schema.FleetSummary{WorkflowID: in.FleetID, StartedAt: in.StartedAt, FinishedAt: in.FinishedAt, Total: in.Total}
	for _, k := range in.ResultKeys {
		data, err := a.Bucket.ReadAll(ctx, k)
		if err != nil {
			return "", err
		}
		var rs []schema.RepoResult
		if err := json.Unmarshal(data, &rs); err != nil {
			return "", fmt.Errorf("fleet results %s: %w", k, err)
		}
		s.Results = append(s.Results, rs...)
	}
	for _, r := range s.Results {
		if r.OK {
			s.Done++
		} else {
			s.Failed++
		}
	}
	key := schema.FleetSummaryKey(in.FleetID)
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return "", err
	}
	if err := a.Bucket.WriteAll(ctx, key, data); err != nil {
		return "", err
	}
	return key, nil
}

// InlineRepos is the largest fleet passed inline in a workflow input
// (about 100 KB); larger lists are stored and passed by key.
const InlineRepos = 1000

// ScheduleReposInput is ReadScheduleRepos's argument.
type ScheduleReposInput struct {
	File string `json:"file"`
	// FleetID is the fleet the list is for: a large list is stored under
	// its run prefix.
	FleetID string `json:"fleet_id"`
}

// ReadScheduleRepos reads a schedule's repos file as it is now (relative
// paths taken from its directory) into a fleet's repository list: inline
// when small, stored under the fleet's run prefix when large. A file that
// cannot be read or holds a bad line fails the run for good, naming the
// file and the line.
func (a *Store) ReadScheduleRepos(ctx context.Context, in ScheduleReposInput) (schema.IndexFleetInput, error) {
	specs, err := gitrepo.ReadSpecs(nil, in.File, filepath.Dir(in.File))
	if err != nil {
		return schema.IndexFleetInput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("schedule repos file: %v", err), ErrTypeBadInput, nil)
	}
	if len(specs) == 0 {
		return schema.IndexFleetInput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("schedule repos file %s lists no repository", in.File), ErrTypeBadInput, nil)
	}
	if len(specs) <= InlineRepos {
		return schema.IndexFleetInput{Repos: specs}, nil
	}
	key := schema.FleetReposKey(in.FleetID)
	data, err := json.Marshal(specs)
	if err != nil {
		return schema.IndexFleetInput{}, err
	}
	if err := a.Bucket.WriteAll(ctx, key, data); err != nil {
		return schema.IndexFleetInput{}, fmt.Errorf("store %s: %w", key, err)
	}
	return schema.IndexFleetInput{ReposKey: key, Total: len(specs)}, nil
}

// LoadReposInput is LoadFleetRepos's argument.
type LoadReposInput struct {
	Key    string `json:"key"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// LoadFleetRepos returns entries [Offset, Offset+Limit) of a stored fleet list.
func (a *Store) LoadFleetRepos(ctx context.Context, in LoadReposInput) ([]schema.RepoSpec, error) {
	defer Heartbeat(ctx, nil)()
	data, err := a.Bucket.ReadAll(ctx, in.Key)
	if err != nil {
		return nil, err
	}
	var all []schema.RepoSpec
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("fleet list %s: %v", in.Key, err), ErrTypeBadInput, err)
	}
	if in.Offset < 0 || in.Offset > len(all) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("fleet list %s: offset %d out of range (%d entries)", in.Key, in.Offset, len(all)), ErrTypeBadInput, nil)
	}
	return all[in.Offset:min(in.Offset+in.Limit, len(all))], nil
}
