package schema

// BacklogRow is one row of a backlog results part (backlogs/<run>/part-*.parquet):
// one per (issue, rank), and one with Rank 0 for an issue that has no ranked
// function (Error says why when it failed). The issue's fields (repo, tokens,
// flags) repeat on each of its rows; an issue's rows are consecutive, in rank
// order. Strings are valid UTF-8.
type BacklogRow struct {
	IssueID    string  `parquet:"issue_id,dict"`
	Repo       string  `parquet:"repo,dict"`
	BaseCommit string  `parquet:"base_commit,dict"`
	Commit     string  `parquet:"commit,dict"` // ranked at (BacklogVersion 2)
	Rank       int32   `parquet:"rank"`        // 1-based; 0 for an issue's only row when it has no items
	FunctionID string  `parquet:"function_id"`
	File       string  `parquet:"file,dict"`
	Score      float64 `parquet:"score"`
	// Method is the retrieval method of the issue (spider, sr, ...);
	// ItemMethod how this function got its place (center, neighbour, ...).
	Method              string   `parquet:"method,dict"`
	ItemMethod          string   `parquet:"item_method,dict"`
	Why                 string   `parquet:"why"`
	Line                int32    `parquet:"line"` // the function's first line (BacklogVersion 2)
	Code                string   `parquet:"code"` // its first lines (BacklogVersion 2)
	TokensIn            int64    `parquet:"tokens_in"`
	TokensOut           int64    `parquet:"tokens_out"`
	Cached              bool     `parquet:"cached"`
	Selector            string   `parquet:"selector,dict"`
	SelectorUnavailable bool     `parquet:"selector_unavailable"`
	BudgetExhausted     bool     `parquet:"budget_exhausted"`
	IssueBudgetSkipped  int32    `parquet:"issue_budget_skipped"`
	Truncated           bool     `parquet:"truncated"`
	Error               string   `parquet:"error"`
	Source              string   `parquet:"source"`
	Notes               []string `parquet:"notes,list"`
}
