package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/locus-dev/locus/benchmark"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

func TestRun(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"rates.py": "def convert_currency(value, rate):\n    return value * rate\n"})
	r.Commit("convert currency with a rate")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string // in stderr
	}{
		{"no subcommand", nil, 2, "usage"},
		{"unknown subcommand", []string{"scrape"}, 2, "usage"},
		{"no repo", []string{"search"}, 2, "--repo"},
		{"not a repository", []string{"search", "--repo", t.TempDir()}, 1, "not a git repository"},
		{"no queries", []string{"search", "--repo", r.Dir, "--queries", "0"}, 1, "want at least 1"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.contains) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.name, code, errOut.String(), tc.code, tc.contains)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"search", "--repo", r.Dir, "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res benchmark.SearchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Functions != 1 || res.Queries != 1 || res.Peer == nil || res.Peer.Name != "bleve" || res.Peer.SameTop10 != 1 {
		t.Errorf("result %s", out.String())
	}
}
