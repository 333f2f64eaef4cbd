// Package snapshot builds, on demand, the code graph and search indexes of a
// repository at a commit other than its indexed head, cached in the store by commit.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/schema"
)

// ErrUnknownCommit: the commit is not in the repository (or the prefix is
// too short or not hex). Retrying cannot help.
var ErrUnknownCommit = errors.New("commit not in the repository")

// Config is what Ensure needs.
type Config struct {
	Bucket *blob.Bucket
	// GitDir is the repository's clone.
	GitDir  string
	Backend gitrepo.Backend
	// Deps embed into the repository's embedding cache; Deps.Bucket
	// defaults to Bucket.
	Deps    search.Deps
	Options schema.IndexOptions
	// Warn receives what was repaired; may be nil.
	Warn func(msg string, args ...any)
	// Scratch builds without a base: every file parsed, every document
	// tokenized (what a derived snapshot is compared with).
	Scratch bool
}

// Result says what Ensure found or built.
type Result struct {
	Manifest *schema.SnapshotManifest
	Reused   bool
	Embedded int
	// Base is the commit the snapshot was derived from ("" when built
	// from scratch or reused); Parsed counts the files parsed anew.
	Base   string
	Parsed int
}

// Resolve returns the full commit id that spec (a full id or an unambiguous
// prefix of at least 7 hex digits) names in gitDir.
func Resolve(gitDir string, repo schema.RepoName, spec string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	if len(s) < 7 || len(s) > 40 || strings.Trim(s, "0123456789abcdef") != "" {
		return "", fmt.Errorf("base_commit %q of %s: want a commit id (at least 7 hex digits): %w", spec, repo, ErrUnknownCommit)
	}
	h, err := gitrepo.Resolve(gitDir, s)
	if err != nil || !strings.HasPrefix(h.String(), s) {
		return "", fmt.Errorf("base_commit %s is not a commit of %s: %w", spec, repo, ErrUnknownCommit)
	}
	return h.String(), nil
}

// Ensure returns the snapshot of repo at commit, building it when no
// verified one is stored: graph and BM25 under repos/<repo>/snapshots/<commit>/,
// embeddings into the repository's content-addressed cache, the snapshot
// manifest written last. The repository's manifest is never touched.
// Concurrent calls for one snapshot write the same keys, each atomically,
// so neither can leave the other a torn snapshot.
func Ensure(ctx context.Context, c Config, repo schema.RepoName, commit string) (*Result, error) {
	if c.Deps.Bucket == nil {
		c.Deps.Bucket = c.Bucket
	}
	if c.Deps.Embedder == nil {
		c.Deps.Embedder = &embed.Lexical{}
	}
	full, err := Resolve(c.GitDir, repo, commit)
	if err != nil {
		return nil, err
	}
	m, err := search.ReadSnapshot(ctx, c.Bucket, repo, full)
	if err != nil && !errors.Is(err, blob.ErrCorrupt) {
		return nil, err
	}
	if err == nil && m != nil && m.Search.Model != c.Deps.Embedder.Name() {
		// Built with another embedder: its vectors cannot answer this
		// one's queries. Rebuilt; the cache keeps each model's vectors, so
		// switching back embeds nothing again.
		m = nil
	}
	if err == nil && m != nil {
		err = search.VerifySnapshot(ctx, c.Bucket, m)
		if err == nil {
			return &Result{Manifest: m, Reused: true}, nil
		}
		if ctx.Err() != nil || !(errors.Is(err, blob.ErrCorrupt) || errors.Is(err, blob.ErrNotFound)) {
			return nil, fmt.Errorf("snapshot %s@%s: %w", repo, full, err)
		}
	}
	if err != nil && c.Warn != nil {
		c.Warn("stored snapshot is damaged; rebuilding it", "repo", repo, "commit", full, "error", err)
	}
	h, _ := gitrepo.ParseHash(full)
	var bs *base
	if !c.Scratch {
		bs = findBase(ctx, c, repo, full)
	}
	opts := codegraph.Options{PrimaryLanguageOnly: c.Options.PrimaryLanguageOnly, KeepExtracts: true}
	var sp *search.SparseBase
	if bs != nil {
		opts.Reuse, sp = bs.extracts, bs.sparse
	}
	g, err := codegraph.BuildCommit(ctx, c.GitDir, c.Backend, h, opts)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s@%s: graph: %w", repo, full, err)
	}
	kept := g.Extracts
	g.Extracts = nil // kept in shared segments (keepExtracts), not beside the graph
	info, err := graphstore.WriteAt(ctx, c.Bucket, repo, repo.SnapshotPrefix(full)+"graph/", full, g)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s@%s: %w", repo, full, err)
	}
	info.Parsed, info.Reused = g.Stats.Files-g.Stats.Reused, g.Stats.Reused
	if info.MissingFiles > 0 && c.Warn != nil {
		c.Warn("snapshot: files not parsed, their blob missing from the clone (a partial clone's filter, or the repository lacks it)",
			"repo", repo, "commit", full, "files", info.MissingFiles, "report", info.ReportKey)
	}
	segs, err := keepExtracts(ctx, c, repo, bs, kept)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s@%s: %w", repo, full, err)
	}
	ires, err := search.IndexSnapshot(ctx, c.Deps, repo, info, sp)
	if err != nil {
		return nil, err
	}
	si := schema.SearchInfo{Commit: full, Model: ires.Model, Functions: ires.Functions, Embedded: ires.Embedded,
		SparseKey: ires.SparseKey, SparseDocsKey: ires.SparseDocsKey, SparseReused: ires.SparseReused, Vectors: "embedding-cache"}
	si.Dim = c.Deps.Embedder.Dim()
	if si.SparseBytes, si.SparseSHA256, err = sparse.Digest(ctx, c.Bucket, ires.SparseKey); err != nil {
		return nil, err
	}
	m = &schema.SnapshotManifest{Repo: repo, Commit: full, Graph: info, Search: si, BuiltAt: time.Now().UTC(), Extracts: segs}
	if bs != nil {
		m.Base = bs.commit
	}
	if err := search.PublishSnapshot(ctx, c.Bucket, m); err != nil {
		return nil, fmt.Errorf("snapshot %s@%s: %w", repo, full, err)
	}
	return &Result{Manifest: m, Embedded: ires.Embedded, Base: m.Base, Parsed: info.Parsed}, nil
}
