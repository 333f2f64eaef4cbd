package gitrepo

// compact is xdiff's xdl_change_compact (xdiffi.c) with the indent
// heuristic, on by default since git 2.14: each group of changed lines that
// can slide over equal lines is moved to where git puts it, so that the
// hunks (and the changed line numbers the function mapper reads) are
// git's. ch marks the changed lines of lines; other those of the other
// file, whose groups are kept in step. The counts do not change.
func compact(lines [][]byte, ch, other []bool) {
	n, no := len(ch), len(other)
	at := func(c []bool, i int) bool { return i >= 0 && i < len(c) && c[i] } // rchg with its sentinels
	type group struct{ start, end int }
	initGroup := func(c []bool) group {
		g := group{}
		for at(c, g.end) {
			g.end++
		}
		return g
	}
	next := func(c []bool, nrec int, g *group) bool {
		if g.end == nrec {
			return false
		}
		g.start = g.end + 1
		for g.end = g.start; at(c, g.end); g.end++ {
		}
		return true
	}
	previous := func(c []bool, g *group) bool {
		if g.start == 0 {
			return false
		}
		g.end = g.start - 1
		for g.start = g.end; at(c, g.start-1); g.start-- {
		}
		return true
	}
	same := func(i, j int) bool { return string(lines[i]) == string(lines[j]) }
	slideDown := func(g *group) bool {
		if g.end < n && same(g.start, g.end) {
			ch[g.start] = false
			ch[g.end] = true
			g.start++
			g.end++
			for at(ch, g.end) {
				g.end++
			}
			return true
		}
		return false
	}
	slideUp := func(g *group) bool {
		if g.start > 0 && same(g.start-1, g.end-1) {
			g.start--
			g.end--
			ch[g.start] = true
			ch[g.end] = false
			for at(ch, g.start-1) {
				g.start--
			}
			return true
		}
		return false
	}
	g, gOther := initGroup(ch), initGroup(other)
	for {
		if g.end != g.start {
			var groupSize, earliestEnd int
			endMatchingOther := -1
			for {
				groupSize = g.end - g.start
				endMatchingOther = -1
				for slideUp(&g) {
					previous(other, &gOther)
				}
				earliestEnd = g.end
				if gOther.end > gOther.start {
					endMatchingOther = g.end
				}
				for slideDown(&g) {
					next(other, no, &gOther)
					if gOther.end > gOther.start {
						endMatchingOther = g.end
					}
				}
				if groupSize == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
				// It cannot move.
			case endMatchingOther != -1:
				// Line it up with the last group of the other file it can meet.
				for gOther.end == gOther.start {
					slideUp(&g)
					previous(other, &gOther)
				}
			default:
				shift := max(earliestEnd, g.end-groupSize-1, g.end-indentMaxSliding)
				bestShift := -1
				var best splitScore
				for ; shift <= g.end; shift++ {
					var sc splitScore
					sc.add(measureSplit(lines, shift))
					sc.add(measureSplit(lines, shift-groupSize))
					if bestShift == -1 || sc.cmp(best) <= 0 {
						best, bestShift = sc, shift
					}
				}
				for g.end > bestShift {
					slideUp(&g)
					previous(other, &gOther)
				}
			}
		}
		if !next(ch, n, &g) {
			break
		}
		next(other, no, &gOther)
	}
}

// The indent heuristic's weights (xdiffi.c).
const (
	indentMaxSliding   = 100 // INDENT_HEURISTIC_MAX_SLIDING
	maxIndent          = 200
	maxBlanks          = 20
	startOfFilePenalty = 1
	endOfFilePenalty   = 21
	totalBlankWeight   = -30
	postBlankWeight    = 6
	relIndentPenalty   = -4
	relIndentBlankPen  = 10
	relOutdentPenalty  = 24
	relOutdentBlankPen = 17
	relDedentPenalty   = 23
	relDedentBlankPen  = 17
	indentWeight       = 60
)

// indentOf is get_indent: the line's indent in columns (tabs to 8), at most
// 200; -1 for a line of only white space.
func indentOf(line []byte) int {
	ret := 0
	for _, c := range line {
		switch c {
		case ' ':
			ret++
		case '\t':
			ret += 8 - ret%8
		case '\n', '\r':
		default:
			return ret
		}
		if ret >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

type splitMeasurement struct {
	endOfFile             bool
	indent                int
	preBlank, preIndent   int
	postBlank, postIndent int
}

// measureSplit is measure_split: the lines around a split before line split.
func measureSplit(lines [][]byte, split int) splitMeasurement {
	var m splitMeasurement
	if split >= len(lines) {
		m.endOfFile, m.indent = true, -1
	} else {
		m.indent = indentOf(lines[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = indentOf(lines[i]); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < len(lines); i++ {
		if m.postIndent = indentOf(lines[i]); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

type splitScore struct{ effectiveIndent, penalty int }

// add is score_add_split.
func (s *splitScore) add(m splitMeasurement) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += indent
	pick := func(withBlank, without int) int {
		if anyBlanks {
			return withBlank
		}
		return without
	}
	switch {
	case indent == -1, m.preIndent == -1:
	case indent > m.preIndent:
		s.penalty += pick(relIndentBlankPen, relIndentPenalty)
	case indent == m.preIndent:
	case m.postIndent != -1 && m.postIndent > indent:
		s.penalty += pick(relOutdentBlankPen, relOutdentPenalty)
	default:
		s.penalty += pick(relDedentBlankPen, relDedentPenalty)
	}
}

// cmp is score_cmp: below 0 when s is the better split.
func (s splitScore) cmp(o splitScore) int {
	c := 0
	if s.effectiveIndent > o.effectiveIndent {
		c = 1
	} else if s.effectiveIndent < o.effectiveIndent {
		c = -1
	}
	return indentWeight*c + (s.penalty - o.penalty)
}
