package extract

import "errors"

// all are the extractors, one a language, each added by its file's init.
var all []Language

// register adds a language; each lang_<name>.go calls it from init.
func register(l Language) { all = append(all, l) }

// All returns the extractors, one a language (codegraph registers them by
// name and extension).
func All() []Language { return append([]Language(nil), all...) }

// ErrExtractor marks an extractor's internal error (a recovered panic):
// a bug in the extractor, not in the input.
var ErrExtractor = errors.New("internal error")
