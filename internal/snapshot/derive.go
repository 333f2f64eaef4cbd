package snapshot

import (
	"cmp"
	"context"
	"errors"
	"path"
	"slices"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/schema"
)

// A snapshot is derived from the built commit nearest to it in commit time:
// the indexed head or another snapshot. Backlogs and benchmarks ask for base
// commits that cluster in time, far from the head (pytest's 34 swe-dev base
// commits: 25% of the Python files differ from the previous one by date, all
// of them from the head), and reading a commit's time costs a fraction of a
// tree diff against every candidate.
const (
	// maxBaseTries bounds the damaged candidates passed over, and
	// maxBaseReads the candidates read, before building from scratch.
	maxBaseTries = 4
	maxBaseReads = 16
	// maxExtractSegments bounds the segments a snapshot names (each read by
	// the snapshots derived from it); past it, one segment holds them all.
	maxExtractSegments = 8
)

// base is what a snapshot is derived from.
type base struct {
	commit   string
	extracts *codegraph.Extracts // the union of segs
	segs     []baseSegment
	sparse   *search.SparseBase
}

// baseSegment is an extraction segment and the files it holds.
type baseSegment struct {
	seg  schema.ExtractsSegment
	keys []string
}

// findBase returns the nearest built commit that commit can be derived
// from, or nil (built from scratch). A candidate whose stored extractions
// or BM25 documents do not read back intact is passed over with a warning:
// what is derived always equals a build from scratch.
func findBase(ctx context.Context, c Config, repo schema.RepoName, commit string) *base {
	warn := c.Warn
	if warn == nil {
		warn = func(string, ...any) {}
	}
	var head *schema.Manifest
	if m, err := manifest.Read(ctx, c.Bucket, repo); err == nil && m != nil && m.Graph != nil && m.Graph.ExtractsKey != "" &&
		m.Search != nil && m.Search.SparseDocsKey != "" && m.Search.Commit == m.Graph.Commit && m.Graph.Commit != commit {
		head = m
	}
	var cands []string
	if head != nil {
		cands = append(cands, head.Graph.Commit)
	}
	dirs, err := c.Bucket.ListDirs(ctx, repo.Prefix()+"snapshots/")
	if err != nil {
		warn("snapshot: stored snapshots not listed; deriving from the head only", "repo", repo, "error", err)
	}
	for _, d := range dirs {
		d = path.Base(d) // repos/<repo>/snapshots/<commit>/
		if h, ok := gitrepo.ParseHash(d); ok && h.String() == d && d != commit && (head == nil || d != head.Graph.Commit) {
			cands = append(cands, d)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	if len(cands) > 1 {
		hashes := []gitrepo.Hash{}
		for _, s := range append([]string{commit}, cands...) {
			h, _ := gitrepo.ParseHash(s)
			hashes = append(hashes, h)
		}
		times, err := gitrepo.CommitTimes(ctx, c.GitDir, c.Backend, hashes)
		if err != nil {
			warn("snapshot: commit times not read; deriving from the head only", "repo", repo, "error", err)
			cands = cands[:min(1, len(cands))]
			if head == nil {
				return nil
			}
		} else {
			dist := map[string]int64{}
			for i, s := range cands {
				d := times[i+1] - times[0]
				dist[s] = max(d, -d)
			}
			slices.SortFunc(cands, func(a, b string) int { return cmp.Or(cmp.Compare(dist[a], dist[b]), cmp.Compare(a, b)) })
		}
	}
	tried := map[string]bool{}
	failed := 0
	try := func(cand string) *base {
		tried[cand] = true
		var bs *base
		var err error
		if head != nil && cand == head.Graph.Commit {
			bs, err = headBase(ctx, c, repo, head)
		} else {
			bs, err = snapshotBase(ctx, c, repo, cand)
		}
		switch {
		case err != nil && errors.Is(err, sparse.ErrVersion):
			return nil // written by another locus: of no use, not damaged
		case err != nil && ctx.Err() == nil:
			failed++
			warn("snapshot: the stored indexes of a commit to derive from are damaged; not derived from it", "repo", repo, "commit", commit, "base", cand, "error", err)
		}
		return bs
	}
	for i, cand := range cands {
		if i == maxBaseReads || failed == maxBaseTries || ctx.Err() != nil {
			break
		}
		if bs := try(cand); bs != nil {
			return bs
		}
	}
	// Snapshots of an older locus kept nothing to derive from; the head
	// may have.
	if head != nil && !tried[head.Graph.Commit] && failed < maxBaseTries && ctx.Err() == nil {
		return try(head.Graph.Commit)
	}
	return nil
}

// headBase is the indexed head as a base; its extractions are copied into
// the extraction store first, since publishing the next head sweeps them.
func headBase(ctx context.Context, c Config, repo schema.RepoName, m *schema.Manifest) (*base, error) {
	seg, e, err := graphstore.ShareExtracts(ctx, c.Bucket, repo, *m.Graph)
	if err != nil {
		return nil, err
	}
	sp, err := search.ReadSparseBase(ctx, c.Bucket, *m.Search, c.Deps.Embedder.Name())
	if err != nil {
		return nil, err
	}
	bs := &base{commit: m.Graph.Commit, sparse: sp}
	bs.add(seg, e)
	return bs, nil
}

// snapshotBase is a stored snapshot as a base, nil when it kept nothing to
// derive from (built before derivation).
func snapshotBase(ctx context.Context, c Config, repo schema.RepoName, commit string) (*base, error) {
	m, err := search.ReadSnapshot(ctx, c.Bucket, repo, commit)
	if err != nil || m == nil || len(m.Extracts) == 0 || m.Search.SparseDocsKey == "" {
		return nil, err
	}
	sp, err := search.ReadSparseBase(ctx, c.Bucket, m.Search, c.Deps.Embedder.Name())
	if err != nil {
		return nil, err
	}
	bs := &base{commit: commit, sparse: sp}
	for _, seg := range m.Extracts {
		e, err := graphstore.ReadExtractsSegment(ctx, c.Bucket, seg)
		if err != nil {
			return nil, err
		}
		bs.add(seg, e)
	}
	return bs, nil
}

// add merges a segment's extractions into the base; one of another
// extractor version is of no use (its files are parsed again).
func (bs *base) add(seg schema.ExtractsSegment, e *codegraph.Extracts) {
	if e == nil || e.Version != schema.ExtractVersion {
		return
	}
	if bs.extracts == nil {
		bs.extracts = &codegraph.Extracts{Version: e.Version, Files: map[string][]byte{}}
	}
	keys := make([]string, 0, len(e.Files))
	for k, v := range e.Files {
		bs.extracts.Files[k] = v
		keys = append(keys, k)
	}
	bs.segs = append(bs.segs, baseSegment{seg, keys})
}

// keepExtracts stores what snapshots derived from this one need: the
// extraction of each of its files. The base's segments that still serve at
// least a quarter of their files are named again; the other files go into
// one new segment, so a snapshot adds about what changed, and no snapshot
// names more than maxExtractSegments.
func keepExtracts(ctx context.Context, c Config, repo schema.RepoName, bs *base, kept *codegraph.Extracts) ([]schema.ExtractsSegment, error) {
	if kept == nil || len(kept.Files) == 0 {
		return nil, nil
	}
	var segs []schema.ExtractsSegment
	covered := map[string]bool{}
	if bs != nil {
		for _, s := range bs.segs {
			used := 0
			for _, k := range s.keys {
				if _, ok := kept.Files[k]; ok && !covered[k] {
					used++
				}
			}
			if used == 0 || used*4 < len(s.keys) {
				continue
			}
			segs = append(segs, s.seg)
			for _, k := range s.keys {
				covered[k] = true
			}
		}
	}
	fresh := &codegraph.Extracts{Version: kept.Version, Files: map[string][]byte{}}
	for k, v := range kept.Files {
		if !covered[k] {
			fresh.Files[k] = v
		}
	}
	if len(fresh.Files) > 0 && len(segs) >= maxExtractSegments {
		segs, fresh = nil, kept
	}
	if len(fresh.Files) > 0 {
		seg, err := graphstore.WriteExtractsSegment(ctx, c.Bucket, repo, fresh)
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
	}
	return segs, nil
}
