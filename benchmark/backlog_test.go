package benchmark

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/workflows"
)

// backlogFixture has classes and functions in a few files, so that the
// centers of SpIDER and SpISR have neighbours for the heuristic selector to
// judge, and commit subjects that name them.
func backlogFixture(t *testing.T) *gitfixture.Repo {
	t.Helper()
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def evict(self, key):\n        self.store.pop(key)\n\n    def expire(self, now):\n        for k in list(self.store):\n            self.evict(k)\n",
	})
	r.Commit("cache get and evict a key from the store")
	r.Write(map[string]string{
		"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items.clear()\n\n    def peek(self):\n        return self.items[0]\n",
	})
	r.Commit("queue push, drain and peek items")
	r.Write(map[string]string{
		"pkg/util.py": "def parse_key(text):\n    return text.strip()\n\ndef format_item(item):\n    return str(item)\n\ndef expire_all(cache, now):\n    cache.expire(now)\n",
	})
	r.Commit("parse key text and format an item")
	r.Write(map[string]string{
		"pkg/io/reader.py": "class Reader:\n    def read_line(self):\n        return self.stream.readline()\n\n    def read_key(self):\n        return parse_key(self.read_line())\n",
	})
	r.Commit("reader reads a line and a key from the stream")
	return r
}

// TestBacklog runs the benchmark on a small real repository: the
// LocalizeBacklog workflow ranks every issue exactly as localizeDirect does
// with the heuristic selector, for the graph methods and a plain one.
func TestBacklog(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	gitDir, head, err := Target(backlogFixture(t).Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"", search.MethodSpISR, search.MethodSR} {
		t.Run("method="+method, func(t *testing.T) {
			r, err := Backlog(ctx, BacklogOptions{GitDir: gitDir, Head: head, Issues: 30, Window: 4, Method: method,
				Logger: testlog.New(t, slog.LevelWarn)})
			if err != nil {
				t.Fatal(err)
			}
			want := method
			if want == "" {
				want = search.MethodSpIDER
			}
			if r.Identical != 30 || r.Mismatches != 0 || r.Failed != 0 || len(r.Examples) != 0 {
				t.Errorf("workflow and direct results differ: %d identical, %d mismatches, %d failed; first: %+v",
					r.Identical, r.Mismatches, r.Failed, r.Examples)
			}
			if r.Issues != 30 || r.DistinctTexts != 4 || r.Window != 4 || r.Batch != workflows.DefaultBacklogBatch || r.Method != want || r.K != 20 || r.Commit != head.String() {
				t.Errorf("report: %+v", r)
			}
			if r.Functions != 11 || r.Embedder == "" || r.IndexSeconds <= 0 || r.GOMAXPROCS < 1 {
				t.Errorf("index: %d functions, embedder %q, %.2f s, GOMAXPROCS %d", r.Functions, r.Embedder, r.IndexSeconds, r.GOMAXPROCS)
			}
			if want != search.MethodSR && !strings.Contains(r.Selector, "heuristic") {
				t.Errorf("selector %q, want the heuristic", r.Selector)
			}
			if r.DirectSeconds <= 0 || r.WorkflowSeconds <= 0 || r.DirectP50 <= 0 || r.DirectP99 < r.DirectP50 {
				t.Errorf("timings: %+v", r)
			}
			if d := r.DirectIssuesPerSec - 30/r.DirectSeconds; d > 1e-6 || d < -1e-6 {
				t.Errorf("direct rate %.3f for %.3f s", r.DirectIssuesPerSec, r.DirectSeconds)
			}
			if d := r.OverheadPerIssue - (r.WorkflowSeconds-r.DirectSeconds)*1000/30; d > 0.01 || d < -0.01 {
				t.Errorf("overhead %.3f ms/issue for %.3f s vs %.3f s", r.OverheadPerIssue, r.WorkflowSeconds, r.DirectSeconds)
			}
			if r.Summary == nil || r.Summary.Parts != 1 {
				t.Errorf("run: %+v", r.Summary)
			}
			var buf bytes.Buffer
			if err := WriteBacklogTable(&buf, r); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"workflow_issues_per_s", "overhead_ms_per_issue", "30 of 30"} {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("table lacks %q:\n%s", s, buf.String())
				}
			}
		})
	}
}

func TestBacklogErrors(t *testing.T) {
	gitDir, head := fixture(t)
	for _, o := range []BacklogOptions{
		{GitDir: gitDir, Head: head, Issues: -1},
		{GitDir: gitDir, Head: head, Window: -2},
		{GitDir: t.TempDir(), Head: head},
	} {
		if _, err := Backlog(context.Background(), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestCompareBacklog checks that a different order, a missing result and a
// per-issue error each count as a mismatch.
func TestCompareBacklog(t *testing.T) {
	issues := backlogIssues("acme/x", []string{"a", "b"}, 4)
	direct := make([]*search.Result, 4)
	for i := range direct {
		direct[i] = &search.Result{Items: []spider.Item{{ID: "f.py:a"}, {ID: "f.py:b"}}}
	}
	same := []backlog.Ranked{{FunctionID: "f.py:a"}, {FunctionID: "f.py:b"}}
	rs := []backlog.Result{
		{IssueID: issues[0].ID, Items: same},
		{IssueID: issues[1].ID, Items: []backlog.Ranked{{FunctionID: "f.py:b"}, {FunctionID: "f.py:a"}}},
		{IssueID: issues[2].ID, Error: "boom"},
	}
	var r BacklogResult
	compareBacklog(&r, issues, direct, rs)
	if r.Identical != 1 || r.Mismatches != 3 || r.Failed != 1 || len(r.Examples) != 3 ||
		r.Examples[1].Error != "boom" || r.Examples[2].Error != "no result stored" || issues[3].Text != "b" {
		t.Errorf("%+v", r)
	}
}
