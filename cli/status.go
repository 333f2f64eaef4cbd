package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/schema"
)

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

// languageWarning says when a repository's graph does not cover its main
// language, or when nothing of it was parsed; "" when it does, or when
// nothing is indexed at a head.
func languageWarning(m schema.Manifest) string {
	switch {
	case m.Head == "":
		return ""
	case m.Graph == nil:
		return fmt.Sprintf("%s: graph: none built (re-run locus index)", m.Repo)
	}
	// Judged again rather than read from Graph.Warning: this build may
	// parse languages the one that indexed did not.
	if w := codegraph.LanguageWarning(m.Graph); w != "" {
		return fmt.Sprintf("%s: %s", m.Repo, w)
	}
	return ""
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

// printMissing says, under status's table, what each repository's index
// lacks because its clone lacked blobs.
func printMissing(ms []schema.Manifest) {
	for _, m := range ms {
		files := 0
		if m.Graph != nil {
			files = m.Graph.MissingFiles
		}
		if rows := schema.MissingRows(m.Parts); rows > 0 || files > 0 {
			fmt.Fprintf(stdout, "%s: missing blobs: %d commit rows (line counts unknown), %d files of the head not parsed\n", m.Repo, rows, files)
		}
	}
}
