package embed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// BatchOptions control how Batched splits and retries work.
type BatchOptions struct {
	// MaxTexts per request; default 32.
	MaxTexts int
	// MaxBytes of text per request; default 256 KiB.
	MaxBytes int
	// Concurrency: requests in flight; default 4.
	Concurrency int
	// MaxChars truncates each text (the model's limit); default 8192 bytes.
	MaxChars int
	// Retries of a retryable failure per request; default 3. The wait starts
	// at Backoff and doubles, unless the server sent Retry-After.
	Retries int
	// Backoff is the first wait between retries; default 500 ms.
	Backoff time.Duration
	// RetryBudget bounds the time a request spends retrying, from its first
	// failure: a retry whose wait would end later is not made and the last
	// failure is returned, for the caller's own retry policy (a Temporal
	// activity's) to take over. Default 1 min.
	RetryBudget time.Duration
	// Sleep waits between retries; tests replace it. Default time.Sleep with ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (o *BatchOptions) defaults() {
	if o.MaxTexts <= 0 {
		o.MaxTexts = 32
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 256 << 10
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.MaxChars <= 0 {
		o.MaxChars = 8192
	}
	if o.Retries <= 0 {
		o.Retries = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.RetryBudget <= 0 {
		o.RetryBudget = time.Minute
	}
	if o.Sleep == nil {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// Batched wraps an Embedder: texts are truncated, split into batches by count
// and size, sent with bounded concurrency, retried on retryable errors
// (honouring Retry-After), and split in half when the server answers 413.
type Batched struct {
	E    Embedder
	Opts BatchOptions
}

// Name is the wrapped model's name.
func (b *Batched) Name() string { return b.E.Name() }

// Dim is the wrapped model's dimension.
func (b *Batched) Dim() int { return b.E.Dim() }

// Close closes the wrapped embedder when it holds resources (a local model).
func (b *Batched) Close() error {
	if c, ok := b.E.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Endpoint is the wrapped embedder's endpoint.
func (b *Batched) Endpoint() string { return Endpoint(b.E) }

// Embed embeds all texts, in order.
func (b *Batched) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	o := b.Opts
	o.defaults()
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = Truncate(t, o.MaxChars)
	}
	type span struct{ lo, hi int }
	var spans []span
	for lo := 0; lo < len(in); {
		hi, size := lo, 0
		for hi < len(in) && hi-lo < o.MaxTexts && (hi == lo || size+len(in[hi]) <= o.MaxBytes) {
			size += len(in[hi])
			hi++
		}
		spans = append(spans, span{lo, hi})
		lo = hi
	}
	out := make([][]float32, len(in))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for _, s := range spans {
		wg.Add(1)
		sem <- struct{}{}
		go func(s span) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := b.embedSpan(ctx, &o, in[s.lo:s.hi], out[s.lo:s.hi]); err != nil {
				once.Do(func() { firstErr = err; cancel() })
			}
		}(s)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// embedSpan embeds one batch into out, retrying and splitting as needed.
func (b *Batched) embedSpan(ctx context.Context, o *BatchOptions, texts []string, out [][]float32) error {
	backoff := o.Backoff
	var deadline time.Time // of retrying, set at the first failure
	for attempt := 0; ; attempt++ {
		vecs, err := b.E.Embed(ctx, texts)
		if err == nil {
			if len(vecs) != len(texts) {
				return &Error{URL: Endpoint(b.E), Msg: fmt.Sprintf("server returned %d vectors for %d texts", len(vecs), len(texts))}
			}
			copy(out, vecs)
			return nil
		}
		var e *Error
		if errors.As(err, &e) && e.TooLarge && len(texts) > 1 {
			mid := len(texts) / 2
			if err := b.embedSpan(ctx, o, texts[:mid], out[:mid]); err != nil {
				return err
			}
			return b.embedSpan(ctx, o, texts[mid:], out[mid:])
		}
		if !IsRetryable(err) || attempt >= o.Retries {
			return err
		}
		wait := backoff
		if ra := RetryAfter(err); ra > 0 {
			wait = ra
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(o.RetryBudget)
		}
		if now.Add(wait).After(deadline) {
			return err
		}
		if err := o.Sleep(ctx, wait); err != nil {
			return err
		}
		backoff *= 2
	}
}

// Endpoint is where e sends its requests: the URL of a remote embedder
// (http://gpu-1:8080/v1/embeddings, bedrock://MODEL-ID), "" for the local
// lexical one.
func Endpoint(e Embedder) string {
	if ep, ok := e.(interface{ Endpoint() string }); ok {
		return ep.Endpoint()
	}
	return ""
}
