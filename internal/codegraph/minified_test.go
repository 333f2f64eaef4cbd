package codegraph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph/extract"
)

// deepPython is a Python file whose code sits depth blocks deep (four
// spaces a block), with body statements of about 110 bytes there: at depth
// 60 its lines average over 300 bytes, two thirds of them indentation.
// (tree-sitter's Python scanner keeps indents up to 255 columns.)
func deepPython(depth, body int) string {
	var b strings.Builder
	b.WriteString("def outer(x):\n")
	for d := 1; d <= depth; d++ {
		b.WriteString(strings.Repeat("    ", d) + "if x:\n")
	}
	in := strings.Repeat("    ", depth+1)
	b.WriteString(in + "def deep():\n")
	for i := 0; i < body; i++ {
		b.WriteString(in + "    y = \"" + strings.Repeat("deep ", 20) + "\"\n")
	}
	b.WriteString(in + "    return y\n")
	return b.String()
}

// TestMinifiedIgnoresIndentation: indentation does not make a file
// minified; long lines of content do, with or without indentation.
func TestMinifiedIgnoresIndentation(t *testing.T) {
	long := strings.Repeat("x=1;", 2600) // 10,400 bytes
	tests := []struct {
		name string
		text string
		want bool
	}{
		{"deeply indented python", deepPython(60, 400), false},
		{"deeply tab-indented", strings.Repeat(strings.Repeat("\t", 400)+"y = 1\n", 20), false},
		{"short lines", strings.Repeat("int x;\n", 400), false},
		{"one long line", long + "\n" + strings.Repeat("y\n", 100), true},
		{"one long indented line", strings.Repeat(" ", 50) + long + "\n" + strings.Repeat("y\n", 100), true},
		{"long lines on average", strings.Repeat(long[:400]+"\n", 10), true},
		{"long indented lines on average", strings.Repeat("        "+long[:400]+"\n", 10), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isMinified([]byte(tc.text)); got != tc.want {
				t.Errorf("isMinified = %v, want %v", got, tc.want)
			}
			if got := MinifiedLines([]byte(tc.text), extract.NewLineIndex([]byte(tc.text))); got != tc.want {
				t.Errorf("MinifiedLines = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDeeplyIndentedPythonParsed: a deeply indented .py file is parsed,
// its functions in the graph, not skipped as minified.
func TestDeeplyIndentedPythonParsed(t *testing.T) {
	dir := t.TempDir()
	src := deepPython(60, 400)
	if avg := len(src) / strings.Count(src, "\n"); avg <= 300 {
		t.Fatalf("fixture averages %d bytes a line; it must pass 300 to test anything", avg)
	}
	if err := os.WriteFile(filepath.Join(dir, "deep.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	g := buildDir(t, dir, Options{})
	for _, s := range g.Stats.Skipped {
		t.Errorf("skipped %s: %s", s.Path, s.Reason)
	}
	ids := map[string]bool{}
	for _, n := range g.Nodes {
		ids[n.ID] = true
	}
	for _, id := range []string{"deep.py:outer", "deep.py:outer.deep"} {
		if !ids[id] {
			t.Errorf("missing node %s", id)
		}
	}
}
