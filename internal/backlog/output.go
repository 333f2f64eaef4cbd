package backlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// ResultLine is one line of results.jsonl.
type ResultLine struct {
	ID         string         `json:"id"`
	Repo       string         `json:"repo"`
	BaseCommit string         `json:"base_commit,omitempty"`
	Commit     string         `json:"commit,omitempty"` // ranked at
	Method     string         `json:"method,omitempty"`
	Selector   string         `json:"selector,omitempty"`
	Functions  []LineFunction `json:"functions"`
	Files      []string       `json:"files"`
	Tokens     LineTokens     `json:"tokens"`
	Cached     bool           `json:"cached"`
	// Flags: selector_unavailable, budget_exhausted, truncated (in that order).
	Flags  []string `json:"flags"`
	Error  string   `json:"error,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	Source string   `json:"source,omitempty"`
}

// LineFunction is one ranked function of a ResultLine.
type LineFunction struct {
	Rank  int     `json:"rank"`
	ID    string  `json:"id"`
	File  string  `json:"file"`
	Score float64 `json:"score"`
	Line  int     `json:"line,omitempty"` // the function's first line
	Why   string  `json:"why,omitempty"`
}

// LineTokens are the LLM tokens an issue spent.
type LineTokens struct {
	In  int `json:"in"`
	Out int `json:"out"`
}

// Flag names of ResultLine.Flags.
const (
	FlagSelectorUnavailable = "selector_unavailable"
	FlagBudgetExhausted     = "budget_exhausted"
	FlagTruncated           = "truncated"
)

// LineOf is r as a results.jsonl line.
func LineOf(r Result) ResultLine {
	l := ResultLine{ID: r.IssueID, Repo: r.Repo, BaseCommit: r.BaseCommit, Commit: r.Commit, Method: r.Method, Selector: r.Selector,
		Functions: []LineFunction{}, Files: r.Files, Tokens: LineTokens{In: r.TokensIn, Out: r.TokensOut},
		Cached: r.Cached, Flags: []string{}, Error: r.Error, Notes: r.Notes, Source: r.Source}
	for _, it := range r.Items {
		l.Functions = append(l.Functions, LineFunction{Rank: it.Rank, ID: it.FunctionID, File: it.File, Score: it.Score, Line: it.Line, Why: it.Why})
	}
	if l.Files == nil {
		l.Files = FilesOf(r.Items)
	}
	if l.Files == nil {
		l.Files = []string{}
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{r.SelectorUnavailable, FlagSelectorUnavailable}, {r.BudgetExhausted, FlagBudgetExhausted}, {r.Truncated, FlagTruncated}} {
		if f.on {
			l.Flags = append(l.Flags, f.name)
		}
	}
	return l
}

// WriteResultsJSONL writes one JSON line per result (ResultLine), in order.
func WriteResultsJSONL(w io.Writer, rs []Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		if err := enc.Encode(LineOf(r)); err != nil {
			return fmt.Errorf("results.jsonl: issue %q: %w", r.IssueID, err)
		}
	}
	return bw.Flush()
}

// Failure is one issue (or input record) that got no answer.
type Failure struct {
	IssueID string `json:"issue_id,omitempty"` // "" for a record whose id could not be read
	Source  string `json:"source,omitempty"`   // file:line or file:#N
	Error   string `json:"error"`
}

// FailuresOf lists the parse errors as failures, for Summary.Failures.
func FailuresOf(errs []ParseError) []Failure {
	out := make([]Failure, len(errs))
	for i, e := range errs {
		msg := e.Msg
		if e.Field != "" {
			msg = fmt.Sprintf("field %q: %s", e.Field, e.Msg)
		}
		out[i] = Failure{IssueID: e.ID, Source: e.Source(), Error: msg}
	}
	return out
}

// Summary of a backlog run (summary.md, `--json`).
type Summary struct {
	Run      string    `json:"run"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Total issues read; Done answered, Failed not (Total-Done-Failed pending).
	Total       int `json:"total"`
	Done        int `json:"done"`
	Failed      int `json:"failed"`
	ParseErrors int `json:"parse_errors"` // input records that are not issues
	TokensIn    int `json:"tokens_in"`
	TokensOut   int `json:"tokens_out"`
	// EstimatedCostUSD from the per-million-token prices (EstimateCostUSD);
	// 0 when they are unknown.
	EstimatedCostUSD float64 `json:"estimated_cost_usd"`
	// Selector is the neighbour selector that ran ("" or "heuristic" with no LLM).
	Selector string `json:"selector"`
	Method   string `json:"method,omitempty"`
	// BudgetExhausted counts issues ranked without the selector because the
	// --max-tokens budget was spent; MaxTokens is that budget (0: none).
	BudgetExhausted int `json:"budget_exhausted"`
	MaxTokens       int `json:"max_tokens,omitempty"`
	// IssueBudgetExhausted counts issues some of whose centers were not
	// asked because the issue's own --max-issue-tokens limit was spent.
	IssueBudgetExhausted int `json:"issue_budget_exhausted,omitempty"`
	// Truncated counts issues whose text was cut; Cached those answered
	// entirely from the LLM decision cache.
	Truncated int       `json:"truncated,omitempty"`
	Cached    int       `json:"cached,omitempty"`
	Failures  []Failure `json:"failures"`
}

// EstimateCostUSD prices tokens at the given US dollars per million input
// and output tokens; 0 when a price is unknown (0).
func EstimateCostUSD(tokensIn, tokensOut int, inPerM, outPerM float64) float64 {
	if inPerM <= 0 || outPerM <= 0 {
		return 0
	}
	return float64(tokensIn)/1e6*inPerM + float64(tokensOut)/1e6*outPerM
}

// maxListedFailures bounds summary.md's failure table; results.jsonl and
// --json have all of them.
const maxListedFailures = 1000

// WriteSummaryMarkdown writes s as summary.md.
func WriteSummaryMarkdown(w io.Writer, s Summary) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	title := "Backlog run"
	if s.Run != "" {
		title += " " + mdCode(s.Run)
	}
	p("# %s\n\n", title)
	p("| | |\n|---|---|\n")
	p("| issues | %d |\n", s.Total)
	p("| done | %d |\n", s.Done)
	p("| failed | %d |\n", s.Failed)
	if pending := s.Total - s.Done - s.Failed; pending > 0 {
		p("| pending | %d |\n", pending)
	}
	p("| input records not read (parse errors) | %d |\n", s.ParseErrors)
	if !s.Started.IsZero() {
		p("| started | %s |\n", s.Started.UTC().Format(time.RFC3339))
	}
	if !s.Finished.IsZero() {
		p("| finished | %s |\n", s.Finished.UTC().Format(time.RFC3339))
	}
	if !s.Started.IsZero() && !s.Finished.IsZero() {
		d := s.Finished.Sub(s.Started)
		rate := ""
		if d > 0 && s.Done+s.Failed > 0 {
			rate = fmt.Sprintf(" (%.2f issues/s)", float64(s.Done+s.Failed)/d.Seconds())
		}
		p("| time | %s%s |\n", d.Round(time.Millisecond), rate)
	}
	if s.Method != "" {
		p("| method | %s |\n", mdCell(s.Method))
	}
	sel := s.Selector
	if sel == "" {
		sel = "none (heuristic)"
	}
	p("| selector | %s |\n", mdCell(sel))
	p("| tokens in / out | %d / %d |\n", s.TokensIn, s.TokensOut)
	switch {
	case s.EstimatedCostUSD > 0:
		p("| estimated cost | $%.4f |\n", s.EstimatedCostUSD)
	case s.TokensIn+s.TokensOut == 0:
		p("| estimated cost | $0 (no LLM tokens) |\n")
	default:
		p("| estimated cost | unknown (no token prices given) |\n")
	}
	if s.Cached > 0 {
		p("| answered from the LLM cache | %d |\n", s.Cached)
	}
	if s.Truncated > 0 {
		p("| issue text truncated | %d |\n", s.Truncated)
	}
	if s.BudgetExhausted > 0 || s.MaxTokens > 0 {
		p("| ranked without the selector (token budget spent) | %d |\n", s.BudgetExhausted)
	}
	if s.BudgetExhausted > 0 {
		budget := ""
		if s.MaxTokens > 0 {
			budget = fmt.Sprintf(" of %d tokens", s.MaxTokens)
		}
		p("\nThe run's token budget%s was spent: %d issues were ranked without the LLM selector.\n", budget, s.BudgetExhausted)
	}
	if len(s.Failures) > 0 {
		p("\n## Failures\n\n| issue | source | reason |\n|---|---|---|\n")
		for i, f := range s.Failures {
			if i == maxListedFailures {
				p("\n… and %d more (all are in results.jsonl and `--json`).\n", len(s.Failures)-i)
				break
			}
			p("| %s | %s | %s |\n", mdCell(f.IssueID), mdCell(f.Source), mdCell(f.Error))
		}
	}
	return bw.Flush()
}

// mdCell makes s safe inside a Markdown table cell (one line, pipes escaped).
func mdCell(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
	if len(s) > 500 {
		s = cutUTF8(s, 500) + "…"
	}
	return s
}

func mdCode(s string) string {
	return "`" + strings.ReplaceAll(mdCell(s), "`", "'") + "`"
}
