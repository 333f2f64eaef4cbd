// Package parquetcheck runs tools/parquetcheck (DuckDB from npm, a Parquet
// reader that shares no code with parquet-go) for tests that check what
// locus writes with an independent reader.
package parquetcheck

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
	"strings"
	"testing"
	"time"
)

// EnvSkip, when set (to anything but "0"), skips the checks that need Node.js.
const EnvSkip = "LOCUS_SKIP_NODE_CHECKS"

// EnvRequire, set by CI, turns "DuckDB is not available" into a failure.
const EnvRequire = "LOCUS_REQUIRE_NODE_CHECKS"

// Tool is node and tools/parquetcheck with its DuckDB installed.
type Tool struct {
	Node, Dir string
}

// unavailable skips, or fails when EnvRequire is set.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(EnvRequire) != "" {
		t.Fatalf(format+" (failing because "+EnvRequire+" is set)", args...)
	}
	t.Skipf(format, args...)
}

// New returns the tool, installing its dependencies with npm ci when they
// are missing, or skips (fails under EnvRequire) when that cannot be had.
func New(t testing.TB) *Tool {
	t.Helper()
	if v := os.Getenv(EnvSkip); v != "" && v != "0" {
		t.Skipf("%s=%s: skipping the DuckDB check of the Parquet files", EnvSkip, v)
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		unavailable(t, "the independent Parquet check needs Node.js (node and npm on PATH) to run tools/parquetcheck with DuckDB; "+
			"install Node.js 20+, or set %s=1 to skip it deliberately", EnvSkip)
	}
	dir := toolDir(t)
	ensureNodeModules(t, npm, dir)
	return &Tool{Node: node, Dir: dir}
}

// Run runs check.mjs with args and decodes its JSON output into out.
func (c *Tool) Run(t testing.TB, out any, args ...string) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Node, append([]string{filepath.Join(c.Dir, "check.mjs")}, args...)...)
	cmd.Dir = c.Dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tools/parquetcheck/check.mjs %s: %v\n%s\n(set %s=1 to skip this check)", strings.Join(args, " "), err, stderr.String(), EnvSkip)
	}
	t.Logf("check.mjs %s took %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("check.mjs output: %v\n%s", err, data)
	}
}

// toolDir finds tools/parquetcheck in the module that holds the test's
// working directory.
func toolDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(root, "tools", "parquetcheck")
	for _, f := range []string{"check.mjs", "package.json", "package-lock.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("tools/parquetcheck: %v", err)
		}
	}
	return dir
}

// ensureNodeModules runs `npm ci` in dir when its node_modules is missing or
// does not match package-lock.json, under a lock file so that concurrent test
// runs do not install over each other. It skips the test when npm fails.
func ensureNodeModules(t testing.TB, npm, dir string) {
	t.Helper()
	if nodeModulesCurrent(dir) {
		return
	}
	sum := sha256.Sum256([]byte(dir))
	lock := filepath.Join(os.TempDir(), "locus-parquetcheck-"+hex.EncodeToString(sum[:8])+".lock")
	unlock, err := acquireFileLock(lock, 10*time.Minute)
	if err != nil {
		unavailable(t, "cannot install tools/parquetcheck's dependencies: %v; run `npm ci --no-audit --no-fund` in %s, or set %s=1 to skip this check", err, dir, EnvSkip)
	}
	defer unlock()
	if nodeModulesCurrent(dir) { // another test run installed them meanwhile
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 4000 {
			out = append([]byte("..."), out[len(out)-4000:]...)
		}
		unavailable(t, "`npm ci --no-audit --no-fund` in %s failed (%v), so DuckDB is not available for the independent Parquet check; "+
			"fix that, or set %s=1 to skip this check deliberately.\n%s", dir, err, EnvSkip, out)
	}
	t.Logf("npm ci in %s took %v", dir, time.Since(start).Round(time.Millisecond))
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
		return false // an install that did not finish
	}
	return installed.Version != "" && installed.Version == lock.Packages[pkg].Version
}

// acquireFileLock creates path exclusively, waiting up to wait for another
// holder to remove it; a lock file older than wait is taken to be left over
// from a crashed run. (O_EXCL rather than flock, to build on every platform.)
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
