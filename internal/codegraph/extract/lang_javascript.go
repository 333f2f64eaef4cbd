package extract

import (
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
)

// The JavaScript grammar parses JSX too, so .jsx needs no other grammar.
func init() {
	register(&jsLang{
		name:    "javascript",
		exts:    []string{".js", ".jsx", ".mjs", ".cjs"},
		grammar: func(string) *sitter.Language { return javascript.GetLanguage() },
	})
}
