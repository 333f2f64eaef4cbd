package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

// failingEmbedder answers every request with err.
type failingEmbedder struct{ err error }

func (f failingEmbedder) Name() string     { return "m" }
func (f failingEmbedder) Dim() int         { return 4 }
func (f failingEmbedder) Endpoint() string { return "http://gpu-1:8080/v1/embeddings" }
func (f failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, f.err
}

// TestEmbedBatchFailures: embedder failures become benign application
// errors naming the server (retryable ones with the server's Retry-After,
// capped; refusals non-retryable), while store failures stay ordinary errors.
func TestEmbedBatchFailures(t *testing.T) {
	const url = "http://gpu-1:8080/v1/embeddings"
	for _, tc := range []struct {
		name         string
		err          error
		key          string // "" = a stored batch
		typ          string
		nonRetryable bool
		benign       bool
		delay        time.Duration
		says         string
	}{
		{name: "500", err: &embed.Error{URL: url, Status: 500, Msg: "boom", Retryable: true}, typ: ErrTypeEmbedRetryable, benign: true,
			says: "embedder at " + url + " answers HTTP 500 (attempt 1): HTTP 500: boom"},
		{name: "429 with a long Retry-After", err: &embed.Error{URL: url, Status: 429, Msg: "slow down", Retryable: true, RetryAfter: time.Hour},
			typ: ErrTypeEmbedRetryable, benign: true, delay: maxEmbedRetryDelay, says: "answers HTTP 429"},
		{name: "no URL in the error", err: &embed.Error{Msg: "server returned 1 vectors for 2 texts", Retryable: true}, typ: ErrTypeEmbedRetryable, benign: true,
			says: "embedder at " + url + " fails (attempt 1): server returned 1 vectors for 2 texts"},
		{name: "400", err: &embed.Error{URL: url, Status: 400, Msg: `{"error":"bad model"}`}, typ: ErrTypeBadInput, nonRetryable: true, benign: true,
			says: "embedder at " + url + ` rejected the request: HTTP 400: {"error":"bad model"}`},
		{name: "missing batch", key: "repos/acme/x/pending/none.json", err: errors.New("never asked"), says: "none.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := blobtest.Bucket(t)
			ctx := context.Background()
			key := tc.key
			if key == "" {
				key = "repos/acme/x/pending/batch-00000.json"
				data, _ := json.Marshal([]embed.Item{{Hash: "h1", Text: "def f(): pass"}, {Hash: "h2", Text: "def g(): pass"}})
				if err := b.WriteAll(ctx, key, data); err != nil {
					t.Fatal(err)
				}
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			a := &Search{Deps: search.Deps{Bucket: b, Embedder: failingEmbedder{tc.err}}}
			env.RegisterActivity(a)
			_, err := env.ExecuteActivity(a.EmbedBatch, EmbedBatchInput{Repo: "acme/x", Key: key})
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want one saying %q", err, tc.says)
			}
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an application error", err)
			}
			if tc.typ == "" {
				if ae.Category() == temporal.ApplicationErrorCategoryBenign || ae.NonRetryable() {
					t.Errorf("a store failure is %v (benign %v, non-retryable %v); want an ordinary retryable error", err, ae.Category() == temporal.ApplicationErrorCategoryBenign, ae.NonRetryable())
				}
				return
			}
			if ae.Type() != tc.typ || ae.NonRetryable() != tc.nonRetryable || (ae.Category() == temporal.ApplicationErrorCategoryBenign) != tc.benign || ae.NextRetryDelay() != tc.delay {
				t.Errorf("err type %q non-retryable %v category %v delay %v; want %q %v benign=%v %v",
					ae.Type(), ae.NonRetryable(), ae.Category(), ae.NextRetryDelay(), tc.typ, tc.nonRetryable, tc.benign, tc.delay)
			}
		})
	}
}

func TestWarnOnce(t *testing.T) {
	if !warnOnce("run-a") || warnOnce("run-a") || !warnOnce("run-b") {
		t.Fatal("warnOnce must say yes once per run")
	}
	for i := range maxWarned {
		warnOnce("filler-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
	}
	if !warnOnce("run-a") {
		t.Error("the oldest runs must be forgotten once maxWarned are remembered")
	}
}
