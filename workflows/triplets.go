package workflows

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
)

// Triplets defaults.
const (
	DefaultTripletsWindow   = 4   // repositories mined at once
	DefaultTripletsPerRun   = 200 // repositories per run before continue-as-new
	DefaultTripletsChunkPar = 2   // chunks of one repository mined at once
)

// TripletsOptions tune a BuildTriplets run.
type TripletsOptions struct {
	Mine triplets.Options `json:"mine"`
	// ChunkSize is the commits one activity mines (one part); default
	// triplets.DefaultChunk.
	ChunkSize int `json:"chunk_size,omitempty"`
	// Exclude are the commits benchmarks name (see triplets.Exclusion).
	Exclude []triplets.Named `json:"exclude,omitempty"`
	// InstancesKey, when set, names a stored JSON array of SWE-format
	// benchmark instances: each repository's are mined too, as queries of
	// source "instance" (triplets.InstancesKey).
	InstancesKey string `json:"instances_key,omitempty"`
	// IssuesKey, when set, names stored issue texts (triplets.IssuesKey):
	// a commit referencing one gets its text as the query.
	IssuesKey string `json:"issues_key,omitempty"`
	// Window is the repositories mined at once; default 4.
	Window int `json:"window,omitempty"`
	// ContinueAsNewAfter is the repositories one run starts before it
	// continues as new; default 200.
	ContinueAsNewAfter int `json:"continue_as_new_after,omitempty"`
	// HostWait is how long a chunk waits for the host that holds the
	// repository's clone before that host counts as gone and the
	// repository is cloned again on a live host (schema.IndexOptions.HostWait);
	// 0: DefaultHostWait.
	HostWait time.Duration `json:"host_wait,omitempty"`
}

// BuildTripletsInput is the BuildTriplets workflow's argument; Next,
// ResultKeys and StartedAt carry a run across continue-as-new.
type BuildTripletsInput struct {
	Run        string            `json:"run"`
	Repos      []schema.RepoName `json:"repos"`
	Options    TripletsOptions   `json:"options"`
	Next       int               `json:"next,omitempty"`
	ResultKeys []string          `json:"result_keys,omitempty"`
	StartedAt  time.Time         `json:"started_at,omitempty"`
	// Done, Failed, Records and Commits count the repositories of earlier runs.
	Done    int `json:"done,omitempty"`
	Failed  int `json:"failed,omitempty"`
	Records int `json:"records,omitempty"`
	Commits int `json:"commits,omitempty"`
}

// TripletsRepoInput is MineRepoTriplets's argument.
type TripletsRepoInput struct {
	Run     string          `json:"run"`
	Repo    schema.RepoName `json:"repo"`
	Options TripletsOptions `json:"options"`
}

// TripletsResult is what BuildTriplets returns: totals and where each
// run's per-repository results are (schema.TripletsResultsKey).
type TripletsResult struct {
	Run        string   `json:"run"`
	Repos      int      `json:"repos"`
	Done       int      `json:"done"`
	Failed     int      `json:"failed"`
	Records    int      `json:"records"`
	Commits    int      `json:"commits"`
	ResultKeys []string `json:"result_keys"`
}

// TripletsProgress is what the progress query of BuildTriplets answers.
type TripletsProgress struct {
	Repos   int       `json:"repos"`
	Done    int       `json:"done"`
	Failed  int       `json:"failed"`
	Running int       `json:"running"`
	Records int       `json:"records"`
	Commits int       `json:"commits"` // mined so far, in finished repositories
	Started time.Time `json:"started"`
}

// RepoTripletsProgress is what the progress query of MineRepoTriplets
// answers once its history is planned: chunks planned and done, commits.
type RepoTripletsProgress struct {
	Chunks  int `json:"chunks"`
	Done    int `json:"done"`
	Commits int `json:"commits"`
}

// TripletsChildID is the workflow id of one repository's mining in a run.
func TripletsChildID(run string, repo schema.RepoName) string { return run + "/" + string(repo) }

// BuildTriplets mines training triplets from every repository of the run
// with a sliding window of MineRepoTriplets children, storing each run's
// per-repository results and continuing as new after ContinueAsNewAfter
// repositories. A repository that fails is recorded; it never fails the run.
func BuildTriplets(ctx workflow.Context, in BuildTripletsInput) (TripletsResult, error) {
	if err := checkInput(ctx, func() error { return validateTripletsInput(in) }); err != nil {
		return TripletsResult{}, err
	}
	window := cmpOr(in.Options.Window, DefaultTripletsWindow)
	perRun := cmpOr(in.Options.ContinueAsNewAfter, DefaultTripletsPerRun)
	if in.StartedAt.IsZero() {
		in.StartedAt = workflow.Now(ctx)
	}
	// The heartbeat timeout retries an attempt lost with its worker (kill
	// -9) on another after 30 s, rather than after the start-to-close.
	actCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10},
	})
	end := min(in.Next+perRun, len(in.Repos))
	var results []activities.TripletsRepoResult
	running, next := 0, in.Next
	err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (TripletsProgress, error) {
		p := TripletsProgress{Repos: len(in.Repos), Done: in.Done, Failed: in.Failed, Running: running, Records: in.Records, Commits: in.Commits, Started: in.StartedAt}
		for _, r := range results {
			if r.Error != "" {
				p.Failed++
			} else {
				p.Done++
			}
			p.Records += r.Records
			p.Commits += r.Commits
		}
		return p, nil
	})
	if err != nil {
		return TripletsResult{}, err
	}
	childCtx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{TaskQueue: IndexQueue})
	sel := workflow.NewSelector(ctx)
	for next < end || running > 0 {
		for running < window && next < end {
			repo := in.Repos[next]
			next++
			running++
			f := workflow.ExecuteChildWorkflow(workflow.WithWorkflowID(childCtx, TripletsChildID(in.Run, repo)), MineRepoTriplets,
				TripletsRepoInput{Run: in.Run, Repo: repo, Options: in.Options})
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				var r activities.TripletsRepoResult
				if err := f.Get(ctx, &r); err != nil {
					r = activities.TripletsRepoResult{Repo: repo, Error: errorText(err)}
				}
				results = append(results, r)
			})
		}
		sel.Select(ctx)
	}
	if len(results) > 0 {
		var key string
		err := workflow.ExecuteActivity(actCtx, store.WriteTripletsResults, activities.TripletsResultsInput{
			Run: in.Run, Seq: len(in.ResultKeys), Results: results}).Get(ctx, &key)
		if err != nil {
			return TripletsResult{}, err
		}
		in.ResultKeys = append(in.ResultKeys, key)
		for _, r := range results {
			if r.Error != "" {
				in.Failed++
			} else {
				in.Done++
			}
			in.Records += r.Records
			in.Commits += r.Commits
		}
		results = nil
	}
	if next < len(in.Repos) {
		in.Next = next
		return TripletsResult{}, workflow.NewContinueAsNewError(ctx, BuildTriplets, in)
	}
	return TripletsResult{Run: in.Run, Repos: len(in.Repos), Done: in.Done, Failed: in.Failed, Records: in.Records,
		Commits: in.Commits, ResultKeys: in.ResultKeys}, nil
}

// MineRepoTriplets mines one repository: it plans the chunks of its
// indexed history, then mines them on the host with the clone, two at a
// time, each chunk one activity that stores one part. A chunk that fails
// for good fails the repository (its parts so far stay, named in the
// error's run); completed chunks are never mined again within the run.
func MineRepoTriplets(ctx workflow.Context, in TripletsRepoInput) (activities.TripletsRepoResult, error) {
	res := activities.TripletsRepoResult{Repo: in.Repo}
	actCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           IndexQueue,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrTypeBadInput}},
	})
	var plan activities.TripletsPlan
	if err := workflow.ExecuteActivity(actCtx, store.PlanTriplets, activities.TripletsPlanInput{Repo: in.Repo, ChunkSize: in.Options.ChunkSize}).Get(ctx, &plan); err != nil {
		return res, err
	}
	res.Head = plan.Head
	host := plan.HostQueue
	hostCtx := onHost(ctx, host, in.Options.HostWait, 2*time.Hour)
	chunks := make([]*triplets.ChunkResult, plan.Chunks)
	done := 0
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RepoTripletsProgress, error) {
		return RepoTripletsProgress{Chunks: plan.Chunks, Done: done, Commits: plan.Commits}, nil
	}); err != nil {
		return res, err
	}
	var failed error
	// Chunks whose host was gone (moveFrom) are mined again on a live
	// host: once the chunks in flight have settled, the repository is
	// cloned there, and no chunk starts on the gone host meanwhile.
	var again []int
	moveFrom := ""
	sel := workflow.NewSelector(ctx)
	running, next := 0, 0
	for (next < plan.Chunks || len(again) > 0) && failed == nil || running > 0 {
		if moveFrom != "" && moveFrom == host && running == 0 && failed == nil {
			q, err := moveClone(syncOptions(ctx), schema.RepoSpec{Name: in.Repo, URL: plan.URL, Ref: plan.Ref}, 0, host)
			if err != nil {
				failed = fmt.Errorf("host %s gone, cloning again: %w", host, err)
				break
			}
			host, hostCtx, moveFrom = q, onHost(ctx, q, in.Options.HostWait, 2*time.Hour), ""
		}
		for running < DefaultTripletsChunkPar && (next < plan.Chunks || len(again) > 0) && failed == nil && moveFrom != host {
			var i int
			if len(again) > 0 {
				i, again = again[0], again[1:]
			} else {
				i = next
				next++
			}
			running++
			on := host
			f := workflow.ExecuteActivity(hostCtx, git.MineTripletsChunk, activities.TripletsChunkInput{Run: in.Run, Repo: in.Repo, Chunk: i,
				ChunkSize: in.Options.ChunkSize, Options: in.Options.Mine, Exclude: in.Options.Exclude, IssuesKey: in.Options.IssuesKey})
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				var cr triplets.ChunkResult
				if err := f.Get(ctx, &cr); err != nil {
					// Keep: runs recorded before the fallback failed the chunk.
					if hostGone(err) && plan.URL != "" && workflow.GetVersion(ctx, "triplets-host-fallback", workflow.DefaultVersion, 1) >= 1 {
						again = append(again, i)
						moveFrom = on
						return
					}
					failed = errors.Join(failed, fmt.Errorf("chunk %d: %w", i, err))
					return
				}
				chunks[i] = &cr
				done++
			})
		}
		if running == 0 {
			continue // a move is due
		}
		sel.Select(ctx)
	}
	if in.Options.InstancesKey != "" && failed == nil {
		var cr triplets.ChunkResult
		err := workflow.ExecuteActivity(hostCtx, git.MineTripletsInstances, activities.TripletsInstancesInput{Run: in.Run, Repo: in.Repo,
			Key: in.Options.InstancesKey, Options: in.Options.Mine}).Get(ctx, &cr)
		if err != nil {
			failed = fmt.Errorf("instances: %w", err)
		} else {
			// First: the whole-output dedup then keeps an instance (an
			// issue's own text) over a commit record of the same change.
			chunks = append([]*triplets.ChunkResult{&cr}, chunks...)
		}
	}
	for _, c := range chunks {
		if c == nil {
			continue
		}
		res.Parts = append(res.Parts, c.Part)
		res.Records += c.Part.Records
		res.Commits += c.Stats.Commits
		res.Stats = mergeStats(res.Stats, c.Stats)
	}
	if failed != nil {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("mine %s: %v", in.Repo, failed), "TripletsFailed", nil, res)
	}
	return res, nil
}

// mergeStats adds b's counts to a's.
func mergeStats(a, b triplets.Stats) triplets.Stats {
	a.Commits += b.Commits
	a.Records += b.Records
	a.Excluded += b.Excluded
	a.Failed += b.Failed
	a.Anchors += b.Anchors
	a.ReadMs += b.ReadMs
	a.AnchorMs += b.AnchorMs
	a.ParentMs += b.ParentMs
	a.RankMs += b.RankMs
	if len(b.Skipped) > 0 && a.Skipped == nil {
		a.Skipped = map[triplets.Skip]int{}
	}
	for _, k := range slices.Sorted(maps.Keys(b.Skipped)) {
		a.Skipped[k] += b.Skipped[k]
	}
	for _, e := range b.FailedExamples {
		if len(a.FailedExamples) < 10 {
			a.FailedExamples = append(a.FailedExamples, e)
		}
	}
	return a
}

// validateTripletsInput checks a BuildTriplets input before anything runs.
func validateTripletsInput(in BuildTripletsInput) error {
	if in.Run == "" {
		return errors.New("triplets: the run has no name")
	}
	if len(in.Repos) == 0 {
		return errors.New("triplets: no repository to mine")
	}
	for _, r := range in.Repos {
		if _, err := schema.ParseRepoName(string(r)); err != nil {
			return fmt.Errorf("triplets: %w", err)
		}
	}
	o := in.Options.Mine
	if in.Options.HostWait < 0 {
		return fmt.Errorf("triplets: host-wait %v: want a positive duration (0: default %v)", in.Options.HostWait, DefaultHostWait)
	}
	if o.Negatives < 0 || o.MinRank < 0 || o.MaxRank < 0 || o.KeepRank < 0 || o.Filter.MaxFunctions < 0 || in.Options.ChunkSize < 0 {
		return errors.New("triplets: counts and ranks must be 0 (default) or more")
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("triplets: %w", err)
	}
	if o.MaxRank > 0 && o.MinRank > o.MaxRank {
		return fmt.Errorf("triplets: negative ranks %d to %d: the first is past the last", o.MinRank, o.MaxRank)
	}
	return nil
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
