// Package workers runs locus's Temporal workers: which task queues, which registrations, which limits.
package workers

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/workflows"
)

// Config says what a worker process serves.
type Config struct {
	// DataDir holds the clones (DataDir/clones); required.
	DataDir string
	Bucket  *blob.Bucket
	// Backend reads git objects; default auto (git cat-file if installed, else go-git).
	Backend gitrepo.Backend
	// MaxConcurrentActivities per task queue; default 2×GOMAXPROCS on the index
	// queue and the host queue alike (the SDK default when 0 is much higher).
	MaxConcurrentActivities int
	// HostQueue overrides the per-host task queue name; default HostQueue(DataDir).
	HostQueue string
	// Search are the retrieval backends; zero values get the local defaults
	// (lexical embedder, local vector index, heuristic selector).
	Search search.Deps
	// EmbedConcurrency bounds IndexSearch activities per worker; default 2.
	EmbedConcurrency int
	// LLM selects neighbours: openai://…, anthropic://… (see llm.Open); empty
	// uses the deterministic heuristic. Answers are cached in the store by
	// prompt hash. Ignored when Search.Selector is set.
	LLM string
	// LLMConcurrency bounds selection calls per worker (the rate limit the
	// LLM servers accept), and the issues whose selection runs at once;
	// default 4.
	LLMConcurrency int
	// OnlyHost says no other process's workers serve this Temporal server
	// (the private embedded one a command starts): snapshots are built on
	// this host even where a manifest names another.
	OnlyHost bool
	// Namespace is the client's Temporal namespace, where attempts of dead
	// workers of this host are released at start; default "default".
	Namespace string
}

// HostQueue names the task queue of this host and data directory: clones live
// in the data directory, so two data directories on one host are two "hosts".
func HostQueue(dataDir string) string {
	host, _ := os.Hostname()
	abs, _ := filepath.Abs(dataDir)
	sum := sha1.Sum([]byte(abs))
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, host)
	return "locus-host-" + host + "-" + hex.EncodeToString(sum[:4])
}

// Run starts the workers and blocks until ctx is done.
func Run(ctx context.Context, cfg Config, c client.Client) error {
	ws, err := Start(cfg, c)
	if err != nil {
		return err
	}
	<-ctx.Done()
	for _, w := range ws {
		w.Stop()
	}
	return nil
}

// Start starts the workers and returns them; the caller stops them.
func Start(cfg Config, c client.Client) ([]worker.Worker, error) {
	if cfg.DataDir == "" || cfg.Bucket == nil {
		return nil, fmt.Errorf("worker: data dir and store are required")
	}
	hostQueue := cfg.HostQueue
	if hostQueue == "" {
		hostQueue = HostQueue(cfg.DataDir)
	}
	wopts := func(n int, workflowsToo bool) worker.Options { return workerOptions(n, workflowsToo, hostQueue) }
	conc := cfg.MaxConcurrentActivities
	if conc <= 0 {
		conc = 4
	}
	git := &activities.Git{CloneDir: CloneDir(cfg.DataDir), HostQueue: hostQueue, Bucket: cfg.Bucket, Backend: cfg.Backend,
		Embedder: cfg.Search.Embedder, QueryInstruction: cfg.Search.QueryInstruction}
	if git.Embedder == nil {
		git.Embedder = &embed.Lexical{} // as search.Deps defaults
	}
	store := &activities.Store{Bucket: cfg.Bucket, HostQueue: hostQueue, OnlyHost: cfg.OnlyHost}

	index := worker.New(c, workflows.IndexQueue, wopts(conc, true))
	index.RegisterWorkflow(workflows.IndexFleet)
	index.RegisterWorkflow(workflows.ScheduledIndex)
	index.RegisterWorkflow(workflows.IndexRepo)
	index.RegisterWorkflow(workflows.BuildTriplets)
	index.RegisterWorkflow(workflows.MineRepoTriplets)
	index.RegisterWorkflow(workflows.TrainRanker)
	index.RegisterActivity(git.Sync)
	index.RegisterActivity(store)

	host := worker.New(c, hostQueue, wopts(conc, false))
	host.RegisterActivity(git.ScrapeCommits)
	host.RegisterActivity(git.BuildGraph)
	host.RegisterActivity(git.MineTripletsChunk)
	host.RegisterActivity(git.MineTripletsInstances)
	host.RegisterActivity(git.RankFeatures)

	econc := cfg.EmbedConcurrency
	if econc <= 0 {
		econc = 2
	}
	sd := cfg.Search
	sd.Bucket = cfg.Bucket
	if sd.Selector == nil && cfg.LLM != "" {
		chat, err := llm.Open(cfg.LLM)
		if err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
		cached := llm.WithCache(chat, &search.LLMCache{Bucket: cfg.Bucket})
		sd.Selector = &llm.LLMSelector{Chat: cached}
		if sd.Reranker == nil {
			sd.Reranker = &llm.LLMReranker{Chat: cached}
		}
		if sd.Summarizer == nil {
			sd.Summarizer = &search.Summarizer{Chat: cached, Concurrency: cfg.LLMConcurrency}
		}
	}
	searchActs := &activities.Search{Deps: sd}
	emb := worker.New(c, workflows.EmbedQueue, wopts(econc, false))
	emb.RegisterActivity(searchActs.IndexSearch)
	emb.RegisterActivity(searchActs.PlanEmbed)
	emb.RegisterActivity(searchActs.EmbedBatch)
	emb.RegisterActivity(searchActs.FinishIndex)
	index.RegisterWorkflow(workflows.Localize)
	index.RegisterWorkflow(workflows.LocalizeBacklog)
	index.RegisterActivity(searchActs.Retrieve)
	index.RegisterActivity(searchActs.RetrieveBatch)
	host.RegisterActivity(&activities.Snapshot{Git: git, Deps: sd})

	lconc := cfg.LLMConcurrency
	if lconc <= 0 {
		lconc = 4
	}
	llmw := worker.New(c, workflows.LLMQueue, wopts(lconc, false))
	// One SelectCenters activity asks about all of an issue's centers, and
	// one SelectBatch about those of a backlog batch, so the slots bound
	// issues or batches; the calls themselves (selections and reranks
	// together) are bounded here.
	ld := sd
	if ld.Selector == nil {
		ld.Selector = llm.Heuristic{}
	}
	ld.Selector, ld.Reranker = llm.Limits(ld.Selector, ld.Reranker, lconc)
	llmw.RegisterActivity(&activities.LLM{Deps: ld})

	started := []worker.Worker{}
	for _, w := range []worker.Worker{index, host, emb, llmw} {
		if err := w.Start(); err != nil {
			for _, s := range started {
				s.Stop()
			}
			return nil, fmt.Errorf("start worker: %w", err)
		}
		started = append(started, w)
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		if _, err := releaseDeadAttempts(ctx, c, ns, hostQueue, processAlive); err != nil {
			slog.Warn("could not release the activities of dead workers of this host; they are retried when their heartbeat times out", "error", err)
		}
	}()
	return started, nil
}

// workerOptions are the options of every worker of this process: n
// activities at a time, workflows too or not. Each process is its own
// worker identity, naming this host and data directory (hostQueue), so a
// later process can tell the attempts a dead one held.
func workerOptions(n int, workflowsToo bool, hostQueue string) worker.Options {
	return worker.Options{MaxConcurrentActivityExecutionSize: n, DisableWorkflowWorker: !workflowsToo,
		Identity: Identity(os.Getpid(), hostQueue), MaxHeartbeatThrottleInterval: HeartbeatThrottle,
		// One disk-full error ends the run instead of retrying into a full disk.
		Interceptors: []interceptor.WorkerInterceptor{&activities.DiskFullInterceptor{}, &runLog{}}}
}

// HeartbeatThrottle is the SDK's heartbeat throttle on every worker:
// activities.HeartbeatThrottle, sized there (it is also how long the SDK
// gives one heartbeat to reach the server before it cancels the attempt).
const HeartbeatThrottle = activities.HeartbeatThrottle

// releaseTimeout bounds the start-up pass over open workflows.
const releaseTimeout = time.Minute

// CloneDir is where the workers of data directory dataDir keep their clones.
func CloneDir(dataDir string) string { return filepath.Join(dataDir, "clones") }
