package search

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/spider"
)

// summaryFake answers summary prompts: "unused" gets a summary about
// checksums (a word in no code of the fixture), "display" only garbage,
// and while down, every call is a 503.
type summaryFake struct {
	mu    sync.Mutex
	down  bool
	asked map[string]int
}

func (f *summaryFake) handle(r llmtest.Request) llmtest.Step {
	id, _, _ := strings.Cut(strings.TrimPrefix(r.Messages[0].Content, "## Function "), "\n")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[id]++
	switch {
	case f.down:
		return llmtest.Unavailable("1")
	case strings.HasSuffix(id, ":unused"):
		return llmtest.Reply(`{"summary": "Computes the checksum of a payload."}`)
	case strings.HasSuffix(id, "display"):
		return llmtest.Garbage()
	}
	return llmtest.Reply(`{"summary": "Does what ` + id + ` says."}`)
}

func TestSummariesJoinDocuments(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	fake := &summaryFake{asked: map[string]int{}, down: true}
	srv := llmtest.NewServer(t)
	srv.SetHandler(fake.handle)
	chat, err := llm.Open("openai+http://" + strings.TrimPrefix(srv.URL, "http://") + "?model=fake-summaries")
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{Bucket: b, Summarizer: &Summarizer{Chat: chat, Concurrency: 1, SaveEvery: 2}}

	// Down: the run stops at the first retryable failure, storing nothing.
	res, err := SummarizeFunctions(ctx, d, repo, info, nil)
	if !llm.IsRetryable(err) || res.Summarized != 0 || res.Functions != 9 {
		t.Fatalf("server down: %+v, %v", res, err)
	}
	fake.mu.Lock()
	fake.down = false
	fake.mu.Unlock()
	var last, total int
	res, err = SummarizeFunctions(ctx, d, repo, info, func(done, all int) { last, total = done, all })
	if err != nil {
		t.Fatal(err)
	}
	if res.Summarized != 8 || res.Failed != 1 || len(res.FailedIDs) != 1 || !strings.HasSuffix(res.FailedIDs[0], "display") || last != 9 || total != 9 {
		t.Fatalf("%+v, progress %d/%d", res, last, total)
	}
	if res.PromptTokens == 0 || res.Model != "fake-summaries" {
		t.Errorf("usage %+v", res)
	}
	// Again: only the function that failed is asked again.
	before := srv.Total()
	res, err = SummarizeFunctions(ctx, d, repo, info, nil)
	if err != nil || res.Stored != 8 || res.Summarized != 0 || srv.Total()-before != 2 {
		t.Fatalf("re-run: %+v, %v, %d calls (want the one failed function, answer and repair)", res, err, srv.Total()-before)
	}

	// The summaries join the documents: "checksum" is only in one.
	if _, err := IndexRepo(ctx, d, repo, info); err != nil {
		t.Fatal(err)
	}
	r, err := localize(ctx, d, repo, "the checksum is wrong", Params{Method: MethodSR, Params: spider.Params{K: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Items) == 0 || !strings.HasSuffix(r.Items[0].ID, ":unused") {
		t.Errorf("items %+v, want the function whose summary names checksums first", r.Items)
	}
	// Without a summarizer the documents are the code alone.
	plain := Deps{Bucket: b}
	_, items, err := functionItems(ctx, plain, repo, info)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if strings.Contains(it.Text, "Summary:") {
			t.Errorf("document with a summary but no summarizer: %q", it.Text)
		}
	}

	// A damaged summaries object: indexing says which and how to fix it;
	// summarizing replaces it.
	if err := b.WriteAll(ctx, repo.SummariesKey("fake-summaries"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := IndexRepo(ctx, d, repo, info); err == nil || !strings.Contains(err.Error(), repo.SummariesKey("fake-summaries")+" is damaged") {
		t.Errorf("damaged summaries: %v", err)
	}
	if _, err := SummarizeFunctions(ctx, d, repo, info, nil); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSummaries(ctx, b, repo, "fake-summaries"); err != nil || len(s) != 8 {
		t.Errorf("rewritten summaries: %d, %v", len(s), err)
	}
	if _, err := SummarizeFunctions(ctx, Deps{Bucket: b}, repo, info, nil); !errors.Is(err, ErrNoSummarizer) {
		t.Errorf("no summarizer: %v", err)
	}
}
