package cli

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// TestCommandsPrintWorkflowLink: index, backlog and localize print the Web UI's page
// of their workflow once, on the line after its id; with --ui-addr off or
// empty no UI is served and no link printed.
func TestCommandsPrintWorkflowLink(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	r.Commit("one")
	issues := filepath.Join(t.TempDir(), "issues.jsonl")
	if err := os.WriteFile(issues, []byte(`{"id": "1", "repo": "acme/linked", "problem_statement": "A does nothing"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`(?m)^(?:fleet|backlog) (\S+): 1 (?:repositories|issues) .*\nweb UI: http://127\.0\.0\.1:\d+/namespaces/default/workflows/(\S+)\n`)
	localizeLink := regexp.MustCompile(`(?m)^web UI: http://127\.0\.0\.1:\d+/namespaces/default/workflows/localize-\S+\n`)
	for _, tc := range []struct {
		name string
		ui   []string
		want bool
	}{
		{"served", []string{"--ui-addr", "127.0.0.1:0"}, true},
		{"off", []string{"--ui-addr", "off"}, false},
		{"empty", []string{"--ui-addr", ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			for _, args := range [][]string{{"index", "acme/linked=" + r.Dir}, {"backlog", issues}, {"localize", "--repo", "acme/linked", "A does nothing"}} {
				all := append([]string{args[0], "--data-dir", data, "--log-level", "warn"}, tc.ui...)
				code, _, errOut := runCLI(t, append(all, args[1:]...)...)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s", args[0], code, errOut)
				}
				m := link.FindStringSubmatch(errOut)
				linked := m != nil && m[1] == m[2]
				if args[0] == "localize" { // prints no id line: its output is the ranking
					linked = localizeLink.MatchString(errOut)
				}
				switch {
				case tc.want && !linked:
					t.Errorf("%s: stderr lacks the link to its workflow's page after its id:\n%s", args[0], errOut)
				case tc.want && strings.Count(errOut, "web UI:") != 1:
					t.Errorf("%s: the link is printed more than once:\n%s", args[0], errOut)
				case !tc.want && strings.Contains(errOut, "web UI"):
					t.Errorf("%s --ui-addr %q: a UI is mentioned:\n%s", args[0], tc.ui[1], errOut)
				}
			}
		})
	}
}

// TestUIAddressTaken: an address given for the UI (flag or environment)
// that another process holds fails the command, naming the address and
// the flag, before the server starts.
func TestUIAddressTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, tc := range []struct {
		name string
		env  string
		args []string
	}{
		{"flag", "", []string{"--ui-addr", addr}},
		{"environment", addr, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("LOCUS_UI_ADDR", tc.env)
			}
			data := t.TempDir()
			// schedule list starts an embedded server, and ends on its own.
			args := append([]string{"schedule", "list", "--data-dir", data}, tc.args...)
			code, _, errOut := runCLI(t, args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, want := range []string{"web UI cannot listen on " + addr + ": ", "address already in use", "--ui-addr"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			// Refused before anything was set up.
			if matches, _ := filepath.Glob(filepath.Join(data, "temporal", "temporal.db")); len(matches) != 0 {
				t.Errorf("the server's database was created: %v", matches)
			}
		})
	}
}
