package triplets

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/locus-dev/locus/internal/codegraph"
)

// Change is one commit as the miner sees it: its message, author and the
// files it changed against its first parent.
type Change struct {
	Commit      string
	Message     string
	AuthorName  string
	AuthorEmail string
	IsMerge     bool
	Files       []FileChange
}

// FileChange is one changed file of a Change.
type FileChange struct {
	Path     string
	IsBinary bool
	// Diff is the unified diff (no header lines), as the commits table
	// stores it.
	Diff []byte
	// Functions are the graph ids of the functions the change edited.
	Functions []string
}

// Skip says why a change yields no record; "" when it yields one.
type Skip string

// Why a change is skipped.
const (
	SkipMerge        Skip = "merge"
	SkipRevert       Skip = "revert"
	SkipBot          Skip = "bot author"
	SkipEmptyQuery   Skip = "empty query"
	SkipFormatting   Skip = "formatting only"
	SkipNoFunctions  Skip = "no function edited"
	SkipOnlyTests    Skip = "only tests edited"
	SkipTooMany      Skip = "too many functions"
	SkipOnlyVendored Skip = "only vendored or generated files"
)

// Filter decides which changes become records.
type Filter struct {
	// MaxFunctions skips changes that edit more non-test functions than
	// this (a refactor says little about any one); default 10.
	MaxFunctions int
}

// Check returns the change's query (its cleaned message) and positives
// (the non-test functions it edited outside vendored and generated files,
// each once, in order), or why it is skipped.
func (f Filter) Check(c Change) (query string, positives []string, skip Skip) {
	switch {
	case c.IsMerge:
		return "", nil, SkipMerge
	case isRevert(c.Message):
		return "", nil, SkipRevert
	case isBot(c.AuthorName, c.AuthorEmail):
		return "", nil, SkipBot
	}
	query = CleanMessage(c.Message)
	if !strings.ContainsFunc(query, unicode.IsLetter) {
		return "", nil, SkipEmptyQuery
	}
	seen := map[string]bool{}
	edited, tests, vendored := 0, 0, 0
	formatting := true
	for _, fc := range c.Files {
		if fc.IsBinary {
			continue
		}
		if !whitespaceOnly(fc.Diff) {
			formatting = false
		}
		for _, id := range fc.Functions {
			if seen[id] {
				continue
			}
			seen[id] = true
			edited++
			switch {
			case IsVendored(fc.Path):
				vendored++
			case codegraph.IsTestID(id):
				tests++
			default:
				positives = append(positives, id)
			}
		}
	}
	limit := f.MaxFunctions
	if limit <= 0 {
		limit = 10
	}
	switch {
	case edited == 0:
		return "", nil, SkipNoFunctions
	case formatting:
		return "", nil, SkipFormatting
	case len(positives) == 0 && vendored > 0 && tests == 0:
		return "", nil, SkipOnlyVendored
	case len(positives) == 0:
		return "", nil, SkipOnlyTests
	case len(positives) > limit:
		return "", nil, SkipTooMany
	}
	return query, positives, ""
}

// isRevert: git's "Revert "…"" subject and the "This reverts commit" body.
func isRevert(msg string) bool {
	subject, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	s := strings.ToLower(subject)
	return strings.HasPrefix(s, "revert ") || strings.HasPrefix(s, "revert:") || strings.HasPrefix(s, "reapply ") ||
		strings.Contains(strings.ToLower(msg), "this reverts commit ")
}

// botMarks are in the names or addresses of automated authors.
var botMarks = []string{"[bot]", "dependabot", "renovate", "github-actions", "greenkeeper", "pre-commit-ci", "snyk-bot", "mergify", "web-flow"}

func isBot(name, email string) bool {
	s := strings.ToLower(name + " " + email)
	for _, m := range botMarks {
		if strings.Contains(s, m) {
			return true
		}
	}
	local, _, _ := strings.Cut(strings.ToLower(email), "@")
	return strings.HasSuffix(local, "-bot") || strings.HasSuffix(local, "+bot") || local == "bot"
}

// vendorDirs are directories of code a repository carries but does not
// write.
var vendorDirs = map[string]bool{"vendor": true, "third_party": true, "third-party": true, "thirdparty": true,
	"node_modules": true, "external": true, "extern": true, "deps": true, "_vendor": true, "dist": true}

// generatedSuffixes are names of generated files.
var generatedSuffixes = []string{".pb.go", "_pb2.py", "_pb2_grpc.py", ".pb.cc", ".pb.h", ".min.js", ".generated.go",
	"_generated.go", ".g.dart", "_string.go", ".designer.cs"}

// IsVendored reports whether p is vendored or generated code, by its
// directories and name.
func IsVendored(p string) bool {
	dir, file := path.Split(p)
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if vendorDirs[d] {
			return true
		}
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(file, s) {
			return true
		}
	}
	return strings.HasPrefix(file, "zz_generated")
}

// whitespaceOnly reports whether a unified diff only changes whitespace:
// its removed and added lines are the same once whitespace is dropped.
func whitespaceOnly(diff []byte) bool {
	var removed, added [][]byte
	for _, line := range bytes.Split(diff, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		squeezed := bytes.Join(bytes.Fields(line[1:]), nil)
		switch line[0] {
		case '-':
			if len(squeezed) > 0 {
				removed = append(removed, squeezed)
			}
		case '+':
			if len(squeezed) > 0 {
				added = append(added, squeezed)
			}
		}
	}
	if len(removed) == 0 && len(added) == 0 {
		return false // nothing to judge (a rename, a mode change)
	}
	return slices.EqualFunc(removed, added, bytes.Equal) || bytes.Equal(bytes.Join(removed, nil), bytes.Join(added, nil))
}
