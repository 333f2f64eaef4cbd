package codegraph

import "github.com/locus-dev/locus/schema"

// Node types.
const (
	TypeDirectory = "directory"
	TypeFile      = "file"
	TypeClass     = "class"
	TypeFunction  = "function"
)

// Edge types.
const (
	EdgeContains = "contains"
	EdgeImports  = "imports"
	EdgeInvokes  = "invokes"
	EdgeInherits = "inherits"
)

// RootID is the id of the repository's root directory node.
const RootID = "/"

// Node is a directory, file, class or function (a row of nodes.parquet).
type Node = schema.GraphNode

// Edge is a directed relation between two nodes (a row of edges.parquet).
type Edge = schema.GraphEdge

// SkipMissingBlob is the reason a file is not parsed when the repository
// lacks its content.
const SkipMissingBlob = "blob missing from the clone (a partial clone's blob filter, or the repository lacks it)"

// Skipped is a file the builder did not parse, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Stats summarise a build.
type Stats struct {
	Files       int            `json:"files"` // files parsed
	Bytes       int64          `json:"bytes"` // bytes parsed
	FilesByLang map[string]int `json:"files_by_language"`
	// CodeBytes are bytes of source by programming language, parsed or
	// not (see schema.GraphInfo.CodeBytes).
	CodeBytes     map[string]int64 `json:"code_bytes"`
	Nodes         int              `json:"nodes"`
	Edges         map[string]int   `json:"edges"`            // by type
	Unresolved    map[string]int   `json:"unresolved"`       // references with no target, by edge type
	External      int              `json:"external_imports"` // imports of modules outside the repository
	ExternalCalls int              `json:"external_calls"`   // calls through names bound to such modules
	ExternalBases int              `json:"external_bases"`   // base classes from such modules
	ErrorNodes    int              `json:"error_nodes"`      // tree-sitter error nodes over all files
	FilesWithErr  int              `json:"files_with_errors"`
	Skipped       []Skipped        `json:"skipped"`
	// Missing counts the files whose blob the repository lacks (a
	// partial clone's filter, an incomplete mirror): in Skipped with the
	// reason SkipMissingBlob.
	Missing int `json:"missing_blobs,omitempty"`
	// Reused counts files whose extraction came from Options.Reuse (not
	// parsed again).
	Reused int `json:"reused,omitempty"`
}

// Graph is the code graph of one repository snapshot.
type Graph struct {
	Nodes []Node
	Edges []Edge
	Stats Stats
	// Extracts are the files' extraction results, with Options.KeepExtracts.
	Extracts *Extracts
	// codeHashed is set by Build, whose nodes' content hashes are the
	// hashes of their code (CodeHashed).
	codeHashed bool
}

// CodeHashed reports whether g's nodes come from Build, so that each one's
// ContentHash is the hash of its Code: the graph store then stores the
// code without hashing it again.
func (g *Graph) CodeHashed() bool { return g.codeHashed }

// ContentHash is the hash of code that a node built from it records
// (Node.ContentHash).
func ContentHash(code string) string { return contentHash(code) }
