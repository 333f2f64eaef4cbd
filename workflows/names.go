// Package workflows holds locus's deterministic orchestration: fleet fan-out and per-repository indexing.
package workflows

// Task queues. Clone-bound steps run on a per-host queue returned by Sync.
const (
	// IndexQueue carries workflows and CPU/git activities that may run on any host.
	IndexQueue = "locus-index"
	// EmbedQueue carries embedding and vector upserts; its workers' concurrency
	// is matched to the embedding servers.
	EmbedQueue = "locus-embed"
)

// Query names.
const (
	// ProgressQuery answers IndexFleet's schema.FleetProgress.
	ProgressQuery = "progress"
	// RepoDoneSignal carries an IndexRepo child's schema.RepoResult to its
	// fleet (IndexRepoInput.ReportTo).
	RepoDoneSignal = "repo-done"
)

// RepoWorkflowID is the workflow id of IndexRepo for a repository: one run per
// repository at a time, whichever fleet started it.
func RepoWorkflowID(repo string) string { return "index-repo/" + repo }
