package codegraph

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/locus-dev/locus/internal/fileclass"
	"github.com/locus-dev/locus/schema"
)

// headerExt is the extension shared by C and C++ headers: a build parses
// them as C or C++ by the repository's source files (headerLanguage).
const headerExt = ".h"

// IsHeader reports whether p is a .h file, C or C++ by its repository.
func IsHeader(p string) bool { return strings.EqualFold(path.Ext(p), headerExt) }

// DetectLanguage is the programming language of path by its name and
// extension: a language with a graph (supported, by the registry's
// extensions), else the programming language linguist's rules give it
// (fileclass.Languages, lower-case: "ruby", "c#", "shell"); where an
// extension is shared by several languages, all of them programming ones,
// their names joined by " or " ("perl or prolog or raku"); "" for markup,
// data, prose and unknown files, and for extensions shared with one of
// those (".md": Markdown or GCC machine description). A build tells the
// language of a file without a graph from its content too (codeLanguage).
func DetectLanguage(p string) (name string, supported bool) {
	if l := LanguageFor(p); l != nil {
		return l.Name(), true
	}
	var names []string
	for _, l := range fileclass.Languages(p) {
		if !fileclass.IsProgramming(l) {
			return "", false
		}
		names = append(names, codeName(l))
	}
	return strings.Join(names, " or "), false
}

// codeLanguage is the programming language a build counts the bytes of
// the file at p with content under (Stats.CodeBytes): linguist's, by name,
// extension and content (fileclass.Language), lower-case; "" when it is
// not a programming language.
func codeLanguage(p string, content []byte) string {
	if l := fileclass.Language(p, content); fileclass.IsProgramming(l) {
		return codeName(l)
	}
	return ""
}

// codeName is the name locus gives linguist's language l: lower-case, and
// the graph's name where it has one under another ("C++" is "cpp").
func codeName(l string) string {
	if l == "C++" {
		return "cpp"
	}
	return strings.ToLower(l)
}

// isSupported reports whether the code graph parses language name.
func isSupported(name string) bool {
	regMu.RLock()
	defer regMu.RUnlock()
	_, ok := byName[name]
	return ok
}

// SupportedLanguages lists the languages the code graph parses.
func SupportedLanguages() string {
	var names []string
	for _, l := range Languages() {
		names = append(names, l.Name())
	}
	return strings.Join(names, ", ")
}

// LanguageShare is one language's part of a repository's code.
type LanguageShare struct {
	Name      string
	Bytes     int64
	Share     float64 // of all programming-language bytes, 0..1
	Supported bool    // the code graph parses it
}

// Shares orders a build's code bytes by language, most first (ties by name).
func Shares(codeBytes map[string]int64) []LanguageShare {
	var total int64
	for _, n := range codeBytes {
		total += n
	}
	out := make([]LanguageShare, 0, len(codeBytes))
	for name, n := range codeBytes {
		s := LanguageShare{Name: name, Bytes: n, Supported: isSupported(name)}
		if total > 0 {
			s.Share = float64(n) / float64(total)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LanguageWarning says when a graph does not cover a repository's code:
// its main language (by bytes) has no graph support, or nothing was parsed.
// "" when the graph covers the main language, or for graphs recorded before
// code bytes were (nothing to judge by beyond their file count).
func LanguageWarning(g *schema.GraphInfo) string {
	if g == nil {
		return ""
	}
	shares := Shares(g.CodeBytes)
	if len(shares) > 0 && !shares[0].Supported {
		main := shares[0]
		covered := "nothing else"
		var parts []string
		for _, s := range shares {
			if s.Supported {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", s.Name, 100*s.Share))
			}
		}
		if len(parts) > 0 {
			covered = strings.Join(parts, ", ")
		}
		return fmt.Sprintf("graph: unsupported language %s, %.0f%% of code; the graph covers %s, and localize ranks only those functions",
			main.Name, 100*main.Share, covered)
	}
	if g.Files == 0 {
		return fmt.Sprintf("graph: no file in a supported language (%s)", SupportedLanguages())
	}
	return ""
}
