package codegraph

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/gitrepo"
)

// FilePatch is the part of a unified diff that touches one existing file.
type FilePatch struct {
	OldPath string
	// Touched are old-side line numbers the patch deletes or replaces.
	Touched []int
	// Inserts are old-side positions k where lines are inserted between line k
	// and line k+1 (k = 0: before the first line).
	Inserts []int
}

// ParsePatch reads a unified diff (git format or plain) into per-file edits
// of existing files; files the patch creates are left out.
func ParsePatch(patch string) ([]FilePatch, error) {
	var out []FilePatch
	var cur *FilePatch
	oldLine, oldLeft, newLeft := 0, 0, 0
	sc := bufio.NewScanner(strings.NewReader(patch))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case oldLeft > 0 || newLeft > 0:
			if cur == nil {
				return nil, fmt.Errorf("patch line %d: hunk without a file", n)
			}
			switch {
			case strings.HasPrefix(l, "-"):
				cur.Touched = append(cur.Touched, oldLine)
				oldLine++
				oldLeft--
			case strings.HasPrefix(l, "+"):
				cur.Inserts = append(cur.Inserts, oldLine-1)
				newLeft--
			case strings.HasPrefix(l, `\`):
			default: // context (" " or an empty line some tools emit)
				oldLine++
				oldLeft--
				newLeft--
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
			if cur == nil {
				// The file is new: skip its hunk body by counts.
				_, on, _, nn, err := parseHunk(l)
				if err != nil {
					return nil, fmt.Errorf("patch line %d: %w", n, err)
				}
				oldLeft, newLeft, oldLine = on, nn, 0
				cur = &FilePatch{} // a sink, not added to out
				continue
			}
			os, on, _, nn, err := parseHunk(l)
			if err != nil {
				return nil, fmt.Errorf("patch line %d: %w", n, err)
			}
			oldLine, oldLeft, newLeft = os, on, nn
			if on == 0 {
				oldLine = os + 1 // "-k,0": the insertion follows line k
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
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
func functionsByFile(nodes []Node) map[string][]span {
	m := map[string][]span{}
	for _, n := range nodes {
		if n.Type == TypeFunction {
			m[n.Path] = append(m[n.Path], span{n.ID, int(n.StartLine), int(n.EndLine)})
		}
	}
	return m
}

// innermost is the narrowest function containing line l.
func innermost(fs []span, contains func(span) bool) string {
	best := -1
	for i, f := range fs {
		if contains(f) && (best < 0 || f.end-f.start < fs[best].end-fs[best].start) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return fs[best].id
}

// GoldFromPatch returns the functions of the graph (the code at the patch's
// base) whose existing lines the patch changes: each deleted or replaced line
// is charged to the innermost function containing it, and lines inserted
// strictly inside a function's body to that function. Sorted ids.
func GoldFromPatch(g *Graph, patch string) ([]string, error) {
	fps, err := ParsePatch(patch)
	if err != nil {
		return nil, err
	}
	return goldFromFilePatches(functionsByFile(g.Nodes), fps), nil
}

func goldFromFilePatches(byFile map[string][]span, fps []FilePatch) []string {
	set := map[string]bool{}
	for _, fp := range fps {
		fs := byFile[fp.OldPath]
		for _, l := range fp.Touched {
			if id := innermost(fs, func(s span) bool { return s.start <= l && l <= s.end }); id != "" {
				set[id] = true
			}
		}
		for _, k := range fp.Inserts {
			if id := innermost(fs, func(s span) bool { return s.start <= k && k+1 <= s.end }); id != "" {
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

// fileSpans extracts the function spans of one file version; nil when the
// language is unsupported or the file would be skipped by Build.
func fileSpans(ctx context.Context, path string, src []byte) []span {
	lang := LanguageFor(path)
	if lang == nil || src == nil || skipContent(src, 1<<20) != "" {
		return nil
	}
	res, err := lang.Extract(ctx, path, src)
	if err != nil {
		return nil
	}
	var out []span
	for _, d := range res.Defs {
		if d.Kind == KindFunction {
			out = append(out, span{EntityID(path, d.Name), d.StartLine, d.EndLine})
		}
	}
	return out
}

// ChangedFunctions maps one file change onto functions: deleted lines and
// insertions onto the old version's functions, added lines onto the new
// version's, each charged to the innermost function around it. It is the
// gitrepo.DiffOptions.Functions hook.
func ChangedFunctions(lc *gitrepo.LineChanges) []string {
	ctx := context.Background()
	set := map[string]bool{}
	if lc.OldPath != "" {
		old := fileSpans(ctx, lc.OldPath, lc.Old)
		for _, id := range goldFromFilePatches(map[string][]span{lc.OldPath: old},
			[]FilePatch{{OldPath: lc.OldPath, Touched: lc.Deleted, Inserts: lc.InsertedAfter}}) {
			set[id] = true
		}
	}
	if lc.NewPath != "" {
		nw := fileSpans(ctx, lc.NewPath, lc.New)
		for _, id := range goldFromFilePatches(map[string][]span{lc.NewPath: nw},
			[]FilePatch{{OldPath: lc.NewPath, Touched: lc.Added}}) {
			set[id] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
