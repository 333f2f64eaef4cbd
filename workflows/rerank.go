package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// rerankAsk is what a query's LLM rerank needs besides its result.
type rerankAsk struct {
	Repo  schema.RepoName
	Issue string
	// N is how many first items to reorder (search.Params.Rerank); 0: none.
	N int
	// MaxIssueTokens is the issue's token limit (0: none): a rerank is not
	// asked once the issue has spent it.
	MaxIssueTokens int
	// Skip, when set, says why no rerank may be asked (the run's token
	// budget is spent, say).
	Skip  string
	Retry RetryOptions
}

// startRerank starts the LLM rerank of out's first items on the LLM queue,
// with the selection retry policy and time for one call. It returns nil
// when nothing is to be asked: no rerank wanted, fewer than two items, or
// a token limit spent (then out.Rerank says which).
func startRerank(ctx workflow.Context, a rerankAsk, out *LocalizeResult) workflow.Future {
	n := min(a.N, len(out.Items))
	if n < 2 {
		return nil
	}
	out.Rerank = &search.RerankInfo{N: n}
	switch {
	case a.Skip != "":
		out.Rerank.Skipped = a.Skip
		return nil
	case a.MaxIssueTokens > 0 && out.PromptTokens+out.CompletionTokens >= a.MaxIssueTokens:
		out.Rerank.Skipped = fmt.Sprintf("the issue's token limit (%d) is spent", a.MaxIssueTokens)
		return nil
	}
	policy, perCall := selectPolicy(a.Retry)
	actx := workflow.WithActivityOptions(ctx, selectOptions(policy, perCall, 1))
	return workflow.ExecuteActivity(actx, llmActs.Rerank, search.RerankRequest{Repo: a.Repo, Commit: out.Commit, Issue: a.Issue,
		IDs: search.RerankIDs(out.Items, n)})
}

// finishRerank applies the rerank f answered to out: the new order of its
// first items and the usage. A rerank that failed for good leaves the
// order as it was, says so in out.Warning and out.Rerank.Error, and still
// counts the calls its attempts paid for.
func finishRerank(ctx workflow.Context, f workflow.Future, out *LocalizeResult) {
	var sel llm.Selection
	err := f.Get(ctx, &sel)
	if err == nil {
		var items []spider.Item
		if items, err = search.ApplyRerank(out.Items, sel.IDs, sel.Model); err == nil {
			out.Items = items
		}
	} else {
		sel, _ = progressOf(err, func(s llm.Selection) bool { return s.Calls > 0 })
	}
	out.Rerank.Add(sel, &out.Result)
	out.CachedCalls += sel.CachedCalls
	if err == nil {
		return
	}
	u := unavailable("rerank", err)
	out.Rerank.Error = u.Error
	who := "the LLM reranker"
	if u.URL != "" {
		who = "LLM reranker at " + u.URL
	}
	tries := ""
	if u.Attempts > 0 {
		tries = fmt.Sprintf(" after %d attempts", u.Attempts)
	}
	msg := fmt.Sprintf("%s failed%s: %s; the first %d items keep their order", who, tries, u.Error, out.Rerank.N)
	out.Warning = strings.TrimPrefix(out.Warning+"; "+msg, "; ")
}
