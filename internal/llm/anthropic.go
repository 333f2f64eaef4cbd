package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// AnthropicConfig configures an Anthropic Messages API (/v1/messages) client.
type AnthropicConfig struct {
	// BaseURL is the API root, with or without /v1 (default "https://api.anthropic.com").
	BaseURL string
	// APIKey is sent as x-api-key (required by api.anthropic.com).
	APIKey string
	// Model is the model id, e.g. "claude-sonnet-4-5" (required).
	Model string
	// Version is the anthropic-version header (default "2023-06-01").
	Version string
	// MaxTokens is used when Request.MaxTokens is 0; the API requires the
	// field (default 1024).
	MaxTokens int
	// Timeout bounds one call (default DefaultTimeout, 120s).
	Timeout time.Duration
	// HTTPClient is the client to use (default: a fresh http.Client).
	HTTPClient *http.Client
}

// DefaultAnthropicVersion is the anthropic-version header sent by default.
const DefaultAnthropicVersion = "2023-06-01"

// jsonInstruction stands in for a JSON mode on APIs without one.
const jsonInstruction = "Respond with a single JSON value and nothing else: no prose, no code fences."

// Anthropic is a Chat over the Anthropic Messages API.
type Anthropic struct {
	cfg AnthropicConfig
	url string
	t   transport
}

// NewAnthropic checks cfg and returns a client.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("llm anthropic: model is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.anthropic.com"
	}
	if cfg.Version == "" {
		cfg.Version = DefaultAnthropicVersion
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 1024
	}
	base, err := normaliseBase(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("llm anthropic: %w", err)
	}
	return &Anthropic{
		cfg: cfg,
		url: base + "/v1/messages",
		t:   newTransport("anthropic", cfg.Model, cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is the configured model name.
func (c *Anthropic) Name() string { return c.cfg.Model }

// URL is the endpoint requests go to.
func (c *Anthropic) URL() string { return c.url }

type anthropicRequest struct {
	Model       string    `json:"model"`
	System      string    `json:"system,omitempty"`
	Messages    []Message `json:"messages"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature float64   `json:"temperature"`
}

type anthropicResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// Complete implements Chat.
func (c *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	if err := validateRequest(req); err != nil {
		return Response{}, fmt.Errorf("llm anthropic %s: %w", c.cfg.Model, err)
	}
	// The API takes the system prompt as a field, not a message.
	system := []string{}
	if req.System != "" {
		system = append(system, req.System)
	}
	body := anthropicRequest{Model: c.cfg.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	if body.MaxTokens == 0 {
		body.MaxTokens = c.cfg.MaxTokens
	}
	for _, m := range req.Messages {
		if m.Role == RoleSystem {
			system = append(system, m.Content)
			continue
		}
		body.Messages = append(body.Messages, m)
	}
	if len(body.Messages) == 0 {
		return Response{}, fmt.Errorf("llm anthropic %s: request has only system messages", c.cfg.Model)
	}
	if req.JSON {
		system = append(system, jsonInstruction)
	}
	body.System = strings.Join(system, "\n\n")

	h := http.Header{}
	h.Set("anthropic-version", c.cfg.Version)
	if c.cfg.APIKey != "" {
		h.Set("x-api-key", c.cfg.APIKey)
	}
	data, rh, err := c.t.post(ctx, c.url, h, body, apiErrorMessage)
	if err != nil {
		return Response{}, err
	}
	var out anthropicResponse
	if err := c.t.decode(c.url, data, rh, &out); err != nil {
		return Response{}, err
	}
	if out.Type == "error" {
		return Response{}, c.t.errorf(c.url, http.StatusOK, true, data, nil, "response carries an error: %s", apiErrorMessage(data))
	}
	if out.Type != "message" || out.Content == nil {
		return Response{}, c.t.errorf(c.url, http.StatusOK, true, data, nil, "response is not a message (type %q, content missing: %v)", out.Type, out.Content == nil)
	}
	resp := Response{Model: out.Model, StopReason: out.StopReason}
	if resp.Model == "" {
		resp.Model = c.cfg.Model
	}
	var text strings.Builder
	for _, b := range out.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	resp.Text = text.String()
	if out.Usage != nil {
		resp.PromptTokens = out.Usage.InputTokens
		resp.CompletionTokens = out.Usage.OutputTokens
	}
	return resp, nil
}
