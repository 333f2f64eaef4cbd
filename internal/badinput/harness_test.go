package badinput

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/locusbin"
)

// baseRepo is the repository indexed into every case's store before the case
// runs; after it, its stored files must be byte for byte what they were.
const baseRepo = "fixtures/base"

// No locus command has a time limit of its own: how long the suite may run
// is go test -timeout's business (a busy machine takes minutes where an idle
// one takes seconds). A command still running deadlineMargin before the
// test binary's deadline is stopped, and its output shown, before the
// binary is killed without it.
const deadlineMargin = 30 * time.Second

// giveUp is when t stops waiting: deadlineMargin before the test binary's
// deadline (ok false without one: wait as long as it takes).
func giveUp(t *testing.T) (at time.Time, ok bool) {
	d, ok := t.Deadline()
	return d.Add(-deadlineMargin), ok
}

// giveUpC fires when t stops waiting (never without a deadline).
func giveUpC(t *testing.T) <-chan time.Time {
	at, ok := giveUp(t)
	if !ok {
		return nil
	}
	return time.After(time.Until(at))
}

var (
	buildOnce sync.Once
	binary    string // the locus binary built for this run
	buildErr  error

	seedOnce sync.Once
	seed     struct {
		ok    bool
		by    string            // the test that seeded (or failed to)
		store string            // data dir's store holding baseRepo
		head  string            // baseRepo's indexed head
		snap  map[string]string // file → sha-256 under repos/fixtures/base
	}

	// root holds what the package's tests share: the binary and the seed.
	root string
)

func TestMain(m *testing.M) {
	// The suite exists to prove behaviour on real repositories: a machine
	// without git must fail it, never skip it.
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(os.Stderr, "badinput: the git CLI is not installed; this suite builds real repositories with it and does not skip")
		os.Exit(1)
	}
	// Most of a case's time is locus waiting (retry backoff, a held
	// embedder), not computing: run four at a time unless -parallel says.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", "4")
	}
	var err error
	root, err = os.MkdirTemp("", "locus-badinput-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "badinput:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

// locusBinary builds cmd/locus once per run, the way a user gets it.
func locusBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() { binary, buildErr = locusbin.Build(root) })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// result is what one locus command did.
type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("locus %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, tail(r.stderr, 4000))
}

// full is String with the whole of stderr.
func (r result) full() string {
	return fmt.Sprintf("locus %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// sandbox is one case's world: a directory for its repositories and a data
// dir whose store already holds baseRepo.
type sandbox struct {
	t    *testing.T
	dir  string
	data string
	env  []string          // extra environment for every locus command
	vars map[string]string // {{NAME}} → value in expectations
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	seedStore(t)
	s := &sandbox{t: t, dir: t.TempDir(), vars: map[string]string{}}
	s.data = filepath.Join(s.dir, "data")
	if err := copyTree(seed.store, filepath.Join(s.data, "store")); err != nil {
		t.Fatalf("copy the seeded store: %v", err)
	}
	s.vars["DATA"] = s.data
	return s
}

// seedStore indexes baseRepo once, in the first test that needs it; cases
// copy the resulting store. When seeding fails, that test fails with the
// seed command's whole output and every later one is skipped with a line
// naming it: one failure to read, not one per case.
func seedStore(t *testing.T) {
	t.Helper()
	seedOnce.Do(func() {
		seed.by = t.Name()
		dir := filepath.Join(root, "seed")
		r := gitfixture.NewAt(t, filepath.Join(dir, "base"))
		r.Write(map[string]string{
			"app/server.py": "class Server:\n    def start(self, port):\n        return self.bind(port)\n\n    def bind(self, port):\n        return port\n",
			"app/util.go":   "package app\n\n// Clamp keeps n in [lo, hi].\nfunc Clamp(n, lo, hi int) int {\n\tif n < lo {\n\t\treturn lo\n\t}\n\tif n > hi {\n\t\treturn hi\n\t}\n\treturn n\n}\n",
			"README.md":     "# base\n",
		})
		r.Commit("initial import")
		r.Write(map[string]string{"app/server.py": "class Server:\n    def start(self, port):\n        return self.bind(port)\n\n    def bind(self, port):\n        if port < 0:\n            raise ValueError(port)\n        return port\n"})
		head := r.Commit("reject negative ports")
		data := filepath.Join(dir, "data")
		res := runLocus(t, data, dir, nil, "index", baseRepo+"="+r.Dir)
		if res.code != 0 {
			t.Fatalf("seeding the shared store (every case starts from it) failed: %s", res.full())
		}
		store := filepath.Join(data, "store")
		snap, err := snapshot(filepath.Join(store, "repos", baseRepo))
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
		if len(snap) == 0 {
			t.Fatalf("seed: nothing stored for %s: %v", baseRepo, res)
		}
		seed.store, seed.head, seed.snap, seed.ok = store, head, snap, true
	})
	if !seed.ok {
		t.Skipf("seeding the shared store failed in %s (its output is there); this test needs it", seed.by)
	}
}

// locusCmd is the binary with dataDir as LOCUS_HOME, in cwd, with a
// scrubbed environment so the caller's LOCUS_* settings cannot leak in.
func locusCmd(ctx context.Context, t *testing.T, dataDir, cwd string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, locusBinary(t), args...)
	cmd.Dir = cwd
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOCUS_") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "LOCUS_HOME="+dataDir, "HOME="+cwd, "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// runLocus runs one locus command to its end.
func runLocus(t *testing.T, dataDir, cwd string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if at, ok := giveUp(t); ok {
		ctx, cancel = context.WithDeadline(context.Background(), at)
	}
	defer cancel()
	cmd := locusCmd(ctx, t, dataDir, cwd, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("locus %s: still running %s before the test binary's deadline (go test -timeout), so stopped; its output until then:\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), deadlineMargin, r.stdout, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run locus %s: %v", strings.Join(args, " "), err)
	}
	for _, crash := range []string{"panic:", "goroutine ", "SIGSEGV", "fatal error:"} {
		if strings.Contains(r.stdout, crash) || strings.Contains(r.stderr, crash) {
			t.Errorf("locus crashed (%q in its output):\n%v", crash, r)
		}
	}
	return r
}

// locus runs one command in the sandbox.
func (s *sandbox) locus(args ...string) result {
	s.t.Helper()
	return runLocus(s.t, s.data, s.dir, s.env, args...)
}

// start starts one command in the background; the caller ends it.
func (s *sandbox) start(args ...string) *exec.Cmd {
	s.t.Helper()
	cmd := locusCmd(context.Background(), s.t, s.data, s.dir, s.env, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start locus %s: %v", strings.Join(args, " "), err)
	}
	s.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// repo makes a fresh repository in the sandbox.
func (s *sandbox) repo(name string) *gitfixture.Repo {
	s.t.Helper()
	return gitfixture.NewAt(s.t, filepath.Join(s.dir, name))
}

// simpleRepo is a repository with one Python function, enough to index.
func (s *sandbox) simpleRepo(name string) *gitfixture.Repo {
	s.t.Helper()
	r := s.repo(name)
	r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n"})
	r.Commit("add helper")
	return r
}

func (s *sandbox) expand(v string) string {
	for k, val := range s.vars {
		v = strings.ReplaceAll(v, "{{"+k+"}}", val)
	}
	return v
}

func (s *sandbox) store() string { return filepath.Join(s.data, "store") }

// checkBaseIntact fails unless baseRepo's stored files are exactly the seed's
// and locus status still lists it at the seeded head.
func (s *sandbox) checkBaseIntact() {
	s.t.Helper()
	got, err := snapshot(filepath.Join(s.store(), "repos", baseRepo))
	if err != nil {
		s.t.Fatalf("stored data of %s: %v", baseRepo, err)
	}
	var diffs []string
	for f, h := range seed.snap {
		switch g, ok := got[f]; {
		case !ok:
			diffs = append(diffs, "lost "+f)
		case g != h:
			diffs = append(diffs, "changed "+f)
		}
	}
	for f := range got {
		if _, ok := seed.snap[f]; !ok {
			diffs = append(diffs, "added "+f)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		s.t.Errorf("the stored data of %s changed: %s", baseRepo, strings.Join(diffs, ", "))
	}
	m := s.statusOf(baseRepo)
	if m == nil || m.Head != seed.head {
		s.t.Errorf("locus status shows %s as %+v, want it at %s", baseRepo, m, seed.head)
	}
}

// manifestJSON is the part of a manifest the suite checks (kept local so the
// suite reads what a user would, whatever Go types hold it).
type manifestJSON struct {
	Repo    string `json:"repo"`
	URL     string `json:"url"`
	Head    string `json:"head"`
	Commits int    `json:"commits"`
	Rows    int64  `json:"rows"`
	Parts   []struct {
		Key  string `json:"key"`
		Rows int64  `json:"rows"`
	} `json:"parts"`
	Graph *struct {
		NodesKey string `json:"nodes_key"`
		EdgesKey string `json:"edges_key"`
		Nodes    int64  `json:"nodes"`
	} `json:"graph"`
}

// status runs locus status --json for the named repositories (all when none).
func (s *sandbox) status(repos ...string) []manifestJSON {
	s.t.Helper()
	r := s.locus(append([]string{"status", "--json"}, repos...)...)
	if r.code != 0 {
		s.t.Fatalf("status: %v", r)
	}
	var ms []manifestJSON
	if err := json.Unmarshal([]byte(r.stdout), &ms); err != nil {
		s.t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	return ms
}

func (s *sandbox) statusOf(repo string) *manifestJSON {
	s.t.Helper()
	for _, m := range s.status(repo) {
		if m.Repo == repo {
			return &m
		}
	}
	return nil
}

// indexed reads repo's manifest from the store and checks that every part and
// the graph it names are readable Parquet with the row counts it records.
func (s *sandbox) indexed(repo string) manifestJSON {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.store(), "repos", repo, "manifest.json"))
	if err != nil {
		s.t.Fatalf("%s is not indexed: %v", repo, err)
	}
	var m manifestJSON
	if err := json.Unmarshal(data, &m); err != nil {
		s.t.Fatalf("manifest of %s: %v", repo, err)
	}
	var rows int64
	for _, p := range m.Parts {
		n := s.parquetRows(p.Key)
		if n != p.Rows {
			s.t.Errorf("%s: part %s has %d rows, manifest says %d", repo, p.Key, n, p.Rows)
		}
		rows += n
	}
	if rows != m.Rows {
		s.t.Errorf("%s: parts hold %d rows, manifest says %d", repo, rows, m.Rows)
	}
	if m.Graph == nil {
		s.t.Errorf("%s: no code graph in the manifest", repo)
	} else if n := s.parquetRows(m.Graph.NodesKey); n != m.Graph.Nodes {
		s.t.Errorf("%s: nodes.parquet has %d rows, manifest says %d", repo, n, m.Graph.Nodes)
	}
	return m
}

func (s *sandbox) notIndexed(repo string) {
	s.t.Helper()
	if _, err := os.Stat(filepath.Join(s.store(), "repos", repo, "manifest.json")); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("a manifest exists for %s (err %v), want none", repo, err)
	}
}

func (s *sandbox) openParquet(key string) *parquet.File {
	s.t.Helper()
	f, err := os.Open(filepath.Join(s.store(), filepath.FromSlash(key)))
	if err != nil {
		s.t.Fatalf("open %s: %v", key, err)
	}
	s.t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		s.t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		s.t.Fatalf("%s is not readable Parquet: %v", key, err)
	}
	return pf
}

func (s *sandbox) parquetRows(key string) int64 {
	s.t.Helper()
	return s.openParquet(key).NumRows()
}

// column reads every value of one top-level column of a Parquet file.
func (s *sandbox) column(key, name string) []string {
	s.t.Helper()
	pf := s.openParquet(key)
	leaf, ok := pf.Schema().Lookup(name)
	if !ok {
		s.t.Fatalf("%s has no column %q", key, name)
	}
	var out []string
	buf := make([]parquet.Row, 64)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				for _, v := range row {
					switch {
					case v.Column() != leaf.ColumnIndex:
					case v.IsNull():
						out = append(out, "")
					case v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray:
						out = append(out, string(v.ByteArray()))
					default:
						out = append(out, v.String())
					}
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				s.t.Fatalf("read %s: %v", key, err)
			}
		}
		rows.Close()
	}
	return out
}

// nodeIDs are the ids of repo's graph nodes.
func (s *sandbox) nodeIDs(repo string) []string {
	s.t.Helper()
	m := s.indexed(repo)
	if m.Graph == nil {
		return nil
	}
	return s.column(m.Graph.NodesKey, "id")
}

// filesContaining lists files under dir whose bytes contain needle.
func filesContaining(t *testing.T, dir, needle string) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(needle)) {
			rel, _ := filepath.Rel(dir, p)
			hits = append(hits, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("search %s: %v", dir, err)
	}
	return hits
}

// snapshot hashes every file under dir (missing dir: empty).
func snapshot(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	return out, err
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
