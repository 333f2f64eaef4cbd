package backlog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
)

// The DuckDB check's switches, as in internal/commits: skip deliberately, or
// (CI) fail when Node.js or DuckDB cannot be had.
const (
	skipNodeEnv    = "LOCUS_SKIP_NODE_CHECKS"
	requireNodeEnv = "LOCUS_REQUIRE_NODE_CHECKS"
)

// TestPartReadByDuckDB reads a part WritePart wrote with DuckDB (through
// tools/parquetcheck), a reader that shares no code with parquet-go, and
// compares every row with what was written.
func TestPartReadByDuckDB(t *testing.T) {
	node, toolDir := duckDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rs := sampleResults()
	rs = append(rs, Result{IssueID: "bad\xff", Repo: "o/n", Error: "invalid \xfe bytes", Source: "x.jsonl:9"})
	key := PartKey("run-1", 0)
	if _, err := WritePart(ctx, b, key, rs); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Columns []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"columns"`
		Rows   int               `json:"rows"`
		KV     map[string]string `json:"kv"`
		Values []map[string]any  `json:"values"`
	}
	runCheck(t, node, toolDir, &got, "--table", filepath.Join(dir, filepath.FromSlash(key)))

	wantCols := []string{"issue_id VARCHAR", "repo VARCHAR", "base_commit VARCHAR", "rank INTEGER", "function_id VARCHAR",
		"file VARCHAR", "score DOUBLE", "method VARCHAR", "item_method VARCHAR", "why VARCHAR", "tokens_in BIGINT",
		"tokens_out BIGINT", "cached BOOLEAN", "selector VARCHAR", "selector_unavailable BOOLEAN", "budget_exhausted BOOLEAN",
		"truncated BOOLEAN", "error VARCHAR", "source VARCHAR", "notes VARCHAR[]"}
	var cols []string
	for _, c := range got.Columns {
		cols = append(cols, c.Name+" "+c.Type)
	}
	if !reflect.DeepEqual(cols, wantCols) {
		t.Errorf("DuckDB columns:\n got %q\nwant %q", cols, wantCols)
	}
	if got.KV["locus.backlog_version"] != "1" {
		t.Errorf("key-value metadata %v", got.KV)
	}
	// The rows as DuckDB decoded them (JSON numbers are float64), against rows().
	want := rows(rs)
	if got.Rows != len(want) || len(got.Values) != len(want) {
		t.Fatalf("DuckDB read %d rows, %d were written", got.Rows, len(want))
	}
	for i, w := range want {
		g := got.Values[i]
		notes := []any{}
		for _, n := range w.Notes {
			notes = append(notes, n)
		}
		exp := map[string]any{"issue_id": w.IssueID, "repo": w.Repo, "base_commit": w.BaseCommit, "rank": float64(w.Rank),
			"function_id": w.FunctionID, "file": w.File, "score": w.Score, "method": w.Method, "item_method": w.ItemMethod,
			"why": w.Why, "tokens_in": float64(w.TokensIn), "tokens_out": float64(w.TokensOut), "cached": w.Cached,
			"selector": w.Selector, "selector_unavailable": w.SelectorUnavailable, "budget_exhausted": w.BudgetExhausted,
			"truncated": w.Truncated, "error": w.Error, "source": w.Source, "notes": notes}
		if !reflect.DeepEqual(g, exp) {
			t.Errorf("row %d:\n DuckDB %v\nwritten %v", i, g, exp)
		}
	}
	if last := got.Values[len(got.Values)-1]; last["issue_id"] != "bad\uFFFD" || last["error"] != "invalid \uFFFD bytes" {
		t.Errorf("invalid UTF-8 row as DuckDB read it: %v", last)
	}
}

// nodeUnavailable skips, or fails when requireNodeEnv is set.
func nodeUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireNodeEnv) != "" {
		t.Fatalf(format+" (failing because "+requireNodeEnv+" is set)", args...)
	}
	t.Skipf(format, args...)
}

// duckDB returns node and tools/parquetcheck with its DuckDB installed, or
// skips (fails under LOCUS_REQUIRE_NODE_CHECKS) when that cannot be had.
func duckDB(t *testing.T) (node, toolDir string) {
	t.Helper()
	if v := os.Getenv(skipNodeEnv); v != "" && v != "0" {
		t.Skipf("%s=%s: skipping the DuckDB check of the Parquet files", skipNodeEnv, v)
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		nodeUnavailable(t, "the independent Parquet check needs Node.js (node and npm on PATH) to run tools/parquetcheck with DuckDB; "+
			"install Node.js 20+, or set %s=1 to skip it deliberately", skipNodeEnv)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	toolDir = filepath.Join(wd, "..", "..", "tools", "parquetcheck")
	for _, f := range []string{"check.mjs", "package.json", "package-lock.json"} {
		if _, err := os.Stat(filepath.Join(toolDir, f)); err != nil {
			t.Fatalf("tools/parquetcheck: %v", err)
		}
	}
	ensureNodeModules(t, npm, toolDir)
	return node, toolDir
}

// runCheck runs check.mjs with args and decodes its JSON into out.
func runCheck(t *testing.T, node, toolDir string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(toolDir, "check.mjs")}, args...)...)
	cmd.Dir = toolDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tools/parquetcheck/check.mjs %s: %v\n%s\n(set %s=1 to skip this check)", strings.Join(args, " "), err, stderr.String(), skipNodeEnv)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("check.mjs output: %v\n%s", err, data)
	}
}

// ensureNodeModules runs `npm ci` in dir when its node_modules is missing or
// does not match package-lock.json, under the same lock file as
// internal/commits' test so that concurrent runs do not install over each other.
func ensureNodeModules(t *testing.T, npm, dir string) {
	t.Helper()
	if nodeModulesCurrent(dir) {
		return
	}
	sum := sha256.Sum256([]byte(dir))
	lock := filepath.Join(os.TempDir(), "locus-parquetcheck-"+hex.EncodeToString(sum[:8])+".lock")
	unlock, err := acquireFileLock(lock, 10*time.Minute)
	if err != nil {
		nodeUnavailable(t, "cannot install tools/parquetcheck's dependencies: %v; run `npm ci --no-audit --no-fund` in %s, or set %s=1 to skip this check", err, dir, skipNodeEnv)
	}
	defer unlock()
	if nodeModulesCurrent(dir) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		if len(out) > 4000 {
			out = append([]byte("..."), out[len(out)-4000:]...)
		}
		nodeUnavailable(t, "`npm ci --no-audit --no-fund` in %s failed (%v), so DuckDB is not available for the independent Parquet check; "+
			"fix that, or set %s=1 to skip this check deliberately.\n%s", dir, err, skipNodeEnv, out)
	}
}

// nodeModulesCurrent reports whether dir/node_modules holds the version of
// @duckdb/node-api that package-lock.json pins.
func nodeModulesCurrent(dir string) bool {
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	var installed struct {
		Version string `json:"version"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil || json.Unmarshal(data, &lock) != nil {
		return false
	}
	const pkg = "node_modules/@duckdb/node-api"
	data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(pkg), "package.json"))
	if err != nil || json.Unmarshal(data, &installed) != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		return false
	}
	return installed.Version != "" && installed.Version == lock.Packages[pkg].Version
}

// acquireFileLock creates path exclusively, waiting up to wait for another
// holder to remove it; a lock file older than wait is taken to be left over.
func acquireFileLock(path string, wait time.Duration) (func(), error) {
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > wait {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: still held after %v", path, wait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
