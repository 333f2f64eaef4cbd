package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/locus-dev/locus/internal/metrics"
)

// Candidate is a code-graph node offered to the selector: its graph id
// (e.g. "pkg/mod.py:Class.method") and its source.
type Candidate struct {
	ID   string `json:"id"`
	Code string `json:"code"`
}

// Selection is a selector's decision for one center and what it cost.
type Selection struct {
	// IDs are the selected candidate ids, in the selector's order, each a
	// member of the candidate set, no duplicates. Never nil on success.
	IDs []string `json:"ids"`
	// Dropped are ids the model named that are not candidates.
	Dropped []string `json:"dropped,omitempty"`
	// Model is the selector's Name: the chat model, or HeuristicName.
	Model string `json:"model"`
	// Calls counts Complete calls made (cache hits included); CachedCalls
	// those a Cache answered, which cost no tokens now.
	Calls       int `json:"calls"`
	CachedCalls int `json:"cached_calls,omitempty"`
	// PromptTokens and CompletionTokens sum the usage the server reported
	// over the calls that reached it.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Latency is wall time spent in Complete calls.
	Latency time.Duration `json:"latency_ns"`
	// Repaired is true when the first answer was unusable and the repair
	// attempt's was used.
	Repaired bool `json:"repaired,omitempty"`
	// Missing, for a rerank, are the candidates the answer left out: they
	// follow the ones it ordered, in their given order.
	Missing []string `json:"missing,omitempty"`
}

// Selector picks which candidates (code-graph neighbours of a center) are
// relevant to an issue. Implementations are safe for concurrent use.
type Selector interface {
	Select(ctx context.Context, issue string, center Candidate, candidates []Candidate) (Selection, error)
	// Name labels the selector in outputs ("selected by <Name>").
	Name() string
}

// DefaultTokenBudget bounds the selection prompt when none is given: about
// 32 KB of text, which fits every model we target with room for the answer.
const DefaultTokenBudget = 8000

// EstimateTokens approximates a request's prompt size as characters/4, the
// usual rule of thumb for code and English with BPE tokenizers.
func EstimateTokens(req Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return (n + 3) / 4
}

const selectSystem = "You help localize the code that must change to resolve a software issue. " +
	"You are shown the issue, one function a retriever ranked highly for it (the center), " +
	"and candidate functions near the center in the code graph. " +
	"Choose the candidates that are relevant: code that likely has to change to resolve the issue, " +
	"or that has to be read to make the change. Answer with JSON only."

const truncMarker = "\n… (truncated)"

// SelectPrompt builds the neighbour-selection request: the issue, the center
// and every candidate with its id and code, asking for {"ids": [...]} (a JSON
// object so that OpenAI's JSON mode can be on; ParseSelection also takes a
// bare list). Candidates repeating an earlier id or the center's are left out.
//
// With tokenBudget > 0 the prompt is fitted to about that many tokens
// (EstimateTokens): an issue longer than half the budget is cut, then code is
// trimmed longest first — every code is cut to a common length, the largest
// that fits, so short functions stay whole. Ids are never cut, so a very long
// candidate list can exceed a tiny budget.
func SelectPrompt(issue string, center Candidate, candidates []Candidate, tokenBudget int) Request {
	cands := uniqueCandidates(center, candidates)
	if tokenBudget > 0 && len(issue) > tokenBudget*2 {
		issue = cutText(issue, tokenBudget*2-len(truncMarker)) + truncMarker
	}
	codes := make([]string, 0, len(cands)+1)
	if center.ID != "" {
		codes = append(codes, center.Code)
	}
	for _, c := range cands {
		codes = append(codes, c.Code)
	}
	// Fences come from the untrimmed code: a trimmed prefix never has longer
	// backtick runs, so the fixed part does not change with trimming.
	fences := make([]string, len(codes))
	for i, c := range codes {
		fences[i] = fenceFor(c)
	}
	if tokenBudget > 0 {
		empty := make([]string, len(codes))
		fixed := len(selectSystem) + len(renderSelect(issue, center, cands, empty, fences)) + len(codes)*len(truncMarker)
		codes = fitCodes(codes, tokenBudget*4-fixed)
	}
	return Request{
		System:      selectSystem,
		Messages:    []Message{{Role: RoleUser, Content: renderSelect(issue, center, cands, codes, fences)}},
		MaxTokens:   selectMaxTokens(len(cands)),
		Temperature: 0,
		JSON:        true,
		Check:       checkSelection,
	}
}

// checkSelection accepts an answer that holds a list of ids; which ids are
// candidates is decided later, and an empty list is a valid decision.
func checkSelection(r Response) error {
	_, err := extractIDs(r.Text)
	return err
}

// selectMaxTokens leaves room for every id plus some slack for models that
// pad their JSON.
func selectMaxTokens(n int) int { return min(4096, 256+48*n) }

func uniqueCandidates(center Candidate, candidates []Candidate) []Candidate {
	seen := map[string]bool{center.ID: true}
	out := make([]Candidate, 0, len(candidates))
	for _, c := range candidates {
		if c.ID == "" || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	return out
}

func renderSelect(issue string, center Candidate, cands []Candidate, codes, fences []string) string {
	var b strings.Builder
	b.WriteString("## Issue\n")
	b.WriteString(strings.TrimSpace(issue))
	b.WriteString("\n\n")
	i := 0
	block := func(code string) {
		writeFenced(&b, fences[i], code)
		i++
	}
	if center.ID != "" {
		b.WriteString("## Center: " + center.ID + "\n")
		block(codes[i])
		b.WriteString("\n")
	}
	b.WriteString("## Candidates\n")
	for _, c := range cands {
		b.WriteString("### " + c.ID + "\n")
		block(codes[i])
		b.WriteString("\n")
	}
	b.WriteString("Which candidates are relevant to the issue? Answer with JSON only, in exactly this form:\n" +
		"{\"ids\": [\"<candidate id>\", ...]}\n" +
		"Use ids exactly as written after \"### \". Answer {\"ids\": []} if none is relevant.\n")
	return b.String()
}

// writeFenced writes code between two fence lines.
func writeFenced(b *strings.Builder, fence, code string) {
	b.WriteString(fence + "\n" + code)
	if !strings.HasSuffix(code, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(fence + "\n")
}

// candidateIDs are the ids of cands, in order.
func candidateIDs(cands []Candidate) []string {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	return ids
}

// fenceFor returns a backtick fence longer than any backtick run in code.
func fenceFor(code string) string {
	longest, run := 0, 0
	for i := 0; i < len(code); i++ {
		if code[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// fitCodes cuts codes so their total length is at most avail characters
// (plus one marker per cut code, which the caller has reserved): it finds
// the largest common cap that fits and cuts only the codes longer than it.
func fitCodes(codes []string, avail int) []string {
	total := 0
	for _, c := range codes {
		total += len(c)
	}
	if total <= avail {
		return codes
	}
	limit := 0
	if avail > 0 {
		lens := make([]int, len(codes))
		for i, c := range codes {
			lens[i] = len(c)
		}
		slices.Sort(lens)
		remaining := avail
		for i, l := range lens {
			share := remaining / (len(lens) - i)
			if l > share {
				limit = share
				break
			}
			remaining -= l
		}
	}
	out := make([]string, len(codes))
	for i, c := range codes {
		if len(c) <= limit {
			out[i] = c
			continue
		}
		out[i] = cutText(c, limit) + truncMarker
	}
	return out
}

// cutText returns a prefix of s of at most n bytes, ending at a line break
// when one is in the last half, and always on a rune boundary.
func cutText(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	p := s[:n]
	if j := strings.LastIndexByte(p, '\n'); j >= n/2 {
		return p[:j]
	}
	for len(p) > 0 {
		if r, size := utf8.DecodeLastRuneInString(p); r != utf8.RuneError || size != 1 {
			break
		}
		p = p[:len(p)-1]
	}
	return p
}

// ParseSelection extracts the selected ids from a model's answer. It accepts
// a JSON list of strings or an object holding one ({"ids": [...]}, also
// "selected", "relevant", ... or an object's only list), found anywhere in the
// text: inside code fences, after <think> blocks, amid prose. List elements
// may be {"id": "..."} objects. Ids not in candidates are dropped, duplicates
// removed, order kept; an empty list is a valid answer. Text with no such
// JSON is an error that says what was found instead.
func ParseSelection(text string, candidates []string) ([]string, error) {
	ids, _, err := parseSelection(text, candidates)
	return ids, err
}

func parseSelection(text string, candidates []string) (kept, dropped []string, err error) {
	raw, err := extractIDs(text)
	if err != nil {
		return nil, nil, err
	}
	valid := make(map[string]bool, len(candidates))
	for _, c := range candidates {
		valid[c] = true
	}
	seen := map[string]bool{}
	kept = []string{}
	for _, id := range raw {
		if seen[id] {
			continue
		}
		seen[id] = true
		if valid[id] {
			kept = append(kept, id)
		} else {
			dropped = append(dropped, id)
		}
	}
	return kept, dropped, nil
}

// maxJSONStarts bounds how many '[' / '{' positions are tried, so a huge
// garbage answer costs little.
const maxJSONStarts = 256

func extractIDs(text string) ([]string, error) {
	text = stripThink(text)
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("empty answer")
	}
	var firstErr error
	for v := range jsonValues(text, "[{") {
		ids, err := idsFrom(v)
		if err == nil {
			return ids, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, fmt.Errorf("no JSON list of ids in the answer (starts %q)", cut(strings.TrimSpace(text), 80))
}

// jsonValues yields the JSON values found in text that start with one of
// the bytes in opens: in ``` fenced blocks first, then anywhere in the text,
// trying at most maxJSONStarts starts in each.
func jsonValues(text, opens string) iter.Seq[any] {
	return func(yield func(any) bool) {
		for _, part := range append(fencedBlocks(text), text) {
			starts := 0
			for i := 0; i < len(part) && starts < maxJSONStarts; i++ {
				if strings.IndexByte(opens, part[i]) < 0 {
					continue
				}
				starts++
				var v any
				if json.NewDecoder(strings.NewReader(part[i:])).Decode(&v) != nil {
					continue
				}
				if !yield(v) {
					return
				}
			}
		}
	}
}

var idKeys = []string{"ids", "ranking", "ranked", "ranked_ids", "order", "selected", "selected_ids", "relevant", "relevant_ids", "neighbors", "neighbours", "candidates", "answer", "result"}

func idsFrom(v any) ([]string, error) {
	switch v := v.(type) {
	case []any:
		ids := make([]string, 0, len(v))
		for i, e := range v {
			switch e := e.(type) {
			case string:
				ids = append(ids, cleanID(e))
			case map[string]any:
				s, ok := e["id"].(string)
				if !ok {
					return nil, fmt.Errorf("list element %d is an object without a string \"id\"", i)
				}
				ids = append(ids, cleanID(s))
			default:
				return nil, fmt.Errorf("list element %d is %s, want a string id", i, jsonKind(e))
			}
		}
		return ids, nil
	case map[string]any:
		for _, k := range idKeys {
			for key, val := range v {
				if strings.EqualFold(key, k) {
					if val == nil {
						return []string{}, nil
					}
					if _, ok := val.([]any); !ok {
						return nil, fmt.Errorf("%q is %s, want a list of ids", key, jsonKind(val))
					}
					return idsFrom(val)
				}
			}
		}
		var only []any
		n := 0
		for _, val := range v {
			if l, ok := val.([]any); ok {
				only = l
				n++
			}
		}
		if n == 1 {
			return idsFrom(only)
		}
		return nil, fmt.Errorf("JSON object has no \"ids\" list")
	default:
		return nil, fmt.Errorf("JSON value is %s, want a list of ids", jsonKind(v))
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func cleanID(s string) string {
	return strings.Trim(strings.TrimSpace(s), "`")
}

// stripThink removes <think>…</think> reasoning blocks (Qwen, DeepSeek R1);
// an unclosed one runs to the end of the text.
func stripThink(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}

// fencedBlocks returns the bodies of ``` fenced blocks, in order.
func fencedBlocks(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "```")
		if i < 0 {
			return out
		}
		rest := s[i+3:]
		// Skip the info string ("json") up to the end of the line.
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "[{") {
			rest = rest[nl+1:]
		}
		j := strings.Index(rest, "```")
		if j < 0 {
			return append(out, rest)
		}
		out = append(out, rest[:j])
		s = rest[j+3:]
	}
}

// Select asks chat which candidates are relevant (SelectPrompt, then
// ParseSelection). An unusable answer gets one repair attempt: a follow-up
// quoting the parse error. If that answer is unusable too the error is an
// *InvalidOutputError (errors.Is ErrInvalidOutput, not retryable). Errors
// from chat are returned as they are (wrapped), so IsRetryable and RetryAfter
// see them. The Selection reports calls, tokens and latency even on error.
// No candidates means no call and an empty selection.
func Select(ctx context.Context, chat Chat, issue string, center Candidate, candidates []Candidate, tokenBudget int) (Selection, error) {
	sel := Selection{Model: chat.Name(), IDs: []string{}}
	cands := uniqueCandidates(center, candidates)
	if len(cands) == 0 {
		return sel, nil
	}
	ids := candidateIDs(cands)
	req := SelectPrompt(issue, center, cands, tokenBudget)
	var kept, dropped []string
	err := exchange(ctx, chat, &sel, req, "select neighbours of "+center.ID, func(text string) (err error) {
		kept, dropped, err = parseSelection(text, ids)
		return err
	}, "Reply again with JSON only, exactly {\"ids\": [\"<candidate id>\", ...]}, "+
		"using candidate ids from my previous message, or {\"ids\": []} if none is relevant.")
	if err != nil {
		return sel, err
	}
	sel.IDs, sel.Dropped = kept, dropped
	return sel, nil
}

// exchange sends req to chat and hands the answer to parse. An unusable
// answer (parse fails) gets one repair attempt: a follow-up quoting the
// parse error, then hint. If that answer is unusable too the error is an
// *InvalidOutputError (errors.Is ErrInvalidOutput, not retryable). Errors
// from chat are returned wrapped in what, so IsRetryable and RetryAfter see
// them. Calls, tokens and latency are added to sel even on error; Repaired
// is set when the repair's answer was used.
func exchange(ctx context.Context, chat Chat, sel *Selection, req Request, what string, parse func(text string) error, hint string) error {
	call := func(req Request) (Response, error) {
		start := time.Now()
		resp, err := chat.Complete(ctx, req)
		sel.Latency += time.Since(start)
		sel.Calls++
		if !resp.Cached {
			metrics.LLMCalls.Inc()
			metrics.LLMTokens.WithLabelValues("prompt").Add(float64(resp.PromptTokens))
			metrics.LLMTokens.WithLabelValues("completion").Add(float64(resp.CompletionTokens))
		}
		if o := OwnerOf(ctx); resp.Cached && (o == "" || resp.Owner != o) {
			sel.CachedCalls++
		} else {
			// Fetched now, or by an earlier attempt of this same step: paid
			// for by this step, reported as an attempt that never died would.
			sel.PromptTokens += resp.PromptTokens
			sel.CompletionTokens += resp.CompletionTokens
		}
		return resp, err
	}
	resp, err := call(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	perr := parse(resp.Text)
	if perr == nil {
		return nil
	}
	repair := req
	repair.Messages = append(slices.Clip(req.Messages),
		Message{Role: RoleAssistant, Content: resp.Text},
		Message{Role: RoleUser, Content: fmt.Sprintf("Your answer could not be used: %v. %s", perr, hint)})
	resp, err = call(repair)
	if err != nil {
		return fmt.Errorf("%s (repair attempt): %w", what, err)
	}
	if perr = parse(resp.Text); perr != nil {
		return fmt.Errorf("%s: %w", what, &InvalidOutputError{Model: chat.Name(), Text: cut(resp.Text, maxErrorBody), Err: perr})
	}
	sel.Repaired = true
	return nil
}

// LLMSelector is the Selector over a chat model.
type LLMSelector struct {
	Chat Chat
	// TokenBudget bounds the prompt (default DefaultTokenBudget).
	TokenBudget int
}

// Select implements Selector.
func (s *LLMSelector) Select(ctx context.Context, issue string, center Candidate, candidates []Candidate) (Selection, error) {
	budget := s.TokenBudget
	if budget <= 0 {
		budget = DefaultTokenBudget
	}
	return Select(ctx, s.Chat, issue, center, candidates, budget)
}

// Name is the chat model's name.
func (s *LLMSelector) Name() string { return s.Chat.Name() }

// URL is the chat's endpoint (see Endpoint).
func (s *LLMSelector) URL() string { return Endpoint(s.Chat) }

// Endpoint is the URL a Chat or Selector sends its requests to, for messages
// that tell the user which server failed; "" when it has none (the
// heuristic) or does not say.
func Endpoint(v any) string {
	if u, ok := v.(interface{ URL() string }); ok {
		return u.URL()
	}
	return ""
}
