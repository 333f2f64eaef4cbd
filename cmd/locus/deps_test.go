package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLocusLinksNoDeveloperTools: the locus binary is what users run; the
// benchmarks, their peers and the history check are locus-dev's.
func TestLocusLinksNoDeveloperTools(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the check lists packages with the go command: %v", err)
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	// Guard against a check that reads nothing and so passes.
	if !slices.Contains(deps, "github.com/locus-dev/locus/cli") {
		t.Fatalf("go list -deps of cmd/locus does not list cli (%d packages)", len(deps))
	}
	for _, d := range deps {
		for _, dev := range []string{"github.com/locus-dev/locus/benchmark", "github.com/locus-dev/locus/internal/historycheck", "github.com/blevesearch/"} {
			if d == dev || strings.HasPrefix(d, strings.TrimSuffix(dev, "/")+"/") {
				t.Errorf("locus links %s, a developer tool's (cmd/locus-dev)", d)
			}
		}
	}
}
