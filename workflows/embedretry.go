package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// Embedding retry defaults: an embedder that answers 5xx for good fails the
// repository after 4 attempts, 2+4+8 s apart; each attempt retries its
// requests for at most a minute itself (embed.BatchOptions), so with the
// default 500 ms backoff a dead server costs about 30 s, not minutes.
const (
	defaultEmbedInitialInterval = 2 * time.Second
	defaultEmbedMaximumInterval = 30 * time.Second
	defaultEmbedMaximumAttempts = 4
)

// embedRetry is the retry policy of the embedding activities. Retry policy
// values are not part of the commands a workflow records, so changing them
// needs no version marker.
func embedRetry(o *schema.RetryOptions) *temporal.RetryPolicy {
	p := &temporal.RetryPolicy{
		InitialInterval:        defaultEmbedInitialInterval,
		BackoffCoefficient:     2,
		MaximumInterval:        defaultEmbedMaximumInterval,
		MaximumAttempts:        defaultEmbedMaximumAttempts,
		NonRetryableErrorTypes: []string{activities.ErrTypeBadInput},
	}
	if o == nil {
		return p
	}
	if o.InitialInterval > 0 {
		p.InitialInterval = o.InitialInterval
	}
	if o.MaximumInterval > 0 {
		p.MaximumInterval = o.MaximumInterval
	}
	p.MaximumInterval = max(p.MaximumInterval, p.InitialInterval)
	if o.MaximumAttempts > 0 {
		p.MaximumAttempts = o.MaximumAttempts
	}
	return p
}
