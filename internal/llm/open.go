package llm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/locus-dev/locus/schema"
)

// Open returns the Chat named by rawURL. Forms:
//
//	openai://api.openai.com?model=gpt-4o-mini      OpenAI-compatible over HTTPS (host defaults to api.openai.com)
//	openai+http://host:8000?model=M                OpenAI-compatible over plain HTTP (a /v1 path is optional)
//	vllm://host:8000?model=M                       same as openai+http (default host localhost:8000)
//	ollama://host:11434?model=M                    same as openai+http (default host localhost:11434)
//	anthropic://?model=claude-sonnet-4-5           Anthropic Messages over HTTPS (host defaults to api.anthropic.com)
//	anthropic+http://host:port?model=M             Anthropic Messages over plain HTTP (proxies, tests)
//	bedrock://MODEL-ID?region=R                    Amazon Bedrock Converse (AWS default credentials)
//
// Query parameters (model is required, the rest optional):
//
//	model=NAME                      model name sent to the server and used in outputs and cache keys
//	timeout=DURATION                per-call timeout (default 120s)
//	api_key_env=VAR                 environment variable holding the API key (see below)
//	json_mode=false                 OpenAI-compatible: never send response_format (default true)
//	max_completion_tokens=true      OpenAI-compatible: send max_completion_tokens (default false)
//	max_tokens=N                    Anthropic: max_tokens when a request names none (default 1024)
//	version=V                       Anthropic: anthropic-version header (default 2023-06-01)
//
// API keys are never read from the URL, so URLs can be logged. The key is
// $api_key_env if named, else $LOCUS_LLM_API_KEY, else OPENAI_API_KEY or
// ANTHROPIC_API_KEY — the last two only when the host is the vendor's own, so
// a vendor key is not sent to a self-hosted server.
func Open(rawURL string) (Chat, error) {
	shown, _ := schema.RedactURL(rawURL)
	fail := func(format string, args ...any) (Chat, error) {
		return nil, fmt.Errorf("llm open %q: %s", shown, fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a credential
		}
		return fail("%v", err)
	}
	if u.Scheme == "" {
		return fail("missing scheme (want openai, openai+http, vllm, ollama, anthropic or anthropic+http)")
	}
	q := u.Query()
	if u.User != nil {
		return fail("credentials in the URL are not accepted; use api_key_env or LOCUS_LLM_API_KEY")
	}
	model := q.Get("model")
	if model == "" && u.Scheme != "bedrock" {
		return fail("missing model= query parameter")
	}
	var timeout time.Duration
	if v := q.Get("timeout"); v != "" {
		if timeout, err = time.ParseDuration(v); err != nil || timeout <= 0 {
			return fail("timeout=%q: want a positive duration like 30s", v)
		}
	}
	base := func(scheme, defHost string) string {
		host := u.Host
		if host == "" {
			host = defHost
		}
		return scheme + "://" + host + strings.TrimRight(u.Path, "/")
	}
	key := func(vendorEnv, vendorHost string) string {
		if name := q.Get("api_key_env"); name != "" {
			return os.Getenv(name)
		}
		if k := os.Getenv("LOCUS_LLM_API_KEY"); k != "" {
			return k
		}
		if vendorEnv != "" && (u.Host == "" || u.Host == vendorHost) {
			return os.Getenv(vendorEnv)
		}
		return ""
	}
	boolParam := func(name string, def bool) (bool, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s=%q: want true or false", name, v)
		}
		return b, nil
	}

	switch u.Scheme {
	case "openai", "openai+https", "openai+http", "vllm", "ollama":
		cfg := OpenAIConfig{Model: model, Timeout: timeout}
		switch u.Scheme {
		case "openai", "openai+https":
			cfg.BaseURL = base("https", "api.openai.com")
			cfg.APIKey = key("OPENAI_API_KEY", "api.openai.com")
		case "openai+http":
			if u.Host == "" {
				return fail("openai+http needs a host")
			}
			cfg.BaseURL = base("http", "")
			cfg.APIKey = key("", "")
		case "vllm":
			cfg.BaseURL = base("http", "localhost:8000")
			cfg.APIKey = key("", "")
		case "ollama":
			cfg.BaseURL = base("http", "localhost:11434")
			cfg.APIKey = key("", "")
		}
		jsonMode, err := boolParam("json_mode", true)
		if err != nil {
			return fail("%v", err)
		}
		cfg.NoJSONMode = !jsonMode
		if cfg.MaxCompletionTokens, err = boolParam("max_completion_tokens", false); err != nil {
			return fail("%v", err)
		}
		return NewOpenAI(cfg)
	case "anthropic", "anthropic+https", "anthropic+http":
		cfg := AnthropicConfig{Model: model, Timeout: timeout, Version: q.Get("version")}
		if u.Scheme == "anthropic+http" {
			if u.Host == "" {
				return fail("anthropic+http needs a host")
			}
			cfg.BaseURL = base("http", "")
			cfg.APIKey = key("", "")
		} else {
			cfg.BaseURL = base("https", "api.anthropic.com")
			cfg.APIKey = key("ANTHROPIC_API_KEY", "api.anthropic.com")
		}
		if v := q.Get("max_tokens"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fail("max_tokens=%q: want a positive integer", v)
			}
			cfg.MaxTokens = n
		}
		return NewAnthropic(cfg)
	case "bedrock":
		// bedrock://<model id>?region=us-east-1[&endpoint=https://…]; credentials
		// from the AWS default chain.
		id := u.Host + u.Path
		if model != "" {
			id = model
		}
		return NewBedrock(context.Background(), BedrockConfig{ModelID: strings.TrimPrefix(id, "/"), Region: q.Get("region"), Endpoint: q.Get("endpoint")})
	default:
		return fail("unsupported scheme %q (want openai, openai+http, vllm, ollama, anthropic or anthropic+http)", u.Scheme)
	}
}

// OpenSelector returns the neighbour selector for rawURL: the Heuristic when
// rawURL is "", "none" or "heuristic", else an LLM selector over Open(rawURL)
// with the given prompt token budget (0: DefaultTokenBudget).
func OpenSelector(rawURL string, tokenBudget int) (Selector, error) {
	switch rawURL {
	case "", "none", "heuristic", "heuristic://":
		return Heuristic{}, nil
	}
	chat, err := Open(rawURL)
	if err != nil {
		return nil, err
	}
	return &LLMSelector{Chat: chat, TokenBudget: tokenBudget}, nil
}
