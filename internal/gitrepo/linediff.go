package gitrepo

import (
	"bytes"
	"strconv"
)

// maxDiffCost bounds the edit distance Myers' algorithm explores in one region;
// beyond it the region is reported as a whole replacement. The diff stays valid,
// only less minimal, and pathological inputs cannot take quadratic time.
const maxDiffCost = 2048

// isBinary reports whether data looks binary the way git decides it: a NUL byte
// in the first 8000 bytes.
func isBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
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
	v1, v2         []int
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
	res.Unified, res.Truncated = d.unified(context, maxBytes, out[:0])
	return res
}

// count returns the lines added and deleted from old to new (as git's
// numstat counts them) and leaves the marks for unified and lineChanges.
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
	d.mark(lo)
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
// at line off of each side and differ at both ends. Lines that occur on one
// side only are changes without any search; Myers runs on what remains (as
// GNU diff discards lines without a match before comparing).
func (d *differ) mark(off int) {
	a, b := d.a, d.b
	if len(a) == 0 && len(b) == 0 {
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
	d.subA, d.mapA = d.subA[:0], d.mapA[:0]
	for i := range a {
		if d.countB[a[i]] == 0 {
			d.changedA[off+i] = true
		} else {
			d.subA = append(d.subA, a[i])
			d.mapA = append(d.mapA, off+i)
		}
	}
	d.subB, d.mapB = d.subB[:0], d.mapB[:0]
	for j := range b {
		if d.countA[b[j]] == 0 {
			d.changedB[off+j] = true
		} else {
			d.subB = append(d.subB, b[j])
			d.mapB = append(d.mapB, off+j)
		}
	}
	d.subChA = resetBools(d.subChA, len(d.subA))
	d.subChB = resetBools(d.subChB, len(d.subB))
	d.compare(0, len(d.subA), 0, len(d.subB))
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

func resetCounts(c []int32, n int) []int32 {
	if cap(c) < n {
		return make([]int32, n)
	}
	c = c[:n]
	clear(c)
	return c
}

// compare marks the changes between subA[aLo:aHi] and subB[bLo:bHi].
func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	A, B := d.subA, d.subB
	for aLo < aHi && bLo < bHi && A[aLo] == B[bLo] {
		aLo++
		bLo++
	}
	for aHi > aLo && bHi > bLo && A[aHi-1] == B[bHi-1] {
		aHi--
		bHi--
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.subChB[j] = true
		}
		return
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.subChA[i] = true
		}
		return
	}
	x, y, ok := d.bisect(A[aLo:aHi], B[bLo:bHi])
	if !ok {
		for i := aLo; i < aHi; i++ {
			d.subChA[i] = true
		}
		for j := bLo; j < bHi; j++ {
			d.subChB[j] = true
		}
		return
	}
	d.compare(aLo, aLo+x, bLo, bLo+y)
	d.compare(aLo+x, aHi, bLo+y, bHi)
}

// bisect finds the middle snake of Myers' O(ND) algorithm (forward and reverse
// searches meeting in the middle) and returns the split point. ok is false when
// the edit distance exceeds maxDiffCost.
func (d *differ) bisect(A, B []int32) (x, y int, ok bool) {
	n, m := len(A), len(B)
	maxD := (n + m + 1) / 2
	if maxD > maxDiffCost {
		maxD = maxDiffCost
	}
	off := maxD + 1
	vlen := 2*off + 1
	if cap(d.v1) < vlen {
		d.v1 = make([]int, vlen)
		d.v2 = make([]int, vlen)
	}
	v1, v2 := d.v1[:vlen], d.v2[:vlen]
	for i := range v1 {
		v1[i] = -1
		v2[i] = -1
	}
	v1[off+1] = 0
	v2[off+1] = 0
	delta := n - m
	front := delta%2 != 0
	var k1start, k1end, k2start, k2end int
	for dd := 0; dd < maxD; dd++ {
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -dd || (k1 != dd && v1[i-1] < v1[i+1]) {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && A[x1] == B[y1] {
				x1++
				y1++
			}
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				j := off + delta - k1
				if j >= 0 && j < vlen && v2[j] != -1 && x1 >= n-v2[j] {
					return x1, y1, true
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -dd || (k2 != dd && v2[i-1] < v2[i+1]) {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && A[n-x2-1] == B[m-y2-1] {
				x2++
				y2++
			}
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < vlen && v1[j] != -1 {
					x1 := v1[j]
					y1 := off + x1 - j
					if x1 >= n-x2 {
						return x1, y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
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
