package extract

import (
	tsc "github.com/smacker/go-tree-sitter/c"
)

// C files (see lang_cfamily.go and NAMING.md). Headers (.h) are C here;
// the builder decides per repository whether to parse them as C++.
func init() {
	register(&cFamilyLang{name: "c", exts: []string{".c", ".h"}, lang: tsc.GetLanguage})
}
