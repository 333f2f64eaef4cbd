package extract

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// parseTree parses src and hands the root of its flattened tree to fn.
func parseTree(ctx context.Context, lang *sitter.Language, path string, src []byte, fn func(root *fnode) error) error {
	return reparseTree(ctx, lang, path, src, nil, fn)
}

// reparseTree is parseTree reading src as an edit of the text of base's
// tree (parsed with lang, and not released before this returns): a second
// reading of a file, changed in a few places, reuses what the changes leave
// of the first reading's tree.
func reparseTree(ctx context.Context, lang *sitter.Language, path string, src []byte, base *fnode, fn func(root *fnode) error) error {
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("parse %s: %w (%w)", path, ErrParseTimeout, err)
	} else if err != nil {
		return err
	}
	var bt *flatTree
	if base != nil {
		bt = base.t
	}
	t, err := reparseFlat(ctx, lang, path, src, bt)
	if err != nil {
		return err
	}
	defer t.release()
	if s, ok := ctx.Value(stableKey{}).(string); ok && sameBytes(s, src) {
		t.stable = s
	}
	if root := t.node(0); !root.HasError() && !root.IsMissing() {
		// Only a tree with errors is read again, as an edit of this one
		// (cFamilyLang): the others are freed while the copy has left
		// them in the cache.
		t.dropCTree()
	}
	collectMembers(ctx, t)
	return fn(t.node(0))
}

// errorsIn counts ERROR and MISSING nodes in n's subtree.
func errorsIn(n *fnode) int {
	if n == nil || !n.HasError() && !n.IsMissing() {
		return 0
	}
	c := 0
	for _, f := range n.t.nodes[n.i:n.subtreeEnd()] {
		if f.flags&(2|4) != 0 {
			c++
		}
	}
	return c
}

// errorAtEnd reports whether an ERROR node of root's tree reaches the end
// of src (trailing blanks aside). Where none does, tree-sitter recovered
// from what the text leaves open by itself (a MISSING "}"); cFamilyLang
// then appends no closers to its reading with every branch kept.
func errorAtEnd(root *fnode, src []byte) bool {
	if !root.HasError() {
		return false
	}
	end := len(src)
	for end > 0 && (src[end-1] == ' ' || src[end-1] == '\t' || src[end-1] == '\n' || src[end-1] == '\r') {
		end--
	}
	for _, f := range root.t.nodes[root.i:root.subtreeEnd()] {
		if f.flags&4 != 0 && int(f.endByte) >= end {
			return true
		}
	}
	return false
}

// stableKey is the context key of WithStableSource's text.
type stableKey struct{}

// WithStableSource tells Extract that the src it is given is text's bytes
// and that they never change while what it returns is in use: the names
// and callees it reads from src are then parts of text, not copies (a
// million copies, 20 MB, in kafka's build). Readings of other bytes (a
// copy with closers appended or macros blanked) still copy.
func WithStableSource(ctx context.Context, text string) context.Context {
	return context.WithValue(ctx, stableKey{}, text)
}

// sameBytes reports whether b is s's own bytes (not merely equal ones).
func sameBytes(s string, b []byte) bool {
	return len(s) == len(b) && len(b) > 0 && unsafe.StringData(s) == &b[0]
}

// stableIn is t's stable text (WithStableSource) where src is that text,
// else "".
func (t *flatTree) stableIn(src []byte) string {
	if t.stable != "" && sameBytes(t.stable, src) {
		return t.stable
	}
	return ""
}

// textOf is the source of n: a part of the tree's stable text where src
// is that text (stableIn), else a copy.
func textOf(n *fnode, src []byte) string {
	if n == nil {
		return ""
	}
	if s := n.t.stableIn(src); s != "" {
		return s[n.StartByte():n.EndByte()]
	}
	return string(src[n.StartByte():n.EndByte()])
}

// joinDot is recv + "." + name, read from the source from first (where
// recv begins) to last (where name ends): where that source is the tree's
// stable text (stableIn) and holds exactly that (no blank or comment
// between), it is that part of the text rather than a new string.
func joinDot(first, last *fnode, src []byte, recv, name string) string {
	if first != nil && last != nil {
		if s := first.t.stableIn(src); s != "" {
			a, b := int(first.StartByte()), int(last.EndByte())
			if n := len(recv); b-a == n+1+len(name) && b <= len(s) && s[a:a+n] == recv && s[a+n] == '.' && s[a+n+1:b] == name {
				return s[a:b]
			}
		}
	}
	return recv + "." + name
}

// spanOf returns n's 1-based inclusive line span.
func spanOf(n *fnode) (int, int) {
	return int(n.StartPoint().Row) + 1, int(n.EndPoint().Row) + 1
}

// defAt builds a Def spanning n.
func defAt(name, kind string, n *fnode) Def {
	s, e := spanOf(n)
	d := Def{Name: name, Kind: kind, StartLine: s, EndLine: e, StartByte: int(n.StartByte()), EndByte: int(n.EndByte())}
	if kind == KindFunction {
		d.BodyStart, d.BodyEnd = bracedBody(n.ChildByFieldName("body"))
	}
	return d
}

// bracedBody is the byte range of body when it is a block written between
// braces (`{ … }`), else 0, 0.
func bracedBody(body *fnode) (int, int) {
	if body == nil {
		return 0, 0
	}
	s, e := int(body.StartByte()), int(body.EndByte())
	src := body.t.src
	if e-s < 2 || e > len(src) || src[s] != '{' || src[e-1] != '}' {
		return 0, 0
	}
	return s, e
}

// uniqueNames hands out file-unique definition names: the first use of a
// name keeps it, later ones get "#2", "#3"… in source order (NAMING.md).
// Identifiers never contain '#', so a suffixed name cannot collide with a
// real one.
type uniqueNames map[string]int

func (u uniqueNames) add(name string) string {
	u[name]++
	if n := u[name]; n > 1 {
		return name + "#" + strconv.Itoa(n)
	}
	return name
}
