package activities

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
)

// A worker killed after an LLM step made its calls, before it reported,
// loses that attempt's result; the retry on another worker (same workflow
// run and activity id, no heartbeat details) finds the answers in the
// decision cache that the workers share through the store. It must report
// what the lost attempt paid for, once: the tokens an attempt that never
// died would report (none lost from the run's budget and cost), with no
// question asked twice and nothing counted as a free cache hit. Both LLM
// steps of a backlog: one issue (SelectCenters) and a batch (SelectBatch).
func TestLostAttemptCountsItsTokensOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(a *LLM, env *testsuite.TestActivityEnvironment, in SelectCentersInput) ([]CenterResult, error)
	}{
		{"SelectCenters", func(a *LLM, env *testsuite.TestActivityEnvironment, in SelectCentersInput) ([]CenterResult, error) {
			v, err := env.ExecuteActivity(a.SelectCenters, in)
			if err != nil {
				return nil, err
			}
			var out SelectCentersOutput
			err = v.Get(&out)
			return out.Centers, err
		}},
		{"SelectBatch", func(a *LLM, env *testsuite.TestActivityEnvironment, in SelectCentersInput) ([]CenterResult, error) {
			v, err := env.ExecuteActivity(a.SelectBatch, SelectBatchInput{Issues: []SelectCentersInput{in}})
			if err != nil {
				return nil, err
			}
			var out SelectBatchOutput
			if err := v.Get(&out); err != nil {
				return nil, err
			}
			return out.Issues[0].Centers, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, repo, commit, asked := pyprojSelector(t)
			sel := a.Deps.Selector.(*llm.LLMSelector)
			sel.Chat = llm.WithCache(sel.Chat, &search.LLMCache{Bucket: a.Deps.Bucket}) // as workers.Run wires it
			in := SelectCentersInput{Repo: repo, Commit: commit, Issue: "slugify strips dashes", Centers: []search.CenterRequest{
				{Center: "app/util/strings.py:slugify", Candidates: []string{"app/util/strings.py:normalize"}},
				{Center: "app/views.py:index", Candidates: []string{"app/views.py:detail"}},
			}}
			attempt := func() []CenterResult {
				var s testsuite.WorkflowTestSuite
				env := s.NewTestActivityEnvironment() // a fresh worker: no heartbeat details
				env.RegisterActivity(a)
				centers, err := tc.run(a, env, in)
				if err != nil {
					t.Fatal(err)
				}
				return centers
			}
			lost := attempt() // its worker dies before the result reaches the server
			retry := attempt()
			lostTokens, retryTokens := 0, 0
			for i := range retry {
				lostTokens += lost[i].PromptTokens + lost[i].CompletionTokens
				retryTokens += retry[i].PromptTokens + retry[i].CompletionTokens
				if retry[i].CachedCalls != 0 || retry[i].Calls != lost[i].Calls {
					t.Errorf("%s: retry reports %d calls, %d cached; the lost attempt made %d, none cached",
						retry[i].Center, retry[i].Calls, retry[i].CachedCalls, lost[i].Calls)
				}
			}
			if lostTokens == 0 || retryTokens != lostTokens {
				t.Errorf("the retry reports %d tokens, want the %d the lost attempt paid for", retryTokens, lostTokens)
			}
			for c, n := range asked() {
				if n != 1 {
					t.Errorf("%s asked %d times, want once", c, n)
				}
			}
		})
	}
}
