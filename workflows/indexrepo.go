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
	syncCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         syncRetry,
	})
	var synced schema.SyncResult
	if err := workflow.ExecuteActivity(syncCtx, git.Sync, schema.SyncInput{Repo: in.Repo, MaxBlobSize: in.Options.MaxBlobSize}).Get(ctx, &synced); err != nil {
		return res, err
	}
	res.Head = synced.Head
	res.Empty = synced.Empty
	// Nothing new and the index whole: a scheduled pass over a fleet costs
	// one activity for each such repository.
	if synced.UpToDate && !in.Options.Summaries && workflow.GetVersion(ctx, "skip-up-to-date", workflow.DefaultVersion, 1) >= 1 {
		res.OK, res.UpToDate, res.Rows = true, true, synced.Rows
		return res, nil
	}

	// The clone lives on the host that synced it: scrape there. When that
	// host is gone (no worker took the task within its schedule-to-start
	// timeout), the repository is synced again on the shared queue, which
	// puts a clone on a live host, and the step runs there.
	onCloneHost := func(act, arg, out any) error {
		err := workflow.ExecuteActivity(onHost(ctx, synced.HostQueue, 6*time.Hour), act, arg).Get(ctx, out)
		if !hostGone(err) || workflow.GetVersion(ctx, "host-fallback", workflow.DefaultVersion, 1) < 1 {
			return err
		}
		gone := synced.HostQueue
		var again schema.SyncResult
		if err := workflow.ExecuteActivity(syncCtx, git.Sync, schema.SyncInput{Repo: in.Repo, MaxBlobSize: in.Options.MaxBlobSize}).Get(ctx, &again); err != nil {
			return err
		}
		synced.HostQueue = again.HostQueue // same head or a descendant: the step's input still holds
		workflow.GetLogger(ctx).Warn("clone host gone; synced again on another host", "repo", in.Repo.Name, "gone", gone, "host", again.HostQueue)
		return workflow.ExecuteActivity(onHost(ctx, synced.HostQueue, 6*time.Hour), act, arg).Get(ctx, out)
	}
	var scraped schema.ScrapeResult
	if !synced.Empty {
		err := onCloneHost(git.ScrapeCommits, schema.ScrapeInput{
			Repo: in.Repo.Name, URL: in.Repo.URL, Head: synced.Head, Options: in.Options,
		}, &scraped)
		if err != nil {
			return res, err
		}
	}
	res.NewCommits = scraped.NewCommits
	res.MissingRows = scraped.Missing
	res.Rewritten = scraped.Replace && scraped.ReplaceReason != schema.ReplaceDamaged
	res.Repaired = scraped.Replace && scraped.ReplaceReason == schema.ReplaceDamaged

	// The code graph of the head, on the host with the clone. Histories
	// recorded before this step existed replay without it.
	var graph *schema.GraphInfo
	if v := workflow.GetVersion(ctx, "build-graph", workflow.DefaultVersion, 1); v >= 1 && !synced.Empty {
		var info schema.GraphInfo
		err := onCloneHost(git.BuildGraph, schema.BuildGraphInput{
			Repo: in.Repo.Name, Head: synced.Head, Options: in.Options,
		}, &info)
		if err != nil {
			return res, err
		}
		graph = &info
		res.Warning = info.Warning
		res.MissingFiles = info.MissingFiles
	}

	// Function summaries by the LLM, when asked for, before the documents
	// they join are indexed. Summarizing that fails for good is reported,
	// not fatal: the index is built with the summaries stored until then.
	if in.Options.Summaries && graph != nil {
		llmCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           LLMQueue,
			StartToCloseTimeout: 6 * time.Hour,
			HeartbeatTimeout:    HeartbeatTimeout,
			RetryPolicy:         summarizeRetry,
		})
		var sr schema.SummarizeResult
		if err := workflow.ExecuteActivity(llmCtx, llmActs.Summarize, activities.SummarizeInput{Repo: in.Repo.Name, Graph: *graph}).Get(ctx, &sr); err != nil {
			sr, _ = progressOf(err, func(r schema.SummarizeResult) bool { return r.Calls > 0 })
			sr.Error = unavailable("summaries", err).Error
		}
		res.Summaries = &sr
	}

	// Retrieval indexes (embeddings, vectors, BM25) on the embedding queue,
	// whose concurrency matches the embedding servers.
	var searchInfo *schema.SearchInfo
	v := workflow.GetVersion(ctx, "search-index", workflow.DefaultVersion, 2)
	if v >= 1 && graph != nil {
		embedCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           EmbedQueue,
			StartToCloseTimeout: 2 * time.Hour,
			HeartbeatTimeout:    HeartbeatTimeout,
			RetryPolicy:         embedRetry(in.Options.EmbedRetry),
		})
		sin := schema.IndexSearchInput{Repo: in.Repo.Name, Graph: *graph}
		var si schema.SearchInfo
		if v == 1 {
			if err := workflow.ExecuteActivity(embedCtx, searchActs.IndexSearch, sin).Get(ctx, &si); err != nil {
				return res, err
			}
		} else {
			// Only content the cache lacks is embedded, in batches that are
			// separate activities: a failing batch retries alone.
			var plan activities.PlanEmbedOutput
			if err := workflow.ExecuteActivity(embedCtx, searchActs.PlanEmbed, sin).Get(ctx, &plan); err != nil {
				return res, err
			}
			var futs []workflow.Future
			for _, key := range plan.Batches {
				futs = append(futs, workflow.ExecuteActivity(embedCtx, searchActs.EmbedBatch, activities.EmbedBatchInput{Repo: in.Repo.Name, Key: key}))
			}
			embedded := 0
			for _, f := range futs {
				var n int
				if err := f.Get(ctx, &n); err != nil {
					return res, err
				}
				embedded += n
			}
			if err := workflow.ExecuteActivity(embedCtx, searchActs.FinishIndex, sin).Get(ctx, &si); err != nil {
				return res, err
			}
			si.Embedded += embedded // by the batches; FinishIndex finds them cached
		}
		searchInfo = &si
	}

	pubCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var m schema.Manifest
	err := workflow.ExecuteActivity(pubCtx, store.PublishManifest, activities.PublishInput{
		Repo: in.Repo, Head: synced.Head, Scrape: scraped, Graph: graph, Search: searchInfo, IndexedAt: workflow.Now(ctx),
		HostQueue: synced.HostQueue,
	}).Get(ctx, &m)
	if err != nil {
		return res, err
	}
	res.OK = true
	res.Rows = m.Rows
	return res, nil
}

// hostGone: an activity on a host queue was never taken by a worker within
// its schedule-to-start timeout, so that host no longer polls its queue.
func hostGone(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enums.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// onHost runs activities on the host queue that holds a clone: waiting up to
// 10 min for that host, heartbeating, at most 3 attempts, bad input final.
func onHost(ctx workflow.Context, hostQueue string, startToClose time.Duration) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              hostQueue,
		ScheduleToStartTimeout: 10 * time.Minute,
		StartToCloseTimeout:    startToClose,
		HeartbeatTimeout:       HeartbeatTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	})
}
