package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
)

// clients returns one client per protocol against srv.
func clients(t *testing.T, srv *llmtest.Server, key string, timeout time.Duration) map[string]llm.Chat {
	t.Helper()
	o, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL, APIKey: key, Model: "fake-gpt", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	a, err := llm.NewAnthropic(llm.AnthropicConfig{BaseURL: srv.URL, APIKey: key, Model: "fake-claude", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]llm.Chat{llmtest.PathOpenAI: o, llmtest.PathAnthropic: a}
}

func simpleRequest() llm.Request {
	return llm.Request{
		System:    "be brief",
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: "say hi"}},
		MaxTokens: 50,
		JSON:      true,
	}
}

func TestOpenAIComplete(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.RequireKey("sk-test")
	srv.Enqueue(llmtest.Reply("hello there"))
	c := clients(t, srv, "sk-test", 0)[llmtest.PathOpenAI]
	resp, err := c.Complete(t.Context(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hello there" || resp.Model != "fake-gpt" || resp.StopReason != "stop" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.PromptTokens == 0 || resp.CompletionTokens != 3 {
		t.Errorf("usage = %d/%d, want >0/3", resp.PromptTokens, resp.CompletionTokens)
	}
	got := srv.Requests()[0]
	if got.Model != "fake-gpt" || got.System != "be brief" || len(got.Messages) != 1 || got.Messages[0].Content != "say hi" {
		t.Errorf("server saw %+v", got)
	}
	if got.MaxTokens != 50 || got.Temperature == nil || *got.Temperature != 0 || !got.JSONMode {
		t.Errorf("server saw max_tokens %d temperature %v json %v", got.MaxTokens, got.Temperature, got.JSONMode)
	}
	if srv.Count(llmtest.PathOpenAI) != 1 || srv.Total() != 1 {
		t.Errorf("counts = %v", srv.Counts())
	}
}

func TestOpenAIOptions(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1/", Model: "m", NoJSONMode: true, MaxCompletionTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/v1/chat/completions"; c.URL() != want {
		t.Errorf("URL = %s, want %s", c.URL(), want)
	}
	if _, err := c.Complete(t.Context(), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.JSONMode || got.MaxTokens != 50 || got.Header.Get("Authorization") != "" {
		t.Errorf("server saw json %v max %d auth %q", got.JSONMode, got.MaxTokens, got.Header.Get("Authorization"))
	}
	if _, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL}); err == nil {
		t.Error("no model: want error")
	}
	if _, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: "ftp://x", Model: "m"}); err == nil {
		t.Error("ftp base: want error")
	}
	if _, err := c.Complete(t.Context(), llm.Request{}); err == nil || llm.IsRetryable(err) {
		t.Errorf("empty request: %v, want non-retryable error", err)
	}
	if srv.Total() != 1 {
		t.Errorf("an invalid request reached the server")
	}
}

func TestAnthropicComplete(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.RequireKey("ak-test")
	srv.Enqueue(llmtest.Reply("hi"), llmtest.Reply("again"))
	c := clients(t, srv, "ak-test", 0)[llmtest.PathAnthropic]
	resp, err := c.Complete(t.Context(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hi" || resp.Model != "fake-claude" || resp.StopReason != "end_turn" || resp.PromptTokens == 0 || resp.CompletionTokens != 1 {
		t.Errorf("resp = %+v", resp)
	}
	got := srv.Requests()[0]
	if got.Header.Get("anthropic-version") != llm.DefaultAnthropicVersion || got.Header.Get("x-api-key") != "ak-test" {
		t.Errorf("headers = %v", got.Header)
	}
	if !strings.HasPrefix(got.System, "be brief") || !strings.Contains(got.System, "JSON") || len(got.Messages) != 1 {
		t.Errorf("system %q messages %v", got.System, got.Messages)
	}

	// System-role messages go to the system field (the API rejects them in
	// messages), and a request without MaxTokens gets the default.
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "extra rule"}, {Role: llm.RoleUser, Content: "x"}}}
	if _, err := c.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	got = srv.Requests()[1]
	if got.System != "extra rule" || got.MaxTokens != 1024 || len(got.Messages) != 1 {
		t.Errorf("server saw system %q max %d messages %v", got.System, got.MaxTokens, got.Messages)
	}
}

// TestFailureClassification runs every injected fault against both clients
// and checks the error's classification and the server's counters.
func TestFailureClassification(t *testing.T) {
	date := time.Now().Add(60 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name      string
		step      llmtest.Step
		status    int
		retryable bool
		minAfter  time.Duration
		maxAfter  time.Duration
		msg       string
	}{
		{"429 seconds", llmtest.RateLimited("2"), 429, true, 2 * time.Second, 2 * time.Second, "rate_limit_error"},
		{"429 http-date", llmtest.RateLimited(date), 429, true, 30 * time.Second, 60 * time.Second, ""},
		{"429 no header", llmtest.RateLimited(""), 429, true, 0, 0, ""},
		{"500", llmtest.ServerError(), 500, true, 0, 0, ""},
		{"503 retry-after", llmtest.Unavailable("1"), 503, true, time.Second, time.Second, ""},
		{"529 overloaded", llmtest.HTTPStatus(529), 529, true, 0, 0, "status 529"},
		{"408", llmtest.HTTPStatus(408), 408, true, 0, 0, ""},
		{"400", llmtest.HTTPStatus(400), 400, false, 0, 0, "invalid_request_error"},
		{"401", llmtest.HTTPStatus(401), 401, false, 0, 0, "authentication_error"},
		{"404", llmtest.HTTPStatus(404), 404, false, 0, 0, ""},
		{"413", llmtest.HTTPStatus(413), 413, false, 0, 0, ""},
		{"422", llmtest.HTTPStatus(422), 422, false, 0, 0, ""},
		{"slow", llmtest.SlowReply(10*time.Second, "late"), 0, true, 0, 0, "timed out"},
		{"truncated", llmtest.TruncatedBody(), 200, true, 0, 0, "truncated JSON"},
		{"not json", llmtest.NonJSONBody(), 200, true, 0, 0, "not JSON"},
		{"disconnect", llmtest.Disconnected(), 200, true, 0, 0, "cut short"},
	}
	for _, path := range []string{llmtest.PathOpenAI, llmtest.PathAnthropic} {
		for _, tc := range cases {
			t.Run(strings.TrimPrefix(path, "/v1/")+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				srv := llmtest.NewServer(t)
				c := clients(t, srv, "", 200*time.Millisecond)[path]
				srv.Enqueue(tc.step, llmtest.Reply("recovered"))
				start := time.Now()
				_, err := c.Complete(t.Context(), simpleRequest())
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v (%T), want *llm.Error", err, err)
				}
				if e.Status != tc.status || e.Retryable != tc.retryable || llm.IsRetryable(err) != tc.retryable {
					t.Errorf("status %d retryable %v, want %d %v: %v", e.Status, e.Retryable, tc.status, tc.retryable, err)
				}
				if ra := llm.RetryAfter(err); ra < tc.minAfter || ra > tc.maxAfter {
					t.Errorf("RetryAfter = %s, want in [%s, %s]", ra, tc.minAfter, tc.maxAfter)
				}
				t.Log(err)
				if !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("error %q does not name %q", err, tc.msg)
				}
				if tc.name == "slow" && time.Since(start) > 5*time.Second {
					t.Errorf("timeout took %s", time.Since(start))
				}
				// The retry the caller would make succeeds.
				resp, err := c.Complete(t.Context(), simpleRequest())
				if err != nil || resp.Text != "recovered" {
					t.Fatalf("retry: %q, %v", resp.Text, err)
				}
				if n := srv.Count(path); n != 2 {
					t.Errorf("server counted %d requests on %s, want 2", n, path)
				}
			})
		}
	}
}

func TestWrongKeyAndUnreachable(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.RequireKey("right")
	for path, c := range clients(t, srv, "wrong", 0) {
		_, err := c.Complete(t.Context(), simpleRequest())
		var e *llm.Error
		if !errors.As(err, &e) || e.Status != 401 || llm.IsRetryable(err) {
			t.Errorf("%s wrong key: %v, want non-retryable 401", path, err)
		}
	}
	if srv.Pending() != 0 || srv.Total() != 2 {
		t.Errorf("pending %d total %d", srv.Pending(), srv.Total())
	}

	dead := llmtest.NewServer(t)
	cs := clients(t, dead, "", time.Second)
	dead.Close()
	for path, c := range cs {
		_, err := c.Complete(t.Context(), simpleRequest())
		var e *llm.Error
		if !errors.As(err, &e) || e.Status != 0 || !llm.IsRetryable(err) {
			t.Errorf("%s connection refused: %v, want retryable transport error", path, err)
		}
	}
}

func TestCallerCancelIsNotRetryable(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.SlowReply(10*time.Second, "late"))
	c := clients(t, srv, "", time.Minute)[llmtest.PathOpenAI]
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.Complete(ctx, simpleRequest())
	if err == nil || llm.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want non-retryable wrapping context.Canceled", err)
	}
}

func TestMalformedSuccessBodies(t *testing.T) {
	bodies := map[string]string{
		"no choices":     `{"model":"m","choices":[]}`,
		"error in 200":   `{"error":{"message":"upstream exploded","type":"server_error"}}`,
		"wrong shape":    `{"choices":"nope"}`,
		"empty":          ``,
		"anthropic type": `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			}))
			defer h.Close()
			var c llm.Chat
			var err error
			if name == "anthropic type" {
				c, err = llm.NewAnthropic(llm.AnthropicConfig{BaseURL: h.URL, Model: "m"})
			} else {
				c, err = llm.NewOpenAI(llm.OpenAIConfig{BaseURL: h.URL, Model: "m"})
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(t.Context(), simpleRequest())
			var e *llm.Error
			if !errors.As(err, &e) || !e.Retryable || e.Msg == "" {
				t.Fatalf("%s: %v, want retryable *Error naming the fault", name, err)
			}
			t.Logf("%s: %v", name, err)
		})
	}
}

func TestRetryAfterMillisecondsHeader(t *testing.T) {
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after-ms", "1500")
		w.Header().Set("Retry-After", "9")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer h.Close()
	c, _ := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: h.URL, Model: "m"})
	_, err := c.Complete(t.Context(), simpleRequest())
	if got := llm.RetryAfter(err); got != 1500*time.Millisecond {
		t.Errorf("RetryAfter = %s, want 1.5s (%v)", got, err)
	}
}

func TestIsRetryableHelpers(t *testing.T) {
	inner := &llm.Error{Status: 429, Retryable: true, RetryAfter: 3 * time.Second}
	wrapped := fmt.Errorf("select: %w", inner)
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("plain"), false},
		{wrapped, true},
		{&llm.Error{Status: 400}, false},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", &llm.InvalidOutputError{Err: errors.New("bad")}), false},
	}
	for _, tc := range cases {
		if got := llm.IsRetryable(tc.err); got != tc.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if llm.RetryAfter(wrapped) != 3*time.Second || llm.RetryAfter(errors.New("x")) != 0 {
		t.Error("RetryAfter does not see through wrapping")
	}
	if !errors.Is(&llm.InvalidOutputError{}, llm.ErrInvalidOutput) {
		t.Error("InvalidOutputError is not ErrInvalidOutput")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"5", 5 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"999999999", 24 * time.Hour, true},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second, true}, // IMF-fixdate
		{"Sunday, 01-Mar-26 12:01:00 GMT", time.Minute, true},     // RFC 850
		{"Sun Mar  1 12:00:10 2026", 10 * time.Second, true},      // ANSI C asctime
		{"Sun, 01 Mar 2026 11:59:00 GMT", 0, true},                // in the past
		{"Mon, 01 Mar 2027 12:00:00 GMT", 24 * time.Hour, true},   // capped
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
	}
	for _, tc := range cases {
		got, ok := llm.ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestOpen(t *testing.T) {
	srv := llmtest.NewServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	ok := map[string]string{
		"openai://?model=gpt-4o-mini":                                                       "https://api.openai.com/v1/chat/completions",
		"openai+https://gw.example/v1?model=x":                                              "https://gw.example/v1/chat/completions",
		"openai+http://" + host + "?model=m":                                                srv.URL + "/v1/chat/completions",
		"openai+http://" + host + "/v1?model=m":                                             srv.URL + "/v1/chat/completions",
		"vllm://?model=Qwen/Qwen3-8B":                                                       "http://localhost:8000/v1/chat/completions",
		"ollama://gpu7:11434?model=qwen3&json_mode=false":                                   "http://gpu7:11434/v1/chat/completions",
		"anthropic://?model=claude-sonnet-4-5":                                              "https://api.anthropic.com/v1/messages",
		"anthropic+http://" + host + "?model=c&max_tokens=64&version=2023-01-01&timeout=3s": srv.URL + "/v1/messages",
	}
	for u, want := range ok {
		c, err := llm.Open(u)
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		got := c.(interface{ URL() string }).URL()
		if got != want {
			t.Errorf("Open(%q) URL = %s, want %s", u, got, want)
		}
	}
	bad := map[string]string{
		"":                                  "missing scheme",
		"openai://":                         "missing model",
		"mystery://h?model=m":               "unsupported scheme",
		"openai+http://?model=m":            "needs a host",
		"openai://user:secret@h?model=m":    "credentials",
		"openai://?model=m&timeout=forever": "timeout",
		"openai://?model=m&json_mode=maybe": "json_mode",
		"anthropic://?model=m&max_tokens=0": "max_tokens",
		// A key pasted as a query parameter is masked like a clone URL's.
		"openai://?model=m&api_key=secret&timeout=x": "timeout",
		"openai://u:secret@h/%zz?model=m":            "invalid URL escape",
	}
	if c, err := llm.Open("bedrock://anthropic.claude-v1?region=us-east-1"); err != nil || c.Name() != "anthropic.claude-v1" {
		t.Errorf("Open(bedrock://…) = %v, %v; want a Converse client for the model", c, err)
	}
	for u, want := range bad {
		_, err := llm.Open(u)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want error naming %q", u, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) error leaks the password: %v", u, err)
		}
	}
}

func TestOpenAPIKeys(t *testing.T) {
	srv := llmtest.NewServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	// A vendor key is not sent to a self-hosted server...
	t.Setenv("OPENAI_API_KEY", "vendor-key")
	t.Setenv("LOCUS_LLM_API_KEY", "")
	c, err := llm.Open("openai+http://" + host + "?model=m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(t.Context(), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("vendor key sent to %s: %q", host, h)
	}
	// ...but LOCUS_LLM_API_KEY and api_key_env are.
	srv.RequireKey("locus-key")
	t.Setenv("LOCUS_LLM_API_KEY", "locus-key")
	t.Setenv("MY_KEY", "locus-key")
	for _, u := range []string{"openai+http://" + host + "?model=m", "anthropic+http://" + host + "?model=m", "vllm://" + host + "?model=m&api_key_env=MY_KEY"} {
		c, err := llm.Open(u)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(t.Context(), simpleRequest()); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestOpenSelector(t *testing.T) {
	for _, u := range []string{"", "none", "heuristic"} {
		s, err := llm.OpenSelector(u, 0)
		if err != nil || s.Name() != llm.HeuristicName {
			t.Errorf("OpenSelector(%q) = %v, %v", u, s, err)
		}
	}
	s, err := llm.OpenSelector("vllm://?model=qwen", 100)
	if err != nil || s.Name() != "qwen" {
		t.Errorf("OpenSelector(vllm) = %v, %v", s, err)
	}
	if _, err := llm.OpenSelector("bogus://x", 0); err == nil {
		t.Error("bogus scheme: want error")
	}
}
