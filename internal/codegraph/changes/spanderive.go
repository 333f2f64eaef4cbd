package changes

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/extract"
)

// Deriving one version's functions from another's.
//
// The history scrape needs, for every changed file, the functions of both
// versions. Parsing each version whole made that pass cost several times
// `git log -p` (issue 13). But a commit usually changes a few lines of a
// file whose other version the mapper already knows, so the functions of the
// version it does not know (T) are derived from the one it knows (P):
//
//   - Bodies: when every hunk, on both sides, lies strictly inside the body
//     of a leaf function of P (a braced body in which no definition or
//     declaration starts, with its `{` and `}` lines unchanged), only the
//     new text of those bodies is parsed, each wrapped in a function of the
//     language. If each reads without syntax errors and defines nothing,
//     T's functions are P's with their lines moved, and the changed bodies
//     still leaves. Names cannot change: nothing outside the bodies did,
//     and nothing inside them is named.
//   - Members: as Bodies, where the other hunks lie between definitions:
//     in a run of whole members (imports, fields, comments; spanmembers.go)
//     of one container, none of which holds a definition or declaration
//     (in C, none holds a definition: a prototype names nothing; C's
//     conditionals at file level and typedef'd structs hold members too).
//     The run's new text is parsed wrapped where such members are read (a
//     class body, a namespace, the file); it must read without syntax
//     errors and define and declare nothing, so no name changes either.
//     In Java the run may also hold leaf methods on either side (a
//     signature changed, a method added or removed): the wrapped parse
//     names them after the wrapper class, and they are renamed into the
//     container's class as P names it. A method's name is its class's and
//     its own, unless its class declares the name more than once; so no
//     method in the run may share its name with one of the class outside
//     the run, and none may hold a definition. In C the run may hold leaf
//     functions too, named by their identifiers as read, where no name
//     in the run is defined elsewhere in the file (cRunNames).
//   - Skeleton: otherwise, T is parsed with the interior of each unchanged
//     leaf body left out (its newlines kept, and spaces up to its `}`, so
//     every other place keeps its line and column). Leaves hold no
//     definitions, so the skeleton defines what T defines, under the same
//     names; its bodies' braces must be where P's were.
//   - Parsed: where none applies (the skeleton has syntax errors, the
//     language has no wrapper), T is parsed whole.
//
// Java's changed bodies are read by their changed statements alone
// (spanruns.go); Python, without braces, has a way of its own
// (spanpython.go).
//
// P read with syntax errors is derived from only where no C conditional
// (#if, #else, #endif) changes and the extractor did not read P again
// another way (its repairs depend on the whole file):
//   - by Bodies or Members when every hunk lies in a member with no error
//     in it or in the members beside it; the errors then stay where they
//     were, moved with their lines;
//   - else by a Skeleton that keeps whole every member holding an error and
//     the members beside it (errorZones), so T's errors are read in the
//     same surroundings as in T itself; the skeleton's errors are T's, and
//     a skeleton the extractor reads again another way is not used.
//
// A derivation is only as sound as the claim that a body's or a run's text
// is read the same inside any function or container of its kind. Verify
// (bench scrape --verify-functions) checks it by parsing every derived
// version whole as well; docs/benchmarks.md has the counts on real
// histories.

type derivation int

const (
	derivedParsed derivation = iota
	derivedSkeleton
	derivedBodies
	derivedMembers
)

func (d derivation) String() string {
	return [...]string{"parsed", "skeleton", "bodies", "members"}[d]
}

// bodyWrappers put a body's text where the language reads a function body:
// prefix + `{ … }` + suffix. Java's is a constructor, whose body admits
// `this(…)` and `super(…)` besides any method's statements.
var bodyWrappers = map[string][2]string{
	"java": {"class __L{__L()", "}"},
	"c":    {"void __f(void)", ""},
	"cpp":  {"void __f()", ""},
	"go":   {"package p\nfunc __f()", ""},
	"rust": {"fn __f()", ""},
}

// deriver holds what one derivation reads: the other version P of a change
// (its functions p, derivable, its text and lines pv, its changed lines
// pChanged) and version T, whose functions it finds (its text t and lines
// tl, changed lines tChanged; lines are 1-based). Its methods are the ways
// of deriving T.
type deriver struct {
	lang extract.Language
	path string
	// wrap is where a body of lang reads alone (bodyWrappers).
	wrap               [2]string
	p                  *versionSpans
	pv                 *textLines
	t                  []byte
	tl                 lineIndex
	np, nt             int // line counts of P and T
	pChanged, tChanged []int
	lm                 lineMap
	hunks              []lineHunk
	// leaves are P's leaves with braced bodies, by position: they cannot
	// nest.
	leaves []int
}

// newDeriver is the deriver of T (tv, changed lines tChanged) from P (p, pv,
// changed lines pChanged).
func newDeriver(lang extract.Language, path string, p *versionSpans, pv, tv *textLines, pChanged, tChanged []int) *deriver {
	d := &deriver{lang: lang, path: path, wrap: bodyWrappers[lang.Name()], p: p, pv: pv, t: tv.text, tl: tv.lines,
		np: pv.count(), nt: tv.count(), pChanged: pChanged, tChanged: tChanged}
	d.lm = newLineMap(d.np, d.nt, pChanged, tChanged)
	d.hunks = hunksOf(d.np, d.nt, pChanged, tChanged)
	for i, f := range p.fns {
		if f.leaf && f.open.row >= 0 {
			d.leaves = append(d.leaves, i)
		}
	}
	sort.Slice(d.leaves, func(a, b int) bool { return p.fns[d.leaves[a]].open.row < p.fns[d.leaves[b]].open.row })
	return d
}

// derive finds the functions of version T (its text and lines tv, changed
// lines tChanged) from those of the other version P of the same change (p,
// its text and lines pv, changed lines pChanged; lines are 1-based). P must
// be derivable.
func derive(ctx context.Context, lang extract.Language, path string, p *versionSpans, pv, tv *textLines, pChanged, tChanged []int) (*versionSpans, derivation) {
	if lang.Name() == "python" {
		tv.index() // read by lines
		if v := newDeriver(lang, path, p, pv, tv, pChanged, tChanged).python(ctx); v != nil {
			return v, derivedBodies
		}
	}
	if _, ok := bodyWrappers[lang.Name()]; !ok {
		return parseSpans(ctx, lang, path, tv.text), derivedParsed
	}
	if lang.Name() == "c" {
		// Read as the whole file is (CBlankMacroLines): a body cut from
		// the texts must hold what the file's macros stand for. Lines
		// stay where they were.
		pv = &textLines{text: extract.CWriteBraceMacros(pv.text), lines: pv.lines}
		tv = &textLines{text: extract.CWriteBraceMacros(tv.text), lines: tv.index()}
	}
	d := newDeriver(lang, path, p, pv, tv, pChanged, tChanged)
	conditional := !p.clean && conditionalChanged(lang, d.hunks, pv, tv)
	// A changed conditional can change how the extractor reads a file
	// with errors: where a branch's braces do not pair, it reads the file
	// other ways too. P was read once (derivable), so only T's branches
	// are in doubt; with them paired, T is read once as well, and a
	// change in a body or a run of members is as local as any other.
	local := conditional && !extract.CUnbalancedBranches(extract.CBlankMacroLines(d.t, lang.Name() == "cpp"))
	if p.clean || (!conditional || local) && awayFromErrors(p, d.hunks) {
		if v, how := d.local(ctx); v != nil {
			if !p.clean {
				v.clean = false
				v.errs = make([][2]int32, len(p.errs))
				for k, e := range p.errs {
					a, b, ok := d.lm.span(e[0], e[1])
					if !ok {
						return parseSpans(ctx, lang, path, d.t), derivedParsed
					}
					v.errs[k] = [2]int32{a, b}
				}
			}
			return v, how
		}
	}
	if conditional {
		return parseSpans(ctx, lang, path, d.t), derivedParsed
	}
	if v := d.viaSkeleton(ctx); v != nil {
		return v, derivedSkeleton
	}
	return parseSpans(ctx, lang, path, d.t), derivedParsed
}

// conditionalChanged reports whether, in C or C++, a hunk changes a
// conditional preprocessor line (one can change how the extractor reads
// the whole file).
func conditionalChanged(lang extract.Language, hunks []lineHunk, pv, tv *textLines) bool {
	if n := lang.Name(); n == "c" || n == "cpp" {
		for _, h := range hunks {
			if conditionalIn(pv, h.pa, h.pb) || conditionalIn(tv, h.ta, h.tb) {
				return true
			}
		}
	}
	return false
}

// errorZones are P's lines that a skeleton keeps whole so that T's syntax
// errors read as in a whole parse: each error's lines, widened to the
// members holding them and the members on either side. nil when P is
// clean.
func (v *versionSpans) errorZones() [][2]int32 {
	var zs [][2]int32
	for _, e := range v.errs {
		lo, hi := e[0], e[1]
		for k, m := range v.members {
			if m.start > e[1] || m.end < e[0] {
				continue
			}
			lo, hi = min(lo, m.start), max(hi, m.end)
			for j := k - 1; j >= 0; j-- { // the member before, in the same container
				if v.members[j].in == m.in {
					lo = min(lo, v.members[j].start)
					break
				}
			}
			for j := k + 1; j < len(v.members); j++ { // and after
				if v.members[j].in == m.in {
					hi = max(hi, v.members[j].end)
					break
				}
			}
		}
		zs = append(zs, [2]int32{lo, hi})
	}
	return zs
}

// awayFromErrors reports whether every hunk of a change to P, a version
// read with syntax errors, lies away from them: inside a member (or a run of
// members) with no error in it or in the members on either side.
func awayFromErrors(p *versionSpans, hunks []lineHunk) bool {
	if p.members == nil || len(p.errs) == 0 {
		return false
	}
	for _, h := range hunks {
		// The run of members the hunk lies in between definitions, or else
		// the innermost member holding it (a function, for a change to a
		// body).
		var lo, hi, in int
		best := -1
		for k, m := range p.members {
			if int(m.start) <= h.pa-1 && int(m.end) >= h.pb+1 && (best < 0 || m.start >= p.members[best].start) {
				best = k
			}
		}
		if r, ok := p.gapRegion(h.pa, h.pb, false); ok && (best < 0 || p.containers[r.in].open >= p.members[best].start) {
			lo, hi, in = r.pa, r.pb, r.in
		} else if best >= 0 {
			lo, hi, in = int(p.members[best].start), int(p.members[best].end), int(p.members[best].in)
		} else {
			return false
		}
		// Widen to the neighbouring members of the same container.
		zlo, zhi := int(p.containers[in].open), min(int(p.containers[in].close), 1<<29)
		for _, m := range p.members {
			if int(m.in) != in {
				continue
			}
			if int(m.end) < lo && int(m.start) > zlo {
				zlo = int(m.start)
			}
			if int(m.start) > hi && int(m.end) < zhi {
				zhi = int(m.end)
			}
		}
		for _, e := range p.errs {
			if int(e[0]) <= zhi && int(e[1]) >= zlo {
				return false
			}
		}
	}
	return true
}

// conditionalIn reports whether lines [a, b] (1-based) of src hold a
// conditional preprocessor line (#if, #ifdef, #elif, #else, #endif, …),
// which can change which branches the C extractor reads.
func conditionalIn(x *textLines, a, b int) bool {
	li := x.index()
	for k := max(a, 1) - 1; k < b && k < len(li); k++ {
		s, e := li.Bounds(k, len(x.text))
		if l := bytes.TrimLeft(x.text[s:e], " \t"); extract.CDirective(l, "if") || extract.CDirective(l, "el") || extract.CDirective(l, "endif") {
			return true
		}
	}
	return false
}

// conditionalsPaired reports whether the conditional directives on lines
// [a, b] (1-based) of text (its line index li) pair up among themselves:
// each #if with its #endif, and every #else or #elif between them.
func conditionalsPaired(text []byte, li lineIndex, a, b int) bool {
	depth := 0
	for k := max(a, 1) - 1; k < b && k < len(li); k++ {
		s, e := li.Bounds(k, len(text))
		switch l := bytes.TrimLeft(text[s:e], " \t"); {
		case extract.CDirective(l, "if"):
			depth++
		case extract.CDirective(l, "el"):
			if depth == 0 {
				return false
			}
		case extract.CDirective(l, "endif"):
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// lineMap maps P's unchanged lines to T's: unchanged lines pair up in order.
type lineMap []int32 // 1-based P line → T line; 0 when changed

// np and nt are the line counts of P and T.
func newLineMap(np, nt int, pChanged, tChanged []int) lineMap {
	lm := make(lineMap, np+2)
	pi, ti := 0, 0 // next index into pChanged, tChanged
	j := 1
	for i := 1; i <= np; i++ {
		if pi < len(pChanged) && pChanged[pi] == i {
			pi++
			continue
		}
		for ti < len(tChanged) && tChanged[ti] == j {
			ti++
			j++
		}
		if j > nt {
			break
		}
		lm[i] = int32(j)
		j++
	}
	return lm
}

func (lm lineMap) at(line int) int {
	if line <= 0 || line >= len(lm) {
		return 0
	}
	return int(lm[line])
}

// span moves lines [a, b] of P into T; ok is false when either end changed.
func (lm lineMap) span(a, b int32) (int32, int32, bool) {
	s, e := lm.at(int(a)), lm.at(int(b))
	return int32(s), int32(e), s != 0 && e != 0
}

// movedBody is a leaf body of P placed in T.
type movedBody struct {
	open, close point // in T
	ob, cb      int   // offsets of `{` and `}` in T
}

// place puts P's body of f in T; ok is false when its brace lines changed
// or T does not have the braces there.
func (d *deriver) place(f *fnSpan) (mb movedBody, ok bool) {
	or, cr := d.lm.at(int(f.open.row)+1), d.lm.at(int(f.close.row)+1)
	if or == 0 || cr == 0 {
		return mb, false
	}
	mb.open, mb.close = point{int32(or - 1), f.open.col}, point{int32(cr - 1), f.close.col}
	mb.ob, mb.cb = offsetAt(d.tl, mb.open), offsetAt(d.tl, mb.close)
	if mb.ob < 0 || mb.cb <= mb.ob || mb.cb >= len(d.t) || d.t[mb.ob] != '{' || d.t[mb.cb] != '}' {
		return mb, false
	}
	return mb, true
}

// lineHunk is one run of changes: P's lines [pa, pb] replaced by T's lines
// [ta, tb] (1-based; a side is empty when its end is before its start).
// The lines around it, pa-1 and pb+1, are unchanged: its anchors.
type lineHunk struct{ pa, pb, ta, tb int }

func hunksOf(np, nt int, pChanged, tChanged []int) []lineHunk {
	var hs []lineHunk
	i, j, pi, ti := 1, 1, 0, 0
	for i <= np || j <= nt {
		h := lineHunk{pa: i, ta: j}
		for {
			moved := false
			for pi < len(pChanged) && pChanged[pi] == i {
				i, pi, moved = i+1, pi+1, true
			}
			for ti < len(tChanged) && tChanged[ti] == j {
				j, ti, moved = j+1, ti+1, true
			}
			if !moved {
				break
			}
		}
		if i == h.pa && j == h.ta {
			i, j = i+1, j+1 // an unchanged line on both sides
			continue
		}
		h.pb, h.tb = i-1, j-1
		hs = append(hs, h)
	}
	return hs
}

// region is a run of P's members of one container that holds no
// definition (or, with defs, only leaf methods), with the hunks inside it:
// lines [pa, pb] (pb = pa-1: none, the changes only insert there).
type region struct {
	in     int
	pa, pb int
	ta, tb int  // the same run in T
	defs   bool // it may hold leaf methods, on either side
	// members and fns are T's in the run, placed in T (fns only with defs).
	members []member
	fns     []fnSpan
}

// defRuns are the languages whose runs of members may hold definitions
// (leaf methods directly in a class), read anew with their names: Java,
// where a method's name is its class's and its own, or its signature when
// the class declares its name more than once (NAMING.md).
// And C, where a function is named by its identifier alone, numbered
// (f#2) only where the file defines the name more than once, as a struct
// or a function (cRunNames).
var defRuns = map[string]bool{"java": true, "c": true}

// gapRegion places the hunk on P's lines [pa, pb] between functions: in the innermost container
// whose inside holds it, widened to the whole members it touches, none of
// which may hold a definition; with defs, none but leaf methods.
func (v *versionSpans) gapRegion(pa, pb int, defs bool) (region, bool) {
	in := -1
	for k, c := range v.containers {
		if pa-1 >= int(c.open) && pb+1 <= int(c.close) && (in < 0 || c.open >= v.containers[in].open) {
			in = k
		}
	}
	if in < 0 {
		return region{}, false
	}
	for _, c := range v.containers {
		if int(c.close) == pa-1 && ownEnd[c.kind] {
			// Lines added there could be the container's own last members
			// (a prototype added at the end of an #else branch).
			return region{}, false
		}
	}
	for grown := true; grown; {
		grown = false
		for _, m := range v.members {
			if int(m.in) != in {
				continue
			}
			var touches bool
			end := int(m.last())
			if pb >= pa {
				touches = int(m.start) <= pb && end >= pa
			} else {
				touches = int(m.start) <= pa-1 && end >= pa
			}
			if !touches || int(m.start) >= pa && end <= pb {
				continue
			}
			if m.def && (!defs || v.leafMethod(m) < 0) {
				return region{}, false
			}
			pa, pb, grown = min(pa, int(m.start)), max(pb, end), true
		}
	}
	for _, m := range v.members { // inside: nothing defined, or leaf methods
		if int(m.in) == in && m.def && int(m.start) <= pb && int(m.last()) >= pa && (!defs || v.leafMethod(m) < 0) {
			return region{}, false
		}
	}
	r := region{in: in, pa: pa, pb: pb, defs: defs}
	c := v.containers[in]
	return r, pa-1 >= int(c.open) && pb+1 <= int(c.close)
}

// defsAround marks, in C version v, the members around runs that hold
// definitions (conditionals) as holding one or not (member.def), as the runs now
// do; false where that cannot be told: a run took out P's functions from a
// member that may hold a struct too.
func (v *versionSpans) defsAround(p *versionSpans, runs []region) bool {
	for _, r := range runs {
		had := false
		for _, f := range p.fns {
			had = had || int(f.start) >= r.pa && int(f.end) <= r.pb
		}
		if !r.defs || !had && len(r.fns) == 0 {
			continue
		}
		for i := range v.members {
			m := &v.members[i]
			if int(m.start) >= r.ta || int(m.end) <= r.tb {
				continue // not around the run
			}
			switch {
			case len(r.fns) > 0:
				m.def = true
			case m.def:
				in := false
				for _, f := range v.fns {
					in = in || f.start >= m.start && f.start <= m.end
				}
				if !in && len(p.classes) > 0 {
					return false
				}
				m.def = in
			}
		}
	}
	return true
}

// ownEnd are C's containers with no closing token of their own: each ends
// where its last member does.
var ownEnd = map[string]bool{"preproc_else": true, "preproc_elif": true, "preproc_elifdef": true}

// leafMethod is the index of the function that member m is, when it is a
// leaf or has no body and holds no container; -1 otherwise.
func (v *versionSpans) leafMethod(m member) int {
	for _, c := range v.containers[1:] {
		if c.open >= m.start && c.open <= m.end {
			return -1
		}
	}
	for i, f := range v.fns {
		// A preprocessor member ends after its newline: a macro's last
		// line is the one before.
		if f.start == m.start && (f.end == m.end || f.end == m.last() && f.open.row < 0) && (f.leaf || f.open.row < 0) {
			return i
		}
	}
	return -1
}

// qualifier splits a function's name into the class part, its own name and
// the signature of an overload: "A.B.m(int)" is "A.B", "m", "(int)".
func qualifier(name string) (class, own, sig string) {
	cut := strings.IndexByte(name, '(')
	if cut < 0 {
		cut = len(name)
	}
	dot := strings.LastIndexByte(name[:cut], '.')
	if dot < 0 {
		return "", name[:cut], name[cut:]
	}
	return name[:dot], name[dot+1 : cut], name[cut:]
}

// local derives T when every hunk lies inside a leaf function's body
// or in a run of members between definitions: it parses only those bodies
// and runs (each wrapped where the language reads it), and moves the rest.
func (d *deriver) local(ctx context.Context) (*versionSpans, derivation) {
	if len(d.hunks) == 0 {
		return nil, derivedParsed
	}
	inP := func(i int) (int, int) { return int(d.p.fns[i].open.row) + 1, int(d.p.fns[i].close.row) + 1 }
	affected := map[int][]lineHunk{} // leaf → the hunks inside its body
	var regions []region
	for _, h := range d.hunks {
		// The leaf whose braces' lines hold the hunk's anchors: leaves
		// do not nest, so it is the last one opening at or before pa-1.
		k := sort.Search(len(d.leaves), func(k int) bool { a, _ := inP(d.leaves[k]); return a > h.pa-1 }) - 1
		if k >= 0 {
			if a, b := inP(d.leaves[k]); h.pa-1 >= a && h.pb+1 <= b {
				affected[d.leaves[k]] = append(affected[d.leaves[k]], h)
				continue
			}
		}
		if d.p.members == nil {
			return nil, derivedParsed
		}
		r, ok := d.p.gapRegion(h.pa, h.pb, defRuns[d.lang.Name()])
		if !ok {
			return nil, derivedParsed
		}
		regions = append(regions, r)
	}
	// Regions that overlap or touch are one.
	sort.Slice(regions, func(a, b int) bool { return regions[a].pa < regions[b].pa })
	var merged []region
	for _, r := range regions {
		if n := len(merged); n > 0 && r.pa <= merged[n-1].pb+1 {
			last := &merged[n-1]
			if last.in != r.in {
				return nil, derivedParsed
			}
			g, ok := d.p.gapRegion(last.pa, max(last.pb, r.pb), last.defs || r.defs)
			if !ok || g.in != r.in {
				return nil, derivedParsed
			}
			*last = g
			continue
		}
		merged = append(merged, r)
	}
	for k := range merged {
		r := &merged[k]
		r.ta, r.tb = 1, d.nt
		if r.pa > 1 {
			if r.ta = d.lm.at(r.pa-1) + 1; r.ta == 1 {
				return nil, derivedParsed
			}
		}
		if r.pb < d.np {
			if r.tb = d.lm.at(r.pb+1) - 1; r.tb == -1 {
				return nil, derivedParsed
			}
		}
	}
	type classMethod struct {
		in  int
		own string
	}
	owner := map[classMethod]int{} // the run defining each name of a class
	for k := range merged {
		r := &merged[k]
		if !d.regionMembers(ctx, r) {
			return nil, derivedParsed
		}
		// Two runs of one class defining one name: an overload, whose
		// names neither run's parse saw.
		for _, f := range r.fns {
			_, own, _ := qualifier(f.name)
			key := classMethod{r.in, own}
			if d.lang.Name() == "c" { // one name space for the file
				key.in = -1
			}
			if o, ok := owner[key]; ok && o != k {
				return nil, derivedParsed
			}
			owner[key] = k
		}
	}
	v := &versionSpans{clean: true, fns: make([]fnSpan, 0, len(d.p.fns)), containers: d.p.containers, classes: d.p.classes}
	nextFns := 0 // the next region with definitions whose functions are not placed yet
	for i, f := range d.p.fns {
		for ; nextFns < len(merged) && int(f.start) > merged[nextFns].pb; nextFns++ {
			v.fns = append(v.fns, merged[nextFns].fns...)
		}
		if in := nextFns < len(merged) && merged[nextFns].defs && int(f.start) >= merged[nextFns].pa; in {
			if int(f.end) > merged[nextFns].pb {
				return nil, derivedParsed // cannot happen: a run is whole members
			}
			continue // replaced by the run's
		}
		s, e, ok := d.lm.span(f.start, f.end)
		if !ok {
			return nil, derivedParsed
		}
		g := f
		g.start, g.end = s, e
		if f.open.row >= 0 {
			mb, ok := d.place(&d.p.fns[i])
			if !ok {
				return nil, derivedParsed
			}
			g.open, g.close = mb.open, mb.close
			if hs, ok := affected[i]; ok && !d.changedBodyDefinesNothing(ctx, d.wrap, &f, mb, hs) {
				return nil, derivedParsed
			}
		}
		v.fns = append(v.fns, g)
	}
	for ; nextFns < len(merged); nextFns++ {
		v.fns = append(v.fns, merged[nextFns].fns...)
	}
	if d.p.members == nil {
		return v, derivedBodies
	}
	v.containers = make([]container, len(d.p.containers))
	for k, c := range d.p.containers {
		if k > 0 {
			var ok bool
			if c.open, c.close, ok = d.lm.span(c.open, c.close); !ok {
				return nil, derivedParsed
			}
		}
		v.containers[k] = c
	}
	// Members: those outside the regions moved, each region's read anew.
	v.members = make([]member, 0, len(d.p.members))
	next := 0 // next region
	for k := 0; k <= len(d.p.members); k++ {
		for next < len(merged) && (k == len(d.p.members) || int(d.p.members[k].start) >= merged[next].pa) {
			v.members = append(v.members, merged[next].members...)
			next++
		}
		if k == len(d.p.members) {
			break
		}
		m := d.p.members[k]
		inRegion := false
		for _, r := range merged {
			if int(m.start) >= r.pa && int(m.last()) <= r.pb {
				inRegion = true
			}
		}
		if inRegion {
			continue
		}
		var ok bool
		if m, ok = d.p.movedMember(m, d.lm); !ok {
			return nil, derivedParsed
		}
		v.members = append(v.members, m)
	}
	if len(merged) == 0 {
		return v, derivedBodies
	}
	if d.lang.Name() == "c" && !v.defsAround(d.p, merged) {
		return nil, derivedParsed
	}
	return v, derivedMembers
}

// regionMembers reads region r's text in T wrapped as members of its
// container's kind: it must read without syntax errors and define or
// declare nothing or, with r.defs, only leaf methods directly in the
// wrapper, which are named as in r's class. It sets r's members and
// functions, placed in T. In Java, the bodies of the run's methods whose
// lines did not change are left out of the reading (bodiesLeftOut).
func (d *deriver) regionMembers(ctx context.Context, r *region) bool {
	c := d.p.containers[r.in]
	for _, o := range d.p.containers[1:] { // no container inside the run
		if int(o.open) >= r.pa && int(o.open) <= r.pb {
			return false
		}
	}
	var class string // "" until named
	var outside map[string]bool
	name := func() (ok bool) {
		class, outside, ok = d.p.classOf(r)
		return ok
	}
	isC := d.lang.Name() == "c"
	for _, m := range d.p.members {
		if !isC && int(m.in) == r.in && m.def && int(m.start) >= r.pa && int(m.end) <= r.pb && class == "" && !name() {
			return false // a method removed or changed may have overloads outside
		}
	}
	if r.tb < r.ta {
		return true // only deleted
	}
	if (isC || d.lang.Name() == "cpp") && !conditionalsPaired(d.t, d.tl, r.ta, r.tb) {
		// A branch added or ended (#else alone) changes the containers
		// around the run, which its reading alone cannot see.
		return false
	}
	prefix, suffix, ok := extract.MemberWrapper(d.lang.Name(), c.kind)
	if !ok {
		return false
	}
	from, to := d.tl[r.ta-1], len(d.t)
	if r.tb < len(d.tl) {
		to = d.tl[r.tb]
	}
	text := d.t[from:to]
	if d.lang.Name() == "java" && d.p.clean && r.defs {
		text = d.bodiesLeftOut(r, from, to)
	}
	v, res := readSpans(ctx, d.lang, d.path, wrapped(prefix, text, suffix))
	if v == nil || res.ErrorNodes != 0 || len(res.DeclOffsets()) != 0 && d.lang.Name() != "c" || len(v.fns) != 0 && !r.defs {
		return false
	}
	for _, def := range res.Defs {
		if (def.StartByte != 0 || prefix == "") && (def.Kind != extract.KindFunction || !r.defs) { // only the wrapper's own class
			return false
		}
	}
	want := 1 // the containers: the root, and the wrapper's
	if prefix != "" {
		want = 2
	}
	if len(v.containers) != want {
		return false
	}
	rows := strings.Count(prefix, "\n")
	first, last := int32(rows+1), int32(rows+1+r.tb-r.ta)
	shift := int32(r.ta) - first
	for _, m := range v.members {
		if int(m.in) != want-1 || m.end < first || m.start > last {
			continue // the wrapper's own
		}
		if m.start < first || m.last() > last || m.def && !r.defs {
			return false
		}
		m.start, m.end, m.in = m.start+shift, m.end+shift, int32(r.in)
		r.members = append(r.members, m)
	}
	switch {
	case isC:
		if !cRunNames(d.p, r, v.fns) {
			return false
		}
	case len(v.fns) > 0 && class == "" && !name():
		return false
	}
	simple := class[strings.LastIndexByte(class, '.')+1:]
	for _, f := range v.fns {
		if !f.leaf && f.open.row >= 0 || f.start < first || f.end > last {
			return false
		}
		if !isC { // Java: named after the wrapper class, renamed into r's
			wc, own, sig := qualifier(f.name)
			if wc != "__L" {
				return false
			}
			if own == "__L" { // a constructor: named after its class
				own = simple
			}
			if outside[own] { // an overload of a method outside the run: the names of both depend on it
				return false
			}
			f.name = class + "." + own + sig
		}
		f.start, f.end = f.start+shift, f.end+shift
		if f.open.row >= 0 {
			f.open.row, f.close.row = f.open.row+shift, f.close.row+shift
		}
		r.fns = append(r.fns, f)
	}
	return true
}

// cRunNames reports whether the names of C functions in run r read alone
// are the names a whole parse gives: in C a function is named by its
// identifier, and numbered (f#2) only where the file defines the name more
// than once, as a function or a struct (NAMING.md). So every function of
// P in the run must have a name no other function of P has, and every
// function read in T's run (fns) a name that no function of P outside the
// run and no struct of P has: then no name is numbered, on either side.
func cRunNames(p *versionSpans, r *region, fns []fnSpan) bool {
	outside := make(map[string]bool, len(p.fns))
	for _, f := range p.fns {
		if int(f.start) >= r.pa && int(f.end) <= r.pb {
			continue
		}
		outside[codegraph.BaseName(f.name)] = true
	}
	seen := map[string]bool{}
	for _, f := range p.fns {
		if int(f.start) < r.pa || int(f.end) > r.pb {
			continue
		}
		if b := codegraph.BaseName(f.name); b != f.name || outside[b] || seen[b] {
			return false
		}
		seen[f.name] = true
	}
	for _, f := range fns {
		if codegraph.BaseName(f.name) != f.name || outside[f.name] || slices.Contains(p.classes, f.name) {
			return false
		}
	}
	return true
}

// bodiesLeftOut is T's text [from, to) of region r with the bodies of P's
// leaf methods in r whose lines did not change left out, as skeletons
// leave them out: their newlines kept and their `}` at its column. A leaf
// body of a clean P defines nothing, so it cannot change a name, a member
// or a syntax error.
func (d *deriver) bodiesLeftOut(r *region, from, to int) []byte {
	var cuts []cut
	for i := range d.p.fns {
		f := &d.p.fns[i]
		if !f.leaf || f.open.row < 0 || int(f.start) < r.pa || int(f.end) > r.pb {
			continue
		}
		same := true // no line of the body changed
		for l := int(f.open.row) + 1; l <= int(f.close.row)+1 && same; l++ {
			same = d.lm.at(l) != 0
		}
		if !same {
			continue
		}
		if mb, ok := d.placeUnchanged(f); ok && mb.ob >= from && mb.cb < to {
			cuts = append(cuts, bodyCut(mb))
		}
	}
	if len(cuts) == 0 {
		return d.t[from:to]
	}
	if text := leaveOutCuts(d.t, from, to, cuts); text != nil { // P lists functions in file order
		return text
	}
	return d.t[from:to] // cannot happen: leaves do not nest
}

// cut is text left out of a reading: t[from:to] becomes its newlines, then
// pad spaces.
type cut struct {
	from, to int
	pad      int
}

// bodyCut leaves out a body's inside, keeping its `}` at its column.
func bodyCut(mb movedBody) cut {
	pad := int(mb.close.col)
	if mb.close.row == mb.open.row {
		pad = mb.cb - mb.ob - 1
	}
	return cut{mb.ob + 1, mb.cb, pad}
}

// leaveOutCuts is t[from:to] with cuts (in order, inside it) left out; nil
// when two cuts overlap.
func leaveOutCuts(t []byte, from, to int, cuts []cut) []byte {
	text := make([]byte, 0, to-from)
	at := from
	for _, c := range cuts {
		if c.from < at {
			return nil
		}
		text = append(text, t[at:c.from]...)
		for _, b := range t[c.from:c.to] {
			if b == '\n' {
				text = append(text, '\n')
			}
		}
		for k := 0; k < c.pad; k++ {
			text = append(text, ' ')
		}
		at = c.to
	}
	return append(text, t[at:to]...)
}

// placeUnchanged places P's body of f in T, where no line was inserted
// inside it; the caller has checked that none of its lines changed.
func (d *deriver) placeUnchanged(f *fnSpan) (movedBody, bool) {
	mb, ok := d.place(f)
	if !ok || mb.close.row-mb.open.row != f.close.row-f.open.row {
		return mb, false // lines inserted inside
	}
	return mb, true
}

// classOf is the class that the functions directly in r's container belong
// to, as P names them, and the own names of those outside r; ok is false
// when none is, or when the run's own functions overload one outside it.
func (v *versionSpans) classOf(r *region) (class string, outside map[string]bool, ok bool) {
	outside = map[string]bool{}
	var inside []string
	fnAt := make(map[[2]int32]int, len(v.fns)) // the first function on lines [start, end]
	for i := len(v.fns) - 1; i >= 0; i-- {
		fnAt[[2]int32{v.fns[i].start, v.fns[i].end}] = i
	}
	for _, m := range v.members {
		if int(m.in) != r.in || !m.def {
			continue
		}
		i, ok := fnAt[[2]int32{m.start, m.end}]
		if !ok {
			continue
		}
		c, own, _ := qualifier(v.fns[i].name)
		if class == "" {
			class = c
		}
		if c != class {
			return "", nil, false
		}
		if int(m.start) >= r.pa && int(m.end) <= r.pb {
			inside = append(inside, own)
		} else {
			outside[own] = true
		}
	}
	for _, own := range inside {
		if outside[own] {
			return "", nil, false
		}
	}
	return class, outside, class != ""
}

// wrapped is text between prefix and suffix, in a new slice.
func wrapped(prefix string, text []byte, suffix string) []byte {
	src := make([]byte, 0, len(prefix)+len(text)+len(suffix))
	return append(append(append(src, prefix...), text...), suffix...)
}

// bodyDefinesNothing parses body (`{ … }`) wrapped as a function of lang:
// true when it reads without syntax errors and the wrapper's function, with
// exactly this body, is all it defines or declares.
func (d *deriver) bodyDefinesNothing(ctx context.Context, wrap [2]string, body []byte) bool {
	res, err := d.lang.Extract(ctx, d.path, wrapped(wrap[0], body, wrap[1]))
	if err != nil || res.ErrorNodes != 0 || len(res.DeclOffsets()) != 0 {
		return false
	}
	fns := 0
	for _, def := range res.Defs {
		switch {
		case def.Kind != extract.KindFunction:
			if d.lang.Name() != "java" || def.StartByte != 0 { // Java's wrapper class
				return false
			}
		case def.BodyStart != len(wrap[0]) || def.BodyEnd != len(wrap[0])+len(body):
			return false
		default:
			fns++
		}
	}
	return fns == 1
}

// changedBodyDefinesNothing is bodyDefinesNothing for the body of P's leaf f,
// changed by hunks (in order, all inside it) and placed in T by mb. In Java
// and C only the runs of statements around the changes are read
// (spanruns.go).
func (d *deriver) changedBodyDefinesNothing(ctx context.Context, wrap [2]string, f *fnSpan, mb movedBody, hunks []lineHunk) bool {
	body := d.t[mb.ob : mb.cb+1]
	if n := d.lang.Name(); n == "java" || n == "c" {
		if body = changedRuns(d.pv.text, d.pv.offset(f.open), d.pv.offset(f.close), d.t, mb, hunks, n == "c"); body == nil {
			return false
		}
	}
	return d.bodyDefinesNothing(ctx, wrap, body)
}

// textLines is a text with its line index, made when first asked for.
type textLines struct {
	text  []byte
	lines lineIndex
}

func (x *textLines) index() lineIndex {
	if x.lines == nil {
		x.lines = extract.NewLineIndex(x.text)
	}
	return x.lines
}

func (x *textLines) offset(pt point) int { return offsetAt(x.index(), pt) }

// count is the number of x's lines as the differ cuts them: the last one
// may lack its newline.
func (x *textLines) count() int {
	n := len(x.index()) - 1
	if len(x.text) > 0 && x.text[len(x.text)-1] != '\n' {
		n++
	}
	return n
}

// minified is whether the graph build judges x.text minified.
func (x *textLines) minified() bool { return codegraph.MinifiedLines(x.text, x.index()) }

// linesOf is the line index of text cut into lines (after each newline, a
// last line without one too), or made from text when lines is nil.
func linesOf(text []byte, lines [][]byte) *textLines {
	if lines == nil {
		return &textLines{text: text}
	}
	li := make(lineIndex, 1, len(lines)+1)
	off := 0
	for _, l := range lines {
		if off += len(l); l[len(l)-1] == '\n' {
			li = append(li, off)
		}
	}
	return &textLines{text: text, lines: li}
}

// viaSkeleton reads T's skeleton (skeletonOf) and puts back what it left
// out; nil when the reading does not bear out the skeleton.
func (d *deriver) viaSkeleton(ctx context.Context) *versionSpans {
	if d.lang.Name() == "rust" && extract.HasRustItemMacros(d.t) {
		// Whether an item macro is read in place depends on the whole
		// tree around it (codegraph's rust_itemmacros.go), bodies included: the
		// skeleton's tree can bear out a macro that T's does not.
		return nil
	}
	zones := d.p.errorZones()
	v, methodsBack := d.readSkeleton(ctx, zones, d.lang.Name() == "java")
	if v == nil && !methodsBack { // a method left out shares its name with one read (an overload added)
		v, _ = d.readSkeleton(ctx, zones, false)
	}
	return v
}

// readSkeleton reads T's skeleton, with methods left out or not, and puts
// back what it left out; v is nil when the reading does not bear out the
// skeleton, and methodsBack false when what failed was putting methods
// back.
func (d *deriver) readSkeleton(ctx context.Context, zones [][2]int32, methods bool) (v *versionSpans, methodsBack bool) {
	sk := d.skeletonOf(ctx, zones, methods)
	if sk == nil {
		return nil, true
	}
	v, res := readSpans(ctx, d.lang, d.path, sk.text)
	if v == nil || res.ErrorNodes != 0 && (len(zones) == 0 || res.Reread()) {
		return nil, true // errors where P had none, or read again another way
	}
	bodies := make(map[point]point, len(v.fns))
	for _, f := range v.fns {
		if f.open.row >= 0 && f.leaf {
			bodies[f.open] = f.close
		}
	}
	for _, mb := range sk.blank {
		if c, ok := bodies[mb.open]; !ok || c != mb.close {
			return nil, true
		}
	}
	if len(sk.opaque) > 0 && !v.putBack(d.p, sk.opaque, d.lm) {
		return nil, true
	}
	if len(sk.goneFns) > 0 && !v.putBackMethods(d.p, sk.goneFns, d.lm, res) {
		return nil, false
	}
	gone, goneOpen := sk.gone, sk.goneOpen
	if len(gone) > 0 {
		if v.containers == nil { // members not read
			return nil, true
		}
		// Put the members left out back, in file order: they hold no
		// members themselves, and no other member shares their lines.
		for k, open := range goneOpen {
			if open == 0 {
				continue // the root
			}
			if open < 0 {
				gone[k].in = int32(v.innermost(gone[k]))
				continue
			}
			c := len(v.containers) - 1 // the last opening on that line
			for c > 0 && v.containers[c].open != open {
				c--
			}
			if c == 0 {
				return nil, true
			}
			gone[k].in = int32(c)
		}
		// A member left out must still be its container's own in T: a
		// change can close its container before it and open another (a
		// struct split in two), or wrap it in a node that is no container
		// (an #ifdef added around a header, a macro call), whose member
		// in the skeleton then spans its lines.
		for _, g := range gone {
			if v.innermost(g) != int(g.in) {
				return nil, true
			}
			for _, m := range v.members {
				if m.in == g.in && before(m.start, m.scol, g.end, g.ecol) && before(g.start, g.scol, m.end, m.ecol) {
					return nil, true
				}
			}
		}
		v.members = mergeByStart(v.members, gone, func(m member) int32 { return m.start })
	}
	if len(zones) > 0 && !keptErrors(d.p, v, d.lm, zones) {
		return nil, true
	}
	return v, true
}

// innermost is the index of the innermost container around member m.
func (v *versionSpans) innermost(m member) int {
	in := 0
	for c, o := range v.containers {
		if o.open < m.start && m.end < o.close && o.open >= v.containers[in].open {
			in = c
		}
	}
	return in
}

// skeleton is T's text with parts left out, for viaSkeleton, and what
// its reading must show of them.
type skeleton struct {
	text   []byte
	blank  []movedBody  // leaf bodies left out
	opaque []opaqueBody // bodies holding definitions left out
	// gone are the members left out, placed in T, and goneOpen the first
	// line of each one's container in T (0: the root; -1: the one around
	// it, where that line changed).
	gone     []member
	goneOpen []int32
	goneFns  []int // P's functions of the methods among them
}

// skeletonOf leaves out of t what cannot change a name: unchanged leaf
// bodies, unchanged bodies holding definitions (Java), changed leaf bodies
// whose changed statements read clean and define nothing (Java, P clean),
// and unchanged members that define nothing; nil when nothing is left out.
func (d *deriver) skeletonOf(ctx context.Context, zones [][2]int32, methods bool) *skeleton {
	changedIn := func(a, b int) bool { // a changed P line in [a, b]
		k := sort.SearchInts(d.pChanged, a)
		if k < len(d.pChanged) && d.pChanged[k] <= b {
			return true
		}
		for _, z := range zones { // kept whole, as if changed
			if int(z[0]) <= b && int(z[1]) >= a {
				return true
			}
		}
		return false
	}
	var cuts []cut
	var blank []movedBody
	// unchanged places the body of P's function f in T, if no line of it
	// changed.
	unchanged := func(f *fnSpan) (movedBody, bool) {
		if changedIn(int(f.open.row)+1, int(f.close.row)+1) {
			return movedBody{}, false
		}
		return d.placeUnchanged(f)
	}
	leaveOut := func(mb movedBody) { cuts = append(cuts, bodyCut(mb)) }
	// Unchanged members that define nothing and have their lines to
	// themselves: they cannot change a name, so they are left out whole.
	// A member is left out only where nothing changed from the member
	// before it through its end: changed text just before it could be a
	// prefix (an annotation) that the member's first token completes.
	// Java's leaf methods are left out too where their names cannot
	// depend on what is left out (blankable), and put back from P.
	var gone []member
	var goneOpen []int32
	var goneFns []int
	inGone := make([]bool, len(d.p.fns))
	var members []member
	var after, fn []int
	if d.lang.Name() != "go" { // Go's newline terminators are members of their own
		members, after, fn = d.p.blankable(methods)
	}
	for k, m := range members {
		if changedIn(after[k], int(m.end)) {
			continue
		}
		s, e, a := d.lm.at(int(m.start)), d.lm.at(int(m.end)), d.lm.at(after[k])
		if s == 0 || e == 0 || a == 0 || e-a != int(m.end)-after[k] {
			continue
		}
		from, to := d.tl[s-1], len(d.t)
		if e < len(d.tl) {
			to = d.tl[e]
		}
		if !blankUpTo(d.t[from:], int(m.scol)) || !blankFrom(d.t, offsetAt(d.tl, point{int32(e - 1), m.ecol}), to) {
			continue
		}
		open := 0 // its container's first line in T, to number it as T does
		if m.in > 0 {
			if open = d.lm.at(int(d.p.containers[m.in].open)); open == 0 {
				open = -1 // that line changed (a class's header): the container around it in T
			}
		}
		cuts = append(cuts, cut{from, to, 0})
		m.start, m.end = int32(s), int32(e)
		gone, goneOpen = append(gone, m), append(goneOpen, int32(open))
		if fn[k] >= 0 {
			goneFns = append(goneFns, fn[k])
			inGone[fn[k]] = true
		}
	}
	// Java: unchanged bodies that hold definitions (anonymous and local
	// classes) are left out too. Their definitions' names are the
	// function's and the body's own (anonymous classes are numbered per
	// enclosing definition), so they are put back from P, moved with
	// their lines and named after the function as the skeleton names it.
	var opaque []opaqueBody
	inOpaque := make([]bool, len(d.p.fns))
	if d.lang.Name() == "java" {
		for i := 0; i < len(d.p.fns); i++ {
			f := &d.p.fns[i]
			if f.leaf || f.open.row < 0 {
				continue
			}
			j := i + 1 // P lists a function's definitions right after it
			for j < len(d.p.fns) && d.p.fns[j].start <= f.close.row+1 && f.holds(&d.p.fns[j]) {
				j++
			}
			if j < len(d.p.fns) && d.p.fns[j].start <= f.close.row+1 && d.p.fns[j].end >= f.open.row+1 {
				continue // a definition beside the body on its brace lines
			}
			mb, ok := unchanged(f)
			if !ok {
				continue
			}
			leaveOut(mb)
			opaque = append(opaque, opaqueBody{i, j, mb})
			for k := i; k < j; k++ {
				inOpaque[k] = true
			}
			i = j - 1
		}
	}
	// changedLeaf places the body of P's leaf f in T when its braces' lines
	// did not change and the run of statements around the changes inside
	// it reads clean and defines nothing (Java; spanruns.go).
	changedLeaf := func(f *fnSpan) (movedBody, bool) {
		a, b := int(f.open.row)+1, int(f.close.row)+1
		if d.lang.Name() != "java" || len(zones) != 0 || changedIn(a, a) || changedIn(b, b) {
			return movedBody{}, false
		}
		var inside []lineHunk
		for _, h := range d.hunks {
			if h.pa-1 >= a && h.pb+1 <= b {
				inside = append(inside, h)
			}
		}
		mb, ok := d.place(f)
		if len(inside) == 0 || !ok {
			return mb, false
		}
		return mb, d.changedBodyDefinesNothing(ctx, bodyWrappers["java"], f, mb, inside)
	}
	for _, i := range d.leaves {
		if inOpaque[i] || inGone[i] {
			continue
		}
		mb, ok := unchanged(&d.p.fns[i])
		if !ok {
			if mb, ok = changedLeaf(&d.p.fns[i]); !ok {
				continue
			}
		}
		blank = append(blank, mb)
		leaveOut(mb)
	}
	if len(cuts) == 0 {
		return nil
	}
	sort.Slice(cuts, func(a, b int) bool { return cuts[a].from < cuts[b].from })
	text := leaveOutCuts(d.t, 0, len(d.t), cuts)
	if text == nil {
		return nil // cannot happen: leaves lie inside definitions
	}
	return &skeleton{text: text, blank: blank, opaque: opaque, gone: gone, goneOpen: goneOpen, goneFns: goneFns}
}

// opaqueBody is the body of P's function fns[i] left out of a skeleton
// whole, with the definitions inside it, fns[i+1:end]; mb places it in T.
type opaqueBody struct {
	i, end int
	mb     movedBody
}

// holds reports whether g lies inside f's braced body.
func (f *fnSpan) holds(g *fnSpan) bool {
	if g.open.row >= 0 {
		return pointBefore(f.open, g.open) && pointBefore(g.close, f.close)
	}
	return g.start > f.open.row+1 && g.end < f.close.row+1
}

func pointBefore(a, b point) bool { return before(a.row, a.col, b.row, b.col) }

// putBack puts the definitions of the bodies a skeleton left out whole
// (opaque, in file order) back into v, the skeleton's reading: each
// function must be there with its body where P's moved, and its
// definitions follow it, moved with their lines and named after it as the
// skeleton names it.
func (v *versionSpans) putBack(p *versionSpans, opaque []opaqueBody, lm lineMap) bool {
	fns := make([]fnSpan, 0, len(v.fns)+len(p.fns))
	k := 0
	for _, f := range v.fns {
		fns = append(fns, f)
		if k == len(opaque) || f.open != opaque[k].mb.open {
			continue
		}
		o := opaque[k]
		k++
		pf := &p.fns[o.i]
		if f.close != o.mb.close {
			return false
		}
		fns[len(fns)-1].leaf = false
		for _, g := range p.fns[o.i+1 : o.end] {
			rest, ok := strings.CutPrefix(g.name, pf.name+".")
			if !ok {
				return false // cannot happen: they are named inside it
			}
			g.name = f.name + "." + rest // as the skeleton names it (an overload added)
			if g, ok = g.moved(lm); !ok {
				return false // cannot happen: the body's lines are unchanged
			}
			fns = append(fns, g)
		}
	}
	if k != len(opaque) {
		return false
	}
	v.fns = fns
	return true
}

// putBackMethods puts the functions of the methods a skeleton left out
// whole (P's fns[i] for i in gone, in file order) back into v, the
// skeleton's reading res, moved with their lines: the class around each
// must be the one that names it in P, and no function of that class in
// the skeleton may have its own name (an overload added).
func (v *versionSpans) putBackMethods(p *versionSpans, gone []int, lm lineMap, res *extract.FileResult) bool {
	in := make(map[[2]string]bool, len(v.fns))
	for _, f := range v.fns {
		in[methodKey(f.name)] = true
	}
	moved := make([]fnSpan, 0, len(gone))
	for _, i := range gone {
		g, ok := p.fns[i].moved(lm)
		key := methodKey(g.name)
		if !ok || in[key] {
			return false
		}
		around := ""
		for _, d := range res.Defs { // the innermost class around it
			if d.Kind == extract.KindClass && d.StartLine < int(g.start) && int(g.end) < d.EndLine {
				around = d.Name
			}
		}
		if around != key[0] {
			return false
		}
		moved = append(moved, g)
	}
	v.fns = mergeByStart(v.fns, moved, func(f fnSpan) int32 { return f.start })
	return true
}

// moved is f, none of whose lines changed, placed in T by lm: its lines and
// its body's rows move alike.
func (f fnSpan) moved(lm lineMap) (fnSpan, bool) {
	s, e, ok := lm.span(f.start, f.end)
	if !ok {
		return f, false
	}
	if f.open.row >= 0 {
		f.open.row += s - f.start
		f.close.row += s - f.start
	}
	f.start, f.end = s, e
	return f, true
}

// methodKey is a function's class and its own name, without the signature
// of an overload: "A.B.m(int)" is {"A.B", "m"}.
func methodKey(name string) [2]string {
	class, own, _ := qualifier(name)
	return [2]string{class, own}
}

// mergeByStart merges add into in, both in file order: each of add goes
// before the first of in that starts after it.
func mergeByStart[T any](in, add []T, start func(T) int32) []T {
	all := make([]T, 0, len(in)+len(add))
	k := 0
	for _, x := range in {
		for k < len(add) && start(add[k]) < start(x) {
			all = append(all, add[k])
			k++
		}
		all = append(all, x)
	}
	return append(all, add[k:]...)
}

// before reports whether (line a, column ac) comes before (b, bc).
func before(a, ac, b, bc int32) bool { return a < b || a == b && ac < bc }

// keptErrors reports whether v, a skeleton of T derived from P read with
// errors, has P's errors, each moved with its lines, and P's members in the
// error zones, moved likewise: error recovery depends on what surrounds an
// error, so a skeleton whose errors read otherwise is not trusted.
func keptErrors(p, v *versionSpans, lm lineMap, zones [][2]int32) bool {
	if len(v.errs) != len(p.errs) {
		return false
	}
	for k, e := range p.errs {
		if a, b, ok := lm.span(e[0], e[1]); !ok || v.errs[k] != [2]int32{a, b} {
			return false
		}
	}
	for _, z := range zones {
		a, b, ok := lm.span(z[0], z[1])
		if !ok {
			return false
		}
		var pm, vm []member
		for _, m := range p.members {
			if m.start <= z[1] && m.end >= z[0] {
				if m.start, m.end, ok = lm.span(m.start, m.end); !ok {
					return false
				}
				pm = append(pm, m)
			}
		}
		for _, m := range v.members {
			if m.start <= b && m.end >= a {
				vm = append(vm, m)
			}
		}
		if len(pm) != len(vm) {
			return false
		}
		for k := range pm {
			x, y := pm[k], vm[k]
			if x.start != y.start || x.end != y.end || x.scol != y.scol || x.ecol != y.ecol || x.named != y.named || x.def != y.def {
				return false
			}
		}
	}
	return true
}

// blankable are the members of v that could be left out of a skeleton:
// named (not a body's braces), defining nothing and holding no container;
// in file order, each with the first line of the member before it in its
// container (1 for the first of the file). Whether a member has its lines
// to itself is checked on the text.
//
// With methods (Java), leaf methods whose own name no other function of
// their class has are blankable too; fn is the index of each one's
// function (-1 for the other members).
func (v *versionSpans) blankable(methods bool) (ms []member, after, fn []int) {
	var names map[[2]string]int // (class, own name) → functions
	if methods {
		names = make(map[[2]string]int, len(v.fns))
		for _, f := range v.fns {
			names[methodKey(f.name)]++
		}
	}
	last := make([]int, len(v.containers))   // per container, its last member's first line
	token := make([]bool, len(v.containers)) // per container, whether its last member is a token
	for _, m := range v.members {
		prev := max(last[m.in], 1)
		last[m.in] = int(m.start)
		afterToken := token[m.in]
		token[m.in] = !m.named
		if k := v.containers[m.in].kind; !m.named || k == "enum_body_declarations" || ownEnd[k] {
			continue // (a container without braces ends where its members do)
		}
		if afterToken && extract.IsCConditional(v.containers[m.in].kind) {
			continue // the newline ending #if's line would take in the blank lines left
		}
		i := -1
		if m.def {
			if !methods {
				continue
			}
			if i = v.leafMethod(m); i < 0 {
				continue
			}
			if names[methodKey(v.fns[i].name)] != 1 {
				continue
			}
		}
		holds := false
		for _, c := range v.containers[1:] {
			if c.open >= m.start && c.open <= m.end {
				holds = true
			}
		}
		if !holds {
			ms, after, fn = append(ms, m), append(after, prev), append(fn, i)
		}
	}
	return ms, after, fn
}

// blankUpTo reports whether line's first n bytes are spaces or tabs.
func blankUpTo(line []byte, n int) bool {
	if n > len(line) {
		return false
	}
	for _, b := range line[:n] {
		if b != ' ' && b != '\t' {
			return false
		}
	}
	return true
}

// blankFrom reports whether t[from:to] is only white space.
func blankFrom(t []byte, from, to int) bool {
	if from < 0 || from > to {
		return false
	}
	return len(bytes.TrimSpace(t[from:to])) == 0
}
