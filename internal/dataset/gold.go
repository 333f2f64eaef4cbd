package dataset

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
)

// FilePatch is the part of a unified diff that touches one existing file.
type FilePatch struct {
	OldPath string
	// Touched are old-side line numbers the patch deletes or replaces.
	Touched []int
	// Inserts are old-side positions k where lines are inserted between line k
	// and line k+1 (k = 0: before the first line).
	Inserts []int
	hunks   []hunk
}

// hunk keeps a hunk's old-side text so it can be realigned.
type hunk struct {
	oldStart int
	lines    []string // with their ' ', '-', '+' prefix
}

// ParsePatch reads a unified diff (git format or plain) into per-file edits
// of existing files; files the patch creates are left out.
func ParsePatch(patch string) ([]FilePatch, error) {
	var out []FilePatch
	var cur *FilePatch
	var h *hunk
	oldLeft, newLeft := 0, 0
	sc := bufio.NewScanner(strings.NewReader(patch))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case oldLeft > 0 || newLeft > 0:
			switch {
			case strings.HasPrefix(l, "-"):
				oldLeft--
			case strings.HasPrefix(l, "+"):
				newLeft--
			case strings.HasPrefix(l, `\`):
				continue
			default: // context (" " or an empty line some tools emit)
				if l == "" {
					l = " "
				}
				oldLeft--
				newLeft--
			}
			if h != nil {
				h.lines = append(h.lines, l)
			}
		case strings.HasPrefix(l, "--- "):
			p := strings.TrimPrefix(l, "--- ")
			if i := strings.IndexByte(p, '\t'); i >= 0 {
				p = p[:i]
			}
			if p == "/dev/null" {
				cur = nil
				continue
			}
			out = append(out, FilePatch{OldPath: strings.TrimPrefix(p, "a/")})
			cur = &out[len(out)-1]
		case strings.HasPrefix(l, "@@ "):
			os, on, _, nn, err := parseHunk(l)
			if err != nil {
				return nil, fmt.Errorf("patch line %d: %w", n, err)
			}
			oldLeft, newLeft, h = on, nn, nil
			if cur != nil { // else: a new file's hunk, skipped by its counts
				if on == 0 {
					os++ // "-k,0": the insertion follows line k
				}
				cur.hunks = append(cur.hunks, hunk{oldStart: os})
				h = &cur.hunks[len(cur.hunks)-1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].locate(nil)
	}
	return out, nil
}

// locate computes Touched and Inserts. With the file's old lines, a hunk whose
// text is not at its stated line is moved to the nearest place it matches, as
// patch(1) applies hunks at an offset.
func (fp *FilePatch) locate(file []string) {
	fp.Touched, fp.Inserts = nil, nil
	for _, h := range fp.hunks {
		start := h.oldStart
		if file != nil {
			start = alignHunk(h, file)
		}
		line := start
		for _, l := range h.lines {
			switch l[0] {
			case '-':
				fp.Touched = append(fp.Touched, line)
				line++
			case '+':
				fp.Inserts = append(fp.Inserts, line-1)
			default:
				line++
			}
		}
	}
}

// alignHunk returns the old start line where the hunk's old text matches the
// file, searching outwards from the stated line; the stated line if none does.
func alignHunk(h hunk, file []string) int {
	var old []string
	for _, l := range h.lines {
		if l[0] != '+' {
			old = append(old, l[1:])
		}
	}
	matches := func(start int) bool {
		if start < 1 || start-1+len(old) > len(file) {
			return false
		}
		for i, o := range old {
			if strings.TrimRight(file[start-1+i], "\r") != strings.TrimRight(o, "\r") {
				return false
			}
		}
		return true
	}
	if len(old) == 0 || matches(h.oldStart) {
		return h.oldStart
	}
	for d := 1; d <= len(file); d++ {
		if matches(h.oldStart - d) {
			return h.oldStart - d
		}
		if matches(h.oldStart + d) {
			return h.oldStart + d
		}
	}
	return h.oldStart
}

// parseHunk reads "@@ -a,b +c,d @@".
func parseHunk(l string) (oldStart, oldN, newStart, newN int, err error) {
	f := strings.Fields(l)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q", l)
	}
	rng := func(s string) (int, int, error) {
		a, b, ok := strings.Cut(s, ",")
		x, err := strconv.Atoi(a)
		if err != nil {
			return 0, 0, fmt.Errorf("bad hunk header %q", l)
		}
		if !ok {
			return x, 1, nil
		}
		y, err := strconv.Atoi(b)
		if err != nil {
			return 0, 0, fmt.Errorf("bad hunk header %q", l)
		}
		return x, y, nil
	}
	if oldStart, oldN, err = rng(f[1][1:]); err != nil {
		return
	}
	newStart, newN, err = rng(f[2][1:])
	return
}

// span is a function's lines.
type span struct {
	id         string
	start, end int
}

// functionsByFile indexes function nodes by file.
func functionsByFile(nodes []codegraph.Node) map[string][]span {
	m := map[string][]span{}
	for _, n := range nodes {
		if n.Type == codegraph.TypeFunction {
			m[n.Path] = append(m[n.Path], span{n.ID, int(n.StartLine), int(n.EndLine)})
		}
	}
	return m
}

// outermost is the widest function matching contains: a change inside a
// nested function is a change of the function (or method) that contains it,
// as SWE-bench-style gold sets count it.
func outermost(fs []span, contains func(span) bool) string {
	best := -1
	for i, f := range fs {
		if contains(f) && (best < 0 || f.end-f.start > fs[best].end-fs[best].start) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return fs[best].id
}

// GoldFromPatch returns the functions of the graph (the code at the patch's
// base) whose existing lines the patch changes (hunks are matched against the
// file's text and moved when the patch was made at an offset): each deleted or replaced line
// is charged to the outermost function containing it (nested functions count
// as part of their enclosing function or method), and lines inserted strictly
// inside a function's body to that function. Sorted ids.
func GoldFromPatch(g *codegraph.Graph, patch string) ([]string, error) {
	fps, err := ParsePatch(patch)
	if err != nil {
		return nil, err
	}
	files := map[string][]string{}
	for _, n := range g.Nodes {
		if n.Type == codegraph.TypeFile {
			files[n.ID] = strings.Split(n.Code, "\n")
		}
	}
	for i := range fps {
		if f, ok := files[fps[i].OldPath]; ok {
			fps[i].locate(f)
		}
	}
	return goldFromFilePatches(functionsByFile(g.Nodes), fps), nil
}

// NoGoldReason says why GoldFromPatch found no function for patch in g:
// the files it edits have no graph (their language has none, or the build
// skipped them), or its edits are all outside functions.
func NoGoldReason(g *codegraph.Graph, patch string) string {
	fps, err := ParsePatch(patch)
	if err != nil {
		return "patch: " + err.Error()
	}
	files := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Type == codegraph.TypeFile {
			files[n.ID] = true
		}
	}
	skipped := map[string]string{}
	for _, s := range g.Stats.Skipped {
		skipped[s.Path] = s.Reason
	}
	var noGraph, outside []string
	for _, fp := range fps {
		switch lang, ok := codegraph.DetectLanguage(fp.OldPath); {
		case files[fp.OldPath]:
			outside = append(outside, fp.OldPath)
		case skipped[fp.OldPath] != "":
			noGraph = append(noGraph, fmt.Sprintf("%s (skipped: %s)", fp.OldPath, skipped[fp.OldPath]))
		case lang != "" && !ok:
			noGraph = append(noGraph, fmt.Sprintf("%s (no graph for language %s)", fp.OldPath, lang))
		case lang == "":
			noGraph = append(noGraph, fmt.Sprintf("%s (not source code)", fp.OldPath))
		default:
			noGraph = append(noGraph, fmt.Sprintf("%s (defines no function)", fp.OldPath))
		}
	}
	switch {
	case len(fps) == 0:
		return "no function-level edit: the patch only adds files"
	case len(outside) == 0:
		return "no function-level edit: no graph for the files it edits: " + strings.Join(noGraph, ", ")
	}
	return "no function-level edit: its changes are outside functions in " + strings.Join(outside, ", ")
}

func goldFromFilePatches(byFile map[string][]span, fps []FilePatch) []string {
	set := map[string]bool{}
	for _, fp := range fps {
		fs := byFile[fp.OldPath]
		for _, l := range fp.Touched {
			if id := outermost(fs, func(s span) bool { return s.start <= l && l <= s.end }); id != "" {
				set[id] = true
			}
		}
		for _, k := range fp.Inserts {
			if id := outermost(fs, func(s span) bool { return s.start <= k && k+1 <= s.end }); id != "" {
				set[id] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
