package activities

import (
	"errors"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
)

// A rerank on a worker without an LLM, or of ids that are not functions of
// the commit, fails for good (retrying cannot help); a retryable failure
// carries the usage of earlier attempts in its details.
func TestRerankActivityErrors(t *testing.T) {
	a, repo, commit, _ := pyprojSelector(t)
	in := search.RerankRequest{Repo: repo, Commit: commit, Issue: "slugify strips dashes",
		IDs: []string{"app/util/strings.py:slugify", "app/models.py:make_user"}}
	var s testsuite.WorkflowTestSuite
	run := func(a *LLM, in search.RerankRequest, prior *llm.Selection) (llm.Selection, error) {
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		if prior != nil {
			env.SetHeartbeatDetails(*prior)
		}
		v, err := env.ExecuteActivity(a.Rerank, in)
		var sel llm.Selection
		if err == nil {
			err = v.Get(&sel)
		}
		return sel, err
	}
	permanent := func(name string, err error) {
		t.Helper()
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeBadInput {
			t.Errorf("%s: %v, want a non-retryable %s", name, err, ErrTypeBadInput)
		}
	}
	noLLM := &LLM{Deps: a.Deps}
	noLLM.Deps.Reranker = nil
	_, err := run(noLLM, in, nil)
	permanent("no reranker", err)

	sel, ok := a.Deps.Selector.(*llm.LLMSelector)
	if !ok {
		t.Fatalf("selector %T", a.Deps.Selector)
	}
	withLLM := &LLM{Deps: a.Deps}
	withLLM.Deps.Reranker = &llm.LLMReranker{Chat: sel.Chat}
	bad := in
	bad.IDs = []string{"app/util/strings.py:slugify", "app/nope.py:gone"}
	_, err = run(withLLM, bad, nil)
	permanent("unknown id", err)

	// The fake answers a rerank prompt with its candidates in order; earlier
	// attempts' usage (heartbeat details) is added to this one's.
	got, err := run(withLLM, in, &llm.Selection{Calls: 2, PromptTokens: 100, CompletionTokens: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.IDs) != 2 || got.Calls != 3 || got.PromptTokens <= 100 || got.CompletionTokens <= 7 {
		t.Errorf("selection %+v, want both ids and the earlier attempts' usage added", got)
	}
}
