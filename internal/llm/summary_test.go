package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
)

func TestParseSummary(t *testing.T) {
	long := strings.Repeat("evicts stale keys ", 60)
	for _, tc := range []struct {
		name, text, want, wantErr string
	}{
		{name: "plain", text: `{"summary": "Loads a key from the store."}`, want: "Loads a key from the store."},
		{name: "fenced after think, spaces folded", text: "<think>x</think>Here:\n```json\n{\"Summary\": \"  Loads\\n a key. \"}\n```", want: "Loads a key."},
		{name: "long is cut at a word", text: `{"summary": "` + long + `"}`},
		{name: "invalid UTF-8 replaced", text: "{\"summary\": \"caf\xe9 order\"}", want: "caf\uFFFD order"},
		{name: "empty", text: `{"summary": ""}`, wantErr: "says nothing"},
		{name: "punctuation only", text: `{"summary": "..."}`, wantErr: "says nothing"},
		{name: "number", text: `{"summary": 3}`, wantErr: "is a number"},
		{name: "no summary key", text: `{"ids": []}`, wantErr: "no JSON object with a \"summary\""},
		{name: "garbage", text: "it loads things", wantErr: "no JSON object"},
		{name: "blank", text: "  ", wantErr: "empty answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := llm.ParseSummary(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) > llm.MaxSummaryBytes || len(got) < llm.MaxSummaryBytes/2 || strings.HasSuffix(got, " ") || !strings.HasSuffix(got, "keys") && !strings.HasSuffix(got, "stale") && !strings.HasSuffix(got, "evicts") {
					t.Errorf("cut summary of %d bytes: %q", len(got), got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	srv := llmtest.NewServer(t)
	chat := clients(t, srv, "", 0)[llmtest.PathOpenAI]
	srv.Enqueue(llmtest.Garbage(), llmtest.Reply(`{"summary": "Returns the stored value of a request's key."}`))
	s, sel, err := llm.Summarize(t.Context(), chat, center.ID, center.Code, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if s != "Returns the stored value of a request's key." || sel.Calls != 2 || !sel.Repaired || sel.PromptTokens == 0 {
		t.Errorf("summary %q, %+v", s, sel)
	}
	if p := srv.Requests()[0].Prompt(); !strings.Contains(p, "## Function "+center.ID) || !strings.Contains(p, center.Code) {
		t.Errorf("prompt %q", p)
	}
	srv.Enqueue(llmtest.Garbage(), llmtest.Garbage())
	if _, _, err := llm.Summarize(t.Context(), chat, center.ID, center.Code, 2000); !errors.Is(err, llm.ErrInvalidOutput) {
		t.Errorf("garbage twice: %v", err)
	}
	req := llm.SummaryPrompt("big.py:f", strings.Repeat("x = 1\n", 5000), 500)
	if n := llm.EstimateTokens(req); n > 500 {
		t.Errorf("prompt of %d tokens, budget 500", n)
	}
}
