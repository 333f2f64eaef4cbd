package fileclass

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	enry "github.com/go-enry/go-enry/v2"
)

// modeline answers as enry.GetLanguagesByModeline over this checkout's
// files and modelines of both kinds, written and near misses.
func TestModelineAgreesWithEnry(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	var contents [][]byte
	for _, p := range checkoutPaths(t) {
		if b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), p)); err == nil {
			contents = append(contents, b)
		}
	}
	for _, s := range []string{
		"# -*- mode: perl -*-\nprint 1;\n", "/* -*- C++ -*- */\n", "-*- mode: ruby; -*-\n", "# vim: set ft=python:\n",
		"# vim:ft=ruby\n", "# vi: syntax=sh\n", "/* ex: set filetype=c : */\n", "# vim600: set FT=perl:\n",
		"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n# vim: set ft=lua:\n", "vim: ft python\n", "ft=python\n", "vim: set\n",
		"-*- -*-\n", "-*-\n", "x = 1\n", "key: value\n", "",
	} {
		contents = append(contents, []byte(s))
	}
	named := 0
	for _, c := range contents {
		want := enry.GetLanguagesByModeline("", c, nil)
		if got := modeline("", c, nil); !slices.Equal(got, want) {
			t.Errorf("modeline(%.80q) = %q, enry %q", c, got, want)
		}
		if len(want) > 0 {
			named++
		}
	}
	if named < 8 {
		t.Errorf("only %d of %d contents name a language by modeline: the corpus does not tell", named, len(contents))
	}
}
