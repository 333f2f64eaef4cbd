package codegraph

import (
	"sort"
	"strings"
	"sync"
)

var (
	regMu  sync.RWMutex
	byName = map[string]Language{}
	byExt  = map[string]Language{}
)

// register adds a language; init (extractors.go) adds package extract's.
func register(l Language) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := byName[l.Name()]; dup {
		panic("codegraph: language registered twice: " + l.Name())
	}
	byName[l.Name()] = l
	for _, e := range l.Extensions() {
		byExt[e] = l
	}
}

// Languages returns the registered languages sorted by name.
func Languages() []Language {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Language, 0, len(byName))
	for _, l := range byName {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// LanguageNamed returns the registered language named name ("c",
// "cpp", …), or nil.
func LanguageNamed(name string) Language {
	regMu.RLock()
	defer regMu.RUnlock()
	return byName[name]
}

// LanguageFor returns the language of a path by its extension, or nil.
func LanguageFor(path string) Language {
	i := strings.LastIndexByte(path, '.')
	if i < 0 || strings.LastIndexByte(path, '/') > i {
		return nil
	}
	regMu.RLock()
	defer regMu.RUnlock()
	return byExt[strings.ToLower(path[i:])]
}
