// Package embed turns code and queries into vectors: remote embedding servers
// (OpenAI-compatible, TEI) and a local lexical embedder that needs no model.
package embed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Embedder maps texts to vectors of Dim() floats, one per text, in order.
type Embedder interface {
	// Name identifies the model in stored vectors, cache keys and outputs.
	Name() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Error is a failed request to an embedding server.
type Error struct {
	// URL is the endpoint the request went to (http://gpu-1:8080/v1/embeddings,
	// bedrock://MODEL); "" when no request was made.
	URL        string
	Status     int           // HTTP status; 0 for transport errors
	RetryAfter time.Duration // from Retry-After, when given
	Retryable  bool
	// TooLarge: the server refused the batch as too large (413); split it.
	TooLarge bool
	Msg      string
}

func (e *Error) Error() string {
	if e.URL == "" {
		return "embed: " + e.Reason()
	}
	return "embed: " + e.URL + ": " + e.Reason()
}

// Reason is what went wrong without the endpoint: "HTTP 500: body" or the
// transport error.
func (e *Error) Reason() string {
	if e.Status == 0 {
		return e.Msg
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Msg)
}

// IsRetryable reports whether retrying the request may succeed.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}

// RetryAfter is the server's requested delay, if any.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Document formats a code entity for embedding as SweRank does: the path on
// the first line, then the source; methods get their class header.
func Document(path, class, code string) string {
	if class != "" {
		return path + "\nclass " + class + ":\n" + code
	}
	return path + "\n" + code
}

// Query prefixes a query with the model's instruction (empty: none).
func Query(instruction, text string) string {
	if instruction == "" {
		return text
	}
	return instruction + text
}

// Truncate cuts text to at most maxChars bytes on a rune boundary (servers
// reject inputs over the model's limit; 4 bytes per token is conservative).
func Truncate(text string, maxChars int) string {
	if maxChars <= 0 || len(text) <= maxChars {
		return text
	}
	cut := maxChars
	for cut > 0 && (text[cut]&0xC0) == 0x80 {
		cut--
	}
	return text[:cut]
}
