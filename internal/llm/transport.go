package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultTimeout bounds one HTTP call, headers and body together. Selection
// answers are short; a server that takes longer is stuck or overloaded, and a
// retry (on another replica, after backoff) is the better bet.
const DefaultTimeout = 120 * time.Second

// maxResponseBody guards memory against a runaway server; a chat completion
// is a few KB.
const maxResponseBody = 8 << 20

// transport is the HTTP plumbing the clients share: per-call timeout, error
// classification, body limits.
type transport struct {
	provider string
	model    string
	client   *http.Client
	timeout  time.Duration
}

func newTransport(provider, model string, client *http.Client, timeout time.Duration) transport {
	if client == nil {
		// No client-wide Timeout: the per-call context deadline is what
		// tells a timeout from a cancelled caller.
		client = &http.Client{}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return transport{provider: provider, model: model, client: client, timeout: timeout}
}

func (t transport) errorf(url string, status int, retryable bool, body []byte, err error, format string, args ...any) *Error {
	return &Error{
		Provider:  t.provider,
		Model:     t.model,
		URL:       url,
		Status:    status,
		Retryable: retryable,
		Body:      cut(string(body), maxErrorBody),
		Msg:       fmt.Sprintf(format, args...),
		Err:       err,
	}
}

// post sends body as JSON and returns the 2xx response body; every failure is
// an *Error. apiMessage extracts the human message from an error body.
func (t transport) post(ctx context.Context, url string, header http.Header, body any, apiMessage func([]byte) string) ([]byte, http.Header, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, nil, t.errorf(url, 0, false, nil, err, "encode request")
	}
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, nil, t.errorf(url, 0, false, nil, err, "build request")
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")

	resp, err := t.client.Do(req)
	if err != nil {
		return nil, nil, t.transportError(ctx, cctx, url, err, "request failed")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err != nil {
		e := t.transportError(ctx, cctx, url, err, "response body cut short after %d bytes", len(data))
		e.Status = resp.StatusCode
		e.Body = cut(string(data), maxErrorBody)
		return nil, nil, e
	}
	if len(data) > maxResponseBody {
		return nil, nil, t.errorf(url, resp.StatusCode, true, data[:maxErrorBody], nil, "response body larger than %d bytes", maxResponseBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := t.errorf(url, resp.StatusCode, retryableStatus(resp.StatusCode), data, nil, "%s", apiMessage(data))
		if e.Retryable {
			e.RetryAfter = retryAfterFrom(resp.Header, time.Now())
		}
		return nil, nil, e
	}
	return data, resp.Header, nil
}

// transportError classifies a failure with no usable response: the caller's
// own cancellation is final, our per-call deadline and connection trouble are
// worth a retry, certificate problems are not.
func (t transport) transportError(parent, cctx context.Context, url string, err error, format string, args ...any) *Error {
	switch {
	case parent.Err() != nil:
		return t.errorf(url, 0, errors.Is(parent.Err(), context.DeadlineExceeded), nil, parent.Err(), "caller context done")
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return t.errorf(url, 0, true, nil, err, "timed out after %s", t.timeout)
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return t.errorf(url, 0, false, nil, err, "TLS certificate rejected")
	}
	return t.errorf(url, 0, true, nil, err, format, args...)
}

// decode unmarshals a 2xx body into v, naming what was wrong with it when it
// cannot: empty, not JSON at all, cut short, or the wrong shape. All of these
// are retryable: a healthy server does not send them.
func (t transport) decode(url string, data []byte, h http.Header, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return t.errorf(url, http.StatusOK, true, data, nil, "empty response body")
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		return t.errorf(url, http.StatusOK, true, data, nil, "response body is not JSON (Content-Type %q)", h.Get("Content-Type"))
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end of JSON input"):
			return t.errorf(url, http.StatusOK, true, data, err, "truncated JSON response body (%d bytes)", len(data))
		case errors.As(err, &te):
			return t.errorf(url, http.StatusOK, true, data, nil, "unexpected JSON response shape: %s is a JSON %s", te.Field, te.Value)
		default:
			return t.errorf(url, http.StatusOK, true, data, err, "malformed JSON response body")
		}
	}
	return nil
}

// apiErrorMessage pulls the message out of the error bodies both APIs use:
// {"error": {"message": ..., "type": ...}} (OpenAI, Anthropic, vLLM) or
// {"error": "..."} / {"message": "..."} (Ollama, proxies).
func apiErrorMessage(data []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && (obj.Message != "" || obj.Type != ""):
			return strings.Trim(obj.Type+": "+obj.Message, ": ")
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return "empty error body"
	}
	return "error body: " + cut(strings.TrimSpace(string(data)), 200)
}
