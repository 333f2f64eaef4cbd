package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/schema"
)

// Summarizer writes the LLM summaries that indexing adds to function
// documents (semantic memory: what a function is for, in an issue's words),
// for BM25 and the embedder alike.
type Summarizer struct {
	Chat llm.Chat
	// TokenBudget bounds one prompt; default 2000.
	TokenBudget int
	// Concurrency is the calls made at once; default 4.
	Concurrency int
	// SaveEvery is how many new summaries are stored at a time, so that a
	// retried activity resumes after them; default 200.
	SaveEvery int
}

// Name is the chat model's name.
func (s *Summarizer) Name() string { return s.Chat.Name() }

// Summaries are function summaries by content hash.
type Summaries map[string]string

// ReadSummaries reads the summaries of repo by model; none stored is an
// empty map, a damaged object an error naming it.
func ReadSummaries(ctx context.Context, b *blob.Bucket, repo schema.RepoName, model string) (Summaries, error) {
	key := repo.SummariesKey(model)
	data, err := b.ReadAll(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return Summaries{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("summaries of %s: %w", repo, err)
	}
	s := Summaries{}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("summaries of %s: %s is damaged (%v): run locus index %s with --summaries again to rewrite it", repo, key, err, repo)
	}
	return s, nil
}

// SummarizeFunctions asks d.Summarizer for a summary of every non-test
// function of the graph at info whose code has none stored, and stores
// them SaveEvery at a time. A function whose answer stays unusable after
// the repair, or that the server refuses (4xx), is counted as failed and
// left without a summary. A retryable failure (429, 5xx, timeouts) stops
// the run after storing what was answered, and is returned: the retry
// resumes from there. progress, when set, is called with done and total
// after each function. A damaged summaries object is replaced.
func SummarizeFunctions(ctx context.Context, d Deps, repo schema.RepoName, info schema.GraphInfo, progress func(done, total int)) (*schema.SummarizeResult, error) {
	s := d.Summarizer
	if s == nil {
		return nil, fmt.Errorf("summarize %s: %w", repo, ErrNoSummarizer)
	}
	res := &schema.SummarizeResult{Model: s.Name()}
	g, err := graphstore.Read(ctx, d.Bucket, info)
	if err != nil {
		return nil, fmt.Errorf("summarize %s: %w", repo, err)
	}
	stored, err := ReadSummaries(ctx, d.Bucket, repo, s.Name())
	if err != nil {
		slog.WarnContext(ctx, "replacing damaged summaries", "repo", repo, "error", err)
		stored = Summaries{}
	}
	var todo []codegraph.Node
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Type != codegraph.TypeFunction || codegraph.IsTestID(n.ID) {
			continue
		}
		res.Functions++
		if _, ok := stored[n.ContentHash]; ok {
			res.Stored++
			continue
		}
		if !seen[n.ContentHash] {
			seen[n.ContentHash] = true
			todo = append(todo, n)
		}
	}
	budget := positiveOr(s.TokenBudget, 2000)
	conc := positiveOr(s.Concurrency, 4)
	every := positiveOr(s.SaveEvery, 200)
	var (
		mu      sync.Mutex
		unsaved int
		stop    error // the first retryable failure
		done    = res.Stored
	)
	save := func() error {
		data, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		// Stored even when the attempt is being cancelled: what was
		// answered is paid for, and the retry resumes after it.
		if err := d.Bucket.WriteAll(context.WithoutCancel(ctx), repo.SummariesKey(s.Name()), data); err != nil {
			return fmt.Errorf("summarize %s: store: %w", repo, err)
		}
		unsaved = 0
		return nil
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for _, n := range todo {
		mu.Lock()
		halted := stop != nil
		mu.Unlock()
		if halted || ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			text, sel, err := llm.Summarize(ctx, s.Chat, n.ID, n.Code, budget)
			mu.Lock()
			defer mu.Unlock()
			res.Calls += sel.Calls
			res.CachedCalls += sel.CachedCalls
			res.PromptTokens += sel.PromptTokens
			res.CompletionTokens += sel.CompletionTokens
			switch {
			case err == nil:
				stored[n.ContentHash] = text
				res.Summarized++
				unsaved++
			case llm.IsRetryable(err) || ctx.Err() != nil:
				if stop == nil {
					stop = err
				}
				return
			default:
				res.Failed++
				if len(res.FailedIDs) < 20 {
					res.FailedIDs = append(res.FailedIDs, n.ID)
				}
			}
			done++
			if progress != nil {
				progress(done, res.Functions)
			}
			if unsaved >= every {
				if err := save(); err != nil && stop == nil {
					stop = err
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(res.FailedIDs)
	if unsaved > 0 {
		if err := save(); err != nil {
			return res, err
		}
	}
	if stop != nil {
		return res, fmt.Errorf("summarize %s: stopped after %d of %d functions: %w", repo, done, res.Functions, stop)
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("summarize %s: %w", repo, err)
	}
	return res, nil
}

// ErrNoSummarizer is the error of summaries asked of a process without an LLM.
var ErrNoSummarizer = fmt.Errorf("no LLM summarizer is configured (start the worker with --llm URL): %w", ErrBadQuery)

// positiveOr is v when positive, else def.
func positiveOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
