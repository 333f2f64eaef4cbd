// Package llm is locus's chat-model layer: one Chat interface over OpenAI-compatible and Anthropic clients, errors classified for durable retries, and SpIDER's neighbour selection (LLM or heuristic).
//
// Clients are opened by URL with Open (forms in its doc). Errors from Complete
// are *Error values that say whether a retry can help (IsRetryable) and how
// long the server asked to wait (RetryAfter); a Temporal activity maps them to
// retryable application errors with NextRetryDelay, and everything else
// (other 4xx, ErrInvalidOutput) to non-retryable ones.
//
// Bedrock Converse is not built in yet: it needs the AWS SDK's bedrockruntime
// module. It will be a third Chat implementation; Open reports bedrock:// URLs
// as unsupported until then.
package llm

import "context"

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one chat completion call. Temperature is always sent, so its zero
// value means greedy decoding rather than "server default".
type Request struct {
	System      string    `json:"system,omitempty"`
	Messages    []Message `json:"messages"`
	MaxTokens   int       `json:"max_tokens,omitempty"` // 0: the client's default
	Temperature float64   `json:"temperature"`
	// JSON asks for a JSON object answer (OpenAI response_format json_object;
	// an extra system instruction where the protocol has no such mode).
	JSON bool `json:"json,omitempty"`
	// Check, when set, says whether an answer is usable (e.g. holds the JSON
	// asked for). WithCache stores only answers Check accepts and ignores
	// stored ones it rejects, so one bad answer is never replayed forever.
	// It is not part of the cache key.
	Check func(Response) error `json:"-"`
}

// Response is one completion and what it cost.
type Response struct {
	Text             string `json:"text"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	// Model is the model the server says answered (falls back to Chat.Name).
	Model string `json:"model"`
	// StopReason is the server's finish/stop reason ("stop", "length",
	// "end_turn", "max_tokens", ...), empty when not reported.
	StopReason string `json:"stop_reason,omitempty"`
	// Cached is true when the response came from a Cache, not the server:
	// its tokens were billed by an earlier call.
	Cached bool `json:"cached,omitempty"`
	// Owner names the step whose call was billed for this response (see
	// WithOwner); stored with it in a Cache.
	Owner string `json:"owner,omitempty"`
}

type ownerKey struct{}

// WithOwner names the step that calls through ctx (a workflow run and
// activity, say). A cached response its own earlier attempt paid for still
// counts its tokens for it: the step was billed for them once, and a retry
// must report what an attempt that never died would have.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerOf is the owner WithOwner set on ctx, "" when none.
func OwnerOf(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}

// Chat is a chat-completion model. Implementations are safe for concurrent use.
type Chat interface {
	// Complete runs one request. Errors are *Error unless the request itself
	// is invalid; see IsRetryable.
	Complete(ctx context.Context, req Request) (Response, error)
	// Name is the configured model name, used in outputs and cache keys.
	Name() string
}
