package extract

import (
	"bytes"
	"context"
)

// A file's members: the children of its root and of its class-like bodies
// (imports, fields, comments, methods, nested classes). An extraction
// collects them into a MemberSink in its context, for the change mapping
// (package changes), which reads a change between functions without the
// rest of the file.

// containerTypes are the syntax nodes whose children are members, by
// grammar node type, with the text that wraps a run of them (MemberWrapper).
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
	"declaration_list":       "", // by language: MemberWrapper
}

// cContainerTypes are C's conditionals, whose children are members where
// the conditional stands at file level (an include guard holding a whole
// header): their members read as the file's own.
var cContainerTypes = map[string]bool{"preproc_if": true, "preproc_ifdef": true, "preproc_else": true,
	"preproc_elif": true, "preproc_elifdef": true}

// IsCConditional reports whether a container of kind typ is one of C's
// conditionals (#if, #ifdef, #else, #elif, #elifdef).
func IsCConditional(typ string) bool { return cContainerTypes[typ] }

// fileLevel reports whether the members of a container of kind typ are
// read as the file's own: the root, and C's conditionals there.
func fileLevel(typ string) bool {
	return typ == "root" || cContainerTypes[typ]
}

// MemberWrapper is the text around a region of members of a container of
// kind typ in lang, where a parse reads them as such members: prefix and
// suffix (both empty at file level); ok is false for a kind without one.
func MemberWrapper(lang, typ string) (prefix, suffix string, ok bool) {
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

// Container is a member container of a file version: 1-based lines of its
// first and last token (the root: 0 and the line after the last), and its
// kind (a grammar node type, or "root").
type Container struct {
	Open, Close int32
	Kind        string
}

// Member is one child of a container: 1-based lines, the byte columns where
// it starts and ends (end exclusive), the index of its container, and
// whether it is a syntax node (Named), not a token such as a body's braces.
type Member struct {
	Start, End int32
	SCol, ECol int32
	In         int32
	Named      bool
}

type membersKey struct{}

// MemberSink receives the members of the first tree an extraction reads
// (the whole file; later reads are of macro contents or repairs).
type MemberSink struct {
	done       bool
	Containers []Container
	Members    []Member
	Bytes      [][2]int   // each member's byte range
	Errs       [][2]int32 // lines of ERROR and MISSING nodes
}

// Filled reports whether a tree was read into s.
func (s *MemberSink) Filled() bool { return s.done }

// WithMembers returns a context whose extractions (Language.Extract) fill
// the sink it returns.
func WithMembers(ctx context.Context) (context.Context, *MemberSink) {
	s := &MemberSink{}
	return context.WithValue(ctx, membersKey{}, s), s
}

// resetMembers empties the sink in ctx, if any, so that the next tree read
// fills it: the tree it holds is not the reading the extractor keeps (a
// Rust file read again with its item macros restored, or as written).
func resetMembers(ctx context.Context) {
	if s, _ := ctx.Value(membersKey{}).(*MemberSink); s != nil {
		*s = MemberSink{}
	}
}

// collectMembers fills the sink in ctx, if any, from t.
func collectMembers(ctx context.Context, t *flatTree) {
	s, _ := ctx.Value(membersKey{}).(*MemberSink)
	if s == nil || s.done || len(t.nodes) == 0 {
		return
	}
	s.done = true
	names := t.names.container
	isC := func(sym uint16) bool { return int(sym) < len(names) && names[sym] } // ERROR is 0xffff
	index := map[int32]int32{0: 0}                                              // container node → index
	s.Containers = append(s.Containers, Container{Open: 0, Close: 1 << 30, Kind: "root"})
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		if n.flags&(2|4) != 0 { // missing, error
			s.Errs = append(s.Errs, [2]int32{int32(n.startRow) + 1, int32(n.endRow) + 1})
		}
		if !isC(t.nodes[n.parent].symbol) {
			continue
		}
		in, ok := index[n.parent]
		if !ok {
			continue // a container nested in a non-member (an expression)
		}
		s.Members = append(s.Members, Member{Start: int32(n.startRow) + 1, End: int32(n.endRow) + 1,
			SCol: column(t.src, int(n.startByte)), ECol: column(t.src, int(n.endByte)), In: in, Named: n.flags&1 != 0})
		s.Bytes = append(s.Bytes, [2]int{int(n.startByte), int(n.endByte)})
		add := func(c int32) {
			cn := &t.nodes[c]
			index[c] = int32(len(s.Containers))
			s.Containers = append(s.Containers, Container{Open: int32(cn.startRow) + 1, Close: int32(cn.endRow) + 1,
				Kind: t.names.symbols[cn.symbol]})
		}
		if isC(n.symbol) { // a member that is a container itself
			// A C conditional holds the file's own members only where it
			// stands among them: at file level or in such a conditional.
			if !cContainerTypes[t.names.symbols[n.symbol]] || fileLevel(s.Containers[in].Kind) {
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
