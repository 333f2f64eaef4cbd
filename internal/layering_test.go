// Package internal holds locus's engines: indexing, graphs, retrieval,
// storage and evaluation, each usable without Temporal. This file states the
// layering rule and checks it on the real package graph.
package internal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layering rule: a package under internal/ imports only other packages
// under internal/ and schema from this module (never workflows, activities,
// workers, jobs, benchmark, eval/… or cmd/…, the application layer that
// drives the engines through Temporal), and no go.temporal.io package, except
// the packages that adapt Temporal itself: the embedded server and its
// metrics.
var (
	// sharedTopLevel are the module's top-level packages that engines may
	// import: the storage layout both layers agree on.
	sharedTopLevel = []string{"schema"}
	// temporalAdapters may import go.temporal.io.
	temporalAdapters = []string{"internal/devserver", "internal/metrics"}
)

const temporalPrefix = "go.temporal.io/"

// pkg is what the rule reads of one package: its import path and the direct
// imports of its non-test files.
type pkg struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// violations lists the imports of pkgs that break the layering rule, one
// "importer imports imported (why)" line each. module is the module path.
func violations(module string, pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok || !underDir(rel, "internal") {
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, temporalPrefix) && !slices.ContainsFunc(temporalAdapters, func(a string) bool { return underDir(rel, a) }):
				out = append(out, fmt.Sprintf("%s imports %s (only %s may import Temporal)", rel, imp, strings.Join(temporalAdapters, ", ")))
			case imp == module || strings.HasPrefix(imp, module+"/"):
				irel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				if !underDir(irel, "internal") && !slices.ContainsFunc(sharedTopLevel, func(s string) bool { return underDir(irel, s) }) {
					out = append(out, fmt.Sprintf("%s imports %s (the application layer; engines import only internal/… and %s)", rel, irel, strings.Join(sharedTopLevel, ", ")))
				}
			}
		}
	}
	return out
}

// underDir reports whether the slash path p is dir or below it.
func underDir(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func TestLayeringRule(t *testing.T) {
	const m = "example.com/m"
	for _, tc := range []struct {
		name string
		pkg  pkg
		want int
	}{
		{"engine imports engine and schema", pkg{m + "/internal/search", []string{"context", m + "/internal/blob", m + "/schema"}, nil}, 0},
		{"engine imports workflows", pkg{m + "/internal/search", []string{m + "/workflows"}, nil}, 1},
		{"engine imports a subpackage of the application layer", pkg{m + "/internal/eval/report", []string{m + "/eval/evalrun", m + "/workers/workerstest"}, nil}, 2},
		{"engine imports jobs and cmd", pkg{m + "/internal/x", []string{m + "/jobs", m + "/cmd/locus"}, nil}, 2},
		{"engine imports Temporal", pkg{m + "/internal/search", []string{"go.temporal.io/sdk/client"}, nil}, 1},
		{"engine named like an adapter", pkg{m + "/internal/devserverx", []string{"go.temporal.io/sdk/client"}, nil}, 1},
		{"embedded server imports Temporal", pkg{m + "/internal/devserver", []string{"go.temporal.io/server/temporal", "go.temporal.io/sdk/client"}, nil}, 0},
		{"metrics imports Temporal", pkg{m + "/internal/metrics", []string{"go.temporal.io/sdk/contrib/tally"}, nil}, 0},
		{"an adapter still may not import the application layer", pkg{m + "/internal/devserver", []string{m + "/workers"}, nil}, 1},
		{"the application layer may import anything", pkg{m + "/workers", []string{"go.temporal.io/sdk/worker", m + "/jobs", m + "/internal/search"}, nil}, 0},
		{"a top-level package named internalx is not internal", pkg{m + "/internalx", []string{m + "/workflows"}, nil}, 0},
		{"the module root is the application layer", pkg{m + "/internal/x", []string{m}, nil}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := violations(m, []pkg{tc.pkg}); len(got) != tc.want {
				t.Errorf("violations = %q, want %d", got, tc.want)
			}
		})
	}
}

// TestLayering checks the rule on this module's packages under internal/, as
// `go list` sees them for this platform.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the layering check lists packages with the go command: %v", err)
	}
	module := strings.TrimSpace(string(goCmd(t, "list", "-m", "-f", "{{.Path}}")))
	// The working directory of a test is its package's: internal/.
	out := goCmd(t, "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	// Guard against a check that reads nothing and so passes.
	for _, want := range []string{"internal/codegraph", "internal/devserver", "internal/search"} {
		if !slices.ContainsFunc(pkgs, func(p pkg) bool { return p.ImportPath == module+"/"+want }) {
			t.Fatalf("go list ./... from internal/ did not list %s (%d packages)", want, len(pkgs))
		}
	}
	for _, v := range violations(module, pkgs) {
		t.Error(v)
	}
}

func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}
