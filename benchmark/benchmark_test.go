package benchmark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// The test binary doubles as the benchmark child: testChild re-runs it with
// the spec in LOCUS_BENCH_CHILD and the pass kind in LOCUS_BENCH_KIND.
func TestMain(m *testing.M) {
	if spec := os.Getenv("LOCUS_BENCH_CHILD"); spec != "" {
		var err error
		switch os.Getenv("LOCUS_BENCH_KIND") {
		case "scrape":
			err = ScrapeChild(context.Background(), spec, os.Stdout)
		case "graph":
			err = GraphChild(context.Background(), spec, os.Stdout)
		default:
			err = fmt.Errorf("unknown LOCUS_BENCH_KIND %q", os.Getenv("LOCUS_BENCH_KIND"))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testChild(kind string) ChildFunc {
	return func(ctx context.Context, spec string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LOCUS_BENCH_CHILD="+spec, "LOCUS_BENCH_KIND="+kind)
		return cmd, nil
	}
}

// fixture is a repository of three commits: three Python functions in
// distinct vocabularies, each commit subject naming one of them.
func fixture(t *testing.T) (string, gitrepo.Hash) {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(map[string]string{"bank/ledger.py": "def post_entry(ledger, amount):\n    ledger.append(amount)\n"})
	r.Commit("post entry to the ledger")
	r.Write(map[string]string{"bank/ledger.py": "def post_entry(ledger, amount):\n    ledger.append(amount)\n\n\ndef balance(ledger):\n    return sum(ledger)\n"})
	r.Commit("ledger balance sum")
	r.Write(map[string]string{"bank/rates.py": "def convert_currency(value, rate):\n    return value * rate\n"})
	r.Commit("convert currency with a rate")
	gitDir, head, err := Target(r.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return gitDir, head
}

func TestScrape(t *testing.T) {
	gitDir, head := fixture(t)
	out := t.TempDir()
	runs, err := Scrape(context.Background(), ScrapeOptions{GitDir: gitDir, Head: head, Backends: []string{"go-git"},
		Functions: []string{"on", "off"}, Workers: 1, Out: out, Child: testChild("scrape")})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, r := range runs {
		tools = append(tools, r.Tool)
		if r.Commits != 3 || r.Seconds <= 0 || r.RatioToGit <= 0 {
			t.Errorf("%s: %+v", r.Tool, r)
		}
	}
	want := []string{"locus scrape (go-git, 1 workers)", "locus scrape (go-git, 1 workers, no functions)",
		"git log -p --raw --numstat", "git log -p --raw --numstat --diff-merges=first-parent"}
	if !slices.Equal(tools, want) {
		t.Errorf("tools %q, want %q", tools, want)
	}
	// Every commit adds or changes one file: three rows; git log's own
	// ratio is 1 by definition.
	if runs[0].Rows != 3 || runs[0].Bytes <= 0 || runs[2].RatioToGit != 1 || runs[2].Bytes <= 0 {
		t.Errorf("runs %+v", runs)
	}
	for _, d := range []string{"go-git-functions-on", "go-git-functions-off"} {
		if _, err := os.Stat(filepath.Join(out, d)); err != nil {
			t.Errorf("output %s: %v", d, err)
		}
	}
	var b bytes.Buffer
	if err := WriteScrapeTable(&b, gitDir, head, runs); err != nil || !strings.Contains(b.String(), "3 commits") {
		t.Errorf("table %q: %v", b.String(), err)
	}
}

func TestScrapeRejects(t *testing.T) {
	gitDir, head := fixture(t)
	for name, o := range map[string]ScrapeOptions{
		"unknown backend": {Backends: []string{"svn"}, Functions: []string{"on"}},
		"unknown mode":    {Backends: []string{"go-git"}, Functions: []string{"maybe"}},
		"no backends":     {Functions: []string{"on"}},
	} {
		o.GitDir, o.Head = gitDir, head
		o.Child = func(context.Context, string) (*exec.Cmd, error) {
			t.Errorf("%s: a child was started", name)
			return nil, errors.New("no child")
		}
		if _, err := Scrape(context.Background(), o); err == nil || !strings.Contains(err.Error(), gitDir) {
			t.Errorf("%s: error %v does not name the repository", name, err)
		}
	}
	for name, spec := range map[string]string{
		"not JSON":        "{",
		"unknown backend": `{"git_dir":"` + gitDir + `","head":"` + head.String() + `","backend":"svn","out":"` + t.TempDir() + `"}`,
	} {
		if err := ScrapeChild(context.Background(), spec, &bytes.Buffer{}); err == nil {
			t.Errorf("child %s: no error", name)
		}
	}
}

func TestGraph(t *testing.T) {
	gitDir, head := fixture(t)
	runs, err := Graph(context.Background(), gitDir, head, testChild("graph"), GraphRuns{Runs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Tool != "tree-sitter parse only" || runs[1].Tool != "locus graph build" {
		t.Fatalf("runs %+v", runs)
	}
	if runs[0].Files != 2 || runs[1].Files != 2 || runs[0].Ratio != 1 || runs[0].CPURatio != 1 {
		t.Errorf("files or ratio: %+v", runs)
	}
	for _, r := range runs {
		if r.Runs != 3 || r.CPUSeconds <= 0 || r.SecondsMin > r.Seconds || r.Seconds > r.SecondsMax || r.RatioRange[0] > r.RatioRange[1] {
			t.Errorf("%s: runs, CPU time or ranges: %+v", r.Tool, r)
		}
	}
	var table bytes.Buffer
	if err := WriteGraphTable(&table, gitDir, head, runs); err != nil || !strings.Contains(table.String(), "medians of 3 runs") {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
	// Nodes: 2 files, 1 directory, 3 functions, and the root directory.
	if runs[1].Nodes < 6 || runs[1].Edges["contains"] < 5 {
		t.Errorf("graph %+v", runs[1])
	}
	for name, spec := range map[string]string{
		"unknown pass": `{"git_dir":"` + gitDir + `","head":"` + head.String() + `","pass":"lint"}`,
		"bad commit":   `{"git_dir":"` + gitDir + `","head":"HEAD","pass":"graph"}`,
	} {
		if err := GraphChild(context.Background(), spec, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestGraphRunsUntilMinSeconds: a pass of the two-file fixture takes
// milliseconds; asked for about five runs' time, each pass runs until its
// runs add up to it.
func TestGraphRunsUntilMinSeconds(t *testing.T) {
	gitDir, head := fixture(t)
	one, err := Graph(context.Background(), gitDir, head, testChild("graph"), GraphRuns{Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := 5 * max(one[0].Seconds, one[1].Seconds) // about five runs' time
	runs, err := Graph(context.Background(), gitDir, head, testChild("graph"), GraphRuns{Runs: 2, MinSeconds: want})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		// Without MinSeconds, two runs: their time is below want unless
		// the machine slowed down a lot after the first measurement.
		if r.Runs < 2 || r.Runs > MaxGraphRuns || float64(r.Runs)*r.SecondsMax < want {
			t.Errorf("%s: %d runs of at most %.4f s for %.4f s", r.Tool, r.Runs, r.SecondsMax, want)
		}
	}
	if runs[0].Runs != runs[1].Runs {
		t.Errorf("the passes ran %d and %d times: they alternate", runs[0].Runs, runs[1].Runs)
	}
}

// wordPeer scores a document by how many distinct query tokens it holds.
type wordPeer struct {
	docs    map[string]string
	queries [][]string
	closed  bool
	fail    error
}

func (p *wordPeer) Name() string { return "words" }

func (p *wordPeer) Index(dir string, docs map[string]string) error {
	p.docs = docs
	return p.fail
}

func (p *wordPeer) Search(tokens []string, k int) ([]Hit, error) {
	p.queries = append(p.queries, tokens)
	var hits []Hit
	for id, text := range p.docs {
		n := 0
		for _, tok := range tokens {
			if slices.Contains(strings.Fields(text), tok) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, Hit{ID: id, Score: float64(n)})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			return int(b.Score - a.Score)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))], nil
}

func (p *wordPeer) Close() error { p.closed = true; return nil }

func TestSearchWithPeer(t *testing.T) {
	gitDir, head := fixture(t)
	peer := &wordPeer{}
	res, err := Search(context.Background(), SearchOptions{GitDir: gitDir, Head: head, Queries: 10, Peer: peer})
	if err != nil {
		t.Fatal(err)
	}
	if res.Functions != 3 || res.Queries != 3 || res.Commit != head.String() || res.Peer == nil {
		t.Fatalf("result %+v", res)
	}
	if len(peer.docs) != 3 || !strings.Contains(peer.docs["bank/rates.py:convert_currency"], "currency") {
		t.Errorf("peer documents %q", peer.docs)
	}
	if len(peer.queries) != 3 || !peer.closed {
		t.Errorf("peer saw %d queries, closed %v", len(peer.queries), peer.closed)
	}
	p := res.Peer
	// Every query shares a word with at most three documents, so both
	// engines return every matching document: the top sets agree, while
	// the scores (token counts against BM25) do not.
	if p.Name != "words" || p.SameTop10 != 3 || p.MeanOverlap != 1 || p.MaxScoreRelDiff == 0 {
		t.Errorf("peer result %+v", p)
	}
	if l := res.Localize; l == nil || l.Queries != 3 || l.Selector == "" || l.OffP50 <= 0 || l.ColdP50 <= 0 || l.WarmP50 <= 0 {
		t.Errorf("localize latency %+v: want three queries timed in every cache mode", l)
	}
	var b bytes.Buffer
	if err := WriteSearchTable(&b, res); err != nil || !strings.Contains(b.String(), "words_p50_ms") || !strings.Contains(b.String(), "localize_p50_ms_graph_cache_warm") {
		t.Errorf("table %q: %v", b.String(), err)
	}
}

// TestSearchHybrid: with Hybrid, the history is scraped, memory built from
// it, and every query timed through the hybrid method, which must find the
// memory (a warning would fail the run).
func TestSearchHybrid(t *testing.T) {
	gitDir, head := fixture(t)
	res, err := Search(context.Background(), SearchOptions{GitDir: gitDir, Head: head, Queries: 10, Hybrid: true})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hybrid
	if h == nil || h.Queries != 3 || h.MemoryCommits != 3 || h.P50 <= 0 || h.P95 < h.P50 || h.P99 < h.P95 ||
		h.ScrapeSeconds <= 0 || h.MemorySeconds <= 0 || h.MemoryShare <= 0 || h.MemoryShare >= 1 {
		t.Fatalf("hybrid %+v", h)
	}
	var b bytes.Buffer
	if err := WriteSearchTable(&b, res); err != nil || !strings.Contains(b.String(), "hybrid_p50_ms / p95 / p99") || !strings.Contains(b.String(), "memory_share_of_index") {
		t.Errorf("table %q: %v", b.String(), err)
	}
}

func TestSearchErrors(t *testing.T) {
	gitDir, head := fixture(t)
	for name, o := range map[string]SearchOptions{
		"no queries":   {Queries: 0},
		"peer failure": {Queries: 5, Peer: &wordPeer{fail: errors.New("disk full")}},
	} {
		o.GitDir, o.Head = gitDir, head
		if _, err := Search(context.Background(), o); err == nil || !strings.Contains(err.Error(), gitDir) {
			t.Errorf("%s: error %v does not name the repository", name, err)
		}
	}
	if _, _, err := Target(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("plain directory: %v", err)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range v {
			ds = append(ds, time.Duration(x)*time.Millisecond)
		}
		return ds
	}
	for _, tc := range []struct {
		ds   []time.Duration
		p    int
		want float64
	}{
		{nil, 50, 0},
		{ms(7), 99, 7},
		{ms(5, 1, 3), 50, 3},
		{ms(5, 1, 3, 4), 50, 3},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 9},
		{ms(10, 1), 100, 10},
	} {
		if got := Percentile(tc.ds, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", tc.ds, tc.p, got, tc.want)
		}
	}
}
