package changes

import (
	"strings"
	"testing"
)

// TestDerivePython: a Python change inside one function, away from its
// def and last lines, is read from that function's text alone; a change
// that ends the function early, adds a definition or a syntax error, lies
// between functions, or touches or follows a function's last line is
// parsed whole.
func TestDerivePython(t *testing.T) {
	p := "import os\n\n\nclass A:\n    def f(self, x):\n        y = x\n        return y\n\n    def g(self):\n        return 1\n\n\ndef h():\n    a = 1\n    return a\n"
	for _, tc := range []struct {
		name, old, new string
		line           int // the changed line, on both sides
		how            derivation
	}{
		{"statement in a method", "        y = x\n", "        y = x * 2\n", 6, derivedBodies},
		{"statement in a function", "    a = 1\n", "    a = [1,\n  2]\n", 14, derivedBodies},
		{"dedent ends the method", "        y = x\n", "    y = x\n", 6, derivedParsed},
		{"definition added", "        y = x\n", "        def k(): pass\n", 6, derivedParsed},
		{"between functions", "import os\n", "import sys\n", 1, derivedParsed},
		{"last line", "        return 1\n", "        return 2\n", 10, derivedParsed},
		{"syntax error", "        y = x\n", "        y = = x\n", 6, derivedParsed},
		{"line appended", "        return 1\n", "        return 1\n        pass\n", 10, derivedParsed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := strings.Replace(p, tc.old, tc.new, 1)
			deleted, added := []int{tc.line}, []int{tc.line}
			for k := 1; k < strings.Count(tc.new, "\n"); k++ {
				added = append(added, tc.line+k)
			}
			if strings.HasPrefix(tc.new, tc.old) { // lines appended after it
				deleted, added = nil, added[1:]
			}
			checkDerive(t, "a.py", []byte(p), []byte(tt), deleted, added, tc.how)
		})
	}
}
