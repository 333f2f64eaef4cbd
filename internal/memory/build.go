package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/schema"
)

// BuildConfig says what Build reads and writes.
type BuildConfig struct {
	Bucket  *blob.Bucket
	Repo    schema.RepoName
	GitDir  string          // the clone: parents come from its commit graph
	Backend gitrepo.Backend // reads git objects; default gitrepo.BackendAuto
	Head    string          // the commit the memory is of (hex)
	// Prev is the manifest the scrape continued from (nil: none); its
	// memory, when it has one, is extended instead of rebuilt.
	Prev *schema.Manifest
	// Parts are the commits-table parts the scrape just wrote.
	Parts []schema.Part
}

// Build writes the repository memory of the history up to c.Head: the
// published memory (of c.Prev, when it has one) plus the commits of the
// parts just written, or, without one, every part of the history; the
// parents come from the clone's commit graph (the commits table keeps only
// the first). A damaged or missing published memory is rebuilt from the
// commits table. It returns nil, nil when nothing changed.
func Build(ctx context.Context, c BuildConfig) (*schema.MemoryInfo, error) {
	prev := c.Prev
	current := prev != nil && prev.Memory != nil && prev.Memory.Layout >= schema.MemoryLayout
	if current && len(c.Parts) == 0 && prev.Head == c.Head {
		return nil, nil // up to date
	}
	h, ok := gitrepo.ParseHash(c.Head)
	if !ok {
		return nil, fmt.Errorf("memory of %s: head %q is not a commit id", c.Repo, c.Head)
	}
	var old *Table
	var err error
	if current {
		// A damaged or missing one, or one of an older layout, is rebuilt
		// from the parts below.
		if old, err = Read(ctx, c.Bucket, *prev.Memory); err != nil && ctx.Err() != nil {
			return nil, err
		}
	}
	// The parents of the commits to add: with the published memory kept,
	// only those of the commits since its head.
	var since []gitrepo.Hash
	if old != nil {
		if ph, ok := gitrepo.ParseHash(prev.Head); ok {
			since = []gitrepo.Hash{ph}
		}
	}
	ps, err := gitrepo.Parents(ctx, c.GitDir, c.Backend, h, since)
	if err != nil {
		return nil, fmt.Errorf("memory of %s: %w", c.Repo, err)
	}
	parents := make(map[string][]string, len(ps))
	for id, list := range ps {
		ss := make([]string, len(list))
		for i, p := range list {
			ss[i] = p.String()
		}
		parents[id.String()] = ss
	}
	rows := NewFromRows(parents)
	add := func(r *schema.CommitFile) error { rows.Add(r); return nil }
	var all []Commit
	var renames []Rename
	if old != nil {
		all, renames = old.Commits(), old.Renames()
	} else if prev != nil {
		if err := commits.ReadAll(ctx, c.Bucket, prev, add); err != nil {
			return nil, fmt.Errorf("memory of %s: %w", c.Repo, err)
		}
	}
	for _, p := range c.Parts {
		if err := commits.ReadPartOf(ctx, c.Bucket, p, add); err != nil {
			return nil, fmt.Errorf("memory of %s: %w", c.Repo, err)
		}
	}
	all = append(all, rows.Commits()...)
	t, err := New(all)
	if err != nil {
		return nil, fmt.Errorf("memory of %s: %w", c.Repo, err)
	}
	t = t.WithRenames(append(slices.Clip(renames), rows.Renames()...))
	info, err := Write(ctx, c.Bucket, c.Repo.MemoryKey(c.Head), t)
	if err != nil {
		return nil, err
	}
	return &info, nil
}
