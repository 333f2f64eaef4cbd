// Package llmtest is an in-process fake model server that speaks the OpenAI chat-completions and Anthropic Messages protocols and injects failures on cue.
//
// Each request is answered by the next scripted Step: first from the queue
// for its path (EnqueuePath), then from the shared queue (Enqueue), then by
// the handler (SetHandler; default: the empty selection {"ids": []}).
// Requests that break the protocol (no model, no messages, Anthropic without
// anthropic-version or max_tokens, wrong API key) get the API's 400/401 and
// consume no step. Every request is counted per path and recorded.
package llmtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Paths the server answers.
const (
	PathOpenAI    = "/v1/chat/completions"
	PathAnthropic = "/v1/messages"
)

// Fault says how a Step is answered.
type Fault int

const (
	// OK answers with a completion whose text is Step.Text.
	OK Fault = iota
	// Status answers Step.Status with the protocol's error body, and a
	// Retry-After header when Step.RetryAfter is set.
	Status
	// Slow waits Step.Delay (or until the client gives up), then answers
	// like OK.
	Slow
	// Truncated answers 200 with a well-framed body holding the first half
	// of a valid completion's JSON.
	Truncated
	// NotJSON answers 200 with an HTML page, as a misrouted proxy does.
	NotJSON
	// Disconnect answers 200 with a Content-Length for the whole completion,
	// sends half of it and closes the connection.
	Disconnect
)

func (f Fault) String() string {
	switch f {
	case OK:
		return "ok"
	case Status:
		return "status"
	case Slow:
		return "slow"
	case Truncated:
		return "truncated"
	case NotJSON:
		return "not-json"
	case Disconnect:
		return "disconnect"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Step is one scripted answer.
type Step struct {
	Fault      Fault
	Status     int           // for Status
	RetryAfter string        // for Status: Retry-After header value, e.g. "2" or an HTTP-date
	Delay      time.Duration // for Slow
	Text       string        // completion text for OK and Slow (and the body cut by Truncated/Disconnect)
}

// Reply answers with a completion of text.
func Reply(text string) Step { return Step{Text: text} }

// IDs answers a selection prompt with {"ids": [ids...]}.
func IDs(ids ...string) Step {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(map[string][]string{"ids": ids})
	return Reply(string(b))
}

// Ranking answers a rerank prompt with {"ranking": [ids...]}.
func Ranking(ids ...string) Step {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(map[string][]string{"ranking": ids})
	return Reply(string(b))
}

// Garbage answers with text that holds no JSON, for the repair path.
func Garbage() Step {
	return Reply("I looked at the candidates and the second one seems relevant, probably.")
}

// HTTPStatus answers code with the protocol's error body.
func HTTPStatus(code int) Step { return Step{Fault: Status, Status: code} }

// RateLimited answers 429 with Retry-After: retryAfter ("" for none).
func RateLimited(retryAfter string) Step {
	return Step{Fault: Status, Status: http.StatusTooManyRequests, RetryAfter: retryAfter}
}

// ServerError answers 500.
func ServerError() Step { return HTTPStatus(http.StatusInternalServerError) }

// Unavailable answers 503 with Retry-After: retryAfter ("" for none).
func Unavailable(retryAfter string) Step {
	return Step{Fault: Status, Status: http.StatusServiceUnavailable, RetryAfter: retryAfter}
}

// SlowReply answers text after d.
func SlowReply(d time.Duration, text string) Step { return Step{Fault: Slow, Delay: d, Text: text} }

// TruncatedBody answers a completion JSON cut in half.
func TruncatedBody() Step { return Step{Fault: Truncated, Text: `{"ids": []}`} }

// NonJSONBody answers an HTML page with status 200.
func NonJSONBody() Step { return Step{Fault: NotJSON} }

// Disconnected drops the connection halfway through the body.
func Disconnected() Step { return Step{Fault: Disconnect, Text: `{"ids": []}`} }

// Message is one conversation turn as the server received it.
type Message struct {
	Role    string
	Content string
}

// Request is what the server received and how it answered.
type Request struct {
	Protocol    string // "openai" or "anthropic"
	Path        string
	Model       string
	System      string // Anthropic system field, or OpenAI system messages joined
	Messages    []Message
	MaxTokens   int
	Temperature *float64
	JSONMode    bool // OpenAI response_format json_object
	Header      http.Header
	// Step is the answer given; protocol errors show as Status 400/401.
	Step Step
}

// Prompt is the last user message: for a selection request, the prompt.
func (r Request) Prompt() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Server is the fake. Its URL (from httptest.Server) is the base URL for
// both clients.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	queue    []Step
	perPath  map[string][]Step
	handler  func(Request) Step
	key      string
	requests []Request
	counts   map[string]int
}

// NewServer starts a fake server, closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{perPath: map[string][]Step{}, counts: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Close stops the server; it does not wait for slow steps that clients
// abandoned, which end when their connection closes.
func (s *Server) Close() {
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// Enqueue appends steps to the shared queue, used by requests on any path.
func (s *Server) Enqueue(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, steps...)
}

// EnqueuePath appends steps used only by requests to path, before the shared queue.
func (s *Server) EnqueuePath(path string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perPath[path] = append(s.perPath[path], steps...)
}

// SetHandler sets the answer for requests when no step is queued; h may be
// called from several requests at once.
func (s *Server) SetHandler(h func(Request) Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// RequireKey makes the server reject requests without this API key
// (Authorization: Bearer for OpenAI, x-api-key for Anthropic).
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Count is the number of requests received on path, failures included.
func (s *Server) Count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[path]
}

// Counts is a copy of the per-path request counters.
func (s *Server) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Total is the number of requests received on all paths.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.counts {
		n += v
	}
	return n
}

// Requests is a copy of every request received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Pending is the number of queued steps not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.queue)
	for _, q := range s.perPath {
		n += len(q)
	}
	return n
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireRequest struct {
	Model               string          `json:"model"`
	System              json.RawMessage `json:"system"`
	Messages            []wireMessage   `json:"messages"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// text reads a content field: a string, or a list of {"type":"text","text":...} blocks.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString(bl.Text)
		}
		return b.String()
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var proto string
	switch r.URL.Path {
	case PathOpenAI:
		proto = "openai"
	case PathAnthropic:
		proto = "anthropic"
	default:
		s.mu.Lock()
		s.counts[r.URL.Path]++
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	req := Request{Protocol: proto, Path: r.URL.Path, Header: r.Header.Clone()}
	var wr wireRequest
	decodeErr := json.NewDecoder(r.Body).Decode(&wr)
	if decodeErr == nil {
		req.Model = wr.Model
		req.MaxTokens = wr.MaxTokens
		if wr.MaxCompletionTokens != 0 {
			req.MaxTokens = wr.MaxCompletionTokens
		}
		req.Temperature = wr.Temperature
		req.JSONMode = wr.ResponseFormat != nil && wr.ResponseFormat.Type == "json_object"
		var system []string
		if len(wr.System) > 0 {
			system = append(system, text(wr.System))
		}
		for _, m := range wr.Messages {
			if proto == "openai" && m.Role == "system" {
				system = append(system, text(m.Content))
				continue
			}
			req.Messages = append(req.Messages, Message{Role: m.Role, Content: text(m.Content)})
		}
		req.System = strings.Join(system, "\n\n")
	}

	s.mu.Lock()
	s.counts[r.URL.Path]++
	var step Step
	reject := func(code int, msg string) {
		step = Step{Fault: Status, Status: code, Text: msg}
	}
	wantKey := s.key
	switch {
	case r.Method != http.MethodPost:
		reject(http.StatusMethodNotAllowed, "method must be POST")
	case decodeErr != nil:
		reject(http.StatusBadRequest, "request body is not valid JSON: "+decodeErr.Error())
	case wantKey != "" && proto == "openai" && r.Header.Get("Authorization") != "Bearer "+wantKey:
		reject(http.StatusUnauthorized, "Incorrect API key provided")
	case wantKey != "" && proto == "anthropic" && r.Header.Get("x-api-key") != wantKey:
		reject(http.StatusUnauthorized, "invalid x-api-key")
	case proto == "anthropic" && r.Header.Get("anthropic-version") == "":
		reject(http.StatusBadRequest, "anthropic-version: header is required")
	case req.Model == "":
		reject(http.StatusBadRequest, "model: field required")
	case len(wr.Messages) == 0:
		reject(http.StatusBadRequest, "messages: at least one message is required")
	case proto == "anthropic" && wr.MaxTokens <= 0:
		reject(http.StatusBadRequest, "max_tokens: field required")
	case proto == "anthropic" && hasRole(wr.Messages, "system"):
		reject(http.StatusBadRequest, `messages: Unexpected role "system". Use the top-level system parameter`)
	default:
		if q := s.perPath[r.URL.Path]; len(q) > 0 {
			step, s.perPath[r.URL.Path] = q[0], q[1:]
		} else if len(s.queue) > 0 {
			step, s.queue = s.queue[0], s.queue[1:]
		} else if s.handler != nil {
			h := s.handler
			s.mu.Unlock()
			step = h(req)
			s.mu.Lock()
		} else {
			step = IDs()
		}
	}
	req.Step = step
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	s.answer(w, r, req, step, n)
}

func hasRole(ms []wireMessage, role string) bool {
	for _, m := range ms {
		if m.Role == role {
			return true
		}
	}
	return false
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, req Request, step Step, n int) {
	switch step.Fault {
	case Status:
		if step.RetryAfter != "" {
			w.Header().Set("Retry-After", step.RetryAfter)
		}
		msg := step.Text
		if msg == "" {
			msg = http.StatusText(step.Status)
		}
		if msg == "" {
			msg = fmt.Sprintf("status %d", step.Status)
		}
		writeJSON(w, step.Status, errorBody(req.Protocol, step.Status, msg))
		return
	case Slow:
		select {
		case <-time.After(step.Delay):
		case <-r.Context().Done():
			return
		}
	case NotJSON:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "<html><body><h1>502 Bad Gateway</h1><p>upstream sent nothing</p></body></html>\n")
		return
	}
	body, _ := json.Marshal(completion(req, step.Text, n))
	switch step.Fault {
	case Truncated:
		half := body[:len(body)/2]
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(half)))
		w.WriteHeader(http.StatusOK)
		w.Write(half)
	case Disconnect:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("llmtest: response writer cannot hijack")
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		writeHalf(buf, body)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}
}

func writeHalf(buf *bufio.ReadWriter, body []byte) {
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	buf.Write(body[:len(body)/2])
	buf.Flush()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// estimate is the fake's token count: characters/4, rounded up.
func estimate(s string) int { return (len(s) + 3) / 4 }

// Usage is the token usage the fake reports for answering req with text:
// characters/4 of the system prompt and messages, and of text. A request
// answered with a completion (req.Step.Fault none or Slow) was billed
// Usage(req, req.Step.Text).
func Usage(req Request, text string) (prompt, completion int) {
	prompt = estimate(req.System)
	for _, m := range req.Messages {
		prompt += estimate(m.Content)
	}
	return prompt, estimate(text)
}

func completion(req Request, text string, n int) any {
	prompt, out := Usage(req, text)
	if req.Protocol == "anthropic" {
		return map[string]any{
			"id":            fmt.Sprintf("msg_fake_%d", n),
			"type":          "message",
			"role":          "assistant",
			"model":         req.Model,
			"content":       []any{map[string]any{"type": "text", "text": text}},
			"stop_reason":   "end_turn",
			"stop_sequence": nil,
			"usage":         map[string]any{"input_tokens": prompt, "output_tokens": out},
		}
	}
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", n),
		"object":  "chat.completion",
		"created": 0,
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": text},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out},
	}
}

func errorBody(proto string, code int, msg string) any {
	if proto == "anthropic" {
		return map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(code), "message": msg}}
	}
	typ := "invalid_request_error"
	switch {
	case code == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case code == http.StatusUnauthorized:
		typ = "authentication_error"
	case code >= 500:
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}}
}

func anthropicErrorType(code int) string {
	switch code {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// SelectionPrompt is a selection prompt (llm.SelectPrompt) taken apart: the
// center's id and the candidate ids, in prompt order.
type SelectionPrompt struct {
	Center     string
	Candidates []string
}

// ParseSelectionPrompt reads the "## Center: " and "### " headers of a
// selection prompt, skipping fenced code so that headers inside code do not
// count.
func ParseSelectionPrompt(prompt string) SelectionPrompt {
	var p SelectionPrompt
	fence := ""
	for _, line := range strings.Split(prompt, "\n") {
		if fence != "" {
			if line == fence {
				fence = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "```"):
			fence = line
		case strings.HasPrefix(line, "## Center: "):
			p.Center = strings.TrimPrefix(line, "## Center: ")
		case strings.HasPrefix(line, "### "):
			p.Candidates = append(p.Candidates, strings.TrimPrefix(line, "### "))
		}
	}
	return p
}

// Selecting answers selection prompts with choose(prompt): a handler for
// SetHandler that scripts decisions by content rather than by order, for
// tests whose requests arrive in parallel.
func Selecting(choose func(p SelectionPrompt, r Request) []string) func(Request) Step {
	return func(r Request) Step {
		return IDs(choose(ParseSelectionPrompt(r.Prompt()), r)...)
	}
}
