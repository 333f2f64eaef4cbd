package changes

import (
	"bytes"
	"context"

	"github.com/locus-dev/locus/internal/codegraph/extract"
)

// Deriving a Python version's functions from the other version's.
//
// Python has no braced bodies, so the Bodies, Members and Skeleton ways of
// spanderive.go do not apply. Its one way: when every hunk lies inside a
// function with no function inside it, away from the function's first
// (def) and last lines, only those functions' text in T is read, each
// alone (inside a class where it is indented): it must read clean and
// define exactly that function, over all its lines. Nothing outside the
// functions changed and nothing inside them is named, so T's functions are
// P's with their lines moved. The def and last lines being unchanged keep
// each function where it was: the lines after it did not belong to it in
// P, and still do not, since its text reads whole by itself.

// python derives T from P as above; nil where that does not hold.
func (d *deriver) python(ctx context.Context) *versionSpans {
	if !d.p.clean || len(d.hunks) == 0 {
		return nil
	}
	affected := map[int]bool{}
	for _, h := range d.hunks {
		in := -1 // the innermost function around the hunk: the last in definition order
		for i, f := range d.p.fns {
			if h.pa-1 >= int(f.start) && h.pb+1 <= int(f.end) {
				in = i
			}
		}
		if in < 0 || in+1 < len(d.p.fns) && d.p.fns[in+1].start <= d.p.fns[in].end {
			return nil // between functions, or around a function inside
		}
		affected[in] = true
	}
	v := &versionSpans{clean: true, fns: make([]fnSpan, 0, len(d.p.fns))}
	for i, f := range d.p.fns {
		g, ok := f.moved(d.lm) // the def and last lines did not change
		if !ok || affected[i] && !d.pyReadsAlone(ctx, int(g.start), int(g.end), f.name) {
			return nil
		}
		v.fns = append(v.fns, g)
	}
	return v
}

// pyReadsAlone reports whether T's lines [s, e], where function name is
// defined from line s, read clean by themselves and define exactly that
// function, over all of them.
func (d *deriver) pyReadsAlone(ctx context.Context, s, e int, name string) bool {
	from, to := d.tl[s-1], len(d.t)
	if e < len(d.tl) {
		to = d.tl[e]
	}
	text := d.t[from:to]
	indent := len(text) - len(bytes.TrimLeft(text, " \t"))
	prefix, rows := "", 0
	if indent > 0 {
		prefix, rows = "class __C:\n", 1
	}
	res, err := d.lang.Extract(ctx, d.path, wrapped(prefix, text, ""))
	if err != nil || res.ErrorNodes != 0 {
		return false
	}
	_, own, _ := qualifier(name)
	fns := 0
	for _, def := range res.Defs {
		if def.Kind == extract.KindClass && rows > 0 && def.StartByte == 0 {
			continue // the wrapper
		}
		_, dOwn, _ := qualifier(def.Name)
		if def.Kind != extract.KindFunction || dOwn != own || def.StartLine != 1+rows || def.EndLine != e-s+1+rows {
			return false
		}
		fns++
	}
	return fns == 1
}
