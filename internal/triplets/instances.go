package triplets

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// Skips of benchmark instances.
const (
	SkipNoGold    Skip = "the patch edits no function at the base commit"
	SkipOtherRepo Skip = "instance of another repository"
)

// MineInstances makes a record of each SWE-format instance of the miner's
// repository (others are counted and skipped): the problem statement as
// the query, the non-test functions the patch edits (dataset.GoldFromPatch)
// with their code at the base commit as positives, and negatives from a
// BM25 index of the base commit. An instance that cannot be mined (its base
// commit missing from the clone, say) is counted and named in Stats.
func (m *Miner) MineInstances(ctx context.Context, instances []dataset.SWEInstance, emit func(Record) error) (Stats, error) {
	o := m.Options.withDefaults()
	var st Stats
	for _, in := range instances {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if !strings.EqualFold(in.Repo, m.Repo) {
			st.skip(SkipOtherRepo)
			continue
		}
		rec, why, err := m.mineInstance(ctx, o, in)
		switch {
		case err != nil && ctx.Err() != nil:
			return st, ctx.Err()
		case err != nil:
			st.Failed++
			if len(st.FailedExamples) < 10 {
				st.FailedExamples = append(st.FailedExamples, fmt.Sprintf("%s: %v", in.InstanceID, err))
			}
		case why != "":
			st.skip(why)
		default:
			if err := emit(rec); err != nil {
				return st, err
			}
			st.Records++
		}
	}
	m.takeTimes(&st)
	return st, nil
}

func (m *Miner) mineInstance(ctx context.Context, o Options, in dataset.SWEInstance) (Record, Skip, error) {
	base := strings.ToLower(in.BaseCommit)
	h, ok := gitrepo.ParseHash(base)
	if !ok {
		return Record{}, "", fmt.Errorf("base commit %q is not a commit id", in.BaseCommit)
	}
	fps, err := dataset.ParsePatch(in.Patch)
	if err != nil {
		return Record{}, "", fmt.Errorf("patch: %w", err)
	}
	snap, err := gitrepo.OpenSnapshot(ctx, m.GitDir, m.Backend, h)
	if err != nil {
		return Record{}, "", fmt.Errorf("base %s: %w", base, err)
	}
	want := map[string]bool{}
	for _, fp := range fps {
		want[fp.OldPath] = true
	}
	var gf []codegraph.File
	for _, f := range snap.Files() {
		if p := string(f.Path); want[p] {
			gf = append(gf, codegraph.File{Path: p, Regular: f.IsRegular(), Read: func() ([]byte, error) { return snap.ReadBlob(f.Blob) }})
		}
	}
	an, err := m.IndexAt(ctx, base)
	if err != nil {
		snap.Close()
		return Record{}, "", err
	}
	// The patched files alone would parse .h files by themselves (as C);
	// the whole tree decides, as the graph of the base does.
	g, err := codegraph.Build(ctx, gf, codegraph.Options{Headers: an.headers})
	snap.Close()
	if err != nil {
		return Record{}, "", fmt.Errorf("parse the patched files at %s: %w", base, err)
	}
	gold, err := dataset.GoldFromPatch(g, in.Patch)
	if err != nil {
		return Record{}, "", fmt.Errorf("patch: %w", err)
	}
	gold = slices.DeleteFunc(gold, func(id string) bool {
		p, _ := codegraph.SplitID(id)
		return codegraph.IsTestID(id) || IsVendored(p)
	})
	if len(gold) == 0 {
		return Record{}, SkipNoGold, nil
	}
	query := strings.TrimSpace(in.ProblemStatement)
	rec, why, err := m.mineOne(ctx, o, an, Commit{Change: Change{Commit: in.InstanceID}, Parent: base}, query, gold, nil)
	if err != nil || why != "" {
		return Record{}, why, err
	}
	t, err := gitrepo.CommitTime(ctx, m.GitDir, m.Backend, h)
	if err != nil {
		return Record{}, "", err
	}
	rec.Commit, rec.Time, rec.QueryID, rec.Source = "", t, in.InstanceID, QueryInstance
	return rec, "", nil
}
