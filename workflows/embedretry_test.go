package workflows

import (
	"slices"
	"testing"
	"time"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// TestEmbedRetryPolicy: by default a failing embedder gets 4 attempts whose
// waits add up to 14 s; options override each value, and 4xx answers
// (BadInput) are never retried.
func TestEmbedRetryPolicy(t *testing.T) {
	p := embedRetry(nil)
	if p.InitialInterval != 2*time.Second || p.BackoffCoefficient != 2 || p.MaximumInterval != 30*time.Second || p.MaximumAttempts != 4 {
		t.Errorf("default policy %+v, want 2s doubling up to 30s, 4 attempts", p)
	}
	if !slices.Contains(p.NonRetryableErrorTypes, activities.ErrTypeBadInput) {
		t.Errorf("default policy retries %s errors: %v", activities.ErrTypeBadInput, p.NonRetryableErrorTypes)
	}
	var waits time.Duration
	for i, d := int32(1), p.InitialInterval; i < p.MaximumAttempts; i, d = i+1, min(2*d, p.MaximumInterval) {
		waits += d
	}
	if waits != 14*time.Second {
		t.Errorf("the waits between default attempts add up to %v, want 14s", waits)
	}
	if d := embedRetry(&schema.RetryOptions{}); d.InitialInterval != p.InitialInterval || d.MaximumAttempts != p.MaximumAttempts || d.MaximumInterval != p.MaximumInterval {
		t.Errorf("zero options give %+v, want the defaults %+v", d, p)
	}
	o := embedRetry(&schema.RetryOptions{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 2})
	if o.InitialInterval != 50*time.Millisecond || o.MaximumAttempts != 2 || o.MaximumInterval != 30*time.Second {
		t.Errorf("overridden policy %+v", o)
	}
	if o := embedRetry(&schema.RetryOptions{InitialInterval: time.Minute}); o.MaximumInterval != time.Minute {
		t.Errorf("an initial interval over the default maximum gives maximum %v, want it raised to 1m", o.MaximumInterval)
	}
}

func TestIndexRepoRejectsBadEmbedRetry(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    schema.RetryOptions
		want string
	}{
		{"negative attempts", schema.RetryOptions{MaximumAttempts: -1}, "embed retry maximum attempts -1"},
		{"negative interval", schema.RetryOptions{InitialInterval: -time.Second}, "embed retry intervals -1s, 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestSuite(t).NewTestWorkflowEnvironment()
			env.RegisterActivity(&activities.Git{})
			env.RegisterActivity(&activities.Store{})
			env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: schema.RepoSpec{Name: "acme/a", URL: "/src/a"},
				Options: schema.IndexOptions{EmbedRetry: &tc.r}})
			wantBadInput(t, env.GetWorkflowError(), tc.want)
		})
	}
}
