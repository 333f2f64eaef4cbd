package extract

import (
	"context"
	"fmt"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// Grammar is the tree-sitter grammar of a file in language l, for the
// parse-only baseline (codegraph.ParseOnly).
func Grammar(path string, l Language) *sitter.Language {
	switch l.Name() {
	case "rust":
		return rust.GetLanguage()
	case "c":
		return c.GetLanguage()
	case "cpp":
		return cpp.GetLanguage()
	case "python":
		return python.GetLanguage()
	case "go":
		return golang.GetLanguage()
	case "java":
		return java.GetLanguage()
	case "javascript":
		return javascript.GetLanguage()
	case "typescript":
		if strings.HasSuffix(strings.ToLower(path), ".tsx") {
			return tsx.GetLanguage()
		}
		return typescript.GetLanguage()
	}
	return nil
}

// Parse runs tree-sitter and hands the root to fn, closing the tree after.
func Parse(ctx context.Context, lang *sitter.Language, path string, src []byte, fn func(root *sitter.Node) error) error {
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(lang)
	tree, err := p.ParseCtx(ctx, nil, src)
	if err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	if tree == nil {
		return fmt.Errorf("parse %s: no tree", path)
	}
	defer tree.Close()
	return fn(tree.RootNode())
}
