package triplets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExclusion(t *testing.T) {
	swe := writeFile(t, "swe.jsonl",
		`{"instance_id": "acme__w-1", "repo": "Acme/Widgets", "language": "python", "base_commit": "bbbb", "problem_statement": "x", "patch": "diff --git a/a.py b/a.py\n"}`+"\n"+
			`{"instance_id": "acme__w-2", "repo": "acme/widgets", "language": "python", "base_commit": "cccc", "problem_statement": "y", "patch": "diff --git a/a.py b/a.py\n"}`+"\n")
	commits := writeFile(t, "commits.jsonl",
		`{"query_id": "q1", "repo": "other/lib", "split": "dev", "commit_id": "ffff", "commit_date": 1000, "query": "q", "gold_files": ["a.c"]}`+"\n")
	x, err := LoadExclusion(swe, commits)
	if err != nil {
		t.Fatal(err)
	}
	times := map[string]int64{"aaaa": 1, "bbbb": 5, "cccc": 3, "dddd": 7}
	lookup := func(id string) (int64, bool) { v, ok := times[id]; return v, ok }
	w, err := x.ForRepo("acme/widgets", lookup)
	if err != nil {
		t.Fatal(err)
	}
	if w.Cut != 3 {
		t.Errorf("cut %d, want 3 (the earliest base commit, cccc)", w.Cut)
	}
	for _, tc := range []struct {
		id   string
		time int64
		want bool
	}{{"aaaa", 1, false}, {"cccc", 3, true}, {"BBBB", 5, true}, {"dddd", 7, true}, {"eeee", 2, false}} {
		if got := w.Excluded(tc.id, tc.time); got != tc.want {
			t.Errorf("Excluded(%s, %d) = %v, want %v", tc.id, tc.time, got, tc.want)
		}
	}
	// A commit query gives its time: the history need not hold it.
	o, err := x.ForRepo("other/lib", func(string) (int64, bool) { return 0, false })
	if err != nil || o.Cut != 1000*1000 || !o.Excluded("x", 1000*1000) || o.Excluded("x", 999*1000) {
		t.Errorf("other/lib: cut %d, %v", o.Cut, err)
	}
	// A repository no benchmark names keeps everything.
	if n, err := x.ForRepo("free/repo", lookup); err != nil || n.Excluded("aaaa", 1<<40) {
		t.Errorf("free/repo: %+v %v", n, err)
	}
	// A base commit the history lacks cannot place the cut.
	if _, err := x.ForRepo("acme/widgets", func(id string) (int64, bool) { return 0, id != "cccc" }); err == nil || !strings.Contains(err.Error(), "cccc") {
		t.Errorf("missing base commit: %v", err)
	}
	// Passed on as entries, it excludes the same.
	y := NewExclusion(x.Entries())
	if w2, err := y.ForRepo("acme/widgets", lookup); err != nil || w2.Cut != 3 || !w2.Excluded("bbbb", 0) {
		t.Errorf("from entries: %+v %v", w2, err)
	}
	if o2, err := y.ForRepo("other/lib", lookup); err != nil || o2.Cut != 1000*1000 {
		t.Errorf("from entries, other/lib: %+v %v", o2, err)
	}
	if _, err := LoadExclusion(writeFile(t, "bad.jsonl", "{not json\n")); err == nil || !strings.Contains(err.Error(), "bad.jsonl") {
		t.Errorf("a bad file: %v", err)
	}
}
