package llm

import (
	"context"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// HeuristicName labels selections made without a language model.
const HeuristicName = "heuristic (no LLM)"

// Heuristic is the Selector used when no LLM is configured. It is lexical and
// deterministic: a candidate's score is the number of distinct identifier
// tokens its code shares with the issue (split camelCase / snake_case /
// digits, lower-cased, whole identifiers kept too, stop words and tokens under
// three characters ignored), plus one per token of its own name (the last
// segment of its id) that the issue mentions, because an issue that names a
// function usually means it. File paths are not scored: neighbours share
// them. Candidates scoring at least MinScore are kept, best first, ties in
// input order, at most MaxSelect. It makes no calls and costs no tokens.
type Heuristic struct {
	// MaxSelect caps neighbours selected per center (default 3).
	MaxSelect int
	// MinScore is the score a candidate needs (default 2: two shared
	// tokens, or one from its own name).
	MinScore int
}

// Name implements Selector.
func (Heuristic) Name() string { return HeuristicName }

// Select implements Selector.
func (h Heuristic) Select(_ context.Context, issue string, center Candidate, candidates []Candidate) (Selection, error) {
	return Selection{Model: HeuristicName, IDs: h.Pick(issue, center, candidates)}, nil
}

// Pick returns the selected ids.
func (h Heuristic) Pick(issue string, center Candidate, candidates []Candidate) []string {
	maxSel, minScore := h.MaxSelect, h.MinScore
	if maxSel <= 0 {
		maxSel = 3
	}
	if minScore <= 0 {
		minScore = 2
	}
	want := tokenSet(issue)
	type scored struct {
		id    string
		score int
		pos   int
	}
	var hits []scored
	for i, c := range uniqueCandidates(center, candidates) {
		score := 0
		for t := range codeTokens(c.Code) {
			if want[t] {
				score++
			}
		}
		for t := range tokenSet(ownName(c.ID)) {
			if want[t] {
				score++
			}
		}
		if score >= minScore {
			hits = append(hits, scored{c.ID, score, i})
		}
	}
	slices.SortFunc(hits, func(a, b scored) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return a.pos - b.pos
	})
	ids := []string{}
	for _, s := range hits[:min(len(hits), maxSel)] {
		ids = append(ids, s.id)
	}
	return ids
}

// ownName is the last segment of a graph id: "a/b.py:C.m" → "m".
func ownName(id string) string {
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		id = id[i+1:]
	}
	return id[strings.LastIndexByte(id, '.')+1:]
}

// codeTokenCache holds the token sets of candidate code. The same
// functions are candidates of query after query, and tokenising their code
// was 60% of a heuristic SpIDER query's CPU on pytest; code strings are
// immutable, so a set computed once serves every later query. Bounded:
// emptied when it holds codeTokenCacheSize sets.
var codeTokenCache = struct {
	sync.Mutex
	m map[string]map[string]bool
}{m: map[string]map[string]bool{}}

const codeTokenCacheSize = 50000

// codeTokens is tokenSet of code, cached; callers must not change the set.
func codeTokens(code string) map[string]bool {
	codeTokenCache.Lock()
	set, ok := codeTokenCache.m[code]
	codeTokenCache.Unlock()
	if ok {
		return set
	}
	set = tokenSet(code)
	codeTokenCache.Lock()
	if len(codeTokenCache.m) >= codeTokenCacheSize {
		clear(codeTokenCache.m)
	}
	codeTokenCache.m[code] = set
	codeTokenCache.Unlock()
	return set
}

// tokenSet splits text into lower-cased identifier tokens: whole identifiers
// and their camelCase / snake_case / letter-digit parts.
func tokenSet(text string) map[string]bool {
	set := map[string]bool{}
	add := func(t string) {
		t = strings.ToLower(t)
		if len(t) >= 3 && !stopWords[t] && strings.TrimFunc(t, unicode.IsDigit) != "" {
			set[t] = true
		}
	}
	for _, ident := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		add(ident)
		for _, part := range strings.Split(ident, "_") {
			for _, sub := range splitCamel(part) {
				add(sub)
			}
		}
	}
	return set
}

// splitCamel splits "parseHTTPRequest2" into parse, HTTP, Request, 2.
func splitCamel(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		boundary := (unicode.IsLower(prev) && unicode.IsUpper(cur)) ||
			(unicode.IsDigit(prev) != unicode.IsDigit(cur)) ||
			(unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))
		if boundary {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// stopWords are English function words and keywords common to the languages
// we index: sharing them says nothing about relevance.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		the and for with this that from not are was were but have has had when what which who whom
		should would could can will into than then there their they you your our its also only just
		does did doing any all some one two more most other such very been being how why where here
		after before about above below between because while each same both few own out off over under
		again further once these those them she him her his itself yes use used using like get set
		self cls def return true false none null nil func function class import var let const new
		int str string bool float double char byte void public private protected static final
		else elif try except raise throw throws catch finally package type struct interface
		lambda yield async await pass break continue case switch default this super extends implements
		print println printf len range make append error err value values data object list dict map
		issue bug fix fixes code file files line lines expected actual behavior behaviour
		instead happens example please thanks problem currently
	`) {
		m[w] = true
	}
	return m
}()

// IssueTokens is the set of identifier tokens the heuristic reads in text:
// whole identifiers and their camelCase / snake_case / letter-digit parts,
// lower-cased, stop words and tokens under three characters left out.
func IssueTokens(text string) map[string]bool { return tokenSet(text) }

// CodeTokens is IssueTokens of a function's code, cached across queries;
// callers must not change the set.
func CodeTokens(code string) map[string]bool { return codeTokens(code) }

// OwnName is the last segment of a graph id: "a/b.py:C.m" → "m".
func OwnName(id string) string { return ownName(id) }
