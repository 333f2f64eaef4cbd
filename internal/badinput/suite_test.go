package badinput

import (
	"strings"
	"testing"
)

// badCase is one hostile input. input and want are what docs/reliability.md
// says about it, so they must stay true: the case checks them.
type badCase struct {
	name  string // subtest name: TestBadInput/<name>
	input string // the hostile input, as a user would describe it
	want  string // what locus does with it
	// setup builds the input in the sandbox and returns the locus command line.
	setup func(s *sandbox) []string
	code  int // exit status
	// names are what the output must name: stderr, or for a repository a
	// fleet could not index, its row in the result ({{VAR}} expands s.vars).
	names []string
	// check asserts the rest (stored data, stdout); optional.
	check func(s *sandbox, r result)
	// touchesBase marks cases that re-index the seeded repository on purpose,
	// so its stored files may change; check then says how.
	touchesBase bool
}

func TestBadInput(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			args := c.setup(s)
			r := s.locus(args...)
			if r.code != c.code {
				t.Errorf("exit status %d, want %d\n%v", r.code, c.code, r)
			}
			for _, n := range c.names {
				n = s.expand(n)
				if !strings.Contains(r.stderr, n) && !strings.Contains(r.stdout, n) {
					t.Errorf("the output does not name %q\n%v", n, r)
				}
			}
			if c.check != nil {
				c.check(s, r)
			}
			if !c.touchesBase {
				s.checkBaseIntact()
			}
		})
	}
}

// TestCaseTable keeps the table well formed: unique names, every field the
// doc prints filled, and at least the 40 cases the suite promises.
func TestCaseTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Errorf("case %q appears twice", c.name)
		}
		seen[c.name] = true
		if c.input == "" || c.want == "" || c.setup == nil {
			t.Errorf("case %q lacks its input, expectation or setup", c.name)
		}
		if strings.ContainsAny(c.name, " /") {
			t.Errorf("case %q: a subtest name needs no spaces or slashes", c.name)
		}
		if c.code != 0 && len(c.names) == 0 {
			t.Errorf("case %q fails without checking that the error names its input", c.name)
		}
	}
	if len(cases) < 40 {
		t.Errorf("%d cases, want at least 40", len(cases))
	}
}
