package changes

import (
	"slices"
	"sort"

	"github.com/locus-dev/locus/internal/codegraph/extract"
)

// A file's members (extract.MemberSink): the children of its root and of
// its class-like bodies (imports, fields, comments, methods, nested
// classes), kept by the mapper so that a change between functions can be
// read without the rest of the file (spanderive.go).

// container is a member container of a file version: 1-based lines of its
// first and last token (the root: 0 and the line after the last).
type container struct {
	open, close int32
	kind        string
}

// member is one child of a container: 1-based lines, and the byte columns
// where it starts and ends (end exclusive).
type member struct {
	start, end int32
	scol, ecol int32
	in         int32 // index into the containers
	// named: a syntax node, not a token such as a body's braces.
	named bool
	// def: it is or holds a definition or declaration, so replacing it can
	// change names (in C a definition: a prototype names nothing).
	def bool
}

// last is m's last line of text: a preprocessor line's node (named, unlike
// the tokens between members) ends at the start of the next line, after
// its newline.
func (m member) last() int32 {
	if m.named && m.ecol == 0 && m.end > m.start {
		return m.end - 1
	}
	return m.end
}

// movedMember is v's member m with its lines moved by lm. A preprocessor
// line's end moves with its last line of text, not with the line after it
// (which a change can replace); but an #else or #elif branch ends where the
// next directive begins (ownEnd), and moves with it.
func (v *versionSpans) movedMember(m member, lm lineMap) (member, bool) {
	last := m.last()
	for k := 1; k < len(v.containers) && last != m.end; k++ {
		if c := v.containers[k]; c.open == m.start && c.close == m.end && ownEnd[c.kind] {
			last = m.end
		}
	}
	s, e, ok := lm.span(m.start, last)
	m.start, m.end = s, e+m.end-last
	return m, ok
}

// setMembers keeps the sink's members on v, marking those that hold a
// definition or declaration (starts: their sorted byte offsets).
func (v *versionSpans) setMembers(s *extract.MemberSink, starts []int) {
	if s == nil || !s.Filled() {
		return
	}
	// Exact-size copies: the mapper keeps tens of thousands of versions.
	if s.Containers != nil {
		v.containers = make([]container, len(s.Containers))
	}
	for i, c := range s.Containers {
		v.containers[i] = container{open: c.Open, close: c.Close, kind: c.Kind}
	}
	if s.Members != nil { // nil stays nil: derivable reads it
		v.members = make([]member, len(s.Members))
	}
	for i, m := range s.Members {
		k := sort.SearchInts(starts, s.Bytes[i][0])
		v.members[i] = member{start: m.Start, end: m.End, scol: m.SCol, ecol: m.ECol, in: m.In, named: m.Named,
			def: k < len(starts) && starts[k] < s.Bytes[i][1]}
	}
	v.errs = slices.Clone(s.Errs)
}
