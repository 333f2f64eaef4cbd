package evalrun

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/eval/report"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workers/workerstest"
)

// TestEvalHarnessExactMetrics runs a function-level evaluation end to end on a
// benchmark the test builds: one repository with three functions in distinct vocabularies
// and three instances whose BM25 answers are known, so every metric value can
// be computed by hand. A change in any metric definition fails this test.
func TestEvalHarnessExactMetrics(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"bank/ledger.py": "def post_entry(ledger, amount):\n    ledger.append(amount)\n\n\ndef balance(ledger):\n    return sum(ledger)\n",
		"bank/rates.py":  "def convert_currency(value, rate):\n    return value * rate\n",
	})
	base := r.Commit("base")
	root := t.TempDir()
	r.Git("clone", "-q", "--bare", r.Dir, filepath.Join(root, "acme+bank", "repo"))

	patch := func(file, old, new string, line int) string {
		return "--- a/" + file + "\n+++ b/" + file + "\n@@ -" + itoa(line) + " +" + itoa(line) + " @@\n-" + old + "\n+" + new + "\n"
	}
	instances := []map[string]any{
		// BM25 ranks convert_currency first: rank 1.
		{"instance_id": "acme__bank-1", "repo": "acme/bank", "language": "python", "base_commit": base,
			"problem_statement": "convert currency uses the wrong rate value",
			"patch":             patch("bank/rates.py", "    return value * rate", "    return value / rate", 2), "source": "test"},
		// Two gold functions: post_entry (rank 1) and balance (rank 2).
		{"instance_id": "acme__bank-2", "repo": "acme/bank", "language": "python", "base_commit": base,
			"problem_statement": "post entry to the ledger and the ledger balance sum are wrong",
			"patch": patch("bank/ledger.py", "    ledger.append(amount)", "    ledger.append(round(amount))", 2) +
				"@@ -6 +6 @@\n-    return sum(ledger)\n+    return round(sum(ledger), 2)\n", "source": "test"},
		// No function-level edit: excluded and counted.
		{"instance_id": "acme__bank-3", "repo": "acme/bank", "language": "python", "base_commit": base,
			"problem_statement": "docs", "patch": "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n", "source": "test"},
	}
	benchFile := filepath.Join(t.TempDir(), "tiny.jsonl")
	f, err := os.Create(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, in := range instances {
		enc.Encode(in)
	}
	f.Close()

	ctx := context.Background()
	b := blobtest.Bucket(t)
	c := workerstest.Start(t, workers.Config{Bucket: b})
	res, err := Run(ctx, Options{BenchFile: benchFile, Bucket: b, Client: c, Embedder: "lexical-hash-512",
		Resolve: Resolver("", map[string]string{"acme/bank": filepath.Join(root, "acme+bank", "repo")}), Methods: []string{"sr"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != KindFunctions {
		t.Errorf("kind %q", res.Kind)
	}
	// The report as written and read back is what is checked.
	out := filepath.Join(t.TempDir(), "report")
	if _, err := report.WriteDir(out, res.Set); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rs, err := report.ReadJSON(fh)
	if err != nil {
		t.Fatal(err)
	}
	get := func(level, metric string, k int) float64 {
		for _, c := range rs.Cells {
			if c.Method == "sr" && c.Group == report.GroupAll && c.Level == level && c.Metric == metric && c.K == k {
				return c.Mean
			}
		}
		t.Fatalf("no cell %s %s@%d", level, metric, k)
		return 0
	}
	// Instance 1: gold {convert_currency} at rank 1. Instance 2: gold
	// {post_entry, balance} at ranks 1 and 2 (BM25 over the fixture).
	for _, c := range []struct {
		level, metric string
		k             int
		want          float64
	}{
		{"function", "Recall", 1, (1 + 0.5) / 2},  // 1/1 and 1/2
		{"function", "Acc", 1, (1 + 0) / 2.0},     // instance 2 needs both
		{"function", "Recall", 3, 1},              // everything by rank 3
		{"function", "Acc", 3, 1},                 //
		{"function", "P", 3, (1.0/3 + 2.0/3) / 2}, // 1 and 2 hits in 3
		{"function", "MRR", 0, 1},                 // first gold at rank 1 in both
		{"function", "MAP", 0, 1},                 // AP = 1 and (1/1 + 2/2)/2 = 1
		{"file", "Recall", 1, 1},                  // one gold file each, at rank 1
		{"file", "P", 3, 1.0 / 3},                 // one hit in 3 for each instance
	} {
		if got := get(c.level, c.metric, c.k); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s %s@%d = %.6f, want %.6f", c.level, c.metric, c.k, got, c.want)
		}
	}
	if len(rs.Instances) != 4 { // 2 evaluated instances × 2 levels
		t.Errorf("%d per-instance records, want 4 (the third instance is excluded)", len(rs.Instances))
	}
	for _, name := range []string{"report.md", "results.csv", "plot-recall-function-all.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("report file %s: %v", name, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestIsCommitBench(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          bool
		wantErr       bool
	}{
		{"commits", "\n{\"query_id\": \"q1\", \"repo\": \"a/b\"}\n", true, false},
		{"swe", "{\"instance_id\": \"a__b-1\"}\n", false, false},
		{"empty", "\n  \n", false, true},
	} {
		p := filepath.Join(dir, tc.name+".jsonl")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := IsCommitBench(p)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %v, %v", tc.name, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v does not name the file", tc.name, err)
		}
	}
	if _, err := IsCommitBench(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestResolver(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "a"})
	r.Commit("a")
	root := t.TempDir()
	r.Git("clone", "-q", "--bare", r.Dir, filepath.Join(root, "acme", "bank.git"))
	res := Resolver(root, map[string]string{"acme/ledger": r.Dir, "acme/gone": filepath.Join(root, "nowhere")})
	for _, tc := range []struct {
		repo, want string // want "": an error naming the repository
	}{
		{"Acme/Ledger", filepath.Join(r.Dir, ".git")},          // explicit path, case-insensitive
		{"acme/bank", filepath.Join(root, "acme", "bank.git")}, // layout under root
		{"acme/gone", ""},
		{"acme/none", ""},
	} {
		got, err := res(tc.repo)
		if tc.want == "" {
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.repo) {
				t.Errorf("%s: %q, %v", tc.repo, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.repo, got, err, tc.want)
		}
	}
	if _, err := Resolver("", nil)("acme/bank"); err == nil {
		t.Error("no root and no path accepted")
	}
}

func TestRunNeedsInputs(t *testing.T) {
	if _, err := Run(context.Background(), Options{}); err == nil {
		t.Error("empty options accepted")
	}
}
