package schema

import "time"

// SnapshotManifest says what is built for one commit of a repository: its
// code graph and BM25 index (sizes and SHA-256 checked by readers). Dense
// retrieval reads the repository's embedding cache by content hash, so a
// snapshot stores no vectors of its own.
type SnapshotManifest struct {
	Version int        `json:"version"`
	Repo    RepoName   `json:"repo"`
	Commit  string     `json:"commit"`
	Graph   GraphInfo  `json:"graph"`
	Search  SearchInfo `json:"search"`
	BuiltAt time.Time  `json:"built_at"`
}

// EnsureSnapshotInput is the EnsureSnapshot activity's argument.
type EnsureSnapshotInput struct {
	Repo RepoName `json:"repo"`
	// Commit is a full commit id or an unambiguous prefix of at least 7 hex digits.
	Commit  string       `json:"commit"`
	Options IndexOptions `json:"options,omitempty"`
}

// SnapshotInfo is what EnsureSnapshot returns.
type SnapshotInfo struct {
	Repo RepoName `json:"repo"`
	// Commit is the full commit id the input resolved to.
	Commit    string `json:"commit"`
	Functions int    `json:"functions"`
	// Reused: a verified snapshot was already stored.
	Reused bool `json:"reused,omitempty"`
	// Embedded is how many functions were not in the embedding cache.
	Embedded int `json:"embedded,omitempty"`
}
