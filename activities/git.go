package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/metrics"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/schema"
)

// Git holds what the git activities need: where clones live, the store, and
// the task queue of this host.
type Git struct {
	// CloneDir holds bare clones, one per repository: <CloneDir>/<owner>/<name>.git.
	CloneDir string
	// HostQueue is this worker's per-host task queue.
	HostQueue string
	Bucket    *blob.Bucket
	// Backend reads git objects; default gitrepo.BackendAuto.
	Backend gitrepo.Backend
	// Embedder, when set, embeds for dense hard negatives when mining
	// triplets, its queries prefixed with QueryInstruction.
	Embedder         embed.Embedder
	QueryInstruction string
}

// clonePath is the clone of repo under CloneDir; the name is validated, so the
// path cannot leave CloneDir.
func (a *Git) clonePath(repo schema.RepoName) (string, error) { return ClonePath(a.CloneDir, repo) }

// ClonePath is where a host keeps the clone of repo under cloneDir.
func ClonePath(cloneDir string, repo schema.RepoName) (string, error) {
	name, err := schema.ParseRepoName(string(repo))
	if err != nil {
		return "", err
	}
	rel := filepath.FromSlash(string(name)) + ".git"
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("repository name %q escapes the clone directory", repo)
	}
	return filepath.Join(cloneDir, rel), nil
}

// Sync clones or fetches the repository on this host and resolves its ref.
func (a *Git) Sync(ctx context.Context, in schema.SyncInput) (schema.SyncResult, error) {
	dir, err := a.clonePath(in.Repo.Name)
	if err != nil {
		return schema.SyncResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	var gitProgress lastLine
	stop := Heartbeat(ctx, gitProgress.load)
	defer stop()
	r, err := gitrepo.Sync(ctx, gitrepo.SyncOptions{Dir: dir, URL: in.Repo.URL, Ref: in.Repo.Ref,
		Progress: &gitProgress, MaxBlobSize: in.MaxBlobSize})
	if err != nil {
		return schema.SyncResult{}, permanent(fmt.Errorf("sync %s: %w", in.Repo.Name, err))
	}
	out := schema.SyncResult{Repo: in.Repo.Name, HostQueue: a.HostQueue, Empty: r.Empty, Shallow: r.Shallow}
	if err := a.setAsideDamaged(ctx, dir, in.Repo, r.Head, r.Empty); err != nil {
		return schema.SyncResult{}, err
	}
	if !r.Empty {
		out.Head = r.Head.String()
		if out.Rows, out.UpToDate, err = a.upToDate(ctx, in.Repo, out.Head); err != nil {
			return schema.SyncResult{}, err
		}
	}
	activity.GetLogger(ctx).Info("synced", "repo", in.Repo.Name, "head", out.Head, "empty", r.Empty, "shallow", r.Shallow)
	return out, nil
}

// setAsideDamaged sets a manifest of repo that cannot be read aside (it is
// kept), so that the repository, now synced, is indexed again from its
// source. The damaged manifest no longer says which repository the name
// holds, so the stored commit parts do: unless one of them starts at a
// commit of the synced history, the name holds another repository, whose
// stored history the new index would replace, and the run is refused.
func (a *Git) setAsideDamaged(ctx context.Context, dir string, repo schema.RepoSpec, head gitrepo.Hash, empty bool) error {
	if _, err := manifest.Read(ctx, a.Bucket, repo.Name); !errors.Is(err, manifest.ErrDamaged) {
		return nil // readable, absent, or an error the steps after this one report
	}
	objs, err := a.Bucket.List(ctx, repo.Name.CommitsPrefix())
	if err != nil {
		return fmt.Errorf("sync %s: list the stored commit parts: %w", repo.Name, err)
	}
	var firsts []gitrepo.Hash
	for _, o := range objs {
		name := strings.TrimSuffix(strings.TrimPrefix(o.Key, repo.Name.CommitsPrefix()+"part-"), ".parquet")
		first, _, _ := strings.Cut(name, "-")
		if h, ok := gitrepo.ParseHash(first); ok {
			firsts = append(firsts, h)
		}
	}
	if len(firsts) > 0 {
		same := false
		for _, h := range firsts {
			if empty {
				break
			}
			if same, err = gitrepo.IsAncestor(ctx, dir, a.Backend, h, head); err != nil {
				return permanent(fmt.Errorf("sync %s: %w", repo.Name, err))
			}
			if same {
				break
			}
		}
		if !same {
			err := fmt.Errorf("sync %s: the manifest %s is damaged and the name holds the history of another repository (its stored commits, such as %s, are not in %s): give this one another name, or delete %s to replace it: %w",
				repo.Name, repo.Name.ManifestKey(), firsts[0], repo.URL, repo.Name.Prefix(), manifest.ErrOtherRepository)
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
	}
	moved, err := manifest.SetAsideDamaged(ctx, a.Bucket, repo.Name)
	if err != nil {
		return fmt.Errorf("sync %s: %w", repo.Name, err)
	}
	if moved {
		logger(ctx).Warn("the stored manifest is damaged: indexing the repository again from its source",
			"repo", repo.Name, "kept", repo.Name.DamagedManifestKey())
	}
	return nil
}

// upToDate reports whether the published index of repo is of head and
// whole, from the same source, with vectors of this worker's model: then an
// index run has nothing to do. A repository given from another URL or path
// goes the whole way, so that its identity is checked and its new source
// recorded. Damage is not an error here: the run goes on and repairs it.
func (a *Git) upToDate(ctx context.Context, repo schema.RepoSpec, head string) (int64, bool, error) {
	m, err := manifest.Read(ctx, a.Bucket, repo.Name)
	if err != nil || m == nil {
		return 0, false, err
	}
	if m.Head != head || m.URL != repo.URL || m.Graph == nil || m.Graph.Commit != head || m.Search == nil || m.Search.Commit != head ||
		(a.Embedder != nil && m.Search.Model != a.Embedder.Name()) {
		return 0, false, nil
	}
	if commits.VerifyParts(ctx, a.Bucket, m, false) != nil || graphstore.Verify(ctx, a.Bucket, *m.Graph) != nil {
		return 0, false, ctx.Err()
	}
	if _, err := sparse.LoadVerified(ctx, a.Bucket, m.Search.SparseKey, m.Search.SparseBytes, m.Search.SparseSHA256); err != nil {
		return 0, false, ctx.Err()
	}
	return m.Rows, true, nil
}

// ScrapeCommits writes the commits new since the published manifest as Parquet parts.
func (a *Git) ScrapeCommits(ctx context.Context, in schema.ScrapeInput) (schema.ScrapeResult, error) {
	dir, err := a.clonePath(in.Repo)
	if err != nil {
		return schema.ScrapeResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	var done, total atomic.Int64
	var checkpoint atomic.Pointer[commits.Checkpoint]
	stop := Heartbeat(ctx, func() any {
		return ScrapeProgress{Done: done.Load(), Total: total.Load(), Checkpoint: checkpoint.Load()}
	})
	defer stop()
	// A retried attempt (worker lost, timed out) continues after the parts
	// the last one wrote, which its heartbeats recorded.
	var resume *commits.Checkpoint
	if activity.IsActivity(ctx) && activity.HasHeartbeatDetails(ctx) {
		var prior ScrapeProgress
		if err := activity.GetHeartbeatDetails(ctx, &prior); err == nil && prior.Checkpoint != nil {
			resume = prior.Checkpoint
			checkpoint.Store(resume)
		}
	}
	prev, err := manifest.Read(ctx, a.Bucket, in.Repo)
	if err != nil {
		return schema.ScrapeResult{}, err
	}
	head, ok := gitrepo.ParseHash(in.Head)
	if !ok {
		return schema.ScrapeResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("scrape %s: head %q is not a commit id", in.Repo, in.Head), ErrTypeBadInput, nil)
	}
	root, replace, err := a.identify(ctx, dir, in, head, prev)
	if err != nil {
		return schema.ScrapeResult{}, err
	}
	scrapeFrom, reason := prev, ""
	if replace {
		scrapeFrom, reason = nil, schema.ReplaceRewritten // the whole history, replacing what is published
	}
	if !replace && prev != nil {
		// The commits table and the file-id map are derived from git: a
		// damaged or missing one is re-scraped, not reported as indexed.
		err := commits.VerifyParts(ctx, a.Bucket, prev, false)
		if err == nil && prev.FileIDs != "" {
			// The scrape continues from the map: check it reads.
			_, err = commits.LoadFileIDs(ctx, a.Bucket, prev.FileIDs)
		}
		if err != nil {
			if ctx.Err() != nil || !(errors.Is(err, blob.ErrCorrupt) || errors.Is(err, blob.ErrNotFound)) {
				return schema.ScrapeResult{}, fmt.Errorf("scrape %s: %w", in.Repo, err)
			}
			logger(ctx).Warn("published commit history is damaged; re-scraping the whole history to replace it", "repo", in.Repo, "error", err)
			replace, scrapeFrom, reason = true, nil, schema.ReplaceDamaged
		}
	}
	res, err := commits.Scrape(ctx, commits.Config{
		Bucket: a.Bucket, Repo: in.Repo, GitDir: dir, Head: in.Head, Prev: scrapeFrom, Options: in.Options,
		Diff:     gitrepo.DiffOptions{Backend: a.Backend},
		Progress: func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) },
		// The heartbeat carries the checkpoint from its next beat on.
		Checkpoint: func(cp commits.Checkpoint) { checkpoint.Store(&cp) },
		Resume:     resume,
		Logger:     slog.Default(),
	})
	if err != nil {
		return schema.ScrapeResult{}, permanent(gitrepo.AfterMissingObject(dir, err))
	}
	metrics.CommitsScraped.Add(float64(res.NewCommits))
	out := schema.ScrapeResult{Head: res.Head, NewCommits: res.NewCommits, Rows: res.Rows, Parts: res.Parts, FileIDs: res.FileIDsKey,
		Root: root, Replace: replace, ReplaceReason: reason, Resumed: res.Resumed, Missing: res.Missing}
	if prev != nil {
		out.BaseHead = prev.Head
	}
	memStart := time.Now()
	mem, err := memory.Build(ctx, memory.BuildConfig{Bucket: a.Bucket, Repo: in.Repo, GitDir: dir, Backend: a.Backend,
		Head: res.Head, Prev: scrapeFrom, Parts: res.Parts})
	switch {
	case err != nil && ctx.Err() != nil:
		return schema.ScrapeResult{}, err
	case err != nil:
		// Memory adds to the index; a repository without it still answers
		// (and says so), and the next index run builds it again.
		logger(ctx).Warn("repository memory not built", "repo", in.Repo, "error", err)
	case mem != nil:
		out.Memory = mem
		logger(ctx).Info("memory built", "repo", in.Repo, "commits", mem.Commits, "bytes", mem.Bytes, "seconds", time.Since(memStart).Seconds())
	}
	return out, nil
}

// ScrapeProgress is what ScrapeCommits heartbeats: commits done of total,
// and the checkpoint after the last whole part, from which a retried attempt
// resumes.
type ScrapeProgress struct {
	Done       int64               `json:"done"`
	Total      int64               `json:"total"`
	Checkpoint *commits.Checkpoint `json:"checkpoint,omitempty"`
}

// identify returns the repository's root commit and whether the published
// history must be replaced because it is no longer an ancestor of head
// (force-push). Indexing another repository into the name is refused.
func (a *Git) identify(ctx context.Context, dir string, in schema.ScrapeInput, head gitrepo.Hash, prev *schema.Manifest) (root string, replace bool, err error) {
	if prev != nil && prev.Head != "" && prev.Head != in.Head {
		anc := false
		if old, ok := gitrepo.ParseHash(prev.Head); ok {
			if anc, err = gitrepo.IsAncestor(ctx, dir, a.Backend, old, head); err != nil {
				return "", false, permanent(fmt.Errorf("scrape %s: %w", in.Repo, err))
			}
		}
		replace = !anc
	}
	if prev != nil && prev.Root != "" && prev.Head != "" && !replace {
		// The new head extends the indexed history: same repository.
		root = prev.Root
	} else {
		h, err := gitrepo.RootCommit(ctx, dir, a.Backend, head)
		if err != nil {
			return "", false, permanent(fmt.Errorf("scrape %s: %w", in.Repo, err))
		}
		root = h.String()
	}
	if err := manifest.CheckIdentity(prev, in.URL, root); err != nil {
		err = fmt.Errorf("scrape %s: %w", in.Repo, err)
		return "", false, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	if replace {
		logger(ctx).Warn("history rewritten (force-push?): the indexed head is not an ancestor of the new head; re-scraping the whole history and replacing the index",
			"repo", in.Repo, "old_head", prev.Head, "new_head", in.Head)
	}
	return root, replace, nil
}

// logger is the activity's logger inside an activity, slog's default outside.
func logger(ctx context.Context) interface {
	Info(string, ...any)
	Warn(string, ...any)
} {
	if activity.IsActivity(ctx) {
		return activity.GetLogger(ctx)
	}
	return slog.Default()
}

// BuildGraph builds the code graph of the synced head and stores its tables;
// PublishManifest makes it visible. A graph already published for the head is
// reused.
func (a *Git) BuildGraph(ctx context.Context, in schema.BuildGraphInput) (schema.GraphInfo, error) {
	dir, err := a.clonePath(in.Repo)
	if err != nil {
		return schema.GraphInfo{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	stop := Heartbeat(ctx, nil)
	defer stop()
	m, err := manifest.Read(ctx, a.Bucket, in.Repo)
	if err != nil {
		return schema.GraphInfo{}, err
	}
	if m != nil && m.Graph != nil && m.Graph.Commit == in.Head {
		// Reused only when it reads back intact; a damaged graph is rebuilt.
		err := graphstore.Verify(ctx, a.Bucket, *m.Graph)
		if err == nil {
			return *m.Graph, nil
		}
		if ctx.Err() != nil || !(errors.Is(err, blob.ErrCorrupt) || errors.Is(err, blob.ErrNotFound)) {
			return schema.GraphInfo{}, fmt.Errorf("build graph %s@%s: %w", in.Repo, in.Head, err)
		}
		logger(ctx).Warn("published graph is damaged; rebuilding it", "repo", in.Repo, "head", in.Head, "error", err)
	}
	head, ok := gitrepo.ParseHash(in.Head)
	if !ok {
		return schema.GraphInfo{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("head %q is not a commit id", in.Head), ErrTypeBadInput, nil)
	}
	// The previous graph's extractions: only files that changed since are
	// parsed (the graph is the same as a full build's; see codegraph).
	var reuse *codegraph.Extracts
	if m != nil && m.Graph != nil {
		if reuse, err = graphstore.ReadExtracts(ctx, a.Bucket, *m.Graph); err != nil {
			if ctx.Err() != nil {
				return schema.GraphInfo{}, ctx.Err()
			}
			logger(ctx).Warn("the previous graph's extractions are unreadable; parsing every file", "repo", in.Repo, "error", err)
			reuse = nil
		}
	}
	g, err := codegraph.BuildCommit(ctx, dir, a.Backend, head, codegraph.Options{PrimaryLanguageOnly: in.Options.PrimaryLanguageOnly, Reuse: reuse, KeepExtracts: true})
	if err != nil {
		return schema.GraphInfo{}, permanent(fmt.Errorf("build graph %s@%s: %w", in.Repo, in.Head, err))
	}
	info, err := graphstore.Write(ctx, a.Bucket, in.Repo, in.Head, g) // with its kept extractions
	if err != nil {
		return schema.GraphInfo{}, err
	}
	info.Parsed, info.Reused = g.Stats.Files-g.Stats.Reused, g.Stats.Reused
	if info.Warning != "" {
		logger(ctx).Warn(info.Warning, "repo", in.Repo, "head", in.Head)
	}
	metrics.FilesParsed.Add(float64(info.Parsed))
	metrics.FilesReused.Add(float64(info.Reused))
	activity.GetLogger(ctx).Info("graph built", "repo", in.Repo, "nodes", info.Nodes, "edges", info.Edges, "files", info.Files, "parsed", info.Parsed, "reused", info.Reused)
	return info, nil
}
