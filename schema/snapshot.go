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
	// Base is the commit (the indexed head or another snapshot) this
	// snapshot was derived from: its unchanged files' extractions, BM25
	// documents and vectors were taken over, the rest parsed, tokenized and
	// embedded; "" when built from scratch. The result is the same.
	Base string `json:"base,omitempty"`
	// Extracts are the segments holding the extraction of every file of the
	// graph, for the snapshots derived from this one; none in snapshots
	// built before derivation (they are not used as a base).
	Extracts []ExtractsSegment `json:"extracts,omitempty"`
}

// ExtractsSegment is one immutable object of a repository's extraction
// store (RepoName.ExtractsSegmentKey), named by the SHA-256 of its bytes.
type ExtractsSegment struct {
	Key    string `json:"key"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Files  int    `json:"files"`
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
