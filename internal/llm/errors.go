package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is a failed call to a model server, classified for retries.
//
// Retryable: 408, 429 and 5xx statuses, timeouts, connection errors, and
// responses whose body is malformed or cut short (a proxy or a dying server
// produced them; the same request can succeed). Not retryable: other 4xx
// (bad request, auth, prompt too long), and a cancelled caller context.
type Error struct {
	Provider string // "openai", "anthropic"
	Model    string
	URL      string
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// RetryAfter is the wait the server asked for (Retry-After or
	// retry-after-ms), 0 when it named none.
	RetryAfter time.Duration
	Retryable  bool
	// Body is the response body, cut to maxErrorBody bytes.
	Body string
	// Msg says what went wrong in words, e.g. the API's error message or
	// "truncated JSON response body".
	Msg string
	// Err is the underlying cause (transport error, JSON error), if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm %s %s", e.Provider, e.Model)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
		if t := http.StatusText(e.Status); t != "" {
			b.WriteString(" " + t)
		}
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter.Round(time.Millisecond))
	}
	if e.Retryable {
		b.WriteString(" [retryable]")
	} else {
		b.WriteString(" [not retryable]")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether repeating the call may succeed: a retryable
// *Error, a deadline, or a network timeout. ErrInvalidOutput, cancellation and
// unknown errors are not retryable.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	if errors.Is(err, ErrInvalidOutput) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// RetryAfter is the delay the server asked for before a retry, 0 if none.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// ParseRetryAfter parses a Retry-After header value: delay-seconds or an
// HTTP-date (RFC 9110 §10.2.3), relative to now. Dates in the past give 0.
// ok is false for an empty or unparsable value.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		// Integer seconds per the RFC; fractions are tolerated because some
		// gateways send them.
		if secs < 0 || secs != secs {
			return 0, false
		}
		if secs > maxRetryAfter.Seconds() {
			return maxRetryAfter, true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	if d < 0 {
		d = 0
	}
	if d > maxRetryAfter {
		d = maxRetryAfter
	}
	return d, true
}

// maxRetryAfter bounds what a server can ask for, so a bogus header cannot
// park a workflow for days.
const maxRetryAfter = 24 * time.Hour

// retryAfterFrom reads the server's requested delay: retry-after-ms (OpenAI,
// Azure) wins over Retry-After because it is more precise.
func retryAfterFrom(h http.Header, now time.Time) time.Duration {
	if ms := strings.TrimSpace(h.Get("retry-after-ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 {
			d := time.Duration(v * float64(time.Millisecond))
			return min(d, maxRetryAfter)
		}
	}
	d, _ := ParseRetryAfter(h.Get("Retry-After"), now)
	return d
}

// retryableStatus: 408 and 429 are "try later"; 5xx (including Anthropic's
// 529 overloaded) are server faults. Other 4xx mean the request itself is
// wrong and will fail the same way again.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// ErrInvalidOutput is matched (errors.Is) by every error about model output
// that could not be used even after the repair attempt. It is not retryable:
// callers count it as a failed attempt.
var ErrInvalidOutput = errors.New("invalid model output")

// InvalidOutputError is the model's last unusable answer and why it was
// rejected; errors.Is(err, ErrInvalidOutput) holds.
type InvalidOutputError struct {
	Model string
	Text  string // the last completion, cut to maxErrorBody bytes
	Err   error  // the parse or validation error
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("llm %s: %v: %v (output %q)", e.Model, ErrInvalidOutput, e.Err, e.Text)
}

func (e *InvalidOutputError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalidOutput) hold.
func (e *InvalidOutputError) Is(target error) bool { return target == ErrInvalidOutput }

const maxErrorBody = 4 << 10

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Back off to a rune start so the excerpt stays valid UTF-8.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
