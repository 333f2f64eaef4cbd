package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseSelection(t *testing.T) {
	cands := []string{"a.py:f", "a.py:C.g", "b/c.py:h", "d.py:Outer.inner"}
	ok := []struct {
		name string
		text string
		want []string
	}{
		{"bare list", `["a.py:f", "b/c.py:h"]`, []string{"a.py:f", "b/c.py:h"}},
		{"object", `{"ids": ["a.py:C.g"]}`, []string{"a.py:C.g"}},
		{"object other key", `{"Selected": ["a.py:f"]}`, []string{"a.py:f"}},
		{"object only list", `{"reasoning": "f parses", "choice": ["a.py:f"]}`, []string{"a.py:f"}},
		{"object null", `{"ids": null}`, []string{}},
		{"fenced json", "Here you go:\n```json\n{\"ids\": [\"b/c.py:h\", \"a.py:f\"]}\n```\nHope it helps.", []string{"b/c.py:h", "a.py:f"}},
		{"fenced bare", "```\n[\"d.py:Outer.inner\"]\n```", []string{"d.py:Outer.inner"}},
		{"prose around", `The relevant ones are ["a.py:f"] because f parses the header.`, []string{"a.py:f"}},
		{"prose with brackets first", `Looking at [the candidates] I pick {"ids": ["a.py:C.g"]}.`, []string{"a.py:C.g"}},
		{"think block", "<think>maybe [\"a.py:f\"]? no.</think>\n{\"ids\": [\"b/c.py:h\"]}", []string{"b/c.py:h"}},
		{"unknown ids dropped", `["zzz.py:nope", "a.py:f", "a.py"]`, []string{"a.py:f"}},
		{"duplicates", `["b/c.py:h", "a.py:f", "b/c.py:h", "a.py:f"]`, []string{"b/c.py:h", "a.py:f"}},
		{"empty list", `[]`, []string{}},
		{"empty object list", `{"ids": []}`, []string{}},
		{"all unknown", `["x", "y"]`, []string{}},
		{"id objects", `[{"id": "a.py:f", "reason": "x"}, {"id": "d.py:Outer.inner"}]`, []string{"a.py:f", "d.py:Outer.inner"}},
		{"whitespace and backticks", "[\" a.py:f \", \"`b/c.py:h`\"]", []string{"a.py:f", "b/c.py:h"}},
		{"wrong shape then right", `{"note": 1} then ["a.py:f"]`, []string{"a.py:f"}},
	}
	for _, tc := range ok {
		got, err := ParseSelection(tc.text, cands)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got == nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
		}
	}
	bad := []struct{ name, text, want string }{
		{"empty", "   ", "empty answer"},
		{"garbage", "I think the second one is relevant.", "no JSON list"},
		{"numbers", `[1, 2, 3]`, "element 0 is a number"},
		{"object without list", `{"answer": "a.py:f"}`, "want a list"},
		{"object no ids", `{"a": 1, "b": 2}`, "no \"ids\" list"},
		{"truncated", `{"ids": ["a.py:f", "b/c`, "no JSON list"},
		{"unclosed think", `<think>I will answer ["a.py:f"]`, "empty answer"},
		{"id object without id", `[{"name": "a.py:f"}]`, "without a string \"id\""},
	}
	for _, tc := range bad {
		got, err := ParseSelection(tc.text, cands)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, %v; want error containing %q", tc.name, got, err, tc.want)
		}
	}
}

func TestParseSelectionDropped(t *testing.T) {
	kept, dropped, err := parseSelection(`["x", "a", "x", "b"]`, []string{"a"})
	if err != nil || !reflect.DeepEqual(kept, []string{"a"}) || !reflect.DeepEqual(dropped, []string{"x", "b"}) {
		t.Errorf("kept %v dropped %v err %v", kept, dropped, err)
	}
}

func lines(n, width int, tag string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s line %d %s\n", tag, i, strings.Repeat("x", width))
	}
	return b.String()
}

func TestSelectPromptTrimming(t *testing.T) {
	center := Candidate{ID: "pkg/core.py:Engine.run", Code: lines(20, 40, "center")}
	cands := []Candidate{
		{ID: "pkg/core.py:Engine.small", Code: "def small(self):\n    return 1\n"},
		{ID: "pkg/core.py:Engine.huge", Code: lines(400, 60, "huge")},
		{ID: "pkg/core.py:Engine.medium", Code: lines(40, 40, "medium")},
		{ID: "pkg/util.py:helper", Code: lines(150, 60, "helper")},
	}
	issue := "Engine.run crashes when the queue is empty"

	// No budget: everything verbatim.
	full := SelectPrompt(issue, center, cands, 0)
	for _, c := range append([]Candidate{center}, cands...) {
		if !strings.Contains(full.Messages[0].Content, c.Code) {
			t.Fatalf("unbudgeted prompt lacks the code of %s", c.ID)
		}
	}
	if !full.JSON || full.Temperature != 0 || full.MaxTokens <= 0 || full.System == "" {
		t.Errorf("request settings %+v", full)
	}

	for _, budget := range []int{6000, 3000, 1500} {
		req := SelectPrompt(issue, center, cands, budget)
		p := req.Messages[0].Content
		if est := EstimateTokens(req); est > budget {
			t.Errorf("budget %d: estimate %d", budget, est)
		}
		for _, c := range append([]Candidate{center}, cands...) {
			if !strings.Contains(p, c.ID) {
				t.Errorf("budget %d: id %s missing", budget, c.ID)
			}
		}
		if !strings.Contains(p, cands[0].Code) {
			t.Errorf("budget %d: the small function was trimmed", budget)
		}
		if strings.Contains(p, cands[1].Code) {
			t.Errorf("budget %d: the huge function was not trimmed", budget)
		}
		if !strings.Contains(p, "huge line 0 ") || !strings.Contains(p, truncMarker) {
			t.Errorf("budget %d: trimmed code should keep its start and say it was cut", budget)
		}
		if !utf8.ValidString(p) {
			t.Errorf("budget %d: invalid UTF-8", budget)
		}
		if !strings.Contains(p, issue) {
			t.Errorf("budget %d: issue cut", budget)
		}
	}
	// Longest first: at 6000 tokens the medium function (1.8 KB) survives
	// whole while the two long ones are cut.
	p := SelectPrompt(issue, center, cands, 6000).Messages[0].Content
	if !strings.Contains(p, cands[2].Code) || strings.Contains(p, cands[3].Code) {
		t.Error("budget 6000: want medium whole and helper cut")
	}

	// A budget smaller than the fixed part keeps every id and no code.
	tiny := SelectPrompt(issue, center, cands, 10).Messages[0].Content
	for _, c := range cands {
		if !strings.Contains(tiny, "### "+c.ID+"\n") {
			t.Errorf("tiny budget: id %s missing", c.ID)
		}
	}
	if strings.Contains(tiny, "huge line 0") {
		t.Error("tiny budget: code still present")
	}

	// An issue longer than half the budget is cut.
	long := strings.Repeat("word ", 5000)
	req := SelectPrompt(long, center, cands, 2000)
	if EstimateTokens(req) > 2000 || strings.Contains(req.Messages[0].Content, long) {
		t.Errorf("long issue: estimate %d", EstimateTokens(req))
	}
}

func TestSelectPromptCandidatesAndFences(t *testing.T) {
	center := Candidate{ID: "a.py:f", Code: "def f(): pass"}
	cands := []Candidate{
		{ID: "a.py:g", Code: "def g():\n    '''```` docs ````'''\n"},
		{ID: "a.py:f", Code: "dup of center"},
		{ID: "a.py:g", Code: "dup"},
		{ID: "", Code: "no id"},
		{ID: "a.py:h", Code: "def h(): pass"},
	}
	p := SelectPrompt("issue", center, cands, 0).Messages[0].Content
	if strings.Count(p, "\n### ") != 2 || strings.Contains(p, "dup") || strings.Contains(p, "no id") {
		t.Errorf("duplicates or the center offered as candidates:\n%s", p)
	}
	if !strings.Contains(p, "`````\ndef g()") {
		t.Errorf("fence not longer than the code's backtick run:\n%s", p)
	}
}

func TestFitCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 1 + rng.IntN(8)
		codes := make([]string, n)
		total := 0
		for i := range codes {
			codes[i] = strings.Repeat("y", rng.IntN(3000))
			total += len(codes[i])
		}
		avail := rng.IntN(total + 10)
		got := fitCodes(codes, avail)
		sum, cutLen := 0, -1
		for i, g := range got {
			g = strings.TrimSuffix(g, truncMarker)
			sum += len(g)
			if g != codes[i] {
				// Every cut code is cut to the same cap, and no whole code
				// is longer than that cap.
				if cutLen >= 0 && len(g) != cutLen {
					t.Fatalf("cut lengths differ: %d vs %d", len(g), cutLen)
				}
				cutLen = len(g)
			}
		}
		if sum > max(avail, 0) {
			t.Fatalf("total %d over avail %d", sum, avail)
		}
		for i, g := range got {
			if g == codes[i] && cutLen >= 0 && len(g) > cutLen {
				t.Fatalf("whole code of %d bytes kept while others cut to %d", len(g), cutLen)
			}
		}
	}
}

func TestCutText(t *testing.T) {
	if got := cutText("ab\ncdefgh", 7); got != "ab\ncdef" {
		// the newline is before n/2, so the cut is not moved back to it
		t.Errorf("got %q", got)
	}
	if got := cutText("abcdef\ngh", 8); got != "abcdef" {
		t.Errorf("got %q", got)
	}
	if got := cutText("aé€", 5); got != "aé" || !utf8.ValidString(got) {
		t.Errorf("got %q", got)
	}
}

func TestHeuristic(t *testing.T) {
	issue := "TokenBucket.refill over-fills when the clock goes backwards; rate_limit ignored in refillTokens"
	center := Candidate{ID: "limiter/bucket.py:TokenBucket.take", Code: "def take(self, n): ..."}
	cands := []Candidate{
		{ID: "limiter/bucket.py:TokenBucket.__init__", Code: "def __init__(self, rate_limit, clock):\n    self.rate_limit = rate_limit\n"},
		{ID: "limiter/bucket.py:TokenBucket.refill", Code: "def refill(self):\n    now = self.clock()\n"},
		{ID: "limiter/log.py:setup_logging", Code: "def setup_logging(level):\n    logging.basicConfig(level=level)\n"},
		{ID: "limiter/bucket.py:refill_tokens", Code: "def refill_tokens(bucket, clock):\n    bucket.refill()\n"},
		{ID: "limiter/bucket.py:TokenBucket.take", Code: "center repeated"},
	}
	h := Heuristic{}
	if h.Name() != "heuristic (no LLM)" {
		t.Errorf("Name = %q", h.Name())
	}
	first, err := h.Select(t.Context(), issue, center, cands)
	if err != nil || first.Model != HeuristicName || first.Calls != 0 {
		t.Fatalf("%+v %v", first, err)
	}
	// Scores: refill_tokens 4 shared in code + 2 in its name; __init__ 4
	// (rate_limit, rate, limit, clock); refill 2 + 1; setup_logging 0.
	want := []string{"limiter/bucket.py:refill_tokens", "limiter/bucket.py:TokenBucket.__init__", "limiter/bucket.py:TokenBucket.refill"}
	if !reflect.DeepEqual(first.IDs, want) {
		t.Errorf("IDs = %v, want %v", first.IDs, want)
	}
	for range 50 {
		again, _ := h.Select(t.Context(), issue, center, cands)
		if !reflect.DeepEqual(again.IDs, first.IDs) {
			t.Fatalf("not deterministic: %v vs %v", again.IDs, first.IDs)
		}
	}
	if got := (Heuristic{MaxSelect: 1}).Pick(issue, center, cands); !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("MaxSelect 1: %v", got)
	}
	if got := (Heuristic{MinScore: 100}).Pick(issue, center, cands); got == nil || len(got) != 0 {
		t.Errorf("MinScore 100: %#v, want empty non-nil", got)
	}
	if got := h.Pick("the and for with", center, cands); len(got) != 0 {
		t.Errorf("stop words selected %v", got)
	}
	twins := []Candidate{{ID: "z.py:b", Code: "clock refill"}, {ID: "z.py:a", Code: "clock refill"}}
	if got := h.Pick(issue, center, twins); !reflect.DeepEqual(got, []string{"z.py:b", "z.py:a"}) {
		t.Errorf("ties: %v, want input order", got)
	}
}

func TestTokenSet(t *testing.T) {
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range tokenSet("parseHTTPRequest2 snake_case_name self.x = 42") {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{"http", "name", "parse", "parsehttprequest2", "request", "snake", "snake_case_name"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokenSet = %v, want %v", got, want)
	}
}

func TestCacheKey(t *testing.T) {
	req := Request{System: "s", Messages: []Message{{Role: RoleUser, Content: "u"}}, MaxTokens: 10}
	k := CacheKey("m", req)
	if len(k) != 64 || k != CacheKey("m", req) {
		t.Fatalf("key %q unstable", k)
	}
	other := req
	other.Messages = []Message{{Role: RoleUser, Content: "u2"}}
	for name, k2 := range map[string]string{
		"model":  CacheKey("m2", req),
		"prompt": CacheKey("m", other),
		"system": CacheKey("m", Request{System: "t", Messages: req.Messages, MaxTokens: 10}),
		"tokens": CacheKey("m", Request{System: "s", Messages: req.Messages, MaxTokens: 11}),
		"json":   CacheKey("m", Request{System: "s", Messages: req.Messages, MaxTokens: 10, JSON: true}),
		"temp":   CacheKey("m", Request{System: "s", Messages: req.Messages, MaxTokens: 10, Temperature: 0.5}),
	} {
		if k2 == k {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
}

// codeTokens answers as tokenSet does, from its cache the second time, and
// stays bounded.
func TestCodeTokensCache(t *testing.T) {
	code := "def parse_http_request(self): return self.buffer"
	first := codeTokens(code)
	if !reflect.DeepEqual(first, tokenSet(code)) {
		t.Fatalf("codeTokens %v, tokenSet %v", first, tokenSet(code))
	}
	if again := codeTokens(code); reflect.ValueOf(again).Pointer() != reflect.ValueOf(first).Pointer() {
		t.Error("the second call tokenised again instead of using the cache")
	}
	for i := 0; i < codeTokenCacheSize+10; i++ {
		codeTokens(fmt.Sprintf("func f%d() {}", i))
	}
	codeTokenCache.Lock()
	n := len(codeTokenCache.m)
	codeTokenCache.Unlock()
	if n > codeTokenCacheSize {
		t.Errorf("cache holds %d sets, bound %d", n, codeTokenCacheSize)
	}
}

// countingChat answers every request with the first candidate's id and a
// fixed usage, counting its calls.
type countingChat struct{ calls int }

func (c *countingChat) Name() string { return "counting" }

func (c *countingChat) Complete(_ context.Context, req Request) (Response, error) {
	c.calls++
	return Response{Text: `["a.py:f"]`, PromptTokens: 100, CompletionTokens: 7}, nil
}

// A decision an earlier attempt of the same step paid for counts as that
// step's own call when the retry finds it cached (its tokens, not a cache
// hit: what an attempt that never died would report); another step's
// cached decision is a hit and costs nothing.
func TestCachedTokensCountForTheirOwner(t *testing.T) {
	inner := &countingChat{}
	chat := WithCache(inner, &MemoryCache{})
	center := Candidate{ID: "a.py:g", Code: "def g(): f()"}
	cands := []Candidate{{ID: "a.py:f", Code: "def f(): pass"}}
	step := WithOwner(context.Background(), "run/1/activity-5")
	first, err := Select(step, chat, "fix f", center, cands, 0)
	if err != nil || first.PromptTokens != 100 || first.CompletionTokens != 7 || first.CachedCalls != 0 {
		t.Fatalf("first call: %+v %v", first, err)
	}
	for _, tc := range []struct {
		ctx        context.Context
		wantTokens int
		wantCached int
	}{
		{step, 100, 0}, // the same step retried: billed once, for it
		{WithOwner(context.Background(), "run/2/activity-5"), 0, 1}, // another step: free
		{context.Background(), 0, 1},                                // no owner: free
	} {
		got, err := Select(tc.ctx, chat, "fix f", center, cands, 0)
		if err != nil || got.Calls != 1 || got.CachedCalls != tc.wantCached || got.PromptTokens != tc.wantTokens {
			t.Errorf("owner %q: %+v %v, want %d cache hits and %d prompt tokens", OwnerOf(tc.ctx), got, err, tc.wantCached, tc.wantTokens)
		}
	}
	if inner.calls != 1 {
		t.Errorf("%d calls reached the model, want 1", inner.calls)
	}
}
