package search

import (
	"context"
	"fmt"
	"sync"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// CenterRequest is one center of an expansion and the ids of its candidates.
type CenterRequest struct {
	Center     string   `json:"center"`
	Candidates []string `json:"candidates"`
}

// CentersOf lists the centers of r that have candidates, in rank order:
// the ones neighbour selection asks about.
func CentersOf(r *Retrieval) []CenterRequest {
	if r == nil || r.Expansion == nil {
		return nil
	}
	var out []CenterRequest
	for _, c := range r.Expansion.Centers {
		if len(c.Candidates) == 0 {
			continue
		}
		ids := make([]string, len(c.Candidates))
		for i, cd := range c.Candidates {
			ids[i] = cd.ID
		}
		out = append(out, CenterRequest{Center: c.ID, Candidates: ids})
	}
	return out
}

// SelectRequest is one issue's neighbour selection over its centers.
type SelectRequest struct {
	Repo    schema.RepoName
	Commit  string
	Issue   string
	Centers []CenterRequest
	// MaxTokens is the issue's selector token limit (prompt + completion);
	// 0: none. With a limit the centers are asked one after another in rank
	// order, and once the issue has spent MaxTokens the remaining centers
	// are not asked (Skipped).
	MaxTokens int
	// Concurrency bounds the centers asked at once when there is no limit;
	// 0: all of them.
	Concurrency int
	// Done holds outcomes settled by an earlier attempt, by center: they are
	// reused as they are, never asked again, and their usage counts toward
	// MaxTokens.
	Done map[string]CenterOutcome
}

// CenterOutcome is what selection did for one center.
type CenterOutcome struct {
	Center string `json:"center"`
	// Selection holds the ids on success and the usage in every case
	// (calls that reached the server before a failure cost tokens too).
	Selection llm.Selection `json:"selection"`
	// Skipped: not asked, because the issue's token limit was spent.
	Skipped bool `json:"skipped,omitempty"`
	// Err is why the selection failed; nil on success and when skipped.
	Err error `json:"-"`
}

// Tokens is the prompt and completion tokens the outcome cost.
func (o CenterOutcome) Tokens() int { return o.Selection.PromptTokens + o.Selection.CompletionTokens }

// Selections is the outcome of SelectCenters: one per requested center, in
// the request's order.
type Selections struct {
	Outcomes []CenterOutcome
}

// Usage adds the selections' usage to res, and lists in res.Failed the
// centers whose selection failed and in res.BudgetSkipped those not asked.
// It returns the successful selections by center, for Finish.
func (s Selections) Usage(res *Result) map[string]spider.Selection {
	selected := map[string]spider.Selection{}
	for _, o := range s.Outcomes {
		res.LLMCalls += o.Selection.Calls
		res.PromptTokens += o.Selection.PromptTokens
		res.CompletionTokens += o.Selection.CompletionTokens
		res.SelectLatency += o.Selection.Latency
		switch {
		case o.Skipped:
			res.BudgetSkipped = append(res.BudgetSkipped, o.Center)
		case o.Err != nil:
			res.Failed = append(res.Failed, o.Center)
		default:
			selected[o.Center] = spider.Selection{IDs: o.Selection.IDs, Selector: o.Selection.Model}
		}
	}
	return selected
}

// SelectCenters asks the selector about each center of one issue: all at
// once (up to Concurrency) without a token limit, one after another with
// one, stopping when the limit is spent. The code of every center and
// candidate is read once. A center whose selection fails has its error in
// its outcome; the error returned is for the issue as a whole (the commit is
// neither the index's nor a snapshot's, or the store failed).
func SelectCenters(ctx context.Context, d Deps, req SelectRequest) (Selections, error) {
	d.defaults()
	out := Selections{Outcomes: make([]CenterOutcome, len(req.Centers))}
	var ids []string
	ask := make([]int, 0, len(req.Centers))
	for i, c := range req.Centers {
		if o, ok := req.Done[c.Center]; ok {
			o.Center = c.Center
			out.Outcomes[i] = o
			continue
		}
		out.Outcomes[i].Center = c.Center
		ask = append(ask, i)
		ids = append(ids, c.Center)
		ids = append(ids, c.Candidates...)
	}
	if len(ask) == 0 {
		return out, nil
	}
	code, err := Code(ctx, d, req.Repo, req.Commit, ids)
	if err != nil {
		return out, fmt.Errorf("select neighbours for %s@%s: %w", req.Repo, req.Commit, err)
	}
	one := func(i int) {
		c := req.Centers[i]
		cands := make([]llm.Candidate, len(c.Candidates))
		for j, id := range c.Candidates {
			cands[j] = llm.Candidate{ID: id, Code: code[id]}
		}
		sel, err := d.Selector.Select(ctx, req.Issue, llm.Candidate{ID: c.Center, Code: code[c.Center]}, cands)
		out.Outcomes[i].Selection, out.Outcomes[i].Err = sel, err
	}
	if req.MaxTokens > 0 {
		spent := 0
		for _, o := range out.Outcomes {
			spent += o.Tokens()
		}
		for _, i := range ask {
			if spent >= req.MaxTokens {
				out.Outcomes[i].Skipped = true
				continue
			}
			one(i)
			spent += out.Outcomes[i].Tokens()
		}
		return out, nil
	}
	conc := req.Concurrency
	if conc <= 0 || conc > len(ask) {
		conc = len(ask)
	}
	if conc == 1 {
		for _, i := range ask {
			one(i)
		}
		return out, nil
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for _, i := range ask {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			one(i)
		}()
	}
	wg.Wait()
	return out, nil
}

// SelectCenter asks the selector which candidates of one center to promote.
func SelectCenter(ctx context.Context, d Deps, repo schema.RepoName, commit, issue, center string, candidates []string) (llm.Selection, error) {
	s, err := SelectCenters(ctx, d, SelectRequest{Repo: repo, Commit: commit, Issue: issue,
		Centers: []CenterRequest{{Center: center, Candidates: candidates}}})
	if err != nil {
		return llm.Selection{}, err
	}
	o := s.Outcomes[0]
	return o.Selection, o.Err
}
