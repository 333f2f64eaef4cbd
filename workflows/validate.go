package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/schema"
)

// Upper bounds of fleet options: Temporal refuses more than 2,000 pending
// children per workflow, and a run's history grows by about six events per
// child, so 5,000 children stay well under the 51,200-event limit.
const (
	MaxWindow             = 1000
	MaxContinueAsNewAfter = 5000
)

// validateInputVersion guards the input checks: histories recorded before
// them replay without them.
const validateInputVersion = "validate-input"

// checkInput runs check once per workflow execution, versioned so that
// histories recorded before the check existed replay unchanged, and returns
// its failure as a non-retryable error: an input that is wrong now is wrong
// on every retry.
func checkInput(ctx workflow.Context, check func() error) error {
	if workflow.GetVersion(ctx, validateInputVersion, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	if err := check(); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrTypeBadInput, nil)
	}
	return nil
}

// validateFleetInput checks what IndexFleet is given. Zero options take
// their defaults; negative or oversized ones are errors, never defaults.
func validateFleetInput(in schema.IndexFleetInput) error {
	var errs []error
	o := in.Options
	if o.Window < 0 || o.Window > MaxWindow {
		errs = append(errs, fmt.Errorf("window %d: want 1 to %d (0: default %d)", o.Window, MaxWindow, DefaultWindow))
	}
	if o.ContinueAsNewAfter < 0 || o.ContinueAsNewAfter > MaxContinueAsNewAfter {
		errs = append(errs, fmt.Errorf("continue-as-new-after %d: want 1 to %d (0: default %d)", o.ContinueAsNewAfter, MaxContinueAsNewAfter, DefaultContinueAsNewAfter))
	}
	if err := validateIndexOptions(o.Index); err != nil {
		errs = append(errs, err)
	}
	if in.ReposKey != "" && len(in.Repos) > 0 {
		errs = append(errs, errors.New("both repos and repos_key given: want one"))
	}
	if in.Total < 0 || in.Next < 0 || in.Done < 0 || in.Failed < 0 {
		errs = append(errs, fmt.Errorf("negative counts (total %d, next %d, done %d, failed %d)", in.Total, in.Next, in.Done, in.Failed))
	}
	seen := map[schema.RepoName]bool{}
	for i, r := range in.Repos {
		if _, err := schema.ParseRepoName(string(r.Name)); err != nil {
			errs = append(errs, fmt.Errorf("repos[%d]: %w", i, err))
			continue
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("repos[%d]: %s given twice", i, r.Name))
		}
		seen[r.Name] = true
		if strings.TrimSpace(r.URL) == "" {
			errs = append(errs, fmt.Errorf("repos[%d] (%s): empty URL", i, r.Name))
		}
		if masked, ok := schema.MaskCredentials(r.URL); ok {
			errs = append(errs, fmt.Errorf("repos[%d] (%s): URL %s holds credentials, which would be stored and logged: drop them and give the worker LOCUS_GIT_TOKEN", i, r.Name, masked))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("index fleet input: %s", joinErrs(errs))
	}
	return nil
}

// validateIndexOptions checks the per-repository options.
func validateIndexOptions(o schema.IndexOptions) error {
	var errs []error
	if o.MaxDiffBytes < 0 {
		errs = append(errs, fmt.Errorf("max-diff-bytes %d: want at least 1 (0: default)", o.MaxDiffBytes))
	}
	if o.MaxBlobSize < 0 {
		errs = append(errs, fmt.Errorf("max-blob-size %d: want at least 1 (0: every blob)", o.MaxBlobSize))
	}
	if o.HostWait < 0 {
		errs = append(errs, fmt.Errorf("host-wait %v: want a positive duration (0: default %v)", o.HostWait, DefaultHostWait))
	}
	if o.CommitsPerPart < 0 {
		errs = append(errs, fmt.Errorf("commits-per-part %d: want at least 1 (0: default)", o.CommitsPerPart))
	}
	if r := o.EmbedRetry; r != nil {
		if r.MaximumAttempts < 0 {
			errs = append(errs, fmt.Errorf("embed retry maximum attempts %d: want at least 1 (0: default)", r.MaximumAttempts))
		}
		if r.InitialInterval < 0 || r.MaximumInterval < 0 {
			errs = append(errs, fmt.Errorf("embed retry intervals %v, %v: want positive durations (0: default)", r.InitialInterval, r.MaximumInterval))
		}
	}
	if len(errs) > 0 {
		return errors.New(joinErrs(errs))
	}
	return nil
}

// validateLocalizeInput checks a query before any retrieval runs.
func validateLocalizeInput(in LocalizeInput) error {
	var errs []error
	if _, err := schema.ParseRepoName(string(in.Repo)); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(in.Issue) == "" {
		errs = append(errs, errors.New("the issue text is empty"))
	}
	if err := search.CheckMethod(in.Params.Method); err != nil {
		errs = append(errs, err)
	}
	if err := in.Params.Validate(); err != nil {
		errs = append(errs, err)
	}
	if in.LLMRetry.MaximumAttempts < 0 {
		errs = append(errs, fmt.Errorf("llm retry maximum attempts %d: want at least 1 (0: default)", in.LLMRetry.MaximumAttempts))
	}
	if in.MaxIssueTokens < 0 {
		errs = append(errs, fmt.Errorf("max issue tokens %d: want at least 1 (0: no limit)", in.MaxIssueTokens))
	}
	if len(errs) > 0 {
		return fmt.Errorf("localize %s: %s", in.Repo, joinErrs(errs))
	}
	return nil
}

// joinErrs is the messages of errs on one line.
func joinErrs(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = strings.ReplaceAll(e.Error(), "\n", "; ")
	}
	return strings.Join(msgs, "; ")
}
