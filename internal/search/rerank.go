package search

import (
	"context"
	"errors"
	"fmt"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// ErrNoReranker is the error of a rerank asked of a process without an LLM.
var ErrNoReranker = fmt.Errorf("no LLM reranker is configured (start the worker with --llm URL): %w", ErrBadQuery)

// RerankInfo is what a query's LLM rerank did.
type RerankInfo struct {
	// Model names the reranker; N is how many items it was asked to order.
	Model string `json:"model,omitempty"`
	N     int    `json:"n"`
	// Usage of its calls (CachedCalls answered by the decision cache).
	Calls            int   `json:"calls"`
	CachedCalls      int   `json:"cached_calls,omitempty"`
	PromptTokens     int   `json:"prompt_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	LatencyMs        int64 `json:"latency_ms"`
	// Missing are the items the model left out (kept after the ones it
	// ordered, in their order); Dropped the ids it named that are not items.
	Missing  []string `json:"missing,omitempty"`
	Dropped  []string `json:"dropped,omitempty"`
	Repaired bool     `json:"repaired,omitempty"`
	// Skipped says why no rerank was asked (the issue's or the run's token
	// limit spent); Error why it failed after its retries. Either way the
	// items keep their order.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// RerankRequest is one result's rerank: the ids of its first items, in
// order, at the commit they were ranked at.
type RerankRequest struct {
	Repo   schema.RepoName `json:"repo"`
	Commit string          `json:"commit"`
	Issue  string          `json:"issue"`
	IDs    []string        `json:"ids"`
}

// RerankIDs are the ids of the first n items (all when fewer): what a rerank
// of n asks about.
func RerankIDs(items []spider.Item, n int) []string {
	ids := make([]string, 0, min(n, len(items)))
	for _, it := range items[:min(n, len(items))] {
		ids = append(ids, it.ID)
	}
	return ids
}

// Rerank asks d.Reranker to order req.IDs for the issue, with their code at
// req.Commit (the published graph or a snapshot). The Selection's IDs hold
// every requested id once.
func Rerank(ctx context.Context, d Deps, req RerankRequest) (llm.Selection, error) {
	if d.Reranker == nil {
		return llm.Selection{}, fmt.Errorf("rerank %s: %w", req.Repo, ErrNoReranker)
	}
	code, err := Code(ctx, d, req.Repo, req.Commit, req.IDs)
	if err != nil {
		return llm.Selection{Model: d.Reranker.Name()}, fmt.Errorf("rerank %s@%s: %w", req.Repo, req.Commit, err)
	}
	cands := make([]llm.Candidate, len(req.IDs))
	for i, id := range req.IDs {
		c, ok := code[id]
		if !ok {
			return llm.Selection{Model: d.Reranker.Name()}, fmt.Errorf("rerank %s@%s: %s is not a function of that commit: %w", req.Repo, req.Commit, id, ErrBadQuery)
		}
		cands[i] = llm.Candidate{ID: id, Code: c}
	}
	return d.Reranker.Rerank(ctx, req.Issue, cands)
}

// ApplyRerank puts the first len(order) items in order's order, each
// naming the reranker and its position before; the rest keep theirs. order
// must hold exactly the ids of those items.
func ApplyRerank(items []spider.Item, order []string, reranker string) ([]spider.Item, error) {
	if len(order) > len(items) {
		return nil, fmt.Errorf("rerank: %d ids for %d items", len(order), len(items))
	}
	pos := make(map[string]int, len(order))
	for i, it := range items[:len(order)] {
		pos[it.ID] = i
	}
	out := make([]spider.Item, len(items))
	copy(out[len(order):], items[len(order):])
	seen := make(map[string]bool, len(order))
	var errs []error
	for i, id := range order {
		j, ok := pos[id]
		if !ok || seen[id] {
			errs = append(errs, fmt.Errorf("%s is not one of the first %d items, or repeats", id, len(order)))
			continue
		}
		seen[id] = true
		out[i] = items[j]
		out[i].Reranker, out[i].RerankedFrom = reranker, j+1
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("rerank: %w", errors.Join(errs...))
	}
	return out, nil
}

// Add records sel's usage and outcome in r and in res's totals.
func (r *RerankInfo) Add(sel llm.Selection, res *Result) {
	r.Model = sel.Model
	r.Calls += sel.Calls
	r.CachedCalls += sel.CachedCalls
	r.PromptTokens += sel.PromptTokens
	r.CompletionTokens += sel.CompletionTokens
	r.LatencyMs += sel.Latency.Milliseconds()
	r.Missing, r.Dropped, r.Repaired = sel.Missing, sel.Dropped, sel.Repaired
	res.LLMCalls += sel.Calls
	res.PromptTokens += sel.PromptTokens
	res.CompletionTokens += sel.CompletionTokens
}
