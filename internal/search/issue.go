package search

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxIssueBytes bounds the issue text a query carries. The text
// travels in the Localize workflow's input and in each of its activities'
// inputs (Temporal payloads are limited to 2 MB each, histories to 50 MB),
// and the selector's prompt keeps only its first few KB anyway.
const DefaultMaxIssueBytes = 256 << 10

// MaxIssueBytesLimit is the largest limit TrimIssue accepts: with the
// workflow input, Retrieve and C SelectNeighbors inputs all carrying the
// text, more would crowd the 2 MB payload and 50 MB history limits.
const MaxIssueBytesLimit = 1 << 20

// TrimIssue checks the text of the issue called name (a file name, an id)
// and cuts it to at most limit bytes (DefaultMaxIssueBytes when limit is 0),
// at a line break in the last quarter when there is one and always at a
// rune boundary. warning is empty when nothing was cut; otherwise it says
// so, naming the issue. An empty text or a bad limit is an error naming the
// issue.
func TrimIssue(name, text string, limit int) (trimmed, warning string, err error) {
	if limit == 0 {
		limit = DefaultMaxIssueBytes
	}
	if limit < 1 || limit > MaxIssueBytesLimit {
		return "", "", fmt.Errorf("issue %s: limit %d bytes: want 1 to %d: %w", name, limit, MaxIssueBytesLimit, ErrBadQuery)
	}
	if strings.TrimSpace(text) == "" {
		return "", "", fmt.Errorf("issue %s: the text is empty: %w", name, ErrBadQuery)
	}
	if len(text) <= limit {
		return text, "", nil
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(text[:cut], '\n'); nl >= cut*3/4 {
		cut = nl
	}
	return text[:cut], fmt.Sprintf("issue %s is %s, over the %s limit: using its first %s",
		name, byteSize(len(text)), byteSize(limit), byteSize(cut)), nil
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
