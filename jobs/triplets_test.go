package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/triplets"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// A run stores its repositories in the order they finished, which a lost
// worker changes. Two repositories that mined the same query (a fork, a
// vendored copy) keep one record after the dedup: the same one whichever
// finished first.
func TestCollectTripletsIgnoresFinishOrder(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	results := map[schema.RepoName]activities.TripletsRepoResult{}
	for _, repo := range []schema.RepoName{"acme/fork", "acme/upstream"} {
		rec := triplets.Record{Repo: string(repo), QueryID: string(repo) + "@c1", Query: "cache get returns a stale key", Source: "commit",
			Positives: []triplets.Doc{{ID: "cache.py:get", File: "cache.py", Code: "def get(k): ...", Hash: "p-" + string(repo)}},
			Negatives: []triplets.Negative{{Doc: triplets.Doc{ID: "cache.py:put", File: "cache.py", Code: "def put(k): ...", Hash: "n"}, Source: triplets.SourceBM25, Rank: 2}}}
		p, err := triplets.WritePart(ctx, b, fmt.Sprintf("runs/t/%s/part-0.parquet", repo), []triplets.Record{rec})
		if err != nil {
			t.Fatal(err)
		}
		results[repo] = activities.TripletsRepoResult{Repo: repo, Commits: 1, Records: 1, Parts: []triplets.PartInfo{p}}
	}
	collect := func(run string, order ...schema.RepoName) collected {
		t.Helper()
		var rs []activities.TripletsRepoResult
		for _, r := range order {
			rs = append(rs, results[r])
		}
		data, err := json.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		key := schema.TripletsResultsKey(run, 0)
		if err := b.WriteAll(ctx, key, data); err != nil {
			t.Fatal(err)
		}
		col, err := CollectTriplets(ctx, b, workflows.TripletsResult{Run: run, ResultKeys: []string{key}}, &triplets.Dedup{})
		if err != nil {
			t.Fatal(err)
		}
		return collected{col.Records, col.Dropped}
	}
	fork := collect("fork-first", "acme/fork", "acme/upstream")
	upstream := collect("upstream-first", "acme/upstream", "acme/fork")
	if len(fork.records) != 1 || fork.dropped[triplets.DropDuplicateQuery] != 1 {
		t.Fatalf("want one record and one duplicate query dropped: %+v", fork)
	}
	if !reflect.DeepEqual(fork, upstream) {
		t.Errorf("the records depend on the order the repositories finished:\n%+v\n%+v", fork, upstream)
	}
}

// collected is what a collection kept and dropped.
type collected struct {
	records []triplets.Record
	dropped map[triplets.Skip]int
}
