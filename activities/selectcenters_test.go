package activities

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// A center whose selection fails retryably fails the attempt, with the
// centers already answered as heartbeat details; the next attempt asks only
// the failing center and reports every center's usage once.
func TestSelectCentersRetriesOnlyUnsettledCenters(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	files, err := codegraph.DirFiles(filepath.Join("..", "internal", "codegraph", "testdata", "graph", "pyproj"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := codegraph.Build(ctx, files, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo, commit := schema.RepoName("acme/pyproj"), strings.Repeat("ab", 20)
	info, err := codegraph.Write(ctx, b, repo, commit, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
		t.Fatal(err)
	}

	fake := llmtest.NewServer(t)
	var mu sync.Mutex
	asked := map[string]int{}
	fake.SetHandler(func(r llmtest.Request) llmtest.Step {
		p := llmtest.ParseSelectionPrompt(r.Prompt())
		mu.Lock()
		defer mu.Unlock()
		asked[p.Center]++
		if strings.HasSuffix(p.Center, "User.save") && asked[p.Center] == 1 {
			return llmtest.Unavailable("3")
		}
		return llmtest.IDs(p.Candidates...)
	})
	chat, err := llm.Open("openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake")
	if err != nil {
		t.Fatal(err)
	}
	a := &LLM{Deps: search.Deps{Bucket: b, Selector: &llm.LLMSelector{Chat: chat}}}
	in := SelectCentersInput{Repo: repo, Commit: commit, Issue: "slugify strips dashes", Centers: []search.CenterRequest{
		{Center: "app/util/strings.py:slugify", Candidates: []string{"app/util/strings.py:normalize"}},
		{Center: "app/models.py:User.save", Candidates: []string{"app/models.py:User.validate"}},
		{Center: "app/views.py:index", Candidates: []string{"app/views.py:detail"}},
	}}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err = env.ExecuteActivity(a.SelectCenters, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeLLMRetryable || app.NonRetryable() || app.NextRetryDelay().Seconds() != 3 {
		t.Fatalf("first attempt: %v, want a retryable %s after the server's Retry-After (3 s)", err, ErrTypeLLMRetryable)
	}
	var fail SelectFailure
	var progress SelectCentersProgress
	if err := app.Details(&fail, &progress); err != nil {
		t.Fatal(err)
	}
	if fail.URL == "" || fail.Attempt != 1 || len(progress.Done) != 2 || len(progress.Failed) != 1 || progress.Failed[0].Center != "app/models.py:User.save" {
		t.Fatalf("failure %+v, progress %+v", fail, progress)
	}
	firstTokens := 0
	for _, c := range progress.Done {
		firstTokens += c.PromptTokens + c.CompletionTokens
	}

	env.SetHeartbeatDetails(progress)
	v, err := env.ExecuteActivity(a.SelectCenters, in)
	if err != nil {
		t.Fatal(err)
	}
	var out SelectCentersOutput
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range in.Centers {
		want := 1
		if c.Center == "app/models.py:User.save" {
			want = 2
		}
		if asked[c.Center] != want {
			t.Errorf("%s asked %d times, want %d", c.Center, asked[c.Center], want)
		}
	}
	tokens := 0
	for i, c := range out.Centers {
		tokens += c.PromptTokens + c.CompletionTokens
		if c.Center != in.Centers[i].Center || c.Error != "" || len(c.IDs) != 1 {
			t.Errorf("center %d: %+v", i, c)
		}
	}
	if tokens <= firstTokens {
		t.Errorf("%d tokens over all centers, want the first attempt's %d and the retry's", tokens, firstTokens)
	}
}
