// Package extractfixture reads the extractor fixtures
// (codegraph/extract/testdata/<language>/<name>) for the tests of the
// extractors and of the packages that read what they read.
package extractfixture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// File is one extractor fixture.
type File struct {
	Lang, Name string
	Src        []byte
}

// Read reads the fixtures of langs under dir (codegraph's
// extract/testdata), golden files left out, in directory order.
func Read(t testing.TB, dir string, langs ...string) []File {
	t.Helper()
	var out []File
	for _, lang := range langs {
		entries, err := os.ReadDir(filepath.Join(dir, lang))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".golden") {
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, lang, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, File{lang, e.Name(), src})
		}
	}
	return out
}
