package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSummaryBytes bounds a stored function summary; longer answers are cut
// at a word boundary.
const MaxSummaryBytes = 600

const summarySystem = "You summarize source code for a code search index. " +
	"Given one function, say in one or two sentences what it does and what it is for, " +
	"in the words a bug report or feature request about it would use. Answer with JSON only."

// SummaryPrompt asks for a short summary of one function (its graph id and
// code) as {"summary": "..."}; code longer than the token budget allows is
// cut.
func SummaryPrompt(id, code string, tokenBudget int) Request {
	if tokenBudget > 0 {
		if avail := tokenBudget*4 - len(summarySystem) - len(id) - 200; len(code) > avail {
			code = cutText(code, max(avail, 0)) + truncMarker
		}
	}
	var b strings.Builder
	b.WriteString("## Function " + id + "\n")
	writeFenced(&b, fenceFor(code), code)
	b.WriteString("\nAnswer with JSON only, in exactly this form:\n{\"summary\": \"<one or two sentences>\"}\n")
	return Request{
		System:      summarySystem,
		Messages:    []Message{{Role: RoleUser, Content: b.String()}},
		MaxTokens:   200,
		Temperature: 0,
		JSON:        true,
		Check: func(r Response) error {
			_, err := ParseSummary(r.Text)
			return err
		},
	}
}

// ParseSummary reads {"summary": "..."} from a model's answer (in code
// fences, after <think> blocks or amid prose, like ParseSelection), trimmed
// and cut to MaxSummaryBytes. No such object, an empty summary, or one with
// no letters is an error.
func ParseSummary(text string) (string, error) {
	text = stripThink(text)
	if strings.TrimSpace(text) == "" {
		return "", errors.New("empty answer")
	}
	for v := range jsonValues(text, "{") {
		obj, _ := v.(map[string]any)
		for k, val := range obj {
			if !strings.EqualFold(k, "summary") {
				continue
			}
			s, ok := val.(string)
			if !ok {
				return "", fmt.Errorf("\"summary\" is %s, want a string", jsonKind(val))
			}
			return cleanSummary(s)
		}
	}
	return "", fmt.Errorf("no JSON object with a \"summary\" in the answer (starts %q)", cut(strings.TrimSpace(text), 80))
}

func cleanSummary(s string) (string, error) {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	letters := false
	for _, r := range s {
		if r != utf8.RuneError && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f) {
			letters = true
			break
		}
	}
	if !letters {
		return "", fmt.Errorf("the summary %q says nothing", cut(s, 80))
	}
	if len(s) > MaxSummaryBytes {
		s = cutText(s, MaxSummaryBytes)
		if j := strings.LastIndexByte(s, ' '); j > MaxSummaryBytes/2 {
			s = s[:j]
		}
	}
	return s, nil
}

// Summarize asks chat for a summary of one function (SummaryPrompt, then
// ParseSummary), with Select's repair attempt, errors and usage accounting
// (the Selection's IDs are unused).
func Summarize(ctx context.Context, chat Chat, id, code string, tokenBudget int) (string, Selection, error) {
	sel := Selection{Model: chat.Name()}
	var summary string
	err := exchange(ctx, chat, &sel, SummaryPrompt(id, code, tokenBudget), "summarize "+id, func(text string) (err error) {
		summary, err = ParseSummary(text)
		return err
	}, "Reply again with JSON only, exactly {\"summary\": \"<one or two sentences>\"}.")
	return summary, sel, err
}
