package search

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// TestHybridCoChangeEdges: with a co-change cost, the hybrid method's
// center reaches, in one hop, the function an older commit changed with it
// (in another file); the base's own commit and a later one add no edge,
// though what they changed with the center is in the pool too; without
// the cost, or without memory, nothing changes.
func TestHybridCoChangeEdges(t *testing.T) {
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	ir, err := IndexRepo(ctx, d, repo, info)
	if err != nil {
		t.Fatal(err)
	}
	issue := "renaming a user forgets to store the new display name"
	// Depth 1: the contains tree gives the center no function within one hop.
	p := Params{Method: MethodHybrid, Params: spider.Params{K: 9, C: 1, Depth: 1}, MemoryWeight: 1}
	const (
		save     = "app/models.py:Base.save" // lifted to the center by memory
		run      = "main.py:run"             // the others are in the BM25 ranking
		makeUser = "app/models.py:make_user"
		rename   = "app/models.py:User.rename"
	)
	candidates := func(p Params) []spider.Candidate {
		t.Helper()
		r, err := Retrieve(ctx, d, repo, issue, p)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Expansion.Centers[0]; c.ID != save {
			t.Fatalf("center %s, want %s", c.ID, save)
		}
		return r.Expansion.Centers[0].Candidates
	}
	const day = 24 * 60 * 60 * 1000
	tb, err := memory.New([]memory.Commit{
		{ID: "p0", Time: 1 * day, Message: "tidy", Functions: []string{save, run}},
		{ID: "p1", Parents: []string{"p0"}, Time: 2 * day, Message: "store the display name when a user is renamed", Functions: []string{save}},
		{ID: info.Commit, Parents: []string{"p1"}, Time: 3 * day, Message: "tidy", Functions: []string{save, makeUser}},
		{ID: "later", Parents: []string{info.Commit}, Time: 4 * day, Message: "tidy", Functions: []string{save, rename}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mi, err := memory.Write(ctx, b, repo.MemoryKey(info.Commit), tb)
	if err != nil {
		t.Fatal(err)
	}
	si := &schema.SearchInfo{Commit: info.Commit, Model: ir.Model, SparseKey: ir.SparseKey}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Search: si, Scrape: schema.ScrapeResult{Memory: &mi}}); err != nil {
		t.Fatal(err)
	}
	if got := candidates(p); len(got) != 0 {
		t.Errorf("without co-change edges: candidates %+v, want none", got)
	}
	p.CoChangeCost = 1
	if got := candidates(p); len(got) != 1 || got[0].ID != run || got[0].Hops != 1 {
		t.Errorf("with co-change edges: candidates %+v, want only %s at 1 hop (not the base's or a later commit's)", got, run)
	}
	p.Depth = 3 // make_user is 3 contains hops away: reached, at 3, as it is without co-change
	if got := candidates(p); !slices.ContainsFunc(got, func(c spider.Candidate) bool { return c.ID == run && c.Hops == 1 }) ||
		!slices.ContainsFunc(got, func(c spider.Candidate) bool { return c.ID == makeUser && c.Hops == 3 }) {
		t.Errorf("depth 3: candidates %+v, want %s at 1 and %s at 3", got, run, makeUser)
	}
	p.Depth = 1
	p.CoChangeCost = 2 // beyond the depth
	if got := candidates(p); len(got) != 0 {
		t.Errorf("co-change cost 2 at depth 1: candidates %+v, want none", got)
	}
	for _, bad := range []int{-1, 256} {
		p.CoChangeCost = bad
		if _, err := Retrieve(ctx, d, repo, issue, p); !errors.Is(err, ErrBadQuery) {
			t.Errorf("co-change cost %d: %v, want ErrBadQuery", bad, err)
		}
	}
	// No memory: no edges, and no error.
	if o, err := coChangeOverlay(nil, Params{CoChangeCost: 3}); err != nil || o.Neighbours != nil {
		t.Errorf("without memory: %+v, %v", o, err)
	}
}
