package codegraph

import "github.com/locus-dev/locus/internal/codegraph/extract"

// What the change mapping (package changes) shares with the graph build, so
// that a function a change touches has the id it has in the graph: the same
// excluded directories, skipped contents and names.

// Excluder reports whether a path lies in a directory that exclude names
// (Excluded, with the set made once).
func Excluder(exclude []string) func(path string) bool {
	set := excludeSet(exclude)
	return func(path string) bool { return inExcluded(path, set) }
}

// SkipReason is why Build does not parse data (too large past max bytes,
// binary, minified or generated; "" when it parses it), asking minified
// whether data is minified.
func SkipReason(data []byte, max int, minified func() bool) string {
	reason, _ := skipContentOf(data, max, minified)
	return reason
}

// MinifiedLines is whether text, whose lines start at li, is minified as
// Build judges a file (isMinified), read from its lines.
func MinifiedLines(text []byte, li extract.LineIndex) bool {
	if len(text) < 2000 {
		return false
	}
	content, longest := 0, 0
	for k := range li {
		s, e := li.Bounds(k, len(text))
		n := unindentedLen(text[s:e])
		content, longest = content+n, max(longest, n)
	}
	return minifiedBy(len(text), content, len(li), longest)
}

// BaseName strips an overload signature and a duplicate suffix from a name
// segment: "m(int)#2" → "m".
func BaseName(seg string) string { return baseName(seg) }
