package workflows

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

const (
	testHead      = "0123456789abcdef0123456789abcdef01234567"
	testHostQueue = "locus-host-test-0000"
)

// newRepoEnv is a test environment with every activity IndexRepo calls registered,
// so mocks are checked against the real signatures.
func newRepoEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newTestSuite(t).NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Git{})
	env.RegisterActivity(&activities.Store{})
	env.RegisterActivity(&activities.Search{})
	return env
}

// newTestSuite is a suite whose environments log warnings and errors to t.Log
// (the SDK's default logs every timer and activity to stdout).
func newTestSuite(t *testing.T) *testsuite.WorkflowTestSuite {
	s := new(testsuite.WorkflowTestSuite)
	s.SetLogger(testLogger(t))
	return s
}

func testLogger(t *testing.T) sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var acme = schema.RepoSpec{URL: "https://example.com/acme/widget.git", Name: "acme/widget"}

// publishEcho returns a manifest built from what it was asked to publish.
func publishEcho(t *testing.T, got *activities.PublishInput) func(context.Context, activities.PublishInput) (schema.Manifest, error) {
	return func(ctx context.Context, in activities.PublishInput) (schema.Manifest, error) {
		if tq := activity.GetInfo(ctx).TaskQueue; tq != IndexQueue {
			t.Errorf("PublishManifest ran on task queue %q, want %q", tq, IndexQueue)
		}
		*got = in
		return schema.Manifest{Repo: in.Repo.Name, Head: in.Head, Commits: in.Scrape.NewCommits, Rows: in.Scrape.Rows}, nil
	}
}

func TestIndexRepoScrapesOnSyncHostQueue(t *testing.T) {
	env := newRepoEnv(t)
	opts := schema.IndexOptions{MaxDiffBytes: 1024, CommitsPerPart: 2}
	scraped := schema.ScrapeResult{Head: testHead, NewCommits: 3, Rows: 7,
		Parts: []schema.Part{{Key: "repos/acme/widget/commits/part-a-b.parquet", Commits: 3, Rows: 7}}, FileIDs: "ids"}

	env.OnActivity(git.Sync, mock.Anything, schema.SyncInput{Repo: acme}).Return(
		func(ctx context.Context, in schema.SyncInput) (schema.SyncResult, error) {
			if tq := activity.GetInfo(ctx).TaskQueue; tq != IndexQueue {
				t.Errorf("Sync ran on task queue %q, want %q", tq, IndexQueue)
			}
			return schema.SyncResult{Repo: in.Repo.Name, HostQueue: testHostQueue, Head: testHead}, nil
		}).Once()
	var scrapeQueue string
	env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.ScrapeInput) (schema.ScrapeResult, error) {
			scrapeQueue = activity.GetInfo(ctx).TaskQueue
			want := schema.ScrapeInput{Repo: acme.Name, URL: acme.URL, Head: testHead, Options: opts}
			if in != want {
				t.Errorf("ScrapeCommits input = %+v, want %+v", in, want)
			}
			return scraped, nil
		}).Once()
	var graphQueue string
	graph := schema.GraphInfo{Commit: testHead, NodesKey: "n", EdgesKey: "e", Nodes: 9, Edges: 8}
	env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.BuildGraphInput) (schema.GraphInfo, error) {
			graphQueue = activity.GetInfo(ctx).TaskQueue
			if want := (schema.BuildGraphInput{Repo: acme.Name, Head: testHead, Options: opts}); in != want {
				t.Errorf("BuildGraph input = %+v, want %+v", in, want)
			}
			return graph, nil
		}).Once()
	var searchQueue string
	searched := schema.SearchInfo{Commit: testHead, Model: "lexical-hash-512", Functions: 4, SparseKey: "s"}
	env.OnActivity(searchActs.PlanEmbed, mock.Anything, mock.Anything).Return(
		activities.PlanEmbedOutput{Batches: []string{"b0", "b1"}}, nil).Once()
	var batches []string
	var batchesMu sync.Mutex // the two batches run at once
	env.OnActivity(searchActs.EmbedBatch, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.EmbedBatchInput) (int, error) {
			if q := activity.GetInfo(ctx).TaskQueue; q != EmbedQueue {
				t.Errorf("EmbedBatch on %q", q)
			}
			batchesMu.Lock()
			batches = append(batches, in.Key)
			batchesMu.Unlock()
			return 1, nil
		}).Twice()
	env.OnActivity(searchActs.FinishIndex, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.IndexSearchInput) (schema.SearchInfo, error) {
			searchQueue = activity.GetInfo(ctx).TaskQueue
			if in.Repo != acme.Name || in.Graph.Commit != testHead {
				t.Errorf("FinishIndex input = %+v", in)
			}
			batchesMu.Lock()
			if len(batches) != 2 {
				t.Errorf("FinishIndex before both batches were embedded: %v", batches)
			}
			batchesMu.Unlock()
			return searched, nil
		}).Once()
	var published activities.PublishInput
	env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published)).Once()

	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme, Options: opts})

	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	env.AssertExpectations(t)
	if scrapeQueue != testHostQueue || graphQueue != testHostQueue {
		t.Errorf("ScrapeCommits ran on %q and BuildGraph on %q, want the host queue from Sync %q", scrapeQueue, graphQueue, testHostQueue)
	}
	if searchQueue != EmbedQueue {
		t.Errorf("FinishIndex ran on %q, want %q", searchQueue, EmbedQueue)
	}
	wantSearch := searched
	wantSearch.Embedded += 2 // the batches' counts (1 each) join what FinishIndex embedded
	if published.Search == nil || *published.Search != wantSearch {
		t.Errorf("PublishManifest got search %+v, want %+v", published.Search, wantSearch)
	}
	if published.Graph == nil || !reflect.DeepEqual(*published.Graph, graph) {
		t.Errorf("PublishManifest got graph %+v, want %+v", published.Graph, graph)
	}
	if published.Head != testHead || published.Repo != acme || published.Scrape.NewCommits != 3 ||
		len(published.Scrape.Parts) != 1 || published.Scrape.FileIDs != "ids" || published.IndexedAt.IsZero() ||
		published.HostQueue != testHostQueue {
		t.Errorf("PublishManifest input = %+v", published)
	}
	var res schema.RepoResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := schema.RepoResult{Repo: acme.Name, URL: acme.URL, OK: true, Head: testHead, NewCommits: 3, Rows: 7}
	if res != want {
		t.Errorf("result = %+v, want %+v", res, want)
	}
}

func TestIndexRepoEmptyRepositorySkipsScrape(t *testing.T) {
	env := newRepoEnv(t)
	env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
		schema.SyncResult{Repo: acme.Name, HostQueue: testHostQueue, Empty: true}, nil).Once()
	env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(
		func(context.Context, schema.ScrapeInput) (schema.ScrapeResult, error) {
			t.Error("ScrapeCommits called for an empty repository")
			return schema.ScrapeResult{}, nil
		}).Maybe()
	env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(
		func(context.Context, schema.BuildGraphInput) (schema.GraphInfo, error) {
			t.Error("BuildGraph called for an empty repository")
			return schema.GraphInfo{}, nil
		}).Maybe()
	var published activities.PublishInput
	env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published)).Once()

	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme})

	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	env.AssertExpectations(t)
	if published.Head != "" || published.Scrape.Head != "" || published.Scrape.NewCommits != 0 {
		t.Errorf("PublishManifest input for an empty repository = %+v, want no head and no scrape", published)
	}
	var res schema.RepoResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || !res.Empty || res.Head != "" || res.NewCommits != 0 || res.Rows != 0 {
		t.Errorf("result = %+v, want OK, reported empty, with nothing indexed", res)
	}
}

func TestIndexRepoSyncFailures(t *testing.T) {
	permanent := func() error {
		return temporal.NewNonRetryableApplicationError(`sync acme/widget: repository path "/nope": not a directory`,
			activities.ErrTypeBadInput, nil)
	}
	transient := func() error { return errors.New("fetch https://example.com/acme/widget.git: connection reset") }
	for _, tc := range []struct {
		name         string
		fail         func(attempt int32) error // nil: succeed
		wantAttempts int32
		wantErr      string // "" : the workflow succeeds
		wantType     string
	}{
		{"non-retryable fails at once", func(int32) error { return permanent() }, 1, "/nope", activities.ErrTypeBadInput},
		{"retryable gives up after MaximumAttempts", func(int32) error { return transient() },
			syncRetry.MaximumAttempts, "connection reset", ""},
		{"retryable then succeeds", func(a int32) error {
			if a < 3 {
				return transient()
			}
			return nil
		}, 3, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newRepoEnv(t)
			var attempts atomic.Int32
			env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in schema.SyncInput) (schema.SyncResult, error) {
					attempts.Add(1)
					if err := tc.fail(activity.GetInfo(ctx).Attempt); err != nil {
						return schema.SyncResult{}, err
					}
					return schema.SyncResult{Repo: in.Repo.Name, HostQueue: testHostQueue, Head: testHead}, nil
				})
			env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(
				schema.ScrapeResult{Head: testHead, NewCommits: 1, Rows: 1}, nil).Maybe()
			env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(schema.GraphInfo{Commit: testHead}, nil).Maybe()
			env.OnActivity(searchActs.PlanEmbed, mock.Anything, mock.Anything).Return(activities.PlanEmbedOutput{}, nil).Maybe()
			env.OnActivity(searchActs.FinishIndex, mock.Anything, mock.Anything).Return(schema.SearchInfo{Commit: testHead}, nil).Maybe()
			var published activities.PublishInput
			env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published)).Maybe()

			env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme})

			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			if got := attempts.Load(); got != tc.wantAttempts {
				t.Errorf("Sync attempts = %d, want %d", got, tc.wantAttempts)
			}
			err := env.GetWorkflowError()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("workflow error: %v", err)
				}
				if published.Head != testHead {
					t.Errorf("published head %q, want %q", published.Head, testHead)
				}
				return
			}
			if err == nil {
				t.Fatal("workflow succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("error %v is not an application error", err)
			}
			if tc.wantType != "" && appErr.Type() != tc.wantType {
				t.Errorf("error type %q, want %q", appErr.Type(), tc.wantType)
			}
			if published.Head != "" {
				t.Error("manifest published after a failed sync")
			}
		})
	}
}

func TestIndexRepoScrapeBadInputNotRetried(t *testing.T) {
	env := newRepoEnv(t)
	env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
		schema.SyncResult{Repo: acme.Name, HostQueue: testHostQueue, Head: testHead}, nil)
	var attempts atomic.Int32
	env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(
		func(context.Context, schema.ScrapeInput) (schema.ScrapeResult, error) {
			attempts.Add(1)
			// Type set, retryable flag not: NonRetryableErrorTypes must stop retries.
			return schema.ScrapeResult{}, temporal.NewApplicationError("corrupt object", activities.ErrTypeBadInput)
		})

	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme})

	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "corrupt object") {
		t.Fatalf("workflow error = %v, want the scrape's error", err)
	}
	if got := attempts.Load(); got != 1 {
		t.Errorf("ScrapeCommits attempts = %d, want 1", got)
	}
}

func TestIndexRepoRejectsBadName(t *testing.T) {
	for _, name := range []schema.RepoName{"", "../etc", "a/b/c", ".hidden/x", "acme/wid get", `acme\widget`} {
		t.Run(string(name), func(t *testing.T) {
			env := newRepoEnv(t)
			called := false
			env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { called = true })

			env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: schema.RepoSpec{URL: "https://example.com/x.git", Name: name}})

			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("workflow error = %v, want an application error", err)
			}
			if appErr.Type() != activities.ErrTypeBadInput || !appErr.NonRetryable() {
				t.Errorf("error type %q non-retryable %v, want %q non-retryable", appErr.Type(), appErr.NonRetryable(), activities.ErrTypeBadInput)
			}
			if !strings.Contains(err.Error(), "repository name") {
				t.Errorf("error %q does not name the repository", err)
			}
			if called {
				t.Error("an activity ran for a bad repository name")
			}
		})
	}
}

// TestIndexRepoReportsRewrittenHistory: a replacing scrape (force-push) reaches
// PublishManifest intact and the result says the history was rewritten.
func TestIndexRepoReportsRewrittenHistory(t *testing.T) {
	env := newRepoEnv(t)
	env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
		schema.SyncResult{Repo: acme.Name, HostQueue: testHostQueue, Head: testHead}, nil).Once()
	root := strings.Repeat("1", 40)
	env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(
		schema.ScrapeResult{BaseHead: strings.Repeat("9", 40), Head: testHead, NewCommits: 8, Rows: 11, Root: root, Replace: true}, nil).Once()
	env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(schema.GraphInfo{Commit: testHead}, nil).Once()
	env.OnActivity(searchActs.PlanEmbed, mock.Anything, mock.Anything).Return(activities.PlanEmbedOutput{}, nil).Once()
	env.OnActivity(searchActs.FinishIndex, mock.Anything, mock.Anything).Return(schema.SearchInfo{Commit: testHead}, nil).Once()
	var published activities.PublishInput
	env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published)).Once()

	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme})

	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	if !published.Scrape.Replace || published.Scrape.Root != root {
		t.Errorf("PublishManifest got scrape %+v, want the replacing scrape with its root", published.Scrape)
	}
	var res schema.RepoResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || !res.Rewritten || res.Empty || res.NewCommits != 8 {
		t.Errorf("result = %+v, want OK and rewritten with 8 commits", res)
	}
}

// TestIndexRepoFallsBackWhenTheHostIsGone: the clone's host takes no task
// within the schedule-to-start timeout; the repository is synced again on
// the shared queue and the steps run on the new host.
func TestIndexRepoFallsBackWhenTheHostIsGone(t *testing.T) {
	env := newRepoEnv(t)
	hosts := []string{"host-gone", "host-live"}
	syncs := 0
	env.OnActivity(git.Sync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.SyncInput) (schema.SyncResult, error) {
			if tq := activity.GetInfo(ctx).TaskQueue; tq != IndexQueue {
				t.Errorf("Sync ran on task queue %q, want %q", tq, IndexQueue)
			}
			syncs++
			return schema.SyncResult{Repo: in.Repo.Name, HostQueue: hosts[min(syncs, 2)-1], Head: testHead}, nil
		}).Twice()
	var queues []string
	env.OnActivity(git.ScrapeCommits, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.ScrapeInput) (schema.ScrapeResult, error) {
			q := activity.GetInfo(ctx).TaskQueue
			queues = append(queues, "scrape@"+q)
			if q == "host-gone" {
				return schema.ScrapeResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			return schema.ScrapeResult{Head: testHead, NewCommits: 1}, nil
		}).Twice()
	env.OnActivity(git.BuildGraph, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in schema.BuildGraphInput) (schema.GraphInfo, error) {
			queues = append(queues, "graph@"+activity.GetInfo(ctx).TaskQueue)
			return schema.GraphInfo{Commit: testHead}, nil
		}).Once()
	env.OnActivity(searchActs.PlanEmbed, mock.Anything, mock.Anything).Return(activities.PlanEmbedOutput{}, nil)
	env.OnActivity(searchActs.FinishIndex, mock.Anything, mock.Anything).Return(schema.SearchInfo{Commit: testHead}, nil)
	var published activities.PublishInput
	env.OnActivity(store.PublishManifest, mock.Anything, mock.Anything).Return(publishEcho(t, &published)).Once()

	env.ExecuteWorkflow(IndexRepo, schema.IndexRepoInput{Repo: acme})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	if want := []string{"scrape@host-gone", "scrape@host-live", "graph@host-live"}; !slices.Equal(queues, want) {
		t.Errorf("steps ran %v, want %v", queues, want)
	}
	if published.HostQueue != "host-live" {
		t.Errorf("published host %q, want the live one", published.HostQueue)
	}
	env.AssertExpectations(t)
}
