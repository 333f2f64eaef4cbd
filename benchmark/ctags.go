package benchmark

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/extract"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// The ctags agreement check: the function definitions of a repository's
// Rust, C and C++ files in locus's graph against those universal-ctags, an
// independent parser, reports for the same files. Every definition is
// matched by file, name and line; what one side has alone falls in a class
// (CtagsClass*) or is unexplained.

// sampleMax is how many of each class a result keeps.
var sampleMax = 5

// Classes of difference.
const (
	// Ours alone: items inside a brace-delimited Rust macro invocation in
	// item position (cfg_rt! { pub fn spawn() … }), which ctags does not
	// expand.
	CtagsClassRustMacroItems = "rust: items inside an item-position macro invocation (ctags does not look inside macros)"
	// Ours alone: ctags stopped reporting in a file before this definition
	// (its Rust lexer loses its place after a string ending in an escaped
	// backslash, "\\").
	CtagsClassCtagsStopped = "ctags reports nothing in the file from this line on (ctags lost its place)"
	// Ours alone: a C++ pure virtual method (= 0), a definition in the graph
	// as Java's abstract methods are, a prototype to ctags.
	CtagsClassPureVirtual = "c++: pure virtual method (a prototype to ctags)"
	// Both sides: one definition on the same lines under two names; in C,
	// a function a macro opens (TEST_BEGIN(test_x) { … }) is named by its
	// argument in the graph, by the macro in ctags.
	CtagsClassRenamed = "the same definition under another name (a macro opening a function: ctags names it after the macro)"
	// Ctags alone: a lambda, which ctags reports as an anonymous function
	// (__anon…) and the graph does not take for a definition.
	CtagsClassLambda      = "c++: a lambda (ctags: an anonymous function; not a definition in the graph)"
	CtagsClassUnexplained = "unexplained"
)

// CtagsLanguage is the comparison for one language.
type CtagsLanguage struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
	Ours     int    `json:"ours"`  // function definitions in the graph
	Ctags    int    `json:"ctags"` // function definitions ctags reports
	Matched  int    `json:"matched"`
	// OnlyOurs and OnlyCtags count the unmatched by class; Samples keep up
	// to 5 of each class ("path:line name").
	OnlyOurs  map[string]int      `json:"only_ours"`
	OnlyCtags map[string]int      `json:"only_ctags"`
	Samples   map[string][]string `json:"samples"`
}

// Difference is (ours - ctags) / ctags.
func (c CtagsLanguage) Difference() float64 {
	if c.Ctags == 0 {
		return 0
	}
	return float64(c.Ours-c.Ctags) / float64(c.Ctags)
}

// Unexplained is the share of ctags' count that no class explains, on
// either side.
func (c CtagsLanguage) Unexplained() float64 {
	if c.Ctags == 0 {
		return 0
	}
	return float64(c.OnlyOurs[CtagsClassUnexplained]+c.OnlyCtags[CtagsClassUnexplained]) / float64(c.Ctags)
}

// CtagsResult is the comparison for one repository snapshot.
type CtagsResult struct {
	Repo      string          `json:"repo"` // the git directory
	Head      string          `json:"head"`
	Headers   string          `json:"headers"` // the language .h files were parsed as
	Command   string          `json:"command"` // the ctags command line
	Languages []CtagsLanguage `json:"languages"`
}

// ctagsLanguages maps locus's language names to ctags' and the kinds that
// are function definitions: functions and methods, Rust's macro_rules and
// C's function-like macros (macros with a signature).
var ctagsLanguages = map[string]string{"rust": "Rust", "c": "C", "cpp": "C++"}

// Ctags compares the graph of gitDir at head with universal-ctags (the
// ctags binary on PATH, or LOCUS_CTAGS).
func Ctags(ctx context.Context, gitDir string, head gitrepo.Hash) (*CtagsResult, error) {
	bin := os.Getenv("LOCUS_CTAGS")
	if bin == "" {
		bin = "ctags"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("ctags check: universal-ctags is not installed (Debian package universal-ctags): %w", err)
	}
	snap, err := gitrepo.OpenSnapshot(ctx, gitDir, "", head)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	files := codegraph.GitFiles(snap)
	g, err := codegraph.Build(ctx, files, codegraph.Options{})
	if err != nil {
		return nil, fmt.Errorf("ctags check: graph of %s: %w", gitDir, err)
	}
	hdr, err := codegraph.HeaderLanguageAt(ctx, gitDir, "", head)
	if err != nil {
		return nil, err
	}
	res := &CtagsResult{Repo: gitDir, Head: head.String(), Headers: hdr}

	// The files the graph parsed, in the three languages, written out for
	// ctags with the same content.
	dir, err := os.MkdirTemp("", "locus-ctags-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	skipped := map[string]bool{}
	for _, s := range g.Stats.Skipped {
		skipped[s.Path] = true
	}
	langOf := map[string]string{} // path → language
	src := map[string][]byte{}
	for _, f := range files {
		lang := fileLanguage(f.Path, hdr)
		if lang == "" || !f.Regular || skipped[f.Path] || codegraph.Excluded(f.Path, codegraph.DefaultExclude) {
			continue
		}
		data, err := f.Read()
		if err != nil {
			return nil, err
		}
		full := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return nil, err
		}
		langOf[f.Path] = lang
		src[f.Path] = bytes.Clone(data)
	}
	args := []string{"-R", "--languages=Rust,C,C++", "--kinds-Rust=fPM", "--kinds-C=fd", "--kinds-C++=fd",
		"--fields=+nKS", "--output-format=json", "-f", "-"}
	if hdr == "c" {
		args = append(args, "--map-C++=-.h", "--map-C=+.h")
	} else {
		args = append(args, "--map-C=-.h", "--map-C++=+.h")
	}
	res.Command = bin + " " + strings.Join(args, " ") + " ."
	cmd := exec.CommandContext(ctx, bin, append(args, ".")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ctags check: %s: %w: %s", res.Command, err, strings.TrimSpace(stderr.String()))
	}
	tags, err := readCtags(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("ctags check: %s: %w", res.Command, err)
	}

	// Ours: the graph's function nodes in those files.
	type def struct {
		path, name string
		start, end int
		code       string
		matched    bool
	}
	ours := map[string][]*def{} // path + "\x00" + name → definitions
	by := map[string]*CtagsLanguage{}
	lang := func(name string) *CtagsLanguage {
		if by[name] == nil {
			by[name] = &CtagsLanguage{Language: name, OnlyOurs: map[string]int{}, OnlyCtags: map[string]int{}, Samples: map[string][]string{}}
		}
		return by[name]
	}
	for _, l := range langOf {
		lang(l).Files++
	}
	for _, n := range g.Nodes {
		l := langOf[n.Path]
		if n.Type != codegraph.TypeFunction || l == "" {
			continue
		}
		name := ctagsName(n.Name)
		d := &def{path: n.Path, name: name, start: int(n.StartLine), end: int(n.EndLine), code: n.Code}
		ours[n.Path+"\x00"+name] = append(ours[n.Path+"\x00"+name], d)
		lang(l).Ours++
	}
	lastTag := map[string]int{} // path → ctags' last reported line
	var unmatched []ctag
	for _, t := range tags {
		l := langOf[t.Path]
		if l == "" || !t.isDefinition() {
			continue
		}
		lang(l).Ctags++
		lastTag[t.Path] = max(lastTag[t.Path], t.Line)
		found := false
		for _, d := range ours[t.Path+"\x00"+ctagsName(t.Name)] {
			if !d.matched && d.start <= t.Line && t.Line <= d.end {
				d.matched, found = true, true
				break
			}
		}
		if found {
			lang(l).Matched++
		} else {
			unmatched = append(unmatched, t)
		}
	}
	sample := func(c *CtagsLanguage, side, class, what string) {
		k := side + ": " + class
		if len(c.Samples[k]) < sampleMax {
			c.Samples[k] = append(c.Samples[k], what)
		}
	}
	// What is left on both sides at one place is one definition, named
	// differently.
	startsAt := map[string]*def{} // path:line → an unmatched definition of ours starting there
	for _, ds := range ours {
		for _, d := range ds {
			if !d.matched {
				startsAt[fmt.Sprintf("%s:%d", d.path, d.start)] = d
			}
		}
	}
	renamed := map[*def]bool{}
	for _, t := range unmatched {
		c := lang(langOf[t.Path])
		class := CtagsClassUnexplained
		if d := startsAt[fmt.Sprintf("%s:%d", t.Path, t.Line)]; d != nil && !renamed[d] {
			renamed[d], class = true, CtagsClassRenamed
		} else if strings.HasPrefix(t.Name, "__anon") {
			class = CtagsClassLambda
		}
		c.OnlyCtags[class]++
		sample(c, "ctags only", class, fmt.Sprintf("%s:%d %s", t.Path, t.Line, t.Name))
	}
	macros := map[string][][2]int{} // Rust files → item macro ranges, lazily
	for _, key := range sortedDefKeys(ours) {
		for _, d := range ours[key] {
			if d.matched {
				continue
			}
			l := langOf[d.path]
			class := CtagsClassUnexplained
			switch {
			case renamed[d]:
				class = CtagsClassRenamed
			case l == "rust" && inRustMacro(ctx, macros, d.path, src[d.path], d.start):
				class = CtagsClassRustMacroItems
			case d.start > lastTag[d.path] && lastTag[d.path] > 0:
				class = CtagsClassCtagsStopped
			case l == "cpp" && pureVirtual(d.code):
				class = CtagsClassPureVirtual
			}
			c := lang(l)
			c.OnlyOurs[class]++
			sample(c, "ours only", class, fmt.Sprintf("%s:%d %s", d.path, d.start, d.name))
		}
	}
	for _, l := range []string{"rust", "c", "cpp"} {
		if c := by[l]; c != nil {
			res.Languages = append(res.Languages, *c)
		}
	}
	return res, nil
}

// fileLanguage is the language a build parses path as, among the three
// compared; "" for others.
func fileLanguage(p, headers string) string {
	l := codegraph.LanguageFor(p)
	if l == nil {
		return ""
	}
	name := l.Name()
	if codegraph.IsHeader(p) {
		name = headers
	}
	if _, ok := ctagsLanguages[name]; !ok {
		return ""
	}
	return name
}

// ctagsName is a definition's simple name as both sides spell it: the last
// segment of a qualified name, without an overload signature or a "#n"
// suffix (codegraph.SimpleName), without spaces (ctags writes
// "operator =="). The call operator is "operator" on both sides.
func ctagsName(q string) string {
	return codegraph.SimpleName(strings.ReplaceAll(q, " ", ""))
}

func sortedDefKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func inRustMacro(ctx context.Context, cache map[string][][2]int, p string, src []byte, line int) bool {
	rs, ok := cache[p]
	if !ok {
		rs, _ = extract.RustItemMacros(ctx, src)
		cache[p] = rs
	}
	for _, r := range rs {
		if first, last := lineAt(src, r[0]), lineAt(src, r[1]); first <= line && line <= last {
			return true
		}
	}
	return false
}

func lineAt(src []byte, off int) int { return bytes.Count(src[:min(off, len(src))], []byte("\n")) + 1 }

// pureVirtual: a declaration ending in "= 0;".
func pureVirtual(code string) bool {
	s := strings.Join(strings.Fields(code), "")
	return strings.HasSuffix(s, "=0;")
}

// ctag is one line of ctags' JSON output.
type ctag struct {
	Type      string `json:"_type"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Kind      string `json:"kind"`
	Signature string `json:"signature"`
}

// isDefinition: a function or method, a Rust macro_rules, a C/C++ macro
// with parameters.
func (t ctag) isDefinition() bool {
	switch t.Kind {
	case "function", "method":
		return true
	case "macro":
		return strings.HasSuffix(t.Path, ".rs") || t.Signature != ""
	}
	return false
}

func readCtags(r io.Reader) ([]ctag, error) {
	var out []ctag
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var t ctag
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("output line %d: %w", n, err)
		}
		if t.Type != "tag" {
			continue
		}
		t.Path = filepath.ToSlash(strings.TrimPrefix(t.Path, "./"))
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no tags at all")
	}
	return out, nil
}

// WriteCtagsTable prints the comparison and its classes.
func WriteCtagsTable(w io.Writer, r *CtagsResult) error {
	fmt.Fprintf(w, "%s at %s (headers as %s)\n%s\n", r.Repo, short(r.Head), r.Headers, r.Command)
	fmt.Fprintf(w, "%-5s %6s %8s %8s %8s %10s %12s\n", "LANG", "FILES", "LOCUS", "CTAGS", "MATCHED", "DIFF", "UNEXPLAINED")
	for _, c := range r.Languages {
		fmt.Fprintf(w, "%-5s %6d %8d %8d %8d %+9.2f%% %11.2f%%\n", c.Language, c.Files, c.Ours, c.Ctags, c.Matched, 100*c.Difference(), 100*c.Unexplained())
	}
	for _, c := range r.Languages {
		for _, side := range []struct {
			name string
			m    map[string]int
		}{{"ours only", c.OnlyOurs}, {"ctags only", c.OnlyCtags}} {
			for _, class := range sortedDefKeys(side.m) {
				fmt.Fprintf(w, "  %s %s: %d  %s\n", c.Language, side.name, side.m[class], class)
				for _, s := range c.Samples[side.name+": "+class] {
					fmt.Fprintf(w, "      %s\n", s)
				}
			}
		}
	}
	return nil
}
