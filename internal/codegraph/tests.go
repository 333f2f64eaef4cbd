package codegraph

import "github.com/locus-dev/locus/internal/fileclass"

// IsTestPath reports whether the file at path (slash-separated, relative to
// the repository root) is test code (fileclass.IsTest: linguist's test
// paths and locus's conventions for the languages it parses).
func IsTestPath(p string) bool { return fileclass.IsTest(p) }

// IsTestID reports whether the graph id (path:qualified.name) names a
// function of test code (see IsTestPath).
func IsTestID(id string) bool {
	p, _ := SplitID(id)
	return IsTestPath(p)
}
