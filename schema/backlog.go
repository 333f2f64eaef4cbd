package schema

import (
	"encoding/json"
	"time"
)

// BacklogIssue is one issue of a backlog as LocalizeBacklog sees it. The CLI
// stores the parsed issues as a JSON array of these at backlogs/<run>/input.json;
// each workflow run loads its slice by offset.
type BacklogIssue struct {
	ID         string   `json:"id"`
	Repo       RepoName `json:"repo"`
	BaseCommit string   `json:"base_commit,omitempty"`
	// Text is what the ranking reads (problem statement, or title and body).
	Text string `json:"text"`
	// Title and URL, when the input gives them, are what the report page
	// shows of the issue and links to; the ranking reads neither (the
	// workflow is given issues without them).
	Title string `json:"title,omitempty"`
	URL   string `json:"url,omitempty"`
	// Truncated: Text was cut to the size limit.
	Truncated bool `json:"truncated,omitempty"`
	// Source names where the issue came from (file and line).
	Source string `json:"source,omitempty"`
	// Notes say what was changed to make the issue usable (text cut,
	// invalid UTF-8 replaced).
	Notes []string `json:"notes,omitempty"`
	// Head is the commit Repo's index is at when the issue was loaded; ""
	// when the repository is not indexed. Filled by LoadBacklogIssues.
	Head string `json:"head,omitempty"`
	// HostQueue is the task queue of a host with a clone of Repo, where
	// the snapshot of BaseCommit is built; filled by LoadBacklogIssues for
	// issues with a base commit.
	HostQueue string `json:"host_queue,omitempty"`
	// CloneURL and CloneRef are what Repo's index was cloned from (its
	// manifest's URL and Ref): when HostQueue's host is gone, the snapshot
	// is built on a live host from a new clone. Filled by LoadBacklogIssues
	// with HostQueue.
	CloneURL string `json:"clone_url,omitempty"`
	CloneRef string `json:"clone_ref,omitempty"`
}

// BacklogRanked is one ranked function of an issue's result.
type BacklogRanked struct {
	Rank       int     `json:"rank"`
	FunctionID string  `json:"function_id"`
	File       string  `json:"file"`
	Score      float64 `json:"score"`
	Method     string  `json:"method"`
	Why        string  `json:"why"`
	// Line is the function's first line (1-based) and Code its first
	// lines, at the result's Commit; 0 and "" when the graph of that commit
	// could not be read when the result was stored.
	Line int    `json:"line,omitempty"`
	Code string `json:"code,omitempty"`
}

// BacklogIssueResult is the outcome of one issue of a backlog, as the
// workflow passes it to the activity that stores it: the ranking, or Error
// when it could not be ranked.
type BacklogIssueResult struct {
	IssueID    string `json:"issue_id"`
	Repo       string `json:"repo"`
	BaseCommit string `json:"base_commit,omitempty"`
	// Commit is the full id of the commit the functions were ranked at (the
	// indexed head, or the snapshot of BaseCommit); "" for a failed issue.
	Commit    string          `json:"commit,omitempty"`
	Method    string          `json:"method,omitempty"`
	Selector  string          `json:"selector,omitempty"`
	Items     []BacklogRanked `json:"items,omitempty"`
	Files     []string        `json:"files,omitempty"`
	TokensIn  int             `json:"tokens_in"`
	TokensOut int             `json:"tokens_out"`
	// Cached: every selector call was answered from the decision cache.
	Cached bool `json:"cached,omitempty"`
	// SelectorUnavailable: some centers' selection failed after its retries.
	SelectorUnavailable bool `json:"selector_unavailable,omitempty"`
	// BudgetExhausted: the run's token budget was spent before this issue
	// started, so it was ranked without the selector.
	BudgetExhausted bool `json:"budget_exhausted,omitempty"`
	// IssueBudgetSkipped counts the centers not asked because the issue's
	// own token limit (max_issue_tokens) was spent: they keep their places
	// without neighbours.
	IssueBudgetSkipped int      `json:"issue_budget_skipped,omitempty"`
	Truncated          bool     `json:"truncated,omitempty"`
	Error              string   `json:"error,omitempty"`
	Source             string   `json:"source,omitempty"`
	Notes              []string `json:"notes,omitempty"`
	// Detail is the issue's whole answer as JSON (a workflows.LocalizeResult)
	// when the run keeps details (BacklogOptions.Details); stored beside
	// the part, not in it.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// BacklogProgress is the answer to LocalizeBacklog's "progress" query.
type BacklogProgress struct {
	Total   int `json:"total"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Running int `json:"running"`
	Pending int `json:"pending"`
	// Tokens spent by the selector so far (all runs of this backlog).
	TokensIn  int `json:"tokens_in"`
	TokensOut int `json:"tokens_out"`
	// BudgetExhausted counts the issues started after the budget was spent.
	BudgetExhausted int `json:"budget_exhausted"`
	// Started is when the backlog's first run started (zero from workers
	// that predate it); with Done and Failed it gives the rate so far.
	Started time.Time `json:"started,omitempty"`
}
