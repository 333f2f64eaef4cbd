package badinput

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/reliability.md from the case table")

// docPath is docs/reliability.md, generated from cases.
var docPath = filepath.Join("..", "..", "docs", "reliability.md")

const docIntro = `# Reliability: what locus does with bad input

locus is meant to be trustworthy by default: a malformed repository, a binary
or huge file, a syntax error, invalid UTF-8, a damaged Parquet file, garbage
from an LLM, a path that escapes its root or two repositories that look alike
gets a clear error naming the input, and nothing already stored is lost,
merged or corrupted. Never a silent empty or wrong answer.

Every row below is a case of the bad-input suite (` + "`internal/badinput`" + `). The
suite builds the real ` + "`locus`" + ` binary and runs it the way a user does, against
small real git repositories made for each case. Each case runs with a data
directory whose store already holds an indexed repository; unless the case
re-indexes that repository on purpose, the suite checks afterwards that every
one of its stored files is byte for byte what it was and that ` + "`locus status`" + `
still lists it. Every case also fails if locus panics. Indexed results are
checked by reading the stored Parquet files back.

Run the suite with ` + "`go test ./internal/badinput`" + `; it fails (never skips)
when git is missing. This file is generated from the case table:
` + "`go test ./internal/badinput -run TestReliabilityDoc -update`" + ` rewrites it, and
the test fails when it is stale.

| # | input | what locus does | test |
|---|---|---|---|
`

// renderDoc is docs/reliability.md for the current case table.
func renderDoc() string {
	var b strings.Builder
	b.WriteString(docIntro)
	for i, c := range cases {
		b.WriteString("| ")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(" | ")
		b.WriteString(cell(c.input))
		b.WriteString(" | ")
		b.WriteString(cell(c.want))
		b.WriteString(" | `TestBadInput/")
		b.WriteString(c.name)
		b.WriteString("` |\n")
	}
	return b.String()
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func TestReliabilityDoc(t *testing.T) {
	want := renderDoc()
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("read %s: %v (generate it with -update)", docPath, err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run go test ./internal/badinput -run TestReliabilityDoc -update", docPath)
	}
}
