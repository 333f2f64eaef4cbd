package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OpenAIConfig configures an OpenAI-compatible /v1/chat/completions client
// (vLLM, Ollama, llama.cpp server, OpenAI, most gateways).
type OpenAIConfig struct {
	// BaseURL is the server root, with or without the trailing /v1
	// (default "https://api.openai.com"; vLLM "http://host:8000",
	// Ollama "http://host:11434").
	BaseURL string
	// APIKey is sent as "Authorization: Bearer"; empty sends no header
	// (local vLLM and Ollama need none).
	APIKey string
	// Model is the model name the server knows (required).
	Model string
	// Timeout bounds one call (default DefaultTimeout, 120s).
	Timeout time.Duration
	// NoJSONMode leaves out response_format for servers that reject it
	// (default false: Request.JSON sends {"type": "json_object"}).
	NoJSONMode bool
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens,
	// which OpenAI's reasoning models require (default false: max_tokens,
	// which every compatible server accepts).
	MaxCompletionTokens bool
	// HTTPClient is the client to use (default: a fresh http.Client).
	HTTPClient *http.Client
}

// OpenAI is a Chat over an OpenAI-compatible server.
type OpenAI struct {
	cfg OpenAIConfig
	url string
	t   transport
}

// NewOpenAI checks cfg and returns a client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("llm openai: model is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com"
	}
	base, err := normaliseBase(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("llm openai: %w", err)
	}
	return &OpenAI{
		cfg: cfg,
		url: base + "/v1/chat/completions",
		t:   newTransport("openai", cfg.Model, cfg.HTTPClient, cfg.Timeout),
	}, nil
}

// Name is the configured model name.
func (c *OpenAI) Name() string { return c.cfg.Model }

// URL is the endpoint requests go to.
func (c *OpenAI) URL() string { return c.url }

type openAIRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         float64         `json:"temperature"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	Stream              bool            `json:"stream"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Complete implements Chat.
func (c *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	if err := validateRequest(req); err != nil {
		return Response{}, fmt.Errorf("llm openai %s: %w", c.cfg.Model, err)
	}
	body := openAIRequest{Model: c.cfg.Model, Temperature: req.Temperature}
	if req.System != "" {
		body.Messages = append(body.Messages, Message{Role: RoleSystem, Content: req.System})
	}
	body.Messages = append(body.Messages, req.Messages...)
	if c.cfg.MaxCompletionTokens {
		body.MaxCompletionTokens = req.MaxTokens
	} else {
		body.MaxTokens = req.MaxTokens
	}
	if req.JSON && !c.cfg.NoJSONMode {
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	h := http.Header{}
	if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	data, rh, err := c.t.post(ctx, c.url, h, body, apiErrorMessage)
	if err != nil {
		return Response{}, err
	}
	var out openAIResponse
	if err := c.t.decode(c.url, data, rh, &out); err != nil {
		return Response{}, err
	}
	if len(out.Choices) == 0 || out.Choices[0].Message == nil {
		msg := "response has no choices"
		if len(out.Error) > 0 && string(out.Error) != "null" {
			msg = "response carries an error: " + apiErrorMessage(data)
		}
		return Response{}, c.t.errorf(c.url, http.StatusOK, true, data, nil, "%s", msg)
	}
	ch := out.Choices[0]
	resp := Response{Model: out.Model, StopReason: ch.FinishReason}
	if resp.Model == "" {
		resp.Model = c.cfg.Model
	}
	switch {
	case ch.Message.Content != nil:
		resp.Text = *ch.Message.Content
	case ch.Message.Refusal != nil:
		// A refusal is an answer, not a transport fault: hand it to the
		// caller's validation (and its repair attempt) as text.
		resp.Text = *ch.Message.Refusal
		resp.StopReason = "refusal"
	}
	if out.Usage != nil {
		resp.PromptTokens = out.Usage.PromptTokens
		resp.CompletionTokens = out.Usage.CompletionTokens
	}
	return resp, nil
}

func validateRequest(req Request) error {
	if len(req.Messages) == 0 {
		return fmt.Errorf("request has no messages")
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleSystem:
		default:
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if req.MaxTokens < 0 {
		return fmt.Errorf("negative max tokens %d", req.MaxTokens)
	}
	return nil
}

// normaliseBase accepts "http://h:8000", "http://h:8000/", "http://h:8000/v1"
// and returns the root without /v1 or a trailing slash.
func normaliseBase(raw string) (string, error) {
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return "", fmt.Errorf("base URL %q: want http:// or https://", raw)
	}
	s := strings.TrimRight(raw, "/")
	s = strings.TrimSuffix(s, "/v1")
	return strings.TrimRight(s, "/"), nil
}
