// Command skipcheck reads `go test -json` output on stdin, prints what a
// plain `go test` would (each package's result, and the output of failed
// tests), and exits non-zero when a test failed or when a test skipped that
// the allow list does not name: under CI a test that needs a component must
// get it, so a skip is a failure unless it is one that cannot run anywhere CI
// runs (a live Milvus, say).
//
//	go test -json ./... | go run ./tools/skipcheck -allow .ci/allowed-skips
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json output (see `go doc test2json`).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// allowEntry permits skips of tests whose "package TestName" matches; the
// reason is printed next to each allowed skip.
type allowEntry struct {
	pkg, test, reason string
}

func main() {
	allowFile := flag.String("allow", "", "file of allowed skips: lines \"<package> <TestName or prefix*> <reason>\"; # comments")
	flag.Parse()
	allow, err := readAllow(*allowFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	r := check(os.Stdin, os.Stdout, allow)
	if r.failed > 0 || r.failedPkgs > 0 || len(r.badSkips) > 0 || r.events == 0 {
		if r.events == 0 {
			fmt.Println("skipcheck: no test events on stdin (was `go test -json` run?)")
		}
		for _, s := range r.badSkips {
			fmt.Printf("FORBIDDEN SKIP %s\n", s)
		}
		fmt.Printf("skipcheck: %d failed tests or builds, %d failed packages, %d forbidden skips\n", r.failed, r.failedPkgs, len(r.badSkips))
		os.Exit(1)
	}
	fmt.Printf("skipcheck: all passed; %d allowed skips\n", len(r.allowedSkips))
}

type result struct {
	events       int
	failed       int // failed tests and builds
	failedPkgs   int
	badSkips     []string // "pkg Test: reason printed by the test"
	allowedSkips []string
}

func check(in io.Reader, out io.Writer, allow []allowEntry) result {
	var r result
	outputs := map[string]*strings.Builder{} // pkg+" "+test → its output
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // build errors come as plain text
			continue
		}
		r.events++
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output": // Go 1.24+: compiler errors come as events too
			fmt.Fprint(out, e.Output)
		case "build-fail":
			r.failed++
		case "output":
			b := outputs[key]
			if b == nil {
				b = &strings.Builder{}
				outputs[key] = b
			}
			b.WriteString(e.Output)
		case "fail":
			if e.Test == "" {
				r.failedPkgs++
				fmt.Fprintf(out, "FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
				if b := outputs[key]; b != nil {
					fmt.Fprint(out, b.String())
				}
			} else {
				r.failed++
				fmt.Fprintf(out, "--- FAIL: %s %s\n%s", e.Package, e.Test, text(outputs[key]))
			}
		case "pass":
			if e.Test == "" {
				fmt.Fprintf(out, "ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
			}
			delete(outputs, key)
		case "skip":
			if e.Test == "" {
				fmt.Fprintf(out, "?   \t%s\t[no test files]\n", e.Package)
				continue
			}
			why := lastSkipLine(text(outputs[key]))
			desc := fmt.Sprintf("%s %s: %s", e.Package, e.Test, why)
			if a, ok := allowed(allow, e.Package, e.Test); ok {
				r.allowedSkips = append(r.allowedSkips, desc+" (allowed: "+a.reason+")")
			} else {
				r.badSkips = append(r.badSkips, desc)
			}
			delete(outputs, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "skipcheck: reading input:", err)
		r.failed++
	}
	sort.Strings(r.badSkips)
	for _, s := range r.allowedSkips {
		fmt.Fprintf(out, "allowed skip: %s\n", s)
	}
	return r
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// lastSkipLine is the message t.Skip printed (the line after "--- SKIP"
// with the file:line prefix), or the last non-empty line.
func lastSkipLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "--- SKIP") && !strings.HasPrefix(l, "=== ") {
			return l
		}
	}
	return "(no message)"
}

func allowed(allow []allowEntry, pkg, test string) (allowEntry, bool) {
	for _, a := range allow {
		if a.pkg != pkg {
			continue
		}
		if a.test == test || strings.HasSuffix(a.test, "*") && strings.HasPrefix(test, strings.TrimSuffix(a.test, "*")) {
			return a, true
		}
	}
	return allowEntry{}, false
}

func readAllow(path string) ([]allowEntry, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []allowEntry
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want \"<package> <test> <reason>\", got %q", path, i+1, l)
		}
		out = append(out, allowEntry{pkg: f[0], test: f[1], reason: strings.Join(f[2:], " ")})
	}
	return out, nil
}
