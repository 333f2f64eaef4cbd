package workflows

import (
	"errors"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/schema"
)

// Activity method values; the struct receivers are never dereferenced here.
var (
	git        *activities.Git
	store      *activities.Store
	searchActs *activities.Search
)

// syncRetry retries an unreachable remote a few times; permanent failures
// (no such repository, not a repository, bad ref) are non-retryable errors.
var syncRetry = &temporal.RetryPolicy{
	InitialInterval:    2 * time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    time.Minute,
	MaximumAttempts:    4,
}

// summarizeRetry retries function summaries: each attempt resumes after
// the summaries stored by the last, so attempts are cheap to allow.
var summarizeRetry = &temporal.RetryPolicy{
	InitialInterval:        2 * time.Second,
	BackoffCoefficient:     2,
	MaximumInterval:        time.Minute,
	MaximumAttempts:        10,
	NonRetryableErrorTypes: []string{activities.ErrTypeBadInput},
}

// HeartbeatTimeout is the heartbeat timeout of the long activities
// (Sync, ScrapeCommits, BuildGraph, the embedding steps, PublishManifest,
// EnsureSnapshot, Summarize): activities.HeartbeatTimeout, sized there
// against the heartbeat interval and the SDK's throttle. Changing it does
// not change the commands a workflow records, so histories replay
// unchanged.
const HeartbeatTimeout = activities.HeartbeatTimeout

// IndexRepo syncs one repository and scrapes its new commits into the store,
// then publishes the manifest. Every step is idempotent for (repo, commit).
// With in.ReportTo it signals its result, failure included, to that fleet.
func IndexRepo(ctx workflow.Context, in schema.IndexRepoInput) (schema.RepoResult, error) {
	res, err := indexRepo(ctx, in)
	Report(ctx, in, res, err)
	return res, err
}

// Report signals an IndexRepo run's result (err as its error) to the fleet
// in.ReportTo, if any: what every workflow standing in for IndexRepo under
// a fleet must do as it ends.
func Report(ctx workflow.Context, in schema.IndexRepoInput, res schema.RepoResult, err error) {
	if in.ReportTo == "" {
		return
	}
	if err != nil {
		res.OK, res.Error = false, errorText(err)
	}
	// Sent even when this run was cancelled; a fleet that is gone needs no
	// report, so that failure is not this run's.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.SignalExternalWorkflow(dctx, in.ReportTo, "", RepoDoneSignal, res).Get(dctx, nil)
}

func indexRepo(ctx workflow.Context, in schema.IndexRepoInput) (schema.RepoResult, error) {
	res := schema.RepoResult{Repo: in.Repo.Name, URL: in.Repo.URL}
	if _, err := schema.ParseRepoName(string(in.Repo.Name)); err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrTypeBadInput, nil)
	}
	if err := checkInput(ctx, func() error { return validateIndexOptions(in.Options) }); err != nil {
		return res, err
	}
	w := &repoWorkflow{ctx: ctx, in: in, res: res}
	w.syncCtx = syncOptions(ctx)
	return w.Execute()
}

// repoWorkflow is one IndexRepo run: what each step answered, read by the
// steps after it, and the result (res) filled in as they succeed.
type repoWorkflow struct {
	ctx     workflow.Context
	syncCtx workflow.Context // Sync on the shared index queue
	in      schema.IndexRepoInput
	res     schema.RepoResult

	synced  schema.SyncResult
	scraped schema.ScrapeResult
	graph   *schema.GraphInfo  // nil: no graph (empty repository, or a run recorded before BuildGraph)
	search  *schema.SearchInfo // nil: no retrieval indexes
}

// Execute runs the steps in order; the first failure ends the run with the
// result so far. A repository whose head and whole index are unchanged
// stops after Sync.
func (w *repoWorkflow) Execute() (schema.RepoResult, error) {
	if err := w.sync(); err != nil {
		return w.res, err
	}
	if w.upToDate() {
		w.res.OK, w.res.UpToDate, w.res.Rows = true, true, w.synced.Rows
		return w.res, nil
	}
	for _, step := range []func() error{w.scrape, w.buildGraph, w.summarize, w.indexSearch, w.publish} {
		if err := step(); err != nil {
			return w.res, err
		}
	}
	return w.res, nil
}

// sync clones or fetches the repository on some host; later clone-bound
// steps run on that host's queue.
func (w *repoWorkflow) sync() error {
	if err := workflow.ExecuteActivity(w.syncCtx, git.Sync, schema.SyncInput{Repo: w.in.Repo, MaxBlobSize: w.in.Options.MaxBlobSize}).Get(w.ctx, &w.synced); err != nil {
		return err
	}
	w.res.Head = w.synced.Head
	w.res.Empty = w.synced.Empty
	return nil
}

// upToDate: nothing new and the index whole, so a scheduled pass over a
// fleet costs one activity for each such repository.
func (w *repoWorkflow) upToDate() bool {
	// Keep: with workflow and activity workers of two versions during a
	// rolling upgrade, an older workflow may have gone on past an
	// up-to-date Sync.
	return w.synced.UpToDate && !w.in.Options.Summaries && workflow.GetVersion(w.ctx, "skip-up-to-date", workflow.DefaultVersion, 1) >= 1
}

// onCloneHost runs act on the host that holds the clone. When that host is
// gone (no worker took the task within its schedule-to-start timeout), the
// repository is synced again on the shared queue, which puts a clone on a
// live host, and the step runs there.
func (w *repoWorkflow) onCloneHost(act, arg, out any) error {
	err := workflow.ExecuteActivity(onHost(w.ctx, w.synced.HostQueue, w.in.Options.HostWait, 6*time.Hour), act, arg).Get(w.ctx, out)
	// Keep: the code before the fallback failed the run at the timeout, so
	// only closed runs took that path, but a reset or query replays them.
	if !hostGone(err) || workflow.GetVersion(w.ctx, "host-fallback", workflow.DefaultVersion, 1) < 1 {
		return err
	}
	host, err := moveClone(w.syncCtx, w.in.Repo, w.in.Options.MaxBlobSize, w.synced.HostQueue)
	if err != nil {
		return err
	}
	w.synced.HostQueue = host // same head or a descendant: the step's input still holds
	return workflow.ExecuteActivity(onHost(w.ctx, w.synced.HostQueue, w.in.Options.HostWait, 6*time.Hour), act, arg).Get(w.ctx, out)
}

// moveClone syncs repo again with syncCtx's options (the shared index
// queue), which clones it on a live host, after the host gone took no
// task of it (hostGone), and returns the new host's queue.
func moveClone(syncCtx workflow.Context, repo schema.RepoSpec, maxBlob int64, gone string) (string, error) {
	var again schema.SyncResult
	if err := workflow.ExecuteActivity(syncCtx, git.Sync, schema.SyncInput{Repo: repo, MaxBlobSize: maxBlob}).Get(syncCtx, &again); err != nil {
		return "", err
	}
	workflow.GetLogger(syncCtx).Warn("clone host gone; synced again on another host", "repo", repo.Name, "gone", gone, "host", again.HostQueue)
	return again.HostQueue, nil
}

// syncOptions are Sync's activity options: the shared index queue, where
// any live host takes it.
func syncOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         syncRetry,
	})
}

// scrape stores the commits new since the last run, on the clone's host.
func (w *repoWorkflow) scrape() error {
	if !w.synced.Empty {
		err := w.onCloneHost(git.ScrapeCommits, schema.ScrapeInput{
			Repo: w.in.Repo.Name, URL: w.in.Repo.URL, Head: w.synced.Head, Options: w.in.Options,
		}, &w.scraped)
		if err != nil {
			return err
		}
	}
	w.res.NewCommits = w.scraped.NewCommits
	w.res.MissingRows = w.scraped.Missing
	w.res.Rewritten = w.scraped.Replace && w.scraped.ReplaceReason != schema.ReplaceDamaged
	w.res.Repaired = w.scraped.Replace && w.scraped.ReplaceReason == schema.ReplaceDamaged
	return nil
}

// buildGraph builds the code graph of the head, on the clone's host.
func (w *repoWorkflow) buildGraph() error {
	// Keep: an IndexRepo started before BuildGraph may still be in flight
	// under a draining fleet on a user's server, whose state survives an
	// upgrade; it replays without the step.
	if v := workflow.GetVersion(w.ctx, "build-graph", workflow.DefaultVersion, 1); v < 1 || w.synced.Empty {
		return nil
	}
	var info schema.GraphInfo
	err := w.onCloneHost(git.BuildGraph, schema.BuildGraphInput{
		Repo: w.in.Repo.Name, Head: w.synced.Head, Options: w.in.Options,
	}, &info)
	if err != nil {
		return err
	}
	w.graph = &info
	w.res.Warning = info.Warning
	w.res.MissingFiles = info.MissingFiles
	return nil
}

// summarize has the LLM summarize functions, when asked for, before the
// documents they join are indexed. Summarizing that fails for good is
// reported, not fatal: the index is built with the summaries stored until
// then.
func (w *repoWorkflow) summarize() error {
	if !w.in.Options.Summaries || w.graph == nil {
		return nil
	}
	llmCtx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		TaskQueue:           LLMQueue,
		StartToCloseTimeout: 6 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         summarizeRetry,
	})
	var sr schema.SummarizeResult
	if err := workflow.ExecuteActivity(llmCtx, llmActs.Summarize, activities.SummarizeInput{Repo: w.in.Repo.Name, Graph: *w.graph}).Get(w.ctx, &sr); err != nil {
		sr, _ = progressOf(err, func(r schema.SummarizeResult) bool { return r.Calls > 0 })
		sr.Error = unavailable("summaries", err).Error
	}
	w.res.Summaries = &sr
	return nil
}

// indexSearch builds the retrieval indexes (embeddings, vectors, BM25) on
// the embedding queue, whose concurrency matches the embedding servers.
func (w *repoWorkflow) indexSearch() error {
	// Keep: IndexRepo runs started before the step (version 0) or before
	// batched embedding (1) may still be in flight (see build-graph).
	v := workflow.GetVersion(w.ctx, "search-index", workflow.DefaultVersion, 2)
	if v < 1 || w.graph == nil {
		return nil
	}
	embedCtx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		TaskQueue:           EmbedQueue,
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         embedRetry(w.in.Options.EmbedRetry),
	})
	sin := schema.IndexSearchInput{Repo: w.in.Repo.Name, Graph: *w.graph}
	var si schema.SearchInfo
	if v == 1 {
		if err := workflow.ExecuteActivity(embedCtx, searchActs.IndexSearch, sin).Get(w.ctx, &si); err != nil {
			return err
		}
	} else if err := w.embedInBatches(embedCtx, sin, &si); err != nil {
		return err
	}
	w.search = &si
	return nil
}

// embedInBatches embeds only content the cache lacks, in batches that are
// separate activities (a failing batch retries alone), then finishes the
// index.
func (w *repoWorkflow) embedInBatches(embedCtx workflow.Context, sin schema.IndexSearchInput, si *schema.SearchInfo) error {
	var plan activities.PlanEmbedOutput
	if err := workflow.ExecuteActivity(embedCtx, searchActs.PlanEmbed, sin).Get(w.ctx, &plan); err != nil {
		return err
	}
	var futs []workflow.Future
	for _, key := range plan.Batches {
		futs = append(futs, workflow.ExecuteActivity(embedCtx, searchActs.EmbedBatch, activities.EmbedBatchInput{Repo: w.in.Repo.Name, Key: key}))
	}
	embedded := 0
	for _, f := range futs {
		var n int
		if err := f.Get(w.ctx, &n); err != nil {
			return err
		}
		embedded += n
	}
	if err := workflow.ExecuteActivity(embedCtx, searchActs.FinishIndex, sin).Get(w.ctx, si); err != nil {
		return err
	}
	si.Embedded += embedded // by the batches; FinishIndex finds them cached
	return nil
}

// publish writes the manifest, last: what it names is what is indexed.
func (w *repoWorkflow) publish() error {
	pubCtx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var m schema.Manifest
	err := workflow.ExecuteActivity(pubCtx, store.PublishManifest, activities.PublishInput{
		Repo: w.in.Repo, Head: w.synced.Head, Scrape: w.scraped, Graph: w.graph, Search: w.search, IndexedAt: workflow.Now(w.ctx),
		HostQueue: w.synced.HostQueue,
	}).Get(w.ctx, &m)
	if err != nil {
		return err
	}
	w.res.OK = true
	w.res.Rows = m.Rows
	return nil
}

// hostGone: an activity on a host queue was never taken by a worker within
// its schedule-to-start timeout, so that host no longer polls its queue.
func hostGone(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enums.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// DefaultHostWait is how long a step waits for the host that holds its
// clone before that host counts as gone (IndexOptions.HostWait).
const DefaultHostWait = 10 * time.Minute

// onHost runs activities on the host queue that holds a clone: waiting up to
// wait (0: DefaultHostWait) for that host, heartbeating, at most 3 attempts,
// bad input final. Changing wait changes no command a workflow records, so
// histories replay unchanged.
func onHost(ctx workflow.Context, hostQueue string, wait, startToClose time.Duration) workflow.Context {
	if wait <= 0 {
		wait = DefaultHostWait
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              hostQueue,
		ScheduleToStartTimeout: wait,
		StartToCloseTimeout:    startToClose,
		HeartbeatTimeout:       HeartbeatTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	})
}
