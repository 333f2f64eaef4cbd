package schema

import "time"

// RepoSpec names one repository to index.
type RepoSpec struct {
	// URL is where to clone from: https://…, ssh://…, git@host:path, file://…,
	// or a local path to a working copy or a bare directory.
	URL string `json:"url"`
	// Name is the normalised owner/name; derived from URL when empty.
	Name RepoName `json:"name,omitempty"`
	// Ref is the branch, tag or commit to index; default: the remote's HEAD.
	Ref string `json:"ref,omitempty"`
}

// IndexOptions tune one IndexRepo run.
type IndexOptions struct {
	// MaxDiffBytes caps the stored diff of one file in one commit; default 256 KiB.
	MaxDiffBytes int `json:"max_diff_bytes,omitempty"`
	// CommitsPerPart bounds the commits in one Parquet part; default 5000.
	CommitsPerPart int `json:"commits_per_part,omitempty"`
	// PrimaryLanguageOnly builds the code graph of the repository's main
	// language only (the SpIDER paper's setting); default all languages.
	PrimaryLanguageOnly bool `json:"primary_language_only,omitempty"`
	// EmbedRetry tunes the retries of the embedding steps; nil or zero
	// values: 2 s initial interval, doubling up to 30 s, 4 attempts.
	EmbedRetry *RetryOptions `json:"embed_retry,omitempty"`
	// Summaries has an LLM summarize every function whose code has no
	// stored summary before the search index is built, and the summaries
	// join the functions' documents (semantic memory); needs workers with
	// an LLM; default off.
	Summaries bool `json:"summaries,omitempty"`
	// MaxBlobSize, when positive, clones and fetches without the blobs
	// larger than this many bytes (git's --filter=blob:limit=N); like blobs
	// a mirror lacks, they are recorded as missing, never fatal. 0: all.
	MaxBlobSize int64 `json:"max_blob_size,omitempty"`
	// HostWait is how long a step bound to the host that holds the clone
	// waits for that host to take it (the activity's schedule-to-start
	// timeout). A host whose workers are gone takes nothing; after HostWait
	// the repository is synced again on the shared queue, which clones it
	// on a live host, and the step runs there. 0: 10 minutes.
	HostWait time.Duration `json:"host_wait,omitempty"`
}

// SummarizeResult says what an index's function summaries step did.
type SummarizeResult struct {
	Model string `json:"model"`
	// Functions are the graph's non-test functions; Stored those that had a
	// summary already; Summarized those summarized now; Failed those whose
	// answer was unusable or refused (FailedIDs names the first 20).
	Functions  int      `json:"functions"`
	Stored     int      `json:"stored"`
	Summarized int      `json:"summarized"`
	Failed     int      `json:"failed"`
	FailedIDs  []string `json:"failed_ids,omitempty"`
	// Usage of the calls (CachedCalls answered by the decision cache).
	Calls            int `json:"calls"`
	CachedCalls      int `json:"cached_calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Error says why summarizing stopped for good (the index was built
	// with the summaries stored until then); "" when it finished.
	Error string `json:"error,omitempty"`
}

// RetryOptions tune an activity retry policy; zero values take the defaults.
type RetryOptions struct {
	InitialInterval time.Duration `json:"initial_interval,omitempty"`
	MaximumInterval time.Duration `json:"maximum_interval,omitempty"`
	MaximumAttempts int32         `json:"maximum_attempts,omitempty"`
}

// FleetOptions tune an IndexFleet run.
type FleetOptions struct {
	// Window is the most IndexRepo children in flight; default 50.
	Window int `json:"window,omitempty"`
	// ContinueAsNewAfter is how many children one run starts before it continues
	// as new; default 500 (keeps each history far below Temporal's limits).
	ContinueAsNewAfter int          `json:"continue_as_new_after,omitempty"`
	Index              IndexOptions `json:"index"`
}

// IndexFleetInput is the IndexFleet workflow's argument. Next and the carried
// totals let a continued run pick up where the previous one stopped.
type IndexFleetInput struct {
	// Repos lists a small fleet inline. A large one is stored as a JSON array of
	// RepoSpec at ReposKey with Total entries, and each run loads its slice.
	Repos    []RepoSpec `json:"repos,omitempty"`
	ReposKey string     `json:"repos_key,omitempty"`
	Total    int        `json:"total,omitempty"`

	Options FleetOptions `json:"options"`
	// Next is the index in Repos of the first repository not yet started.
	Next int `json:"next,omitempty"`
	// Carried totals and result parts of earlier runs of this fleet.
	Done       int       `json:"done,omitempty"`
	Failed     int       `json:"failed,omitempty"`
	ResultKeys []string  `json:"result_keys,omitempty"`
	StartedAt  time.Time `json:"started_at,omitempty"`
	// Running are repositories an earlier run started that had not
	// reported when it continued as new: this run waits for their reports.
	Running []RepoSpec `json:"running,omitempty"`
}

// FleetProgress is the answer to IndexFleet's "progress" query.
type FleetProgress struct {
	Total   int `json:"total"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Running int `json:"running"`
	Pending int `json:"pending"`
}

// RepoResult is the outcome of one repository in a fleet run.
type RepoResult struct {
	Repo       RepoName `json:"repo"`
	URL        string   `json:"url"`
	OK         bool     `json:"ok"`
	Error      string   `json:"error,omitempty"`
	Head       string   `json:"head,omitempty"`
	NewCommits int      `json:"new_commits,omitempty"`
	Rows       int64    `json:"rows,omitempty"`
	// Empty: the repository has no commits; it is recorded, but there is
	// nothing to search.
	Empty bool `json:"empty,omitempty"`
	// Rewritten: the history was rewritten (force-push) since the last index,
	// and the index was rebuilt from the new history.
	Rewritten bool `json:"rewritten,omitempty"`
	// Repaired: published commit parts (or the file-id map) were damaged or
	// missing, and the whole history was re-scraped to replace them.
	Repaired bool `json:"repaired,omitempty"`
	// Summaries is what the function summaries step did (IndexOptions.Summaries).
	Summaries *SummarizeResult `json:"summaries,omitempty"`
	// UpToDate: nothing changed since the published index; nothing was redone.
	UpToDate bool `json:"up_to_date,omitempty"`
	// Warning is the graph's (GraphInfo.Warning): its main language has no
	// code graph support, or no file was parsed.
	Warning string `json:"warning,omitempty"`
	// MissingRows are the commit rows this run wrote whose blob the clone
	// lacked (ScrapeResult.Missing); MissingFiles the files of the head not
	// parsed for that reason (GraphInfo.MissingFiles).
	MissingRows  int64 `json:"missing_rows,omitempty"`
	MissingFiles int   `json:"missing_files,omitempty"`
}

// FleetSummary is written to runs/<workflow id>/summary.json when a fleet ends.
type FleetSummary struct {
	WorkflowID string       `json:"workflow_id"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	Total      int          `json:"total"`
	Done       int          `json:"done"`
	Failed     int          `json:"failed"`
	Results    []RepoResult `json:"results"`
}

// IndexRepoInput is the IndexRepo workflow's argument.
type IndexRepoInput struct {
	Repo    RepoSpec     `json:"repo"`
	Options IndexOptions `json:"options"`
	// ReportTo is the workflow id of the fleet that started this run; the
	// run signals it its result (workflows.RepoDoneSignal) as it ends,
	// even if the fleet has continued as new since. "": no report.
	ReportTo string `json:"report_to,omitempty"`
}

// SyncInput is the Sync activity's argument.
type SyncInput struct {
	Repo RepoSpec `json:"repo"`
	// MaxBlobSize is IndexOptions.MaxBlobSize.
	MaxBlobSize int64 `json:"max_blob_size,omitempty"`
}

// SyncResult tells where the clone lives and what was resolved.
type SyncResult struct {
	Repo RepoName `json:"repo"`
	// HostQueue is the task queue of the host that holds the clone; every later
	// step that reads the clone runs there.
	HostQueue string `json:"host_queue"`
	// Head is the commit the ref resolved to; "" for an empty repository.
	Head    string `json:"head"`
	Empty   bool   `json:"empty,omitempty"`
	Shallow bool   `json:"shallow,omitempty"`
	// UpToDate: the published index is of Head, whole (its commit parts,
	// graph and BM25 index read back as recorded) and embedded with this
	// worker's model; the rest of the index run has nothing to do.
	UpToDate bool `json:"up_to_date,omitempty"`
	// Rows is the published history's row count when UpToDate.
	Rows int64 `json:"rows,omitempty"`
}

// ScrapeInput is the ScrapeCommits activity's argument.
type ScrapeInput struct {
	Repo    RepoName     `json:"repo"`
	URL     string       `json:"url"`
	Head    string       `json:"head"`
	Options IndexOptions `json:"options"`
}

// ScrapeResult summarises what ScrapeCommits wrote.
type ScrapeResult struct {
	// BaseHead is the manifest head the scrape continued from ("" for a first run);
	// publishing checks it is still current.
	BaseHead   string `json:"base_head,omitempty"`
	Head       string `json:"head"`
	NewCommits int    `json:"new_commits"`
	Rows       int64  `json:"rows"`
	Parts      []Part `json:"parts"`    // the parts written by this run, oldest first
	FileIDs    string `json:"file_ids"` // key of the path → file id map at Head
	// Root identifies the repository: the root commit at the end of Head's
	// first-parent chain (see Manifest.Root).
	Root string `json:"root,omitempty"`
	// Replace: Parts hold the whole history and replace the published ones,
	// for the reason ReplaceReason gives.
	Replace bool `json:"replace,omitempty"`
	// ReplaceReason says why the history was re-scraped: ReplaceRewritten
	// (BaseHead is not an ancestor of Head: force-push) or ReplaceDamaged
	// (published parts or the file-id map were damaged or missing). "" with
	// Replace set is a result recorded before reasons were: rewritten.
	ReplaceReason string `json:"replace_reason,omitempty"`
	// Memory is the repository memory of the history up to Head, written
	// by this run; nil keeps the published one (or none).
	Memory *MemoryInfo `json:"memory,omitempty"`
	// Resumed is how many of NewCommits an earlier attempt had written,
	// whole parts this attempt continued after instead of diffing again.
	Resumed int `json:"resumed,omitempty"`
	// Missing counts the rows of Parts whose blob the clone lacked.
	Missing int64 `json:"missing,omitempty"`
}

// Reasons of a replacing scrape (ScrapeResult.ReplaceReason).
const (
	ReplaceRewritten = "rewritten"
	ReplaceDamaged   = "damaged"
)

// Manifest says what is indexed for a repository; written last, replaced atomically.
type Manifest struct {
	Version int      `json:"version"`
	Repo    RepoName `json:"repo"`
	URL     string   `json:"url"`
	// Root is the repository's identity: the commit without parents reached by
	// following first parents from Head. A name holds one repository; indexing
	// another one (another root) into it is refused. "" in manifests written
	// before identities were recorded; filled by the next index.
	Root      string         `json:"root,omitempty"`
	Ref       string         `json:"ref,omitempty"`
	Head      string         `json:"head"` // newest commit whose history is fully scraped
	Commits   int            `json:"commits"`
	Rows      int64          `json:"rows"`
	Parts     []Part         `json:"parts"`              // every commits part, oldest first
	FileIDs   string         `json:"file_ids,omitempty"` // key of the path → file id map at Head
	Graph     *GraphInfo     `json:"graph,omitempty"`    // code graph at Head
	Search    *SearchInfo    `json:"search,omitempty"`   // retrieval indexes built from Graph
	Memory    *MemoryInfo    `json:"memory,omitempty"`   // repository memory of the history up to Head
	IndexedAt time.Time      `json:"indexed_at"`
	Versions  map[string]int `json:"versions"`
	// HostQueue is the task queue of the host whose clone the last index
	// read (SyncResult.HostQueue): snapshots of the repository are built
	// there. "" in manifests written before it was recorded.
	HostQueue string `json:"host_queue,omitempty"`
	// MissingRows counts the rows of Parts whose blob the clone lacked
	// (CommitFile.Missing); Graph.MissingFiles the files of Head not
	// parsed for that reason.
	MissingRows int64 `json:"missing_rows,omitempty"`
}

// Part describes one commits Parquet part.
type Part struct {
	Key     string `json:"key"`
	First   string `json:"first"`
	Last    string `json:"last"`
	Commits int    `json:"commits"`
	Rows    int64  `json:"rows"`
	Bytes   int64  `json:"bytes"`
	// SHA256 is the hex SHA-256 of the part as written; "" for parts written
	// before it was recorded (their size is still checked).
	SHA256 string `json:"sha256,omitempty"`
	// Missing counts the rows whose blob the clone lacked (CommitFile.Missing).
	Missing int64 `json:"missing,omitempty"`
}

// MissingRows is how many rows of the parts have a blob the clone lacked.
func MissingRows(parts []Part) int64 {
	var n int64
	for _, p := range parts {
		n += p.Missing
	}
	return n
}

// BuildGraphInput is the BuildGraph activity's argument.
type BuildGraphInput struct {
	Repo    RepoName     `json:"repo"`
	Head    string       `json:"head"`
	Options IndexOptions `json:"options"`
}

// MemoryInfo describes a stored repository memory table (internal/memory).
type MemoryInfo struct {
	Key     string `json:"key"`
	Commits int    `json:"commits"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	// Layout is what the table holds: 0 commits only, 1 also the files
	// they moved (MemoryLayout is the current one; an older one is
	// rebuilt from the commits table by the next index, without a
	// re-scrape).
	Layout int `json:"layout,omitempty"`
}
