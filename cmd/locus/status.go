package main

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/schema"
)

// otherLanguages names common source languages the code graph does not
// parse, by extension, so that status can say what a repository is mostly
// written in even when locus cannot build its graph.
var otherLanguages = map[string]string{
	".rs": "rust", ".c": "c", ".h": "c", ".cc": "c++", ".cpp": "c++", ".cxx": "c++", ".hpp": "c++", ".hh": "c++",
	".cs": "c#", ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift", ".scala": "scala",
	".m": "objective-c", ".mm": "objective-c", ".lua": "lua", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
	".erl": "erlang", ".hs": "haskell", ".clj": "clojure", ".jl": "julia", ".zig": "zig", ".ml": "ocaml",
	".pl": "perl", ".pm": "perl", ".r": "r", ".sh": "shell", ".groovy": "groovy", ".fs": "f#", ".vue": "vue",
}

// langCount is how many files of one language a repository has.
type langCount struct {
	name  string
	files int
	graph bool // the code graph parses it
}

// mainLanguage is the source language with the most files among paths
// (ties: by name); ok is false when no path is in a known language.
func mainLanguage(paths []string) (main langCount, ok bool) {
	counts := map[string]*langCount{}
	for _, p := range paths {
		var lc langCount
		if l := codegraph.LanguageFor(p); l != nil {
			lc = langCount{name: l.Name(), graph: true}
		} else if name, known := otherLanguages[strings.ToLower(path.Ext(p))]; known {
			lc = langCount{name: name}
		} else {
			continue
		}
		c := counts[lc.name]
		if c == nil {
			c = &lc
			counts[lc.name] = c
		}
		c.files++
	}
	for _, c := range counts {
		if !ok || c.files > main.files || c.files == main.files && c.name < main.name {
			main, ok = *c, true
		}
	}
	return main, ok
}

// graphLanguages is "go:12,python:3": the graph's parsed files by language,
// most first; "-" when there is no graph or it parsed nothing.
func graphLanguages(g *schema.GraphInfo) string {
	if g == nil || len(g.Languages) == 0 {
		return "-"
	}
	names := sortedKeys(g.Languages)
	sort.SliceStable(names, func(i, j int) bool { return g.Languages[names[i]] > g.Languages[names[j]] })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s:%d", n, g.Languages[n])
	}
	return strings.Join(parts, ",")
}

// languageWarning says when a repository's main language has no code graph
// support (so localize ranks only the functions of its other languages);
// "" when it has, or when nothing is indexed at a head.
func languageWarning(ctx context.Context, b *blob.Bucket, m schema.Manifest) (string, error) {
	if m.Head == "" || m.FileIDs == "" {
		if m.Head != "" && (m.Graph == nil || m.Graph.Files == 0) {
			return fmt.Sprintf("%s: no code graph: no file in a supported language (%s)", m.Repo, supportedLanguages()), nil
		}
		return "", nil
	}
	ids, err := commits.LoadFileIDs(ctx, b, m.FileIDs)
	if err != nil {
		return "", fmt.Errorf("status %s: file list %s: %w", m.Repo, m.FileIDs, err)
	}
	main, ok := mainLanguage(ids.Paths())
	if !ok || main.graph {
		if m.Graph == nil || m.Graph.Files == 0 {
			return fmt.Sprintf("%s: no code graph: no file in a supported language (%s)", m.Repo, supportedLanguages()), nil
		}
		return "", nil
	}
	covered := "nothing"
	if g := graphLanguages(m.Graph); g != "-" {
		covered = g + " files"
	}
	return fmt.Sprintf("%s: main language %s (%d files) has no code graph support; the graph covers %s, and localize ranks only those functions",
		m.Repo, main.name, main.files, covered), nil
}

// searchColumns are the EMBEDDER and VECTORS cells of a manifest.
func searchColumns(m schema.Manifest) (embedder, vectors string) {
	if m.Search == nil {
		return "-", "-"
	}
	embedder, vectors = m.Search.Model, m.Search.Vectors
	if vectors == "" {
		vectors = "unrecorded" // manifests written before the store was recorded
	}
	return embedder, vectors
}

// supportedLanguages lists the languages the code graph parses.
func supportedLanguages() string {
	var names []string
	for _, l := range codegraph.Languages() {
		names = append(names, l.Name())
	}
	return strings.Join(names, ", ")
}
