// Package codegraph builds per-repository code graphs (directories, files, classes,
// functions; contains/imports/invokes/inherits edges) with tree-sitter. What
// each language's files define and reference is package lang's
// (codegraph/lang); the functions a commit's changes touch, package
// changes'; writing and reading graphs in the store, package graphstore's.
package codegraph

import "github.com/locus-dev/locus/internal/codegraph/extract"

// What the extractors (package lang) find, as the graph build reads it.
type (
	Language   = extract.Language
	FileResult = extract.FileResult
	Def        = extract.Def
	Import     = extract.Import
	Call       = extract.Call
	Inherit    = extract.Inherit
)

// Kinds of definitions an extractor reports.
const (
	KindClass    = extract.KindClass
	KindFunction = extract.KindFunction
)

// ErrParseTimeout is extract.ErrParseTimeout.
var ErrParseTimeout = extract.ErrParseTimeout

func init() {
	for _, l := range extract.All() {
		register(l)
	}
}
