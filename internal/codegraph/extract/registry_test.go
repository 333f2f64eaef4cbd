package extract

import (
	"path/filepath"
	"slices"
	"strings"
)

// languages are the extractors sorted by name.
func languages() []Language {
	ls := All()
	slices.SortFunc(ls, func(a, b Language) int { return strings.Compare(a.Name(), b.Name()) })
	return ls
}

// languageFor is the extractor of path by its extension, nil for none.
func languageFor(path string) Language {
	ext := strings.ToLower(filepath.Ext(path))
	for _, l := range All() {
		if slices.Contains(l.Extensions(), ext) {
			return l
		}
	}
	return nil
}
