package llm

import (
	"context"
	"fmt"
	"strings"
)

// Reranker orders a retriever's top candidates for an issue, most likely to
// need changing first (listwise reranking, as SweRank does). Implementations
// are safe for concurrent use.
type Reranker interface {
	// Rerank returns every candidate id once, in its new order, in the
	// Selection's IDs; Missing lists those the model left out (placed after
	// the ones it ordered, in their given order) and Dropped the ids it
	// named that are not candidates.
	Rerank(ctx context.Context, issue string, candidates []Candidate) (Selection, error)
	// Name labels the reranker in outputs.
	Name() string
}

const rerankSystem = "You help localize the code that must change to resolve a software issue. " +
	"You are shown the issue and candidate functions a retriever ranked for it. " +
	"Order the candidates from the one most likely to need changing to resolve the issue to the least likely. " +
	"Answer with JSON only."

// RerankPrompt builds the listwise rerank request: the issue and every
// candidate with its id and code, asking for {"ranking": [...]} with every id
// once, most relevant first. Candidates repeating an earlier id are left
// out. tokenBudget fits the prompt as in SelectPrompt.
func RerankPrompt(issue string, candidates []Candidate, tokenBudget int) Request {
	cands := uniqueCandidates(Candidate{}, candidates)
	if tokenBudget > 0 && len(issue) > tokenBudget*2 {
		issue = cutText(issue, tokenBudget*2-len(truncMarker)) + truncMarker
	}
	codes := make([]string, len(cands))
	fences := make([]string, len(cands))
	for i, c := range cands {
		codes[i] = c.Code
		fences[i] = fenceFor(c.Code)
	}
	if tokenBudget > 0 {
		fixed := len(rerankSystem) + len(renderRerank(issue, cands, make([]string, len(cands)), fences)) + len(codes)*len(truncMarker)
		codes = fitCodes(codes, tokenBudget*4-fixed)
	}
	ids := candidateIDs(cands)
	return Request{
		System:      rerankSystem,
		Messages:    []Message{{Role: RoleUser, Content: renderRerank(issue, cands, codes, fences)}},
		MaxTokens:   selectMaxTokens(len(cands)),
		Temperature: 0,
		JSON:        true,
		Check: func(r Response) error {
			_, _, _, err := ParseRanking(r.Text, ids)
			return err
		},
	}
}

func renderRerank(issue string, cands []Candidate, codes, fences []string) string {
	var b strings.Builder
	b.WriteString("## Issue\n")
	b.WriteString(strings.TrimSpace(issue))
	b.WriteString("\n\n## Candidates\n")
	for i, c := range cands {
		b.WriteString("### " + c.ID + "\n")
		writeFenced(&b, fences[i], codes[i])
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Order all %d candidates by how likely each is to need changing to resolve the issue, most likely first. "+
		"Answer with JSON only, in exactly this form:\n{\"ranking\": [\"<candidate id>\", ...]}\n"+
		"Use ids exactly as written after \"### \", each once.\n", len(cands))
	return b.String()
}

// ParseRanking reads a listwise answer (the JSON forms ParseSelection
// takes, under "ranking" or any of its keys) against the candidate ids, in
// their retrieval order. order holds every candidate once: the ones the
// answer named, in its order, then the ones it left out (missing), in their
// given order. dropped are named ids that are not candidates. An answer that
// names none of the candidates is an error (an empty ranking is not a
// decision), as is text with no such JSON.
func ParseRanking(text string, candidates []string) (order, missing, dropped []string, err error) {
	kept, dropped, err := parseSelection(text, candidates)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(kept) == 0 && len(candidates) > 0 {
		if len(dropped) > 0 {
			return nil, nil, nil, fmt.Errorf("the ranking names none of the %d candidates (it names %q)", len(candidates), cut(strings.Join(dropped, ", "), 200))
		}
		return nil, nil, nil, fmt.Errorf("the ranking is empty; want all %d candidate ids", len(candidates))
	}
	named := make(map[string]bool, len(kept))
	for _, id := range kept {
		named[id] = true
	}
	order = kept
	for _, id := range candidates {
		if !named[id] {
			order = append(order, id)
			missing = append(missing, id)
		}
	}
	return order, missing, dropped, nil
}

// Rerank asks chat to order candidates for the issue (RerankPrompt, then
// ParseRanking), with Select's repair attempt, errors and usage accounting.
// Fewer than two candidates need no call.
func Rerank(ctx context.Context, chat Chat, issue string, candidates []Candidate, tokenBudget int) (Selection, error) {
	sel := Selection{Model: chat.Name(), IDs: []string{}}
	cands := uniqueCandidates(Candidate{}, candidates)
	ids := candidateIDs(cands)
	if len(cands) < 2 {
		sel.IDs = ids
		return sel, nil
	}
	var order, missing, dropped []string
	err := exchange(ctx, chat, &sel, RerankPrompt(issue, cands, tokenBudget), fmt.Sprintf("rerank %d candidates", len(cands)),
		func(text string) (err error) {
			order, missing, dropped, err = ParseRanking(text, ids)
			return err
		}, "Reply again with JSON only, exactly {\"ranking\": [\"<candidate id>\", ...]}, "+
			"listing every candidate id from my previous message once, most likely to need changing first.")
	if err != nil {
		return sel, err
	}
	sel.IDs, sel.Missing, sel.Dropped = order, missing, dropped
	return sel, nil
}

// LLMReranker is the Reranker over a chat model.
type LLMReranker struct {
	Chat Chat
	// TokenBudget bounds the prompt (default DefaultTokenBudget).
	TokenBudget int
}

// Rerank implements Reranker.
func (r *LLMReranker) Rerank(ctx context.Context, issue string, candidates []Candidate) (Selection, error) {
	budget := r.TokenBudget
	if budget <= 0 {
		budget = DefaultTokenBudget
	}
	return Rerank(ctx, r.Chat, issue, candidates, budget)
}

// Name is the chat model's name.
func (r *LLMReranker) Name() string { return r.Chat.Name() }

// URL is the chat's endpoint (see Endpoint).
func (r *LLMReranker) URL() string { return Endpoint(r.Chat) }
