package extract

import (
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// TypeScript shares the JavaScript walker (lang_jsts.go). .tsx needs the TSX
// grammar: in plain TypeScript `<T>x` is a type assertion, not an element.
func init() {
	register(&jsLang{
		name: "typescript",
		exts: []string{".ts", ".tsx", ".mts", ".cts"},
		grammar: func(ext string) *sitter.Language {
			if ext == ".tsx" {
				return tsx.GetLanguage()
			}
			return typescript.GetLanguage()
		},
	})
}
