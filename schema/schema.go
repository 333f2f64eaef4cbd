// Package schema holds the data contracts shared by workflows, activities and engines:
// Parquet row types, repository ids, blob key layout and workflow payloads.
package schema

// Status values of a CommitFile row.
const (
	StatusAdded    = "added"
	StatusModified = "modified"
	StatusDeleted  = "deleted"
	StatusRenamed  = "renamed"
	// StatusEmpty marks the single row kept for a commit that changes no file
	// (an empty commit, or a merge identical to its first parent), so that
	// every reachable commit appears in the table.
	StatusEmpty = "empty"
)

// CommitFile is one row of the commits table: one (commit, changed file) pair.
// Merges are diffed against their first parent; root commits against the empty tree.
//
// Strings are valid UTF-8. Where git holds bytes that are not (a message in a legacy
// encoding, a Latin-1 file name), the string column carries a rendering (decoded from
// the commit's "encoding" header when it has one, otherwise with U+FFFD for each
// invalid sequence) and the matching *_raw column carries the exact bytes; *_raw is
// empty otherwise.
type CommitFile struct {
	Repo        string `parquet:"repo,dict"`
	CommitID    string `parquet:"commit_id,dict"`
	ParentID    string `parquet:"parent_id,dict"` // first parent; "" for a root commit
	NumParents  int32  `parquet:"num_parents"`
	IsMerge     bool   `parquet:"is_merge"`
	AuthorName  string `parquet:"author_name,dict"`
	AuthorEmail string `parquet:"author_email,dict"`
	// AuthorNameRaw and AuthorEmailRaw are the exact bytes when they differ
	// from AuthorName and AuthorEmail (since CommitsVersion 2).
	AuthorNameRaw  []byte `parquet:"author_name_raw,optional"`
	AuthorEmailRaw []byte `parquet:"author_email_raw,optional"`
	AuthorTime     int64  `parquet:"author_time,timestamp(millisecond)"` // unix milliseconds, UTC
	CommitTime     int64  `parquet:"commit_time,timestamp(millisecond)"` // unix milliseconds, UTC
	Message        string `parquet:"message,dict"`
	MessageRaw     []byte `parquet:"message_raw,optional"`
	Path           string `parquet:"path"` // "" only for StatusEmpty rows
	PathRaw        []byte `parquet:"path_raw,optional"`
	PreviousPath   string `parquet:"previous_path"` // set for renames; equals Path otherwise ("" for added)
	PrevPathRaw    []byte `parquet:"previous_path_raw,optional"`
	FileID         string `parquet:"file_id,dict"` // identity of the file across renames
	Status         string `parquet:"status,dict"`
	OldBlobID      string `parquet:"old_blob_id"` // "" when added
	NewBlobID      string `parquet:"new_blob_id"` // "" when deleted
	OldMode        uint32 `parquet:"old_mode"`
	NewMode        uint32 `parquet:"new_mode"`
	// Additions and Deletions are the lines added and removed; -1 (unknown)
	// when Missing, except for a change that keeps the content (a pure
	// rename or mode change): 0.
	Additions int32 `parquet:"additions"`
	Deletions int32 `parquet:"deletions"`
	IsBinary  bool  `parquet:"is_binary"`
	// Missing: a version's blob is not in the clone (a partial clone
	// filtered it out, or the repository lacks it), so the counts are
	// unknown and Diff and ChangedFunctions are empty (since CommitsVersion 3).
	Missing bool `parquet:"missing,optional"`
	// Diff is the unified diff of the file (3 lines of context, no header lines),
	// stored as bytes because source files need not be UTF-8.
	Diff          []byte `parquet:"diff,zstd"`
	DiffTruncated bool   `parquet:"diff_truncated"` // Diff was cut at the size cap
	Extension     string `parquet:"extension,dict"` // lower-case, with the dot: ".c"; "" if none
	// ChangedFunctions holds graph node ids of the functions this change touches
	// (valid UTF-8, as the graph stores them); filled by the code-graph stage.
	ChangedFunctions []string `parquet:"changed_functions,list"`
}
