package codegraph

import (
	"bytes"
	"context"
	"slices"
	"sort"
)

// A file's members: the children of its root and of its class-like bodies
// (imports, fields, comments, methods, nested classes), kept by the mapper
// so that a change between functions can be read without the rest of the
// file (spanderive.go).

// containerTypes are the syntax nodes whose children are members, by
// grammar node type.
var containerTypes = map[string]string{
	"program":                "root", // Java
	"translation_unit":       "root", // C, C++
	"source_file":            "root", // Go, Rust
	"class_body":             "class __L {\n\x00\n}",
	"interface_body":         "interface __L {\n\x00\n}",
	"enum_body":              "enum __L {\n\x00\n}",
	"enum_body_declarations": "", // no braces of its own: its extent is its members'
	"annotation_type_body":   "@interface __L {\n\x00\n}",
	"field_declaration_list": "struct __L {\n\x00\n};",
	"declaration_list":       "", // by language: memberWrapper
}

// cContainerTypes are C's conditionals, whose children are members where
// the conditional stands at file level (an include guard holding a whole
// header): their members read as the file's own.
var cContainerTypes = map[string]bool{"preproc_if": true, "preproc_ifdef": true, "preproc_else": true,
	"preproc_elif": true, "preproc_elifdef": true}

// fileLevel reports whether the members of a container of kind typ are
// read as the file's own: the root, and C's conditionals there.
func fileLevel(typ string) bool {
	return typ == "root" || cContainerTypes[typ]
}

// memberWrapper is the text around a region of members of a container of
// kind typ in lang: prefix, suffix, and the rows the prefix adds.
func memberWrapper(lang, typ string) (prefix, suffix string, ok bool) {
	w := containerTypes[typ]
	switch {
	case fileLevel(typ) || w == "root":
		return "", "", true
	case typ == "declaration_list" && lang == "rust":
		w = "mod __L {\n\x00\n}"
	case typ == "declaration_list" && lang == "cpp":
		w = "namespace __L {\n\x00\n}"
	}
	for i := 0; i < len(w); i++ {
		if w[i] == 0 {
			return w[:i], w[i+1:], true
		}
	}
	return "", "", false
}

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

type membersKey struct{}

// memberSink receives the members of the first tree a parse reads (the
// whole file; later reads are of macro contents or repairs).
type memberSink struct {
	done       bool
	containers []container
	members    []member
	bytes      [][2]int   // each member's byte range
	errs       [][2]int32 // lines of ERROR and MISSING nodes
}

func withMembers(ctx context.Context) (context.Context, *memberSink) {
	s := &memberSink{}
	return context.WithValue(ctx, membersKey{}, s), s
}

// resetMembers empties the sink in ctx, if any, so that the next tree read
// fills it: the tree it holds is not the reading the extractor keeps (a
// Rust file read again with its item macros restored, or as written).
func resetMembers(ctx context.Context) {
	if s, _ := ctx.Value(membersKey{}).(*memberSink); s != nil {
		*s = memberSink{}
	}
}

// collectMembers fills the sink in ctx, if any, from t.
func collectMembers(ctx context.Context, t *flatTree) {
	s, _ := ctx.Value(membersKey{}).(*memberSink)
	if s == nil || s.done || len(t.nodes) == 0 {
		return
	}
	s.done = true
	names := t.names.container
	isC := func(sym uint16) bool { return int(sym) < len(names) && names[sym] } // ERROR is 0xffff
	index := map[int32]int32{0: 0}                                              // container node → index
	s.containers = append(s.containers, container{open: 0, close: 1 << 30, kind: "root"})
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		if n.flags&(2|4) != 0 { // missing, error
			s.errs = append(s.errs, [2]int32{int32(n.startRow) + 1, int32(n.endRow) + 1})
		}
		if !isC(t.nodes[n.parent].symbol) {
			continue
		}
		in, ok := index[n.parent]
		if !ok {
			continue // a container nested in a non-member (an expression)
		}
		s.members = append(s.members, member{start: int32(n.startRow) + 1, end: int32(n.endRow) + 1,
			scol: column(t.src, int(n.startByte)), ecol: column(t.src, int(n.endByte)), in: in, named: n.flags&1 != 0})
		s.bytes = append(s.bytes, [2]int{int(n.startByte), int(n.endByte)})
		add := func(c int32) {
			cn := &t.nodes[c]
			index[c] = int32(len(s.containers))
			s.containers = append(s.containers, container{open: int32(cn.startRow) + 1, close: int32(cn.endRow) + 1,
				kind: t.names.symbols[cn.symbol]})
		}
		if isC(n.symbol) { // a member that is a container itself
			// A C conditional holds the file's own members only where it
			// stands among them: at file level or in such a conditional.
			if !cContainerTypes[t.names.symbols[n.symbol]] || fileLevel(s.containers[in].kind) {
				add(int32(i))
			}
		}
		// Containers are children of members (a class's body): register
		// those directly under this member, and in C the field lists of
		// the structs and unions it holds (typedef struct {…} T;).
		for c := n.firstChild; c >= 0; c = t.nodes[c].nextSibling {
			cn := &t.nodes[c]
			switch {
			case int(cn.symbol) >= len(names): // ERROR
			case isC(cn.symbol) && cContainerTypes[t.names.symbols[cn.symbol]]:
			case isC(cn.symbol):
				add(c)
			case t.names.record[cn.symbol]:
				for g := cn.firstChild; g >= 0; g = t.nodes[g].nextSibling {
					if isC(t.nodes[g].symbol) {
						add(g)
					}
				}
			}
		}
	}
}

// column is off's byte column in its line of src.
func column(src []byte, off int) int32 {
	off = min(off, len(src))
	return int32(off - (bytes.LastIndexByte(src[:off], '\n') + 1))
}

// setMembers keeps the sink's members on v, marking those that hold a
// definition or declaration (starts: their sorted byte offsets).
func (v *versionSpans) setMembers(s *memberSink, starts []int) {
	if s == nil || !s.done {
		return
	}
	// Exact-size copies: the mapper keeps tens of thousands of versions.
	v.containers, v.members, v.errs = slices.Clone(s.containers), slices.Clone(s.members), slices.Clone(s.errs)
	for i, b := range s.bytes {
		k := sort.SearchInts(starts, b[0])
		v.members[i].def = k < len(starts) && starts[k] < b[1]
	}
}
