package search

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// The hybrid method's fusion weights (see fuse), against the code's BM25 at
// weight 1: episodic memory's, and the hotspots' (how often and how recently
// past commits changed each function BM25 ranks). Both fitted on
// ../shared/bench/swe-dev.jsonl leaving one repository out (docs/results.md).
const (
	DefaultMemoryWeight  = 0.3
	DefaultHotspotWeight = 0.3
	// DefaultDenseWeight weighs a model embedder's ranking as much as the
	// code's BM25, the equal-weight start the issue prescribes: no trained
	// embedder runs where the weights were fitted, so it is not fitted yet.
	DefaultDenseWeight = 1.0
)

// memCache keeps the memory tables and the episodic indexes of the last
// bases queried in this process, so a query pays their decoding and BM25
// build once per (memory, base commit).
var memCache = struct {
	sync.Mutex
	tables  map[string]*memory.Table
	eps     map[string]*memory.Episodic
	epOrder []string
}{tables: map[string]*memory.Table{}, eps: map[string]*memory.Episodic{}}

// memCacheSize bounds the episodic indexes kept (tables: a quarter of it).
const memCacheSize = 64

// episodicAt is episodic memory of info's table for queries at base. The
// table is read and the index built outside the cache's lock, so queries at
// other bases do not wait; two queries racing for one base may both build,
// and the first to finish is kept.
func episodicAt(ctx context.Context, b *blob.Bucket, info schema.MemoryInfo, base string) (*memory.Episodic, error) {
	tk := info.Key + "@" + info.SHA256
	key := tk + "@" + base
	memCache.Lock()
	e, ok := memCache.eps[key]
	t, tok := memCache.tables[tk]
	memCache.Unlock()
	if ok {
		return e, nil
	}
	if !tok {
		var err error
		if t, err = memory.Read(ctx, b, info); err != nil {
			return nil, err
		}
	}
	e, err := t.Episodic(base, memory.Options{})
	if err != nil {
		return nil, err
	}
	memCache.Lock()
	defer memCache.Unlock()
	if len(memCache.tables) >= memCacheSize/4 {
		clear(memCache.tables)
	}
	memCache.tables[tk] = t
	if prev, ok := memCache.eps[key]; ok {
		return prev, nil
	}
	if len(memCache.epOrder) >= memCacheSize {
		delete(memCache.eps, memCache.epOrder[0])
		memCache.epOrder = memCache.epOrder[1:]
	}
	memCache.eps[key] = e
	memCache.epOrder = append(memCache.epOrder, key)
	return e, nil
}

// memoryRanking ranks the functions of the graph at base by episodic memory
// and returns the memory (nil without one); a repository without memory, or
// a base its memory does not hold, gives no ranking and a warning saying why
// and what to do.
func memoryRanking(ctx context.Context, b *blob.Bucket, repo schema.RepoName, m *schema.Manifest, base, issue string, exists func(string) bool) ([]spider.Scored, *memory.Episodic, string, error) {
	if m == nil || m.Memory == nil {
		return nil, nil, fmt.Sprintf("%s has no repository memory (indexed before memory existed): ranked from the code alone; run locus index %s again to build it (no re-scrape)", repo, repo), nil
	}
	e, err := episodicAt(ctx, b, *m.Memory, base)
	if errors.Is(err, memory.ErrUnknownBase) {
		return nil, nil, fmt.Sprintf("the memory of %s does not hold commit %s: ranked from the code alone", repo, base), nil
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("localize %s: %w", repo, err)
	}
	return e.Rank(issue, exists), e, "", nil
}

// hotRanking ranks the functions of code by how often and how recently the
// memory's commits changed them (memory.Episodic.Hotspots); functions never
// changed are left out.
func hotRanking(e *memory.Episodic, code []spider.Scored) []spider.Scored {
	if e == nil {
		return nil
	}
	hot := e.Hotspots()
	var out []spider.Scored
	for _, s := range code {
		if h := hot[s.ID]; h > 0 {
			out = append(out, spider.Scored{ID: s.ID, Score: h})
		}
	}
	spider.Sort(out)
	return out
}
