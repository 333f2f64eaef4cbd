package schema

import (
	"strings"
	"testing"
)

// TestLayoutKeys pins every key builder: a stored object's key must not
// change, or what is stored is no longer found.
func TestLayoutKeys(t *testing.T) {
	r := RepoName("acme/widgets")
	const c = "0123456789abcdef0123456789abcdef01234567"
	nodes, edges, report, extracts := GraphTableKeys(r.GraphPrefix(c))
	for _, tc := range []struct{ got, want string }{
		{r.Prefix(), "repos/acme/widgets/"},
		{r.ManifestKey(), "repos/acme/widgets/manifest.json"},
		{r.DamagedManifestKey(), "repos/acme/widgets/manifest.damaged.json"},
		{r.LastRunKey(), "status/acme/widgets/last-run.json"},
		{r.CommitsPrefix(), "repos/acme/widgets/commits/"},
		{r.CommitsPartKey("a", "b"), "repos/acme/widgets/commits/part-a-b.parquet"},
		{r.FileIDsKey(c), "repos/acme/widgets/commits/fileids-" + c + ".txt.gz"},
		{r.GraphPrefix(c), "repos/acme/widgets/graph/" + c + "/"},
		{nodes, "repos/acme/widgets/graph/" + c + "/nodes.parquet"},
		{edges, "repos/acme/widgets/graph/" + c + "/edges.parquet"},
		{report, "repos/acme/widgets/graph/" + c + "/report.json"},
		{extracts, "repos/acme/widgets/graph/" + c + "/extracts.gob.zst"},
		{r.CodePrefix(), "repos/acme/widgets/code/"},
		{r.CodeSegmentKey("ff"), "repos/acme/widgets/code/ff.parquet"},
		{r.SparseKey(c), "repos/acme/widgets/sparse/" + c + "/functions.bm25"},
		{r.MemoryKey(c), "repos/acme/widgets/memory/" + c + ".parquet"},
		{r.SummariesKey("org/model:v1"), "repos/acme/widgets/summaries/" + SafeKeySegment("org/model:v1") + ".json"},
		{r.VectorsKey("m"), "repos/acme/widgets/vectors/m.vec"},
		{r.EmbedCachePrefix("m"), "repos/acme/widgets/embeddings/m/"},
		{r.EmbedPendingPrefix("m", c), "repos/acme/widgets/embeddings/m-pending/" + c + "/"},
		{r.SnapshotPrefix(c), "repos/acme/widgets/snapshots/" + c + "/"},
		{r.SnapshotManifestKey(c), "repos/acme/widgets/snapshots/" + c + "/manifest.json"},
		{r.SnapshotSparseKey(c), "repos/acme/widgets/snapshots/" + c + "/functions.bm25"},
		{RunPrefix("fleet-1"), "runs/fleet-1/"},
		{FleetSummaryKey("fleet-1"), "runs/fleet-1/summary.json"},
		{FleetResultsKey("fleet-1", 2), "runs/fleet-1/results-00002.json"},
		{FleetReposKey("fleet-1"), "runs/fleet-1/repos.json"},
		{strings.Join(r.ManifestPrefixes(), " "), "repos/acme/widgets/commits/ repos/acme/widgets/graph/ repos/acme/widgets/sparse/ repos/acme/widgets/memory/"},
		{BacklogKey("b-1", "summary.json"), "backlogs/b-1/summary.json"},
		{BacklogPartKey("b-1", 3), "backlogs/b-1/part-00003.parquet"},
		{BacklogDetailKey("b-1", 3), "backlogs/b-1/detail-00003.jsonl"},
		{TripletsPartKey("t-1", r, 2), "triplets/t-1/repo=acme+widgets/part-00002.parquet"},
		{TripletsInstancesKey("t-1", r), "triplets/t-1/repo=acme+widgets/instances.parquet"},
		{TripletsResultsKey("t-1", 4), "triplets/t-1/results-00004.json"},
		{TripletsInputKey("issues", "0011223344556677"), "triplets/inputs/issues-0011223344556677.json"},
		{LLMCacheKey("abcdef"), "llmcache/ab/abcdef.json"},
	} {
		if tc.got != tc.want {
			t.Errorf("key %q, want %q", tc.got, tc.want)
		}
	}
}
