package schema

import (
	"strings"
	"unicode/utf8"
)

// GraphNode is one row of repos/<repo>/graph/<commit>/nodes.parquet.
// Ids follow LocAgent: directories and files are repository-relative paths
// (the root directory is "/"), classes and functions "<file>:<qualified name>".
type GraphNode struct {
	ID       string `parquet:"id"`
	Type     string `parquet:"type,dict"` // directory, file, class, function
	Language string `parquet:"language,dict"`
	// Path is the file (or directory) the node lives in. Ids, paths and names
	// are valid UTF-8: a path that is not keeps U+FFFD for each invalid
	// sequence here and in the ids, and its exact bytes in PathRaw.
	Path    string `parquet:"path,dict"`
	PathRaw []byte `parquet:"path_raw,optional"`
	// Name is the qualified name within the file ("Class.method") for classes and functions.
	Name        string `parquet:"name"`
	StartLine   int32  `parquet:"start_line"` // 1-based, inclusive
	EndLine     int32  `parquet:"end_line"`
	ContentHash string `parquet:"content_hash"` // sha-256 of Code, 32 hex digits
	Code        string `parquet:"code,zstd"`
}

// GraphEdge is one row of repos/<repo>/graph/<commit>/edges.parquet.
type GraphEdge struct {
	Src  string `parquet:"src,dict"`
	Dst  string `parquet:"dst,dict"`
	Type string `parquet:"type,dict"` // contains, imports, invokes, inherits
}

// GraphInfo is what the manifest records about the published graph.
type GraphInfo struct {
	Commit    string `json:"commit"`
	NodesKey  string `json:"nodes_key"`
	EdgesKey  string `json:"edges_key"`
	ReportKey string `json:"report_key"`
	// Sizes and hex SHA-256 of the two tables as written, checked by every
	// reader; 0 and "" for graphs written before they were recorded.
	NodesBytes  int64          `json:"nodes_bytes,omitempty"`
	NodesSHA256 string         `json:"nodes_sha256,omitempty"`
	EdgesBytes  int64          `json:"edges_bytes,omitempty"`
	EdgesSHA256 string         `json:"edges_sha256,omitempty"`
	Nodes       int            `json:"nodes"`
	Edges       int            `json:"edges"`
	Files       int            `json:"files"`
	Languages   map[string]int `json:"languages"` // parsed files by language
	// CodeBytes are the bytes of source by programming language, those
	// without a graph included (detection as linguist's: by extension,
	// without excluded directories, generated, minified or binary files);
	// empty for graphs recorded before it was.
	CodeBytes map[string]int64 `json:"code_bytes,omitempty"`
	// Warning says when the graph does not cover the repository's main
	// language ("graph: unsupported language rust, 92% of code; …"), as
	// index, status and localize report it; "" when it does.
	Warning    string         `json:"warning,omitempty"`
	Unresolved map[string]int `json:"unresolved,omitempty"`
	// Code lists the segments of the repository's code store that hold the
	// code of this graph's nodes (by content hash), and CodeNodes how many
	// nodes take their code from them. Empty for graphs written before
	// GraphVersion 3, whose nodes table holds the code inline.
	Code      []CodeSegment `json:"code,omitempty"`
	CodeNodes int           `json:"code_nodes,omitempty"`
	// MissingFiles counts the files of Commit not parsed because the
	// clone lacks their blob (listed in the report with the reason).
	MissingFiles int `json:"missing_files,omitempty"`
	// Extracts is where the files' extraction results of this build are
	// kept (size and SHA-256 as written), so that the next build parses
	// only the files that changed; empty when none were kept.
	ExtractsKey    string `json:"extracts_key,omitempty"`
	ExtractsBytes  int64  `json:"extracts_bytes,omitempty"`
	ExtractsSHA256 string `json:"extracts_sha256,omitempty"`
	// Parsed and Reused count the files this build parsed and those whose
	// extraction it took from the previous build.
	Parsed int `json:"parsed,omitempty"`
	Reused int `json:"reused,omitempty"`
}

// CodeSegment is one immutable object of a repository's code store
// (repos/<repo>/code/<sha256>.parquet, rows of CodeRow), named by the
// SHA-256 of its bytes, so that writing one is idempotent and any graph,
// the head's or a snapshot's, may share it.
type CodeSegment struct {
	Key    string `json:"key"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Rows   int    `json:"rows"`
}

// CodeRow is one row of a code segment: a node's code and its content hash
// (GraphNode.ContentHash, the first 16 bytes of its SHA-256 in hex).
type CodeRow struct {
	Hash string `parquet:"hash"`
	Code string `parquet:"code,zstd"`
}

// SearchInfo is what the manifest records about the retrieval indexes.
type SearchInfo struct {
	Commit    string `json:"commit"`
	Model     string `json:"model"` // embedding model of the stored vectors
	Dim       int    `json:"dim"`
	Functions int    `json:"functions"`
	Embedded  int    `json:"embedded"`   // functions embedded by the last run (others came from the cache)
	SparseKey string `json:"sparse_key"` // BM25 index over function documents
	// Vectors is the vector store holding the vectors: "local" (an exact
	// index in the object store) or the driver's name, e.g. "milvus".
	Vectors string `json:"vectors,omitempty"`
	// Size and hex SHA-256 of the BM25 index as written, checked by readers;
	// 0 and "" for indexes written before they were recorded.
	SparseBytes  int64  `json:"sparse_bytes,omitempty"`
	SparseSHA256 string `json:"sparse_sha256,omitempty"`
	// SparseDocsKey holds the hashes of the BM25 index's documents, which
	// the next run compares to take unchanged documents over; "" for
	// indexes written before (the next run tokenizes every document).
	SparseDocsKey string `json:"sparse_docs_key,omitempty"`
	// What the last run did: vectors written (new or changed documents),
	// vectors deleted (functions gone), BM25 documents taken over from the
	// previous index rather than tokenized.
	Upserted     int `json:"upserted,omitempty"`
	Deleted      int `json:"deleted,omitempty"`
	SparseReused int `json:"sparse_reused,omitempty"`
}

// IndexSearchInput is the IndexSearch activity's argument.
type IndexSearchInput struct {
	Repo  RepoName  `json:"repo"`
	Graph GraphInfo `json:"graph"`
}

// ValidUTF8 is s with each invalid UTF-8 sequence replaced by U+FFFD, the one
// rendering of non-UTF-8 bytes (paths, ids) used by every stored table, so
// that the commits table's changed_functions and paths join the graph's ids.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
