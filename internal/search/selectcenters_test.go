package search

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
)

// threeCenters are centers of the pyproj fixture, each with one candidate.
var threeCenters = []CenterRequest{
	{Center: "app/util/strings.py:slugify", Candidates: []string{"app/util/strings.py:normalize"}},
	{Center: "app/models.py:User.save", Candidates: []string{"app/models.py:User.validate"}},
	{Center: "app/views.py:index", Candidates: []string{"app/views.py:detail"}},
}

// barrierSelector answers only when all n of its callers are waiting.
type barrierSelector struct {
	mu   sync.Mutex
	n    int
	open chan struct{}
}

func (b *barrierSelector) Select(_ context.Context, _ string, center llm.Candidate, _ []llm.Candidate) (llm.Selection, error) {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return llm.Selection{Model: "barrier", IDs: []string{}}, nil
	case <-time.After(2 * time.Second):
		return llm.Selection{}, errors.New("waited 2 s for the other centers: not asked in parallel")
	}
}

func (b *barrierSelector) Name() string { return "barrier" }

// Without a limit the centers of an issue are asked at once.
func TestSelectCentersAsksInParallel(t *testing.T) {
	b, repo, info := indexFixture(t)
	sel := &barrierSelector{n: len(threeCenters), open: make(chan struct{})}
	s, err := SelectCenters(context.Background(), Deps{Bucket: b, Selector: sel},
		SelectRequest{Repo: repo, Commit: info.Commit, Issue: "bug", Centers: threeCenters})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range s.Outcomes {
		if o.Center != threeCenters[i].Center || o.Err != nil {
			t.Errorf("outcome %d: %+v (%v)", i, o, o.Err)
		}
	}
}

// With a per-issue token limit the centers are asked one after another,
// and once the limit is spent the rest are not asked; outcomes settled by
// an earlier attempt are reused and count toward it.
func TestSelectCentersStopsAtIssueTokenLimit(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	fake := llmtest.NewServer(t)
	var mu sync.Mutex
	var order []string
	fake.SetHandler(llmtest.Selecting(func(p llmtest.SelectionPrompt, _ llmtest.Request) []string {
		mu.Lock()
		order = append(order, p.Center)
		mu.Unlock()
		return p.Candidates[:1]
	}))
	chat, err := llm.Open("openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake")
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{Bucket: b, Selector: &llm.LLMSelector{Chat: chat}}
	req := SelectRequest{Repo: repo, Commit: info.Commit, Issue: "slugify strips dashes", Centers: threeCenters}

	// No limit: every center, its usage reported.
	all, err := SelectCenters(ctx, d, req)
	if err != nil {
		t.Fatal(err)
	}
	first := all.Outcomes[0].Tokens()
	if fake.Total() != 3 || first == 0 {
		t.Fatalf("%d calls, first center %d tokens; want 3 calls with usage", fake.Total(), first)
	}

	// A limit the first center's call spends: the others are skipped.
	order = nil
	req.MaxTokens = first
	s, err := SelectCenters(ctx, d, req)
	if err != nil {
		t.Fatal(err)
	}
	if fake.Total() != 4 || len(order) != 1 || order[0] != threeCenters[0].Center {
		t.Errorf("asked %v (%d calls in all), want only the first center", order, fake.Total())
	}
	var res Result
	selected := s.Usage(&res)
	if len(res.BudgetSkipped) != 2 || res.BudgetSkipped[0] != threeCenters[1].Center || len(selected) != 1 || res.LLMCalls != 1 || res.PromptTokens == 0 {
		t.Errorf("result %+v, selected %v", res, selected)
	}

	// One token more: the second center is asked too, after the first.
	order = nil
	req.MaxTokens = first + 1
	if s, err = SelectCenters(ctx, d, req); err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || order[0] != threeCenters[0].Center || order[1] != threeCenters[1].Center || !s.Outcomes[2].Skipped || s.Outcomes[1].Skipped {
		t.Errorf("asked %v, outcomes %+v; want the first two centers in order and the third skipped", order, s.Outcomes)
	}

	// The first center settled by an earlier attempt: reused, not asked,
	// and its tokens spend the limit.
	order = nil
	req.MaxTokens = first
	req.Done = map[string]CenterOutcome{threeCenters[0].Center: all.Outcomes[0]}
	if s, err = SelectCenters(ctx, d, req); err != nil {
		t.Fatal(err)
	}
	if len(order) != 0 || s.Outcomes[0].Tokens() != first || !s.Outcomes[1].Skipped || !s.Outcomes[2].Skipped {
		t.Errorf("asked %v, outcomes %+v; want nothing asked", order, s.Outcomes)
	}
}

// A selector failure is the center's, not the issue's: the others keep
// their answers.
func TestSelectCentersKeepsFailuresPerCenter(t *testing.T) {
	b, repo, info := indexFixture(t)
	fake := llmtest.NewServer(t)
	fake.SetHandler(llmtest.Selecting(func(p llmtest.SelectionPrompt, _ llmtest.Request) []string { return p.Candidates }))
	fake.EnqueuePath(llmtest.PathOpenAI, llmtest.HTTPStatus(400))
	chat, err := llm.Open("openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake")
	if err != nil {
		t.Fatal(err)
	}
	s, err := SelectCenters(context.Background(), Deps{Bucket: b, Selector: &llm.LLMSelector{Chat: chat}},
		SelectRequest{Repo: repo, Commit: info.Commit, Issue: "bug", Centers: threeCenters, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	selected := s.Usage(&res)
	if s.Outcomes[0].Err == nil || len(res.Failed) != 1 || res.Failed[0] != threeCenters[0].Center || len(selected) != 2 {
		t.Errorf("outcomes %+v, result %+v", s.Outcomes, res)
	}
	if _, err := SelectCenters(context.Background(), Deps{Bucket: b}, SelectRequest{Repo: repo, Commit: strings.Repeat("fe", 20), Issue: "bug", Centers: threeCenters}); !errors.Is(err, ErrNotIndexed) {
		t.Errorf("another commit: %v, want ErrNotIndexed", err)
	}
}
