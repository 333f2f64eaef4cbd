package activities

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
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
	a, repo, commit, asked := pyprojSelector(t)
	in := SelectCentersInput{Repo: repo, Commit: commit, Issue: "slugify strips dashes", Centers: []search.CenterRequest{
		{Center: "app/util/strings.py:slugify", Candidates: []string{"app/util/strings.py:normalize"}},
		{Center: "app/models.py:User.save", Candidates: []string{"app/models.py:User.validate"}},
		{Center: "app/views.py:index", Candidates: []string{"app/views.py:detail"}},
	}}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.SelectCenters, in)
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
	n := asked()
	for _, c := range in.Centers {
		want := 1
		if c.Center == "app/models.py:User.save" {
			want = 2
		}
		if n[c.Center] != want {
			t.Errorf("%s asked %d times, want %d", c.Center, n[c.Center], want)
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

// pyprojSelector is an LLM activity struct over the pyproj test graph,
// indexed as acme/pyproj at commit, whose LLM (a fake server) answers every
// candidate, except the first question about a center ending in User.save,
// which gets a 503 with Retry-After 3. asked counts the questions by center.
func pyprojSelector(t *testing.T) (a *LLM, repo schema.RepoName, commit string, asked func() map[string]int) {
	t.Helper()
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
	repo, commit = schema.RepoName("acme/pyproj"), strings.Repeat("ab", 20)
	info, err := graphstore.Write(ctx, b, repo, commit, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t)
	var mu sync.Mutex
	n := map[string]int{}
	fake.SetHandler(func(r llmtest.Request) llmtest.Step {
		p := llmtest.ParseSelectionPrompt(r.Prompt())
		mu.Lock()
		defer mu.Unlock()
		n[p.Center]++
		if strings.HasSuffix(p.Center, "User.save") && n[p.Center] == 1 {
			return llmtest.Unavailable("3")
		}
		return llmtest.IDs(p.Candidates...)
	})
	chat, err := llm.Open("openai+http://" + strings.TrimPrefix(fake.URL, "http://") + "?model=fake")
	if err != nil {
		t.Fatal(err)
	}
	asked = func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(n)
	}
	return &LLM{Deps: search.Deps{Bucket: b, Selector: &llm.LLMSelector{Chat: chat}}}, repo, commit, asked
}

// SelectBatch keeps every issue's settled centers across attempts: the
// retry asks only the center that failed, and an issue whose repository is
// not indexed has its centers failed for good without holding up the rest.
func TestSelectBatchRetriesOnlyUnsettledCenters(t *testing.T) {
	a, repo, commit, asked := pyprojSelector(t)
	in := SelectBatchInput{Issues: []SelectCentersInput{
		{Repo: repo, Commit: commit, Issue: "slugify strips dashes", Centers: []search.CenterRequest{
			{Center: "app/util/strings.py:slugify", Candidates: []string{"app/util/strings.py:normalize"}},
			{Center: "app/models.py:User.save", Candidates: []string{"app/models.py:User.validate"}},
		}},
		{Repo: repo, Commit: commit, Issue: "index page is empty", Centers: []search.CenterRequest{
			{Center: "app/views.py:index", Candidates: []string{"app/views.py:detail"}},
		}},
		{Repo: "acme/none", Commit: commit, Issue: "elsewhere", Centers: []search.CenterRequest{
			{Center: "x.py:f", Candidates: []string{"x.py:g"}},
		}},
	}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.SelectBatch, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeLLMRetryable || app.NonRetryable() || app.NextRetryDelay().Seconds() != 3 {
		t.Fatalf("first attempt: %v, want a retryable %s after the server's Retry-After (3 s)", err, ErrTypeLLMRetryable)
	}
	var fail SelectFailure
	var progress SelectBatchProgress
	if err := app.Details(&fail, &progress); err != nil {
		t.Fatal(err)
	}
	if len(progress.Issues) != 3 {
		t.Fatalf("progress of %d issues, want 3", len(progress.Issues))
	}
	p0, p1, p2 := progress.Issues[0], progress.Issues[1], progress.Issues[2]
	if len(p0.Done) != 1 || len(p0.Failed) != 1 || p0.Failed[0].Center != "app/models.py:User.save" || len(p1.Done) != 1 || len(p1.Failed) != 0 {
		t.Fatalf("progress %+v", progress)
	}
	if len(p2.Done) != 1 || !strings.Contains(p2.Done[0].Error, "not indexed") {
		t.Errorf("issue in a repository not indexed: %+v, want its center settled as failed", p2)
	}

	env.SetHeartbeatDetails(progress)
	v, err := env.ExecuteActivity(a.SelectBatch, in)
	if err != nil {
		t.Fatal(err)
	}
	var out SelectBatchOutput
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	n := asked()
	if n["app/util/strings.py:slugify"] != 1 || n["app/views.py:index"] != 1 || n["app/models.py:User.save"] != 2 {
		t.Errorf("questions by center %v, want User.save twice and the others once", n)
	}
	if len(out.Issues) != 3 {
		t.Fatalf("%d issues answered, want 3", len(out.Issues))
	}
	for i, is := range in.Issues[:2] {
		for j, c := range out.Issues[i].Centers {
			if c.Center != is.Centers[j].Center || c.Error != "" || len(c.IDs) != 1 || c.PromptTokens == 0 {
				t.Errorf("issue %d center %d: %+v", i, j, c)
			}
		}
	}
	if cs := out.Issues[2].Centers; len(cs) != 1 || !strings.Contains(cs[0].Error, "not indexed") {
		t.Errorf("issue in a repository not indexed: %+v", cs)
	}
}
