// Package jobs starts, resumes and reads back locus's workflows from a
// Temporal client: the fleet index and backlogs of issues. `locus index`,
// `locus backlog`, `locus localize` (a backlog of one) and `locus eval` all
// go through it, so every ranking takes the same durable path — retries,
// the LLM decision cache and cost accounting included.
package jobs

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// Backlog is one backlog run to start.
type Backlog struct {
	Issues []schema.BacklogIssue
	// Failures are input records that could not be read; they are stored
	// for the summary and counted in it.
	Failures []backlog.Failure
	Params   search.Params
	Options  workflows.BacklogOptions
	LLMRetry workflows.RetryOptions
	// Backends name what else decides the answers (embedder, LLM, vector
	// index, query instruction); they are part of the run id.
	Backends []string
	// Prefix starts the run id; default "backlog".
	Prefix string
	// Rerun runs a finished run again instead of reading its result back
	// (a run in progress is still joined). `locus localize` and `locus
	// eval` rerun: they answer with the code and servers of now, and the
	// LLM decision cache keeps a rerun from billing decisions already made.
	Rerun bool
}

// Started is a backlog run in progress (or already finished).
type Started struct {
	ID  string
	Run client.WorkflowRun
}

// StartBacklog stores the backlog's input and starts its LocalizeBacklog
// run. The run id is a hash of everything that decides its answers (see
// runID), so starting the same backlog again resumes the run in progress,
// or reads back a finished one, and bills nothing already answered.
func StartBacklog(ctx context.Context, c client.Client, b *blob.Bucket, in Backlog) (Started, error) {
	if in.Params.K > workflows.MaxPartFunctions {
		return Started{}, fmt.Errorf("k %d: at most %d functions an issue", in.Params.K, workflows.MaxPartFunctions)
	}
	id, err := runID(ctx, b, in)
	if err != nil {
		return Started{}, err
	}
	if in.Options.PartSize == 0 { // after the id: the same command resumes the same run
		in.Options.PartSize = workflows.BacklogPartSize(in.Params.K)
	}
	wf := workflows.LocalizeBacklogInput{Run: id, IssuesKey: schema.BacklogKey(id, "input.json"), Total: len(in.Issues),
		Params: in.Params, Options: in.Options, LLMRetry: in.LLMRetry, ParseErrors: len(in.Failures)}
	if err := storeJSON(ctx, b, wf.IssuesKey, in.Issues); err != nil {
		return Started{}, err
	}
	if len(in.Failures) > 0 {
		if err := storeJSON(ctx, b, activities.BacklogParseErrorsKey(id), in.Failures); err != nil {
			return Started{}, err
		}
	}
	reuse := enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	if in.Rerun {
		reuse = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.IndexQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
	}, workflows.LocalizeBacklog, wf)
	if err != nil {
		return Started{}, fmt.Errorf("start backlog %s: %w", id, err)
	}
	return Started{ID: id, Run: run}, nil
}

// Wait waits for a started backlog run.
func Wait(ctx context.Context, s Started) (workflows.BacklogResult, error) {
	var res workflows.BacklogResult
	if err := s.Run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("backlog %s: %w", s.ID, err)
	}
	return res, nil
}

// IssueResult is the whole Localize answer of issue id in a finished run,
// with the per-center detail the stored parts leave out: from the details
// beside its part (runs with BacklogOptions.Details), or from its Localize
// child (runs recorded before batches). An issue that failed is an error
// with the per-issue message.
func IssueResult(ctx context.Context, c client.Client, b *blob.Bucket, res workflows.BacklogResult, id string) (workflows.LocalizeResult, error) {
	var out workflows.LocalizeResult
	for n, key := range activities.BacklogPartKeys(res.Run, res.Parts) {
		rs, err := backlog.ReadParts(ctx, b, []string{key})
		if err != nil {
			return out, err
		}
		for _, r := range rs {
			if r.IssueID != id {
				continue
			}
			if r.Error != "" {
				return out, errors.New(r.Error)
			}
			d, err := backlog.ReadDetail(ctx, b, backlog.DetailKey(res.Run, n), id)
			if errors.Is(err, blob.ErrNotFound) {
				if err := c.GetWorkflow(ctx, workflows.BacklogChildID(res.Run, id), "").Get(ctx, &out); err != nil {
					return out, fmt.Errorf("result of issue %s: %w", id, err)
				}
				return out, nil
			}
			if err != nil {
				return out, fmt.Errorf("result of issue %s: %w", id, err)
			}
			if err := json.Unmarshal(d, &out); err != nil {
				return out, fmt.Errorf("result of issue %s: %w", id, err)
			}
			return out, nil
		}
	}
	return out, fmt.Errorf("backlog %s has no result for issue %s", res.Run, id)
}

// Results reads a finished run's per-issue results, in input order.
func Results(ctx context.Context, b *blob.Bucket, res workflows.BacklogResult) ([]backlog.Result, error) {
	return backlog.ReadParts(ctx, b, activities.BacklogPartKeys(res.Run, res.Parts))
}

// Summary reads a finished run's summary.
func Summary(ctx context.Context, b *blob.Bucket, res workflows.BacklogResult) (backlog.Summary, error) {
	return readJSON[backlog.Summary](ctx, b, res.SummaryKey)
}

// readJSON reads the JSON document at key.
func readJSON[T any](ctx context.Context, b *blob.Bucket, key string) (T, error) {
	var v T
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("%s: %w", key, err)
	}
	return v, nil
}

// runID is a backlog's workflow id: a hash of what decides its answers
// (the issues, the records that failed to parse, the options, the
// retrieval backends and the commits the repositories are indexed at), so
// the same backlog resumes the same run, and re-indexing starts a new one.
func runID(ctx context.Context, b *blob.Bucket, in Backlog) (string, error) {
	var repos []string
	seen := map[schema.RepoName]bool{}
	for _, is := range in.Issues {
		if !seen[is.Repo] {
			seen[is.Repo] = true
			repos = append(repos, string(is.Repo))
		}
	}
	sort.Strings(repos)
	heads := make([]string, len(repos))
	for i, r := range repos {
		m, err := manifest.Read(ctx, b, schema.RepoName(r))
		if err != nil {
			return "", fmt.Errorf("manifest of %s: %w", r, err)
		}
		if m != nil && m.Graph != nil {
			heads[i] = m.Graph.Commit
		}
	}
	data, err := json.Marshal(struct {
		Issues   []schema.BacklogIssue
		Failures []backlog.Failure
		Options  workflows.BacklogOptions
		Params   search.Params
		LLMRetry workflows.RetryOptions
		Backends []string
		Repos    []string
		Heads    []string
	}{in.Issues, in.Failures, in.Options, in.Params, in.LLMRetry, in.Backends, repos, heads})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	prefix := in.Prefix
	if prefix == "" {
		prefix = "backlog"
	}
	return prefix + "-" + hex.EncodeToString(sum[:8]), nil
}

// FleetID is the workflow id of an index fleet: a hash of its input, so
// the same repositories and options resume the same fleet.
func FleetID(in schema.IndexFleetInput) string {
	data, _ := json.Marshal(in)
	sum := sha1.Sum(data)
	return "index-fleet-" + hex.EncodeToString(sum[:6])
}

// StartFleet starts (or resumes) an IndexFleet run under id. Large fleets
// travel as a blob key, never as a payload.
func StartFleet(ctx context.Context, c client.Client, b *blob.Bucket, id string, in schema.IndexFleetInput) (client.WorkflowRun, error) {
	if len(in.Repos) > activities.InlineRepos {
		key := schema.FleetReposKey(id)
		if err := storeJSON(ctx, b, key, in.Repos); err != nil {
			return nil, err
		}
		in.ReposKey, in.Total, in.Repos = key, len(in.Repos), nil
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: workflows.IndexQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, workflows.IndexFleet, in)
	if err != nil {
		return nil, fmt.Errorf("start fleet %s: %w", id, err)
	}
	return run, nil
}

// FleetSummary reads a finished fleet run's summary.
func FleetSummary(ctx context.Context, b *blob.Bucket, res workflows.FleetResult) (schema.FleetSummary, error) {
	return readJSON[schema.FleetSummary](ctx, b, res.SummaryKey)
}

// QueryProgress asks a fleet or backlog workflow for its progress (P is
// its progress type: schema.FleetProgress or schema.BacklogProgress).
func QueryProgress[P any](ctx context.Context, c client.Client, id string) (P, error) {
	var p P
	v, err := c.QueryWorkflow(ctx, id, "", workflows.ProgressQuery)
	if err != nil {
		return p, fmt.Errorf("query progress of %s: %w", id, err)
	}
	if err := v.Get(&p); err != nil {
		return p, fmt.Errorf("decode progress of %s: %w", id, err)
	}
	return p, nil
}

func storeJSON(ctx context.Context, b *blob.Bucket, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := b.WriteAll(ctx, key, data); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}
