package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// The hybrid method's fusion weights (see fuse), against the code's BM25 at
// weight 1: episodic memory's, and the hotspots' (how often and how recently
// past commits changed each function BM25 ranks). Both fitted on
// ../shared/bench/swe-dev.jsonl leaving one repository out; fitted instead on
// triplets mined from the dev repositories' own history (locus triplets
// fit) they come out 0.5 and 0.5, which do not beat these on swe-dev
// (docs/results.md).
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

func tableKey(info schema.MemoryInfo) string { return info.Key + "@" + info.SHA256 }

// tableOf is info's memory table, read once while the cache keeps it.
func tableOf(ctx context.Context, b *blob.Bucket, info schema.MemoryInfo) (*memory.Table, error) {
	tk := tableKey(info)
	memCache.Lock()
	t, ok := memCache.tables[tk]
	memCache.Unlock()
	if ok {
		return t, nil
	}
	t, err := memory.Read(ctx, b, info)
	if err != nil {
		return nil, err
	}
	memCache.Lock()
	defer memCache.Unlock()
	if len(memCache.tables) >= memCacheSize/4 {
		clear(memCache.tables)
	}
	memCache.tables[tk] = t
	return t, nil
}

// episodicAt is episodic memory of info's table for queries at base. The
// table is read and the index built outside the cache's lock, so queries at
// other bases do not wait; two queries racing for one base may both build,
// and the first to finish is kept.
func episodicAt(ctx context.Context, b *blob.Bucket, info schema.MemoryInfo, base string) (*memory.Episodic, error) {
	key := tableKey(info) + "@" + base
	memCache.Lock()
	e, ok := memCache.eps[key]
	memCache.Unlock()
	if ok {
		return e, nil
	}
	t, err := tableOf(ctx, b, info)
	if err != nil {
		return nil, err
	}
	if e, err = t.Episodic(base, memory.Options{}); err != nil {
		return nil, err
	}
	memCache.Lock()
	defer memCache.Unlock()
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

// MemoryBase is the commit m's memory takes a query's memory from when the
// query's base may sit inside the work it describes: memory.Table.Back of
// base by gap.
func MemoryBase(ctx context.Context, b *blob.Bucket, m *schema.Manifest, base string, gap time.Duration) (string, error) {
	if m == nil || m.Memory == nil || gap <= 0 {
		return base, nil
	}
	t, err := tableOf(ctx, b, *m.Memory)
	if err != nil {
		return "", err
	}
	back, err := t.Back(base, gap.Milliseconds())
	if errors.Is(err, memory.ErrUnknownBase) {
		return base, nil // MemoryRankings says so
	}
	return back, err
}

// HybridRankings are the rankings the hybrid method fuses (see Fuse).
type HybridRankings struct {
	Code     []spider.Scored // the code's BM25, at weight 1
	Memory   []spider.Scored // episodic memory: functions past commits like the issue changed
	Hotspots []spider.Scored // how often and how recently commits changed Code's functions
	Dense    []spider.Scored // the embedder's, when it has a weight
}

// Weights of the hybrid fusion, against the code's BM25 at weight 1; 0: the
// ranking is left out.
type Weights struct {
	Memory  float64 `json:"memory"`
	Hotspot float64 `json:"hotspot"`
	Dense   float64 `json:"dense,omitempty"`
}

// Fuse is the hybrid method's ranking: h's rankings fused (spider.Fuse)
// with w.
func (h HybridRankings) Fuse(w Weights) []spider.Scored {
	return spider.Fuse([][]spider.Scored{h.Code, h.Memory, h.Hotspots, h.Dense}, []float64{1, w.Memory, w.Hotspot, w.Dense})
}

// SourceRanks says, for each of ids, where the rankings h fuses placed
// it: "BM25 #3, memory #1, hotspots #12" (1-based; a ranking that does not
// hold it is left out); an id none holds is left out.
func (h HybridRankings) SourceRanks(ids []string) map[string]string {
	named := []struct {
		name    string
		ranking []spider.Scored
	}{{"BM25", h.Code}, {"memory", h.Memory}, {"hotspots", h.Hotspots}, {"dense", h.Dense}}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	places := make([]map[string]int, len(named))
	for i, n := range named {
		places[i] = map[string]int{}
		for j, s := range n.ranking {
			if _, seen := places[i][s.ID]; want[s.ID] && !seen {
				places[i][s.ID] = j + 1
			}
		}
	}
	out := map[string]string{}
	for _, id := range ids {
		var parts []string
		for i, n := range named {
			if at, ok := places[i][id]; ok {
				parts = append(parts, fmt.Sprintf("%s #%d", n.name, at))
			}
		}
		if len(parts) > 0 {
			out[id] = strings.Join(parts, ", ")
		}
	}
	return out
}

// MemoryRankings ranks, for issue, the functions of the graph at base
// (those exists holds) by episodic memory, and those of code by hotspots;
// it returns them with code, and the memory (nil without one). A
// repository without memory, or a base its memory does not hold, gives no
// memory rankings and a warning saying why and what to do.
func MemoryRankings(ctx context.Context, b *blob.Bucket, repo schema.RepoName, m *schema.Manifest, base, issue string, exists func(string) bool, code []spider.Scored) (HybridRankings, *memory.Episodic, string, error) {
	h := HybridRankings{Code: code}
	if m == nil || m.Memory == nil {
		return h, nil, fmt.Sprintf("%s has no repository memory (indexed before memory existed): ranked from the code alone; run locus index %s again to build it (no re-scrape)", repo, repo), nil
	}
	e, err := episodicAt(ctx, b, *m.Memory, base)
	if errors.Is(err, memory.ErrUnknownBase) {
		return h, nil, fmt.Sprintf("the memory of %s does not hold commit %s: ranked from the code alone", repo, base), nil
	}
	if err != nil {
		return h, nil, "", fmt.Errorf("localize %s: %w", repo, err)
	}
	h.Memory, h.Hotspots = e.Rank(issue, exists), hotRanking(e, code)
	return h, e, "", nil
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
