package gitrepo

import (
	"bytes"
	"math"
	"strconv"

	"github.com/locus-dev/locus/internal/fileclass"
)

// isBinary reports whether data looks binary the way git decides it without
// attributes: a NUL byte in the first 8000 bytes (xdiff-interface.c's
// buffer_is_binary, fileclass.IsBinary), or more than
// core.bigFileThreshold bytes (512 MiB).
func isBinary(data []byte) bool {
	return len(data) > bigFileThreshold || fileclass.IsBinary(data)
}

// splitLines splits data into lines that keep their '\n', so "x" at end of file
// and "x\n" are different lines, as in git.
func splitLines(data []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			dst = append(dst, data)
			break
		}
		dst = append(dst, data[:i+1])
		data = data[i+1:]
	}
	return dst
}

// differ holds reusable buffers for line diffs; not safe for concurrent use.
type differ struct {
	linesA, linesB [][]byte
	ids            map[string]int32
	a, b           []int32
	changedA       []bool
	changedB       []bool
	countA, countB []int32
	subA, subB     []int32 // filtered sequences fed to Myers
	mapA, mapB     []int   // their positions in a, b
	subChA, subChB []bool
	disA, disB     []byte
	shared         []int32 // per interned line: occurrences in the common ends
	kv             []int
}

// lineDiff is the result of diffing two blobs.
type lineDiff struct {
	Additions, Deletions int
	Unified              []byte // hunks only, no file header
	Truncated            bool
}

// diff computes a unified diff (context lines of context) of old → new. The
// output is cut at a line boundary once it exceeds maxBytes (<=0: no cap).
func (d *differ) diff(old, new []byte, context, maxBytes int, out []byte) lineDiff {
	var res lineDiff
	res.Additions, res.Deletions = d.count(old, new)
	// Slide each group of changes as git does before it prints hunks (the
	// counts stay the same, so count alone does not).
	compact(d.linesA, d.changedA, d.changedB)
	compact(d.linesB, d.changedB, d.changedA)
	res.Unified, res.Truncated = d.unified(context, maxBytes, out[:0])
	return res
}

// count returns the lines added and deleted from old to new (as git's
// numstat counts them) and leaves the marks, before git's sliding (diff
// slides them for unified and lineChanges).
func (d *differ) count(old, new []byte) (additions, deletions int) {
	d.linesA = splitLines(old, d.linesA)
	d.linesB = splitLines(new, d.linesB)
	A, B := d.linesA, d.linesB
	// Lines equal at both ends are unchanged (Myers would trim them too):
	// only the lines between are interned and compared.
	lo := 0
	for lo < len(A) && lo < len(B) && bytes.Equal(A[lo], B[lo]) {
		lo++
	}
	hiA, hiB := len(A), len(B)
	for hiA > lo && hiB > lo && bytes.Equal(A[hiA-1], B[hiB-1]) {
		hiA--
		hiB--
	}
	if d.ids == nil || len(d.ids) > 4096 {
		// clear costs a map's largest size, not its entries: a huge
		// file's map is dropped rather than cleared for every later file.
		d.ids = make(map[string]int32)
	} else {
		clear(d.ids)
	}
	d.a = d.intern(A[lo:hiA], d.a[:0])
	d.b = d.intern(B[lo:hiB], d.b[:0])
	d.changedA = resetBools(d.changedA, len(A))
	d.changedB = resetBools(d.changedB, len(B))
	var shared []int32
	if len(d.a) > 0 && len(d.b) > 0 {
		// How often each changed line also occurs in the common ends:
		// git counts equal lines over the whole files.
		d.shared = resetCounts(d.shared, len(d.ids))
		for _, ends := range [][][]byte{A[:lo], A[hiA:]} {
			for _, l := range ends {
				if id, ok := d.ids[string(l)]; ok {
					d.shared[id]++
				}
			}
		}
		shared = d.shared
	}
	d.mark(lo, len(A), len(B), shared)
	for _, c := range d.changedA {
		if c {
			deletions++
		}
	}
	for _, c := range d.changedB {
		if c {
			additions++
		}
	}
	return additions, deletions
}

// countLines is the number of lines in b as git counts them: a last line
// without a newline counts too.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func resetBools(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	b = b[:n]
	clear(b)
	return b
}

func (d *differ) intern(lines [][]byte, dst []int32) []int32 {
	for _, l := range lines {
		id, ok := d.ids[string(l)]
		if !ok {
			id = int32(len(d.ids))
			d.ids[string(l)] = id
		}
		dst = append(dst, id)
	}
	return dst
}

// mark fills changedA/changedB from the interned lines a and b, which start
// at line off of each side and differ at both ends, exactly as git's xdiff
// (its default Myers algorithm, not minimal) marks them, so that additions
// and deletions are git's numstat:
//   - xprepare.c's xdl_cleanup_records: a line with no equal line in the other
//     file is changed without any search; one with at least sqrt(lines) of
//     them (at most 1024) is also left out of the search when it sits in a
//     run of such lines (xdl_clean_mmatch);
//   - xdiffi.c's xdl_recs_cmp and xdl_split on what remains: Myers' middle
//     snake, with git's heuristics once the edit cost passes 256 (a long
//     enough snake far enough along is taken as the split) and its cut-off
//     at sqrt of the sequence lengths (the furthest-reaching path is taken).
//
// Counts of equal lines are over the whole files, as git classifies every
// line; shared holds, for each interned line, how often it occurs in the
// common prefix and suffix (which both files contain).
func (d *differ) mark(off int, nA, nB int, shared []int32) {
	a, b := d.a, d.b
	if len(a) == 0 || len(b) == 0 {
		// One side is empty between the common ends: the other side's
		// lines all changed, whatever the heuristics.
		for i := range a {
			d.changedA[off+i] = true
		}
		for j := range b {
			d.changedB[off+j] = true
		}
		return
	}
	n := len(d.ids)
	d.countA = resetCounts(d.countA, n)
	d.countB = resetCounts(d.countB, n)
	for _, x := range a {
		d.countA[x]++
	}
	for _, x := range b {
		d.countB[x]++
	}
	// dis: 0 no match in the other file, 1 some, 2 many (xdl_cleanup_records).
	d.disA = matchClasses(d.disA[:0], a, d.countB, shared, bogoSqrt(nA))
	d.disB = matchClasses(d.disB[:0], b, d.countA, shared, bogoSqrt(nB))
	d.subA, d.mapA = keep(d.subA[:0], d.mapA[:0], a, d.disA, off, d.changedA)
	d.subB, d.mapB = keep(d.subB[:0], d.mapB[:0], b, d.disB, off, d.changedB)
	d.subChA = resetBools(d.subChA, len(d.subA))
	d.subChB = resetBools(d.subChB, len(d.subB))
	ndiags := len(d.subA) + len(d.subB) + 3
	if cap(d.kv) < 2*ndiags+2 {
		d.kv = make([]int, 2*ndiags+2)
	}
	x := xdiffEnv{a: d.subA, b: d.subB, chA: d.subChA, chB: d.subChB,
		kvdf: d.kv[:ndiags], kvdb: d.kv[ndiags : 2*ndiags+2], koff: len(d.subB) + 1,
		mxcost: max(bogoSqrt(ndiags), xdlMaxCostMin)}
	x.recsCmp(0, len(d.subA), 0, len(d.subB), false)
	for i, c := range d.subChA {
		if c {
			d.changedA[d.mapA[i]] = true
		}
	}
	for j, c := range d.subChB {
		if c {
			d.changedB[d.mapB[j]] = true
		}
	}
}

// xdiff's constants (xdiff/xdiffi.c, xdiff/xprepare.c).
const (
	xdlMaxEqLimit    = 1024 // XDL_MAX_EQLIMIT
	xdlSimScanWin    = 100  // XDL_SIMSCAN_WINDOW
	xdlKpDisRun      = 4    // XDL_KPDIS_RUN
	xdlMaxCostMin    = 256  // XDL_MAX_COST_MIN
	xdlHeurMinCost   = 256  // XDL_HEUR_MIN_COST
	xdlSnakeCnt      = 20   // XDL_SNAKE_CNT
	xdlKHeur         = 4    // XDL_K_HEUR
	xdlLineMax       = math.MaxInt
	bigFileThreshold = 512 << 20 // core.bigFileThreshold: git calls larger files binary
)

// bogoSqrt is xdl_bogosqrt: a power of two near the square root of n.
func bogoSqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// matchClasses appends each line's match class: 0 when the other file has no
// equal line, 2 when it has at least min(mlim, 1024), 1 otherwise.
func matchClasses(dis []byte, lines []int32, other, shared []int32, mlim int) []byte {
	mlim = min(mlim, xdlMaxEqLimit)
	for _, x := range lines {
		switch nm := int(other[x] + shared[x]); {
		case nm == 0:
			dis = append(dis, 0)
		case nm >= mlim:
			dis = append(dis, 2)
		default:
			dis = append(dis, 1)
		}
	}
	return dis
}

// keep appends the lines xdiff searches (class 1, or 2 outside a run of
// unmatched lines) and their positions; the others are marked changed.
func keep(sub []int32, pos []int, lines []int32, dis []byte, off int, changed []bool) ([]int32, []int) {
	for i, x := range lines {
		if dis[i] == 1 || (dis[i] == 2 && !cleanMMatch(dis, i)) {
			sub = append(sub, x)
			pos = append(pos, off+i)
		} else {
			changed[off+i] = true
		}
	}
	return sub, pos
}

// cleanMMatch is xdl_clean_mmatch: whether a line with many matches (dis[i]
// is 2) is discarded, being in the middle of a run of lines without matches.
func cleanMMatch(dis []byte, i int) bool {
	s, e := 0, len(dis)-1
	if i-s > xdlSimScanWin {
		s = i - xdlSimScanWin
	}
	if e-i > xdlSimScanWin {
		e = i + xdlSimScanWin
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*xdlKpDisRun < rpdis1+rdis1
}

// xdiffEnv is xdl_recs_cmp's state: the two sequences, their change marks
// and the forward and backward diagonal vectors (indexed from -koff).
type xdiffEnv struct {
	a, b       []int32
	chA, chB   []bool
	kvdf, kvdb []int
	koff       int
	mxcost     int
}

// recsCmp is xdl_recs_cmp: marks the changes between a[off1:lim1] and b[off2:lim2].
func (x *xdiffEnv) recsCmp(off1, lim1, off2, lim2 int, needMin bool) {
	a, b := x.a, x.b
	for off1 < lim1 && off2 < lim2 && a[off1] == b[off2] {
		off1++
		off2++
	}
	for off1 < lim1 && off2 < lim2 && a[lim1-1] == b[lim2-1] {
		lim1--
		lim2--
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			x.chB[off2] = true
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			x.chA[off1] = true
		}
	default:
		i1, i2, minLo, minHi := x.split(off1, lim1, off2, lim2, needMin)
		x.recsCmp(off1, i1, off2, i2, minLo)
		x.recsCmp(i1, lim1, i2, lim2, minHi)
	}
}

// split is xdl_split: the point where the forward and backward searches
// meet, or the heuristic or cut-off point; minLo and minHi say whether each
// half must then be diffed minimally.
func (x *xdiffEnv) split(off1, lim1, off2, lim2 int, needMin bool) (int, int, bool, bool) {
	ha1, ha2 := x.a, x.b
	kf := func(d int) *int { return &x.kvdf[d+x.koff] }
	kb := func(d int) *int { return &x.kvdb[d+x.koff] }
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	*kf(fmid) = off1
	*kb(bmid) = lim1
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			*kf(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*kf(fmax + 1) = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if *kf(d - 1) >= *kf(d + 1) {
				i1 = *kf(d - 1) + 1
			} else {
				i1 = *kf(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1++
				i2++
			}
			if i1-prev1 > xdlSnakeCnt {
				gotSnake = true
			}
			*kf(d) = i1
			if odd && bmin <= d && d <= bmax && *kb(d) <= i1 {
				return i1, i2, true, true
			}
		}
		if bmin > dmin {
			bmin--
			*kb(bmin - 1) = xdlLineMax
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*kb(bmax + 1) = xdlLineMax
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if *kb(d - 1) < *kb(d + 1) {
				i1 = *kb(d - 1)
			} else {
				i1 = *kb(d + 1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1--
				i2--
			}
			if prev1-i1 > xdlSnakeCnt {
				gotSnake = true
			}
			*kb(d) = i1
			if !odd && fmin <= d && d <= fmax && i1 <= *kf(d) {
				return i1, i2, true, true
			}
		}
		if needMin {
			continue
		}
		if gotSnake && ec > xdlHeurMinCost {
			best, s1, s2 := 0, 0, 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := d - fmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *kf(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > xdlKHeur*ec && v > best &&
					off1+xdlSnakeCnt <= i1 && i1 < lim1 &&
					off2+xdlSnakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == xdlSnakeCnt {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, true, false
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := d - bmid
				if dd < 0 {
					dd = -dd
				}
				i1 := *kb(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > xdlKHeur*ec && v > best &&
					off1 < i1 && i1 <= lim1-xdlSnakeCnt &&
					off2 < i2 && i2 <= lim2-xdlSnakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == xdlSnakeCnt-1 {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, false, true
			}
		}
		if ec >= x.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(*kf(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := xdlLineMax, xdlLineMax
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, *kb(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}

// unified renders hunks in git's format from the change marks.
func (d *differ) unified(context, maxBytes int, out []byte) ([]byte, bool) {
	type group struct{ a0, a1, b0, b1 int }
	var groups []group
	i, j := 0, 0
	na, nb := len(d.linesA), len(d.linesB)
	for i < na || j < nb {
		if i < na && j < nb && !d.changedA[i] && !d.changedB[j] {
			i++
			j++
			continue
		}
		g := group{a0: i, b0: j}
		for i < na && d.changedA[i] {
			i++
		}
		for j < nb && d.changedB[j] {
			j++
		}
		g.a1, g.b1 = i, j
		if g.a0 == g.a1 && g.b0 == g.b1 {
			// Unchanged on one side only at the end: cannot happen with consistent marks.
			break
		}
		groups = append(groups, g)
	}
	for gi := 0; gi < len(groups); {
		// Merge groups whose context would touch.
		gj := gi
		for gj+1 < len(groups) && groups[gj+1].a0-groups[gj].a1 <= 2*context {
			gj++
		}
		first, last := groups[gi], groups[gj]
		a0 := max(first.a0-context, 0)
		b0 := first.b0 - (first.a0 - a0)
		a1 := min(last.a1+context, na)
		b1 := last.b1 + (a1 - last.a1)
		out = appendRange(append(out, "@@ -"...), a0, a1-a0)
		out = appendRange(append(out, " +"...), b0, b1-b0)
		out = append(out, " @@\n"...)
		ai, bi := a0, b0
		for g := gi; g <= gj; g++ {
			for ; ai < groups[g].a0; ai, bi = ai+1, bi+1 {
				out = appendLine(out, ' ', d.linesA[ai])
			}
			for ; ai < groups[g].a1; ai++ {
				out = appendLine(out, '-', d.linesA[ai])
			}
			for ; bi < groups[g].b1; bi++ {
				out = appendLine(out, '+', d.linesB[bi])
			}
		}
		for ; ai < a1; ai++ {
			out = appendLine(out, ' ', d.linesA[ai])
		}
		if maxBytes > 0 && len(out) > maxBytes {
			return cutAtLine(out, maxBytes), true
		}
		gi = gj + 1
	}
	return out, false
}

func cutAtLine(out []byte, n int) []byte {
	if n >= len(out) {
		return out
	}
	if i := bytes.LastIndexByte(out[:n], '\n'); i >= 0 {
		return out[:i+1]
	}
	return out[:0]
}

func appendRange(out []byte, start, n int) []byte {
	if n == 0 {
		return strconv.AppendInt(append(strconv.AppendInt(out, int64(start), 10), ','), 0, 10)
	}
	out = strconv.AppendInt(out, int64(start+1), 10)
	if n != 1 {
		out = strconv.AppendInt(append(out, ','), int64(n), 10)
	}
	return out
}

func appendLine(out []byte, prefix byte, line []byte) []byte {
	out = append(out, prefix)
	out = append(out, line...)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		out = append(out, "\n\\ No newline at end of file\n"...)
	}
	return out
}

// lineChanges lists the changed lines of the last diff.
func (d *differ) lineChanges() LineChanges {
	var lc LineChanges
	for i, c := range d.changedA {
		if c {
			lc.Deleted = append(lc.Deleted, i+1)
		}
	}
	for j, c := range d.changedB {
		if c {
			lc.Added = append(lc.Added, j+1)
		}
	}
	// Pure insertions: runs of added lines with no deleted line beside them.
	i, j := 0, 0
	na, nb := len(d.linesA), len(d.linesB)
	for i < na || j < nb {
		switch {
		case i < na && d.changedA[i]:
			for i < na && d.changedA[i] {
				i++
			}
			for j < nb && d.changedB[j] {
				j++
			}
		case j < nb && d.changedB[j]:
			lc.InsertedAfter = append(lc.InsertedAfter, i)
			for j < nb && d.changedB[j] {
				j++
			}
		default:
			i++
			j++
		}
	}
	return lc
}

func resetCounts(c []int32, n int) []int32 {
	if cap(c) < n {
		return make([]int32, n)
	}
	c = c[:n]
	clear(c)
	return c
}
