// Package golden compares test output with golden files, or rewrites them.
package golden

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Check compares got with the golden file, or rewrites the file when update
// is set. rerun is the command that rewrites it, named in the error when
// the file is missing.
func Check(t testing.TB, golden, got string, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run %s)", err, rerun)
	}
	if got != string(want) {
		t.Errorf("differs from %s (-update rewrites it):\n%s", golden, LineDiff(string(want), got))
	}
}

// LineDiff lists the lines of want that got lacks (-) and the lines of got
// that want lacks (+).
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	ws, gs := map[string]bool{}, map[string]bool{}
	for _, l := range w {
		ws[l] = true
	}
	for _, l := range g {
		gs[l] = true
	}
	var b strings.Builder
	for _, l := range w {
		if !gs[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !ws[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
