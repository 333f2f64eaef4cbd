package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/embed"
)

// ErrTypeEmbedRetryable marks an embedding-server failure that another
// attempt may get past (429, 408, 5xx, timeouts, malformed answers).
const ErrTypeEmbedRetryable = "EmbedRetryable"

// maxEmbedRetryDelay caps a server's Retry-After as the delay before the
// next attempt when the retry policy has no maximum interval.
const maxEmbedRetryDelay = time.Minute

// embedFailure is the error a failed EmbedBatch attempt returns. Failures of
// the embedding server are expected under load and outages, so they are
// marked benign (the SDK logs them at DEBUG, not ERROR); the user learns of
// them instead from one WARN line per repository from the second failed
// attempt on, and, once the attempts are spent, from the repository's error:
//
//	embedder at URL unavailable after N attempts over T s: HTTP 500: …
//
// A request the server refuses (4xx other than 408 and 429) is not retried:
//
//	embedder at URL rejected the request: HTTP 400: …
func (a *Search) embedFailure(ctx context.Context, in EmbedBatchInput, err error) error {
	if ctx.Err() != nil {
		// The attempt was cancelled or timed out: another attempt must make it.
		return fmt.Errorf("embed batch %s of %s: attempt cancelled: %w", in.Key, in.Repo, err)
	}
	var ee *embed.Error
	if !errors.As(err, &ee) {
		return err // the store's, not the embedder's: retried, and logged as an error
	}
	url := ee.URL
	if url == "" {
		url = embed.Endpoint(a.Deps.Embedder)
	}
	who := "the embedder"
	if url != "" {
		who = "embedder at " + url
	}
	info := activity.GetInfo(ctx)
	log := activity.GetLogger(ctx)
	opts := temporal.ApplicationErrorOptions{Category: temporal.ApplicationErrorCategoryBenign}
	if !embed.IsRetryable(err) {
		msg := fmt.Sprintf("%s rejected the request: %s", who, ee.Reason())
		if ee.Status == 0 {
			msg = fmt.Sprintf("%s answered unusably: %s", who, ee.Reason())
		}
		log.Warn(msg+"; not retrying", "repo", in.Repo, "batch", in.Key)
		opts.NonRetryable = true
		return temporal.NewApplicationErrorWithOptions(msg, ErrTypeBadInput, opts)
	}
	var maxAttempts int32
	var maxInterval time.Duration
	if p := info.RetryPolicy; p != nil {
		maxAttempts, maxInterval = p.MaximumAttempts, p.MaximumInterval
	}
	if maxInterval <= 0 {
		maxInterval = maxEmbedRetryDelay
	}
	opts.NextRetryDelay = min(embed.RetryAfter(err), maxInterval)
	var msg string
	if maxAttempts > 0 && info.Attempt >= maxAttempts {
		msg = fmt.Sprintf("%s unavailable after %d attempts over %.1f s: %s",
			who, info.Attempt, time.Since(info.ScheduledTime).Seconds(), ee.Reason())
		if warnOnce(info.WorkflowExecution.RunID) {
			log.Warn(msg, "repo", in.Repo)
		}
	} else {
		of := ""
		if maxAttempts > 0 {
			of = fmt.Sprintf(" of %d", maxAttempts)
		}
		line := fmt.Sprintf("%s %s (attempt %d%s)", who, answers(ee), info.Attempt, of)
		if info.Attempt >= 2 && warnOnce(info.WorkflowExecution.RunID) {
			log.Warn(line+"; retrying", "repo", in.Repo, "error", ee.Reason())
		} else {
			log.Debug(line, "repo", in.Repo, "batch", in.Key, "error", ee.Reason())
		}
		msg = line + ": " + ee.Reason()
	}
	return temporal.NewApplicationErrorWithOptions(msg, ErrTypeEmbedRetryable, opts)
}

// answers says briefly what a server did: "answers HTTP 500", "fails" (no
// answer, or an unusable one).
func answers(e *embed.Error) string {
	if e.Status == 0 {
		return "fails"
	}
	return fmt.Sprintf("answers HTTP %d", e.Status)
}

// warned holds the workflow runs (one per repository and index run) that
// have had their WARN line, so parallel batches failing alike say it once.
var warned = struct {
	sync.Mutex
	runs  map[string]bool
	order []string
}{runs: map[string]bool{}}

// maxWarned bounds what warned remembers; the oldest runs are forgotten.
const maxWarned = 4096

// warnOnce reports whether run has not been warned about yet, and records it.
func warnOnce(run string) bool {
	warned.Lock()
	defer warned.Unlock()
	if warned.runs[run] {
		return false
	}
	if len(warned.order) >= maxWarned {
		delete(warned.runs, warned.order[0])
		warned.order = warned.order[1:]
	}
	warned.runs[run] = true
	warned.order = append(warned.order, run)
	return true
}
