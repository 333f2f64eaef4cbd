package triplets

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/schema"
)

// DefaultChunk is how many commits one chunk of a repository's history
// holds: one activity mines it and writes one part.
const DefaultChunk = 1000

// Index is a repository's history as commit ids and times, in the order
// mining reads it, and which commits-table parts hold each commit's rows:
// what a chunk needs to read only its own commits.
type Index struct {
	Manifest *schema.Manifest
	Keys     []commits.CommitKey // time order, ties by id
	parts    map[string][]int    // commit → indexes into Manifest.Parts
}

// ReadIndex reads the commit ids and times of repo's indexed history
// (only those two columns of each part).
func ReadIndex(ctx context.Context, b *blob.Bucket, repo schema.RepoName) (*Index, error) {
	m, err := manifest.Read(ctx, b, repo)
	if err != nil {
		return nil, fmt.Errorf("triplets %s: %w", repo, err)
	}
	if m == nil {
		return nil, fmt.Errorf("triplets %s: %w: not indexed (run locus index %s first)", repo, ErrNoHistory, repo)
	}
	if len(m.Parts) == 0 {
		return nil, fmt.Errorf("triplets %s: %w: indexed from %s, which has no commits (nothing to mine)", repo, ErrNoHistory, m.URL)
	}
	ix := &Index{Manifest: m, parts: map[string][]int{}}
	for i, p := range m.Parts {
		err := commits.ReadKeysOf(ctx, b, p, func(k *commits.CommitKey) error {
			ps, seen := ix.parts[k.CommitID]
			if !seen {
				ix.Keys = append(ix.Keys, *k)
			}
			if len(ps) == 0 || ps[len(ps)-1] != i {
				ix.parts[k.CommitID] = append(ps, i)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("triplets %s: %w", repo, err)
		}
	}
	slices.SortStableFunc(ix.Keys, func(a, b commits.CommitKey) int {
		return cmp.Or(cmp.Compare(a.CommitTime, b.CommitTime), cmp.Compare(a.CommitID, b.CommitID))
	})
	return ix, nil
}

// Read reads the commits Keys[lo:hi] from the parts that hold them, in order.
func (ix *Index) Read(ctx context.Context, b *blob.Bucket, lo, hi int) ([]Commit, error) {
	want := make(map[string]bool, hi-lo)
	var parts []int
	for _, k := range ix.Keys[lo:hi] {
		want[k.CommitID] = true
		parts = append(parts, ix.parts[k.CommitID]...)
	}
	slices.Sort(parts)
	var cs Commits
	for _, i := range slices.Compact(parts) {
		err := commits.ReadPartOf(ctx, b, ix.Manifest.Parts[i], func(r *schema.CommitFile) error {
			if want[r.CommitID] {
				cs.Add(r)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("triplets %s: %w", ix.Manifest.Repo, err)
		}
	}
	return cs.List(), nil
}

// Chunks is how many chunks of size commits a history of n commits makes.
func Chunks(n, size int) int {
	size = positiveOr(size, DefaultChunk)
	return (n + size - 1) / size
}

// ChunkConfig is one chunk to mine.
type ChunkConfig struct {
	Bucket  *blob.Bucket
	GitDir  string
	Backend gitrepo.Backend
	Run     string
	Repo    schema.RepoName
	// Chunk is the chunk's number; Size the commits per chunk (default
	// DefaultChunk).
	Chunk, Size int
	Options     Options
	Exclusion   *Exclusion
	// Issues are texts of referenced issues (see Miner.Issues); may be nil.
	Issues IssueTexts
	// Dense embeds for dense negatives (see Miner.Dense); may be nil when
	// Options takes none.
	Dense *Dense
	// Progress, when set, is called after each commit with done and total.
	Progress func(done, total int)
}

// ErrNoHistory is the error of a repository the store holds no history of.
var ErrNoHistory = errors.New("no history in the store")

// ErrBadChunk marks a chunk that cannot be mined however often it is
// retried: beyond the history, or an exclusion the history cannot place.
var ErrBadChunk = errors.New("cannot mine this chunk")

// ChunkResult is what mining one chunk did.
type ChunkResult struct {
	Part  PartInfo `json:"part"`
	Stats Stats    `json:"stats"`
}

// MineChunk mines chunk c.Chunk of the repository's history and stores its
// records as part c.Chunk of the run (replacing it, so a retried chunk never
// duplicates rows). The benchmark exclusion is placed on the history first.
func MineChunk(ctx context.Context, c ChunkConfig) (ChunkResult, error) {
	readStart := time.Now()
	ix, err := ReadIndex(ctx, c.Bucket, c.Repo)
	if err != nil {
		return ChunkResult{}, err
	}
	size := positiveOr(c.Size, DefaultChunk)
	lo := c.Chunk * size
	if c.Chunk < 0 || lo >= len(ix.Keys) {
		return ChunkResult{}, fmt.Errorf("triplets %s: chunk %d of a %d-commit history: %w", c.Repo, c.Chunk, len(ix.Keys), ErrBadChunk)
	}
	chunk, err := ix.Read(ctx, c.Bucket, lo, min(lo+size, len(ix.Keys)))
	if err != nil {
		return ChunkResult{}, err
	}
	readTime := time.Since(readStart)
	times := make(map[string]int64, len(ix.Keys))
	for _, k := range ix.Keys {
		times[k.CommitID] = k.CommitTime
	}
	// A benchmark commit outside the indexed history (a release branch,
	// say) is placed by its time in the clone.
	ex, err := c.Exclusion.ForRepo(string(c.Repo), func(id string) (int64, bool) {
		if t, ok := times[id]; ok {
			return t, true
		}
		h, ok := gitrepo.ParseHash(id)
		if !ok {
			return 0, false
		}
		t, err := gitrepo.CommitTime(ctx, c.GitDir, c.Backend, h)
		return t, err == nil
	})
	if err != nil {
		return ChunkResult{}, fmt.Errorf("%w: %w", ErrBadChunk, err)
	}
	m := &Miner{Repo: string(c.Repo), GitDir: c.GitDir, Backend: c.Backend, Options: c.Options, Exclude: ex, Issues: c.Issues, Dense: c.Dense}
	var recs []Record
	done := 0
	st, err := m.Mine(ctx, chunk, func(r Record) error {
		recs = append(recs, r)
		return nil
	}, func() {
		done++
		if c.Progress != nil {
			c.Progress(done, len(chunk))
		}
	})
	// What was embedded is stored even when the chunk failed, so that its
	// retry does not embed it again.
	if ferr := c.Dense.Flush(ctx); err == nil {
		err = ferr
	}
	if err != nil {
		return ChunkResult{}, fmt.Errorf("triplets %s chunk %d: %w", c.Repo, c.Chunk, err)
	}
	st.ReadMs += readTime.Milliseconds()
	part, err := WritePart(ctx, c.Bucket, schema.TripletsPartKey(c.Run, c.Repo, c.Chunk), recs)
	if err != nil {
		return ChunkResult{}, err
	}
	return ChunkResult{Part: part, Stats: st}, nil
}

// InstancesKey is where a run's instance file is stored: by the hash of
// its content, so the same file is stored once and names the same run.
func InstancesKey(data []byte) string { return inputKey("instances", data) }

// IssuesKey is where a run's issue texts (JSON of IssueTexts) are stored,
// by the hash of their content.
func IssuesKey(data []byte) string { return inputKey("issues", data) }

func inputKey(kind string, data []byte) string {
	sum := sha256.Sum256(data)
	return schema.TripletsInputKey(kind, hex.EncodeToString(sum[:8]))
}

// ReadIssues reads issue texts stored at key ("" : none).
func ReadIssues(ctx context.Context, b *blob.Bucket, key string) (IssueTexts, error) {
	if key == "" {
		return nil, nil
	}
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("triplets issues: %w", err)
	}
	var t IssueTexts
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("triplets issues %s: %v: %w", key, err, ErrBadChunk)
	}
	return t, nil
}

// MineInstanceFile mines the instances stored at key (a JSON array of
// dataset.SWEInstance) that belong to c.Repo and stores their records as the
// run's instances part of it (replacing it). c.Chunk and c.Size are unused.
func MineInstanceFile(ctx context.Context, c ChunkConfig, key string) (ChunkResult, error) {
	data, err := c.Bucket.ReadAll(ctx, key)
	if err != nil {
		return ChunkResult{}, fmt.Errorf("triplets instances: %w", err)
	}
	var ins []dataset.SWEInstance
	if err := json.Unmarshal(data, &ins); err != nil {
		return ChunkResult{}, fmt.Errorf("triplets instances %s: %v: %w", key, err, ErrBadChunk)
	}
	m := &Miner{Repo: string(c.Repo), GitDir: c.GitDir, Backend: c.Backend, Options: c.Options, Dense: c.Dense}
	var recs []Record
	st, err := m.MineInstances(ctx, ins, func(r Record) error { recs = append(recs, r); return nil })
	if ferr := c.Dense.Flush(ctx); err == nil {
		err = ferr
	}
	if err != nil {
		return ChunkResult{}, fmt.Errorf("triplets %s instances: %w", c.Repo, err)
	}
	part, err := WritePart(ctx, c.Bucket, schema.TripletsInstancesKey(c.Run, c.Repo), recs)
	if err != nil {
		return ChunkResult{}, err
	}
	return ChunkResult{Part: part, Stats: st}, nil
}
