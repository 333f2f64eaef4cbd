package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// TestBacklogEndToEnd indexes a tiny repository, then runs `locus backlog`
// on a JSON Lines file with good issues, a malformed line and an issue whose
// base commit is not in the repository: the good ones are ranked (one at
// an older base commit, against the snapshot of that commit), the others
// listed with their reasons, the exit status is 1, --out holds
// results.jsonl and summary.md; re-running the command reads the finished
// run back, and `backlog status` reports it.
func TestBacklogEndToEnd(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"pkg/legacy.py": "def legacy_flush(items):\n    \"\"\"Flush the legacy spool to disk.\"\"\"\n    spool.write(items)\n"})
	old := r.Commit("legacy spool")
	r.Git("rm", "-q", "pkg/legacy.py")
	r.Write(map[string]string{
		"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def evict(self, key):\n        self.store.pop(key)\n",
		"pkg/queue.py": "def push(items, item):\n    items.append(item)\n\ndef drain(items):\n    items.clear()\n",
	})
	head := r.Commit("cache and queue")
	data := t.TempDir()
	ctx := context.Background()
	if _, err := capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "warn", "acme/widgets=" + r.Dir})
	}); err != nil {
		t.Fatalf("index: %v", err)
	}

	file := filepath.Join(t.TempDir(), "issues.jsonl")
	lines := []string{
		`{"id": "1", "repo": "acme/widgets", "problem_statement": "evict should remove the key from the cache store"}`,
		`{"id": "2", "repo": "acme/widgets", "base_commit": "` + head + `", "title": "drain", "body": "drain leaves items in the queue"}`,
		`{"id": "3", "repo": "acme/widgets", "problem_statement": "get of a missing key"`, // malformed
		`{"id": "4", "repo": "acme/widgets", "base_commit": "0000000000000000000000000000000000000000", "problem_statement": "push appends twice"}`,
		`{"id": "5", "repo": "acme/widgets", "base_commit": "` + old[:10] + `", "problem_statement": "legacy flush of the spool writes nothing to disk"}`,
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(t.TempDir(), "results")
	args := []string{"--data-dir", data, "--log-level", "warn", "--json", "--out", outDir, "--k", "3", file}
	var errBuf bytes.Buffer
	oldErr := stderr
	stderr = &errBuf
	out, err := capture(t, func() error { return runBacklog(ctx, args) })
	stderr = oldErr
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(ee.msg, "1 of 4 issues failed, 1 records could not be read") {
		t.Fatalf("backlog: err = %v, want exit 1 naming 1 failed issue and 1 unread record\nstderr:\n%s", err, errBuf.String())
	}
	if !strings.Contains(errBuf.String(), file+":3:") {
		t.Errorf("stderr does not list the malformed line as %s:3:\n%s", file, errBuf.String())
	}
	var sum backlog.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if sum.Total != 4 || sum.Done != 3 || sum.Failed != 1 || sum.ParseErrors != 1 || sum.Selector != "" && !strings.Contains(sum.Selector, "heuristic") {
		t.Errorf("summary %+v", sum)
	}
	var baseErr, parseErr bool
	for _, f := range sum.Failures {
		baseErr = baseErr || f.IssueID == "4" && strings.Contains(f.Error, "base_commit 0000000000000000000000000000000000000000 is not a commit of acme/widgets")
		parseErr = parseErr || strings.HasSuffix(f.Source, "issues.jsonl:3")
	}
	if !baseErr || !parseErr {
		t.Errorf("failures %+v: want issue 4's base commit and line 3", sum.Failures)
	}

	// results.jsonl: one line per issue, in input order, ranked.
	f, err := os.Open(filepath.Join(outDir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []backlog.ResultLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l backlog.ResultLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("results.jsonl: %v: %s", err, sc.Text())
		}
		got = append(got, l)
	}
	if len(got) != 4 || got[0].ID != "1" || got[1].ID != "2" || got[2].ID != "4" || got[3].ID != "5" {
		t.Fatalf("results.jsonl has %+v, want issues 1, 2, 4, 5", got)
	}
	// Issue 5 is ranked against its base commit, where legacy_flush exists.
	if len(got[3].Functions) == 0 || got[3].Functions[0].ID != "pkg/legacy.py:legacy_flush" || got[3].Error != "" {
		t.Errorf("issue 5 at %s: %+v, want legacy_flush (only at that commit) first", old[:10], got[3])
	}
	// The snapshot is stored by commit; the head's manifest still names the head.
	if _, err := os.Stat(filepath.Join(data, "store", "repos", "acme", "widgets", "snapshots", old, "manifest.json")); err != nil {
		t.Errorf("snapshot of %s not stored: %v", old, err)
	}
	if len(got[0].Functions) < 2 || len(got[0].Functions) > 3 || got[0].Functions[0].ID != "pkg/cache.py:Cache.evict" || got[2].Error == "" {
		t.Errorf("results: issue 1 ranks %+v (want Cache.evict first), issue 4 error %q", got[0].Functions, got[2].Error)
	}
	if got[1].BaseCommit != head || len(got[1].Functions) == 0 || !strings.HasPrefix(got[1].Functions[0].ID, "pkg/queue.py:") {
		t.Errorf("issue 2 at the head: %+v", got[1])
	}
	md, err := os.ReadFile(filepath.Join(outDir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "is not a commit of acme/widgets") {
		t.Errorf("summary.md does not give issue 4's reason:\n%s", md)
	}

	// report.html: every issue, its functions with their lines and first
	// lines of code (stored with the results), the failure's reason; the
	// store keeps the same page.
	page, err := os.ReadFile(filepath.Join(outDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Functions[0].Line != 5 {
		t.Errorf("Cache.evict at line %d in results.jsonl, want 5", got[0].Functions[0].Line)
	}
	for _, want := range []string{">pkg/cache.py:5<", "<pre>    def evict(self, key):\n        self.store.pop(key)</pre>", `<span class="title">drain</span>`,
		"is not a commit of acme/widgets", ">pkg/legacy.py:1<", "issues.jsonl:3"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(string(page), "/blob/") {
		t.Errorf("report.html links to a forge for a repository indexed from a local path")
	}
	stored, err := os.ReadFile(filepath.Join(data, "store", "backlogs", sum.Run, "report.html"))
	if err != nil || !bytes.Equal(stored, page) {
		t.Errorf("the store's report.html (%v) is not the --out one", err)
	}
	// `backlog report RUN` writes it again; an unknown run is named.
	again := t.TempDir()
	out, err = capture(t, func() error { return runBacklog(ctx, []string{"report", "--data-dir", data, "--out", again, sum.Run}) })
	if err != nil || !strings.Contains(out, filepath.Join(again, "report.html")) {
		t.Errorf("backlog report: %v\n%s", err, out)
	}
	if p, err := os.ReadFile(filepath.Join(again, "report.html")); err != nil || !bytes.Equal(p, page) {
		t.Errorf("backlog report wrote another page (%v)", err)
	}
	_, err = capture(t, func() error {
		return runBacklog(ctx, []string{"report", "--data-dir", data, "--out", again, "no-such-run"})
	})
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(ee.msg, `"no-such-run"`) {
		t.Errorf("backlog report of an unknown run: %v", err)
	}

	// The same command again: the finished run is read back, not run again;
	// a stored page that is missing (a run from before pages) is written.
	storedPage := filepath.Join(data, "store", "backlogs", sum.Run, "report.html")
	if err := os.Remove(storedPage); err != nil {
		t.Fatal(err)
	}
	out2, err := capture(t, func() error { return runBacklog(ctx, args) })
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("re-run: %v", err)
	}
	if p, err := os.ReadFile(storedPage); err != nil || !bytes.Equal(p, page) {
		t.Errorf("the re-run did not store the run's page again (%v)", err)
	}
	var sum2 backlog.Summary
	if err := json.Unmarshal([]byte(out2), &sum2); err != nil {
		t.Fatal(err)
	}
	if sum2.Run != sum.Run || !sum2.Started.Equal(sum.Started) {
		t.Errorf("re-run gave run %s started %v, want the finished run %s started %v", sum2.Run, sum2.Started, sum.Run, sum.Started)
	}

	out, err = capture(t, func() error { return runBacklog(ctx, []string{"status", "--data-dir", data, "--json"}) })
	if err != nil {
		t.Fatal(err)
	}
	var sts []backlogStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(sts) != 1 || sts[0].Run != sum.Run || !sts[0].Finished || sts[0].Done != 3 || sts[0].Failed != 1 || sts[0].ParseErrors != 1 {
		t.Errorf("status %+v", sts)
	}
	out, err = capture(t, func() error { return runBacklog(ctx, []string{"status", "--data-dir", data, sum.Run}) })
	if err != nil || !strings.Contains(out, sum.Run) || !strings.Contains(out, "finished") {
		t.Errorf("status %s: %v\n%s", sum.Run, err, out)
	}
}

// --out files are for people and tools: readable by others (0644), not
// the 0600 of the temporary file they are written through.
func TestWriteBacklogOutMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := writeBacklogOut(dir, []backlog.Result{{IssueID: "1", Repo: "o/n"}}, backlog.Summary{Run: "r", Total: 1}); err != nil {
		t.Fatal(err)
	}
	if err := writeOutFile(dir, "report.html", func(f *os.File) error { _, err := f.WriteString("<!DOCTYPE html>"); return err }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"results.jsonl", "summary.md", "report.html"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", name, st.Mode().Perm())
		}
	}
}
