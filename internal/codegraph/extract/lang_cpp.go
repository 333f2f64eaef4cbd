package extract

import (
	tscpp "github.com/smacker/go-tree-sitter/cpp"
)

// C++ files (see lang_cfamily.go and NAMING.md).
func init() {
	register(&cFamilyLang{name: "cpp", cpp: true, lang: tscpp.GetLanguage, exts: []string{
		".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp", ".inl"}})
}
