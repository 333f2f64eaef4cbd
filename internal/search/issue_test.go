package search

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTrimIssue(t *testing.T) {
	big := strings.Repeat("the cache evicts the wrong key\n", 4<<20/31+1) // > 4 MiB
	for _, tc := range []struct {
		name    string
		text    string
		limit   int
		wantLen int // -1: any length ≤ limit (checked), 0 with wantErr
		wantErr bool
		warn    bool
	}{
		{name: "short", text: "cache bug", wantLen: 9},
		{name: "exactly at limit", text: "abcdef", limit: 6, wantLen: 6},
		{name: "4 MB issue, default limit", text: big, wantLen: -1, warn: true},
		{name: "cut at line break", text: "line one\nline two\n", limit: 10, wantLen: 8, warn: true},
		{name: "cut on rune boundary", text: "ab€€€", limit: 4, wantLen: 2, warn: true}, // € is 3 bytes
		{name: "empty", text: " \n\t", wantErr: true},
		{name: "limit too large", text: "x", limit: MaxIssueBytesLimit + 1, wantErr: true},
		{name: "negative limit", text: "x", limit: -1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warning, err := TrimIssue("issues/42.md", tc.text, tc.limit)
			if tc.wantErr {
				if err == nil || !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "issues/42.md") {
					t.Fatalf("err %v, want a bad-query error naming the issue", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			limit := tc.limit
			if limit == 0 {
				limit = DefaultMaxIssueBytes
			}
			if len(got) > limit || !utf8.ValidString(got) || !strings.HasPrefix(tc.text, got) {
				t.Fatalf("got %d bytes (valid UTF-8 %v), want a prefix of at most %d", len(got), utf8.ValidString(got), limit)
			}
			if tc.wantLen >= 0 && len(got) != tc.wantLen {
				t.Errorf("got %q (%d bytes), want %d bytes", got, len(got), tc.wantLen)
			}
			if tc.warn != (warning != "") || tc.warn && !strings.Contains(warning, "issues/42.md") {
				t.Errorf("warning %q, want one naming the issue: %v", warning, tc.warn)
			}
		})
	}
}
