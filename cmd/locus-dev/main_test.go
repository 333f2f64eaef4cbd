package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/locus-dev/locus/benchmark"
	"github.com/locus-dev/locus/cli"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// runDev runs locus-dev with args and returns its exit status, stdout and
// the message of the error the command ended with ("" when none).
func runDev(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	oldOut, oldErr := stdout, stderr
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = oldOut, oldErr }()
	if len(args) > 0 && (args[0] == "bench" || args[0] == "instances") {
		cmd := runBenchCommand
		if args[0] == "instances" {
			cmd = runInstances
		}
		err := cmd(context.Background(), args[1:])
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		return cli.ExitStatus("locus-dev", err), out.String(), msg
	}
	code := run(context.Background(), args)
	return code, out.String(), errOut.String()
}

func TestRun(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"rates.py": "def convert_currency(value, rate):\n    return value * rate\n"})
	r.Commit("convert currency with a rate")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string // in the message
	}{
		{"no command", nil, 2, "Usage:"},
		{"unknown command", []string{"bnch"}, 2, "did you mean bench?"},
		{"no subcommand", []string{"bench"}, 2, "bench needs a subcommand"},
		{"unknown subcommand", []string{"bench", "lint"}, 2, "usage"},
		{"misspelt subcommand", []string{"bench", "scrap"}, 2, "did you mean scrape?"},
		{"scrape without repo", []string{"bench", "scrape"}, 2, "--repo"},
		{"no repo", []string{"bench", "search"}, 2, "--repo"},
		{"bad peer", []string{"bench", "search", "--repo", r.Dir, "--peer", "blev"}, 2, "did you mean bleve?"},
		{"not a repository", []string{"bench", "search", "--repo", t.TempDir()}, 1, "not a git repository"},
		{"no queries", []string{"bench", "search", "--repo", r.Dir, "--queries", "0"}, 1, "want at least 1"},
		{"bad flag", []string{"bench", "graph", "--rns", "2"}, 2, "locus-dev bench graph -h"},
		{"negative min-seconds", []string{"bench", "graph", "--repo", r.Dir, "--min-seconds", "-1"}, 2, "--min-seconds -1: want 0 or more"},
		{"instances without a name", []string{"instances", "--repo", r.Dir}, 2, "--name owner/name is required"},
		{"instances, bad date", []string{"instances", "--repo", r.Dir, "--name", "a/b", "--since", "2024-13-01"}, 2, "want a date as YYYY-MM-DD"},
		{"instances, nothing usable", []string{"instances", "--repo", r.Dir, "--name", "a/b"}, 1, "edits an existing non-test source file"},
	} {
		code, _, msg := runDev(t, tc.args...)
		if code != tc.code || !strings.Contains(msg, tc.contains) {
			t.Errorf("%s: exit %d, message %q; want %d and %q", tc.name, code, msg, tc.code, tc.contains)
		}
	}
}

// Help exits 0 everywhere; locus-dev's and bench's usage name every
// benchmark. (A subcommand's -h prints its flags to the process's stdout.)
func TestHelp(t *testing.T) {
	cases := [][]string{{"-h"}, {"help"}, {"bench", "-h"}}
	for _, sub := range benchCommands {
		cases = append(cases, []string{"bench", sub, "-h"})
	}
	for _, args := range cases {
		code, out, msg := runDev(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d, %q; want 0", args, code, msg)
		}
		if len(args) == 2 && args[1] != "-h" || len(args) > 2 {
			continue
		}
		for _, sub := range benchCommands {
			if !strings.Contains(out, sub) {
				t.Errorf("%v does not mention bench %s:\n%s", args, sub, out)
			}
		}
	}
}

func TestSearchWithBleve(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"rates.py": "def convert_currency(value, rate):\n    return value * rate\n"})
	r.Commit("convert currency with a rate")
	code, out, msg := runDev(t, "bench", "search", "--repo", r.Dir, "--peer", "bleve", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var res benchmark.SearchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Functions != 1 || res.Queries != 1 || res.Peer == nil || res.Peer.Name != "bleve" || res.Peer.SameTop10 != 1 {
		t.Errorf("result %s", out)
	}
}
