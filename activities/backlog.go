package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/webpage"
	"github.com/locus-dev/locus/schema"
)

// LoadBacklogInput is LoadBacklogIssues's argument.
type LoadBacklogInput struct {
	Key    string `json:"key"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	// MaxBytes bounds the issue text of one answer (at least one issue is
	// returned), so that no payload nears Temporal's 2 MB limit.
	MaxBytes int `json:"max_bytes,omitempty"`
}

// LoadBacklogIssues returns issues [Offset, Offset+Limit) of a stored
// backlog, fewer when their texts pass MaxBytes, each with the commit its
// repository's index is at.
func (a *Store) LoadBacklogIssues(ctx context.Context, in LoadBacklogInput) ([]schema.BacklogIssue, error) {
	defer Heartbeat(ctx, nil)() // a lost worker's attempt is retried after HeartbeatTimeout
	data, err := a.Bucket.ReadAll(ctx, in.Key)
	if err != nil {
		return nil, err
	}
	var all []schema.BacklogIssue
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("backlog %s: %v", in.Key, err), ErrTypeBadInput, nil)
	}
	if in.Offset < 0 || in.Offset > len(all) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("backlog %s: offset %d out of range (%d issues)", in.Key, in.Offset, len(all)), ErrTypeBadInput, nil)
	}
	var out []schema.BacklogIssue
	size := 0
	type repoAt struct{ head, hostQueue, url, ref string }
	heads := map[schema.RepoName]repoAt{}
	for _, is := range all[in.Offset:min(in.Offset+max(in.Limit, 0), len(all))] {
		size += len(is.Text)
		if len(out) > 0 && in.MaxBytes > 0 && size > in.MaxBytes {
			break
		}
		at, ok := heads[is.Repo]
		if !ok {
			if _, err := schema.ParseRepoName(string(is.Repo)); err == nil {
				m, err := manifest.Read(ctx, a.Bucket, is.Repo)
				if err != nil {
					return nil, fmt.Errorf("backlog %s: manifest of %s: %w", in.Key, is.Repo, err)
				}
				if m != nil && m.Graph != nil {
					// Snapshots are built from the clone, on the host that
					// indexed it; manifests written before the host was
					// recorded fall back to this worker's host (right on
					// a single host).
					at = repoAt{head: m.Graph.Commit, hostQueue: m.HostQueue, url: m.URL, ref: m.Ref}
					if at.hostQueue == "" || a.OnlyHost {
						at.hostQueue = a.HostQueue
					}
				}
			}
			heads[is.Repo] = at
		}
		is.Head = at.head
		is.Title, is.URL = "", "" // the report's, not the ranking's: kept out of payloads
		is.HostQueue, is.CloneURL, is.CloneRef = "", "", ""
		if is.BaseCommit != "" && at.head != "" {
			is.HostQueue, is.CloneURL, is.CloneRef = at.hostQueue, at.url, at.ref
		}
		out = append(out, is)
	}
	return out, nil
}

// BacklogPartInput is WriteBacklogPart's argument.
type BacklogPartInput struct {
	Run     string                      `json:"run"`
	Part    int                         `json:"part"`
	Results []schema.BacklogIssueResult `json:"results"`
}

// WriteBacklogPart stores one part of a backlog's results under its
// deterministic key, replacing what an earlier attempt or run wrote there,
// with each ranked function's line and first lines of code from the graph
// it was ranked at (the report page shows them). The issues' details
// (Result.Detail), when kept, are written first, so that a stored part
// always has its details.
func (a *Store) WriteBacklogPart(ctx context.Context, in BacklogPartInput) error {
	defer Heartbeat(ctx, nil)()
	for _, err := range backlog.AddCode(ctx, in.Results, a.functions) {
		logger(ctx).Warn("backlog part without code", "run", in.Run, "part", in.Part, "error", err)
	}
	if err := backlog.WriteDetails(ctx, a.Bucket, backlog.DetailKey(in.Run, in.Part), in.Results); err != nil {
		return fmt.Errorf("backlog %s part %d: %w", in.Run, in.Part, err)
	}
	if _, err := backlog.WritePart(ctx, a.Bucket, backlog.PartKey(in.Run, in.Part), in.Results); err != nil {
		return fmt.Errorf("backlog %s part %d: %w", in.Run, in.Part, err)
	}
	return nil
}

// functions is backlog.Lookup over the store's graphs and snapshots.
func (a *Store) functions(ctx context.Context, repo, commit string, ids []string) (map[string]backlog.Function, error) {
	fs, err := search.Functions(ctx, search.Deps{Bucket: a.Bucket}, schema.RepoName(repo), commit, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]backlog.Function, len(fs))
	for id, f := range fs {
		out[id] = backlog.Function{Line: f.Line, Code: f.Code}
	}
	return out, nil
}

// BacklogPartKeys are the keys of a run's result parts.
func BacklogPartKeys(run string, parts int) []string {
	keys := make([]string, parts)
	for i := range keys {
		keys[i] = backlog.PartKey(run, i)
	}
	return keys
}

// BacklogSummaryInput is WriteBacklogSummary's argument.
type BacklogSummaryInput struct {
	Run         string `json:"run"`
	Parts       int    `json:"parts"`
	Total       int    `json:"total"`
	ParseErrors int    `json:"parse_errors,omitempty"`
	MaxTokens   int    `json:"max_tokens,omitempty"`
	// USD per million prompt and completion tokens; 0: unknown.
	PriceInPerM  float64   `json:"price_in_per_m,omitempty"`
	PriceOutPerM float64   `json:"price_out_per_m,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	FinishedAt   time.Time `json:"finished_at"`
}

// WriteBacklogSummary reads a run's result parts and writes its summary to
// backlogs/<run>/summary.json, then its report page (webpage.ReportKey);
// it returns the summary's key.
func (a *Store) WriteBacklogSummary(ctx context.Context, in BacklogSummaryInput) (string, error) {
	defer Heartbeat(ctx, nil)()
	rs, err := backlog.ReadParts(ctx, a.Bucket, BacklogPartKeys(in.Run, in.Parts))
	if err != nil {
		return "", fmt.Errorf("backlog %s: %w", in.Run, err)
	}
	s := BacklogSummary(in.Run, rs)
	s.Started, s.Finished, s.Total, s.ParseErrors, s.MaxTokens = in.StartedAt, in.FinishedAt, in.Total, in.ParseErrors, in.MaxTokens
	s.EstimatedCostUSD = backlog.EstimateCostUSD(s.TokensIn, s.TokensOut, in.PriceInPerM, in.PriceOutPerM)
	if in.ParseErrors > 0 {
		// The CLI stored the records it could not read, with their reasons.
		data, err := a.Bucket.ReadAll(ctx, BacklogParseErrorsKey(in.Run))
		if err != nil {
			return "", fmt.Errorf("backlog %s: parse errors: %w", in.Run, err)
		}
		var fs []backlog.Failure
		if err := json.Unmarshal(data, &fs); err != nil {
			return "", fmt.Errorf("backlog %s: parse errors: %w", in.Run, err)
		}
		s.Failures = append(fs, s.Failures...)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return "", err
	}
	key := schema.BacklogKey(in.Run, "summary.json")
	if err := a.Bucket.WriteAll(ctx, key, data); err != nil {
		return "", err
	}
	if _, err := webpage.StoreBacklog(ctx, a.Bucket, in.Run); err != nil {
		return "", err
	}
	return key, nil
}

// BacklogParseErrorsKey is where the CLI stores the input records of a run
// that are not issues (a JSON array of backlog.Failure).
func BacklogParseErrorsKey(run string) string { return schema.BacklogKey(run, "parse-errors.json") }

// BacklogSummary counts results: done, failed with their reasons, tokens,
// the selector and the issues ranked after the budget was spent.
func BacklogSummary(run string, rs []backlog.Result) backlog.Summary {
	s := backlog.Summary{Run: run, Total: len(rs)}
	for _, r := range rs {
		if r.Error != "" {
			s.Failed++
			s.Failures = append(s.Failures, backlog.Failure{IssueID: r.IssueID, Source: r.Source, Error: r.Error})
		} else {
			s.Done++
		}
		s.TokensIn += r.TokensIn
		s.TokensOut += r.TokensOut
		if r.BudgetExhausted {
			s.BudgetExhausted++
		}
		if r.IssueBudgetSkipped > 0 {
			s.IssueBudgetExhausted++
		}
		if r.Truncated {
			s.Truncated++
		}
		if r.Cached {
			s.Cached++
		}
		if s.Selector == "" && r.Selector != "" {
			s.Selector = r.Selector
		}
		if s.Method == "" && r.Method != "" {
			s.Method = r.Method
		}
	}
	return s
}
