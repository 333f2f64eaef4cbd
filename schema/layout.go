package schema

import (
	"fmt"
	"strings"
)

// The storage layout: every object key locus writes, and every version a
// stored format records, with the changelog of each format. A change to a
// format bumps its version here and adds a line saying what changed and how
// older data reads.
//
//	repos/<owner>/<name>/                          RepoName.Prefix
//	    manifest.json                              ManifestKey (ManifestVersion)
//	    manifest.damaged.json                      DamagedManifestKey
//	    commits/part-<first>-<last>.parquet        CommitsPartKey (CommitsVersion)
//	    commits/fileids-<head>.txt.gz              FileIDsKey
//	    graph/<commit>/nodes.parquet, edges.parquet, report.json, extracts.gob.zst
//	                                               GraphPrefix, GraphTableKeys (GraphVersion, ExtractVersion)
//	    code/<sha256>.parquet                      CodeSegmentKey (GraphVersion)
//	    extracts/<sha256>.gob.zst                  ExtractsSegmentKey (ExtractVersion)
//	    sparse/<commit>/functions.bm25[.docs]      SparseKey (SparseIndexVersion, TokenizerVersion)
//	    memory/<head>.parquet                      MemoryKey (MemoryVersion, MemoryLayout)
//	    summaries/<model>.json                     SummariesKey
//	    vectors/<model>.vec                        VectorsKey
//	    embeddings/<model>/<shard>/...             EmbedCachePrefix
//	    embeddings/<model>-pending/<commit>/       EmbedPendingPrefix
//	    snapshots/<commit>/manifest.json           SnapshotManifestKey (SnapshotVersion)
//	    snapshots/<commit>/functions.bm25[.docs]   SnapshotSparseKey
//	status/<owner>/<name>/last-run.json            RepoName.LastRunKey
//	runs/<workflow>/summary.json                   FleetSummaryKey
//	runs/<workflow>/results-00000.json, repos.json FleetResultsKey, FleetReposKey
//	backlogs/<run>/part-00000.parquet              BacklogPartKey (BacklogVersion)
//	backlogs/<run>/detail-00000.jsonl, summary.json, input.json, parse-errors.json,
//	    report.html                                BacklogKey
//	triplets/<run>/repo=<owner+name>/part-00000.parquet, instances.parquet
//	                                               TripletsPartKey, TripletsInstancesKey (TripletsVersion)
//	triplets/<run>/results-00000.json              TripletsResultsKey
//	triplets/inputs/<kind>-<hash>.json             TripletsInputKey
//	llmcache/<ab>/<key>.json                       LLMCacheKey

// Format versions; bump one when a reader could misread older data.
const (
	// ManifestVersion is the version of manifest.json.
	//   1: first.
	//   2: the graph's code may live in the repository's code store
	//      (GraphInfo.Code, GraphVersion 3), which locus before it would
	//      read as empty code, and host_queue names the host with the
	//      clone; manifests of version 1 read as before.
	ManifestVersion = 2

	// CommitsVersion is the version of the commits table layout.
	//   1: first.
	//   2: added author_name_raw and author_email_raw, decodes messages in
	//      the commit's declared encoding, and keeps changed_functions
	//      valid UTF-8; parts of version 1 read as version 2 with those
	//      columns empty.
	//   3: added missing (a blob the clone lacks; additions and deletions
	//      -1); parts of version 2 read as version 3 with missing false,
	//      which they are: a scrape before it failed on a missing blob.
	CommitsVersion = 3

	// GraphVersion is the version of the graph tables' layout.
	//   1: first.
	//   2: every string column valid UTF-8 (see ValidUTF8) and nodes'
	//      path_raw; version 1 tables read as version 2 with path_raw empty.
	//   3: node code moved to the repository's content-addressed code store
	//      (GraphInfo.Code): a node whose code is there has an empty code
	//      column; tables of versions 1 and 2 (no GraphInfo.Code) keep their
	//      code inline and read as before.
	GraphVersion = 3

	// ExtractVersion is the version of the extraction results a graph
	// keeps (extracts.gob.zst); it changes whenever an extractor's output
	// does, so that results kept by an older build are never reused (they
	// are parsed again).
	//   1: first (incremental builds).
	//   2: Rust: self and super in an inline module are relative to it.
	//   3-7: C and C++: export, attribute and block-opening macros blanked
	//      or mended before parsing.
	ExtractVersion = 7

	// SnapshotVersion is the version of a snapshot manifest.
	//   1: first.
	//   2: the graph's code is in the repository's code store, shared with
	//      the head and other snapshots (GraphInfo.Code); snapshots of
	//      version 1 keep it inline in their nodes table and still read (and
	//      are reused) as they are.
	SnapshotVersion = 2

	// SparseIndexVersion is the version of the BM25 index's binary format
	// (internal/sparse, format.go); an index of another version is an
	// error (ErrVersion) and is rebuilt.
	//   1: first.
	SparseIndexVersion = 1

	// TokenizerVersion identifies the behaviour of sparse.Tokenize. It is
	// stored in every BM25 index and checked on load, because an index
	// queried with tokens produced by different rules silently loses
	// recall. Bump it whenever a change can change Tokenize's output.
	//   1: first.
	TokenizerVersion = 1

	// MemoryVersion is the version of a repository memory table's layout
	// (internal/memory).
	//   1: first.
	MemoryVersion = 1

	// MemoryLayout is MemoryInfo.Layout of the tables written now: what a
	// table holds.
	//   0: commits only.
	//   1: also the files they moved; a table of layout 0 is rebuilt from
	//      the commits table by the next index, without a re-scrape.
	MemoryLayout = 1

	// BacklogVersion is the version of the backlog results table layout.
	//   1: first.
	//   2: added commit (the commit ranked at), and each function's line
	//      and first lines of code; parts of version 1 read as version 2
	//      with those empty.
	BacklogVersion = 2

	// TripletsVersion is the version of a triplets part's layout.
	//   1: first.
	TripletsVersion = 1
)

// Prefix is the blob prefix of everything stored for the repository.
func (r RepoName) Prefix() string { return "repos/" + string(r) + "/" }

// ManifestKey is the key of the repository's manifest, written last by IndexRepo.
func (r RepoName) ManifestKey() string { return r.Prefix() + "manifest.json" }

// DamagedManifestKey is where a manifest that could not be read is kept
// when the repository is indexed again (the latest one only).
func (r RepoName) DamagedManifestKey() string { return r.Prefix() + "manifest.damaged.json" }

// LastRunKey is where the last fleet run that took the repository says how
// it went (LastRun): outside the repository's own prefix, since a run that
// was refused (another repository under the name, say) must leave what is
// stored there untouched.
func (r RepoName) LastRunKey() string { return "status/" + string(r) + "/last-run.json" }

// CommitsPrefix is the prefix of the commits table parts.
func (r RepoName) CommitsPrefix() string { return r.Prefix() + "commits/" }

// CommitsPartKey is the key of the part holding commits first..last (oldest to newest).
func (r RepoName) CommitsPartKey(first, last string) string {
	return r.CommitsPrefix() + "part-" + first + "-" + last + ".parquet"
}

// FileIDsKey is the key of the path → file id map as of the given scraped head
// (gzip of lines "<file id> <Go-quoted path>", so any path bytes round-trip).
func (r RepoName) FileIDsKey(head string) string {
	return r.CommitsPrefix() + "fileids-" + head + ".txt.gz"
}

// GraphPrefix is where the graph of one commit is stored.
func (r RepoName) GraphPrefix(commit string) string { return r.Prefix() + "graph/" + commit + "/" }

// GraphTableKeys are the objects of one graph under prefix (a GraphPrefix
// or a SnapshotPrefix): its nodes and edges tables, its build report and
// the extraction results it keeps.
func GraphTableKeys(prefix string) (nodes, edges, report, extracts string) {
	return prefix + "nodes.parquet", prefix + "edges.parquet", prefix + "report.json", prefix + "extracts.gob.zst"
}

// CodePrefix is where the repository's code store lives, shared by the
// graph of the head and of every snapshot.
func (r RepoName) CodePrefix() string { return r.Prefix() + "code/" }

// CodeSegmentKey is the key of the code segment whose bytes have the given
// hex SHA-256.
func (r RepoName) CodeSegmentKey(sha256 string) string { return r.CodePrefix() + sha256 + ".parquet" }

// ExtractsSegmentKey is the key of an extraction segment (files'
// extraction results, as a graph keeps them) whose bytes have the given hex
// SHA-256: shared by the snapshots derived from one another, and never
// swept by publishing the head.
func (r RepoName) ExtractsSegmentKey(sha256 string) string {
	return r.Prefix() + "extracts/" + sha256 + ".gob.zst"
}

// SparseKey is where the BM25 index over a commit's function documents
// lives; its document hashes are beside it, at SparseKey + ".docs".
func (r RepoName) SparseKey(commit string) string {
	return r.Prefix() + "sparse/" + commit + "/functions.bm25"
}

// MemoryKey is where the memory of the repository at head is stored.
func (r RepoName) MemoryKey(head string) string { return r.Prefix() + "memory/" + head + ".parquet" }

// SummariesKey is where the repository's function summaries by model
// live: one JSON object from function content hash to summary, so a
// function keeps its summary while its code is unchanged, at any commit.
func (r RepoName) SummariesKey(model string) string {
	return r.Prefix() + "summaries/" + SafeKeySegment(model) + ".json"
}

// VectorsKey is where the local vector index of the repository by model lives.
func (r RepoName) VectorsKey(model string) string {
	return r.Prefix() + "vectors/" + SafeKeySegment(model) + ".vec"
}

// EmbedCachePrefix is where the repository's cached embeddings by model live.
func (r RepoName) EmbedCachePrefix(model string) string {
	return r.Prefix() + "embeddings/" + SafeKeySegment(model) + "/"
}

// EmbedPendingPrefix holds the embedding batches of one indexing run.
func (r RepoName) EmbedPendingPrefix(model, commit string) string {
	return r.Prefix() + "embeddings/" + SafeKeySegment(model) + "-pending/" + commit + "/"
}

// ManifestPrefixes are the prefixes whose objects belong to a published
// manifest: publishing one deletes those under them it does not refer to.
func (r RepoName) ManifestPrefixes() []string {
	return []string{r.CommitsPrefix(), r.Prefix() + "graph/", r.Prefix() + "sparse/", r.Prefix() + "memory/"}
}

// SnapshotPrefix is where the indexes of one commit other than the indexed
// head live: repos/<repo>/snapshots/<commit>/ (commit: 40 hex digits). The
// repository's manifest never refers to it, so publishing the head neither
// reads nor sweeps it.
func (r RepoName) SnapshotPrefix(commit string) string {
	return r.Prefix() + "snapshots/" + commit + "/"
}

// SnapshotManifestKey is the key of a snapshot's manifest, written last.
func (r RepoName) SnapshotManifestKey(commit string) string {
	return r.SnapshotPrefix(commit) + "manifest.json"
}

// SnapshotSparseKey is where the BM25 index of a snapshot lives; its
// document hashes are beside it, at SnapshotSparseKey + ".docs".
func (r RepoName) SnapshotSparseKey(commit string) string {
	return r.SnapshotPrefix(commit) + "functions.bm25"
}

// RunPrefix is the prefix for the outputs of one workflow run (fleet summaries etc.).
func RunPrefix(workflowID string) string {
	return "runs/" + SafeKeySegment(workflowID) + "/"
}

// FleetSummaryKey is where a fleet run's FleetSummary is written when it ends.
func FleetSummaryKey(fleetID string) string { return RunPrefix(fleetID) + "summary.json" }

// FleetResultsKey is where the results of the seq-th run of a fleet
// (between two continue-as-new points) are written.
func FleetResultsKey(fleetID string, seq int) string {
	return fmt.Sprintf("%sresults-%05d.json", RunPrefix(fleetID), seq)
}

// FleetReposKey is where a fleet's repositories are stored when there are
// too many to pass inline.
func FleetReposKey(fleetID string) string { return RunPrefix(fleetID) + "repos.json" }

// BacklogKey is the key of a file of a backlog run: backlogs/<run>/<name>.
func BacklogKey(run, name string) string { return "backlogs/" + SafeKeySegment(run) + "/" + name }

// BacklogPartKey is the key of results part n of a run: backlogs/<run>/part-00000.parquet.
func BacklogPartKey(run string, n int) string {
	return BacklogKey(run, fmt.Sprintf("part-%05d.parquet", n))
}

// BacklogDetailKey is the key of the details beside results part n of a
// run: backlogs/<run>/detail-00000.jsonl.
func BacklogDetailKey(run string, n int) string {
	return BacklogKey(run, fmt.Sprintf("detail-%05d.jsonl", n))
}

// TripletsPartKey is where part n of a run's records of repo (owner/name)
// live: triplets/<run>/repo=<owner+name>/part-00000.parquet ("+" cannot
// occur in a repository name, so two names never share a key).
func TripletsPartKey(run string, repo RepoName, n int) string {
	return tripletsRepoPrefix(run, repo) + fmt.Sprintf("part-%05d.parquet", n)
}

// TripletsInstancesKey is where a run's instances of repo are stored,
// beside its parts.
func TripletsInstancesKey(run string, repo RepoName) string {
	return tripletsRepoPrefix(run, repo) + "instances.parquet"
}

func tripletsRepoPrefix(run string, repo RepoName) string {
	return "triplets/" + SafeKeySegment(run) + "/repo=" + strings.Replace(string(repo), "/", "+", 1) + "/"
}

// TripletsResultsKey is the key of the seq-th results file of a triplets run.
func TripletsResultsKey(run string, seq int) string {
	return fmt.Sprintf("triplets/%s/results-%05d.json", SafeKeySegment(run), seq)
}

// TripletsInputKey is where a run's input of a kind ("instances",
// "issues") is stored, named by the first 8 bytes of its SHA-256 (hex).
func TripletsInputKey(kind, sumHex16 string) string {
	return "triplets/inputs/" + kind + "-" + sumHex16 + ".json"
}

// LLMCacheKey is where the cached answer with cache key k (hex) lives.
func LLMCacheKey(k string) string { return "llmcache/" + k[:2] + "/" + k + ".json" }

// RankRecordsKey is where a ranker-training run stores the triplet records
// of repo it trains on: rank/runs/<run>/records/<owner+name>.parquet.
func RankRecordsKey(run string, repo RepoName) string {
	return "rank/runs/" + SafeKeySegment(run) + "/records/" + repo.FileName() + ".parquet"
}

// RankRunKey is where a ranker-training run keeps a file of its own (a
// model before it is published): rank/runs/<run>/<name>.
func RankRunKey(run, name string) string { return "rank/runs/" + SafeKeySegment(run) + "/" + name }

// RankFeaturesKey is where the learned ranker's features of repo's
// queries are stored, named by what they were computed from (key: a hex
// digest of the feature version, the options and the records), so that
// every run featurising the same records reuses them.
func RankFeaturesKey(repo RepoName, key string) string {
	return "rank/features/" + repo.FileName() + "/" + SafeKeySegment(key) + ".parquet"
}

// RankModelKey is where a fleet's published ranking model, its
// leave-one-repository-out models and its report live:
// rank/models/<fleet>/<name> (model.json, loo/<owner+name>.json,
// report.json, report.md, importance.png).
func RankModelKey(fleet, name string) string {
	return "rank/models/" + SafeKeySegment(fleet) + "/" + name
}
