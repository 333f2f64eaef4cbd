package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Routes of the remote embedders.
const (
	pathOpenAI = "/v1/embeddings"
	pathTEI    = "/embed"
)

// HTTPOptions configure the remote embedders.
type HTTPOptions struct {
	// BaseURL of the server, e.g. http://gpu-1:8080; required.
	BaseURL string
	// Model is sent in OpenAI-compatible requests and names the vectors; required.
	Model string
	// Dim is the model's output dimension; required (vectors of another size are an error).
	Dim int
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Timeout per request; default 60 s.
	Timeout time.Duration
	// Client overrides the HTTP client (tests).
	Client *http.Client
}

func (o *HTTPOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	t := o.Timeout
	if t <= 0 {
		t = 60 * time.Second
	}
	return &http.Client{Timeout: t}
}

// post sends a JSON body and decodes a JSON answer into out, classifying failures.
func post(ctx context.Context, o *HTTPOptions, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	endpoint := o.endpoint(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return &Error{URL: endpoint, Msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	resp, err := o.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the Error's own field
		}
		return &Error{URL: endpoint, Msg: err.Error(), Retryable: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return &Error{URL: endpoint, Status: resp.StatusCode, Msg: "reading the response: " + err.Error(), Retryable: true}
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{URL: endpoint, Status: resp.StatusCode, Msg: snippet(raw), RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
		switch {
		case resp.StatusCode == http.StatusRequestEntityTooLarge:
			e.TooLarge = true
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
			e.Retryable = true
		}
		return e
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{URL: endpoint, Status: resp.StatusCode, Msg: fmt.Sprintf("malformed response body (%v): %s", err, snippet(raw)), Retryable: true}
	}
	return nil
}

// endpoint is the URL of the server's route path.
func (o *HTTPOptions) endpoint(path string) string {
	return strings.TrimRight(o.BaseURL, "/") + path
}

// atURL names the endpoint in an *Error that has none (checks of a
// response made after the request succeeded).
func atURL(err error, endpoint string) error {
	var e *Error
	if errors.As(err, &e) && e.URL == "" {
		e.URL = endpoint
	}
	return err
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func checkDims(vecs [][]float32, n, dim int) error {
	if len(vecs) != n {
		return &Error{Msg: fmt.Sprintf("server returned %d vectors for %d texts", len(vecs), n), Retryable: true}
	}
	for i, v := range vecs {
		if len(v) != dim {
			return &Error{Msg: fmt.Sprintf("vector %d has %d dimensions, the model is configured with %d", i, len(v), dim)}
		}
	}
	return nil
}

// OpenAI talks to an OpenAI-compatible /v1/embeddings endpoint (OpenAI, vLLM,
// Infinity, TEI's compatibility route).
type OpenAI struct{ Opts HTTPOptions }

func (c *OpenAI) Name() string { return c.Opts.Model }
func (c *OpenAI) Dim() int     { return c.Opts.Dim }

func (c *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := post(ctx, &c.Opts, pathOpenAI, map[string]any{"model": c.Opts.Model, "input": texts}, &resp); err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, &Error{URL: c.Opts.endpoint(pathOpenAI), Msg: fmt.Sprintf("response has a bad or repeated index %d", d.Index), Retryable: true}
		}
		vecs[d.Index] = d.Embedding
	}
	if err := checkDims(vecs, len(texts), c.Opts.Dim); err != nil {
		return nil, atURL(err, c.Opts.endpoint(pathOpenAI))
	}
	return vecs, nil
}

// Endpoint is the URL requests go to.
func (c *OpenAI) Endpoint() string { return c.Opts.endpoint(pathOpenAI) }

// TEI talks to Hugging Face text-embeddings-inference's native /embed route.
type TEI struct{ Opts HTTPOptions }

func (c *TEI) Name() string { return c.Opts.Model }
func (c *TEI) Dim() int     { return c.Opts.Dim }

func (c *TEI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var vecs [][]float32
	if err := post(ctx, &c.Opts, pathTEI, map[string]any{"inputs": texts, "truncate": true, "normalize": true}, &vecs); err != nil {
		return nil, err
	}
	if err := checkDims(vecs, len(texts), c.Opts.Dim); err != nil {
		return nil, atURL(err, c.Opts.endpoint(pathTEI))
	}
	return vecs, nil
}

// Endpoint is the URL requests go to.
func (c *TEI) Endpoint() string { return c.Opts.endpoint(pathTEI) }
