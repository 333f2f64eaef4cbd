package badinput

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// partialCases: repositories whose clone lacks objects. A missing blob (a
// partial clone's filter, a mirror without its largest files) is recorded
// and counted, never fatal; a missing tree is an error naming it.
var partialCases = []badCase{
	{
		name:  "partial-clone-max-blob-size",
		input: "a real partial clone (`git clone --bare --filter=blob:limit=1k`) whose source is gone, indexed with `--max-blob-size 1024`",
		want:  "exit 0; the rows of the large file's versions are flagged missing (line counts -1), status counts them, one warning for the repository, the large file is listed as not parsed with the reason; nothing is fetched",
		setup: func(s *sandbox) []string {
			src := s.repo("src")
			src.Git("config", "uploadpack.allowFilter", "true")
			src.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n", "big.py": bigPython(3000)})
			src.Commit("add")
			src.Write(map[string]string{"big.py": bigPython(3100)})
			src.Commit("grow big")
			// Bare: a checkout would fetch the head's blobs.
			partial := filepath.Join(s.dir, "partial.git")
			if out, err := exec.Command("git", "clone", "-q", "--bare", "--filter=blob:limit=1k", "file://"+src.Dir, partial).CombinedOutput(); err != nil {
				s.t.Fatalf("partial clone: %v: %s", err, out)
			}
			// The partial clone's own promisor is gone: a lazy fetch fails.
			if err := os.RemoveAll(src.Dir); err != nil {
				s.t.Fatal(err)
			}
			return []string{"index", "--max-blob-size", "1024", "partial/r=" + partial}
		},
		code:  0,
		names: []string{"warning: partial/r: the clone lacks blobs", "2 commit rows flagged missing", "1 files of the head not parsed"},
		check: func(s *sandbox, r result) {
			checkMissing(s, r, "partial/r", 2, "big.py")
		},
	},
	{
		name:  "missing-blob-deleted",
		input: "a repository whose object store lost one blob (its loose object file deleted)",
		want:  "exit 0; the rows of that blob are flagged missing (line counts -1), status counts them, one warning for the repository, the file is listed as not parsed with the reason",
		setup: func(s *sandbox) []string {
			src := s.repo("lost")
			src.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 2\n", "gone.py": "def gone():\n    return 1\n"})
			src.Commit("add")
			deleteObject(s, src.Dir, "HEAD:gone.py")
			return []string{"index", "lost/r=" + src.Dir}
		},
		code:  0,
		names: []string{"warning: lost/r: the clone lacks blobs", "1 commit rows flagged missing", "1 files of the head not parsed"},
		check: func(s *sandbox, r result) {
			checkMissing(s, r, "lost/r", 1, "gone.py")
		},
	},
	{
		name:  "missing-tree",
		input: "a repository whose object store lost one tree (a directory's loose object deleted)",
		want:  "exit 1; the repository fails with an error naming the tree's id (\"object not found\"); nothing is stored for it",
		setup: func(s *sandbox) []string {
			src := s.repo("notree")
			src.Write(map[string]string{"pkg/lib.py": "def helper(n):\n    return n * 2\n"})
			src.Commit("add")
			s.vars["TREE"] = deleteObject(s, src.Dir, "HEAD:pkg")
			return []string{"index", "notree/r=" + src.Dir}
		},
		code:  1,
		names: []string{"{{TREE}}", "object not found"},
		check: func(s *sandbox, r result) { s.notIndexed("notree/r") },
	},
}

// bigPython is a Python file of about n bytes.
func bigPython(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("def f" + strings.Repeat("x", i%7) + "_" + string(rune('a'+i%26)) + "():\n    return 1\n")
	}
	return b.String()
}

// deleteObject removes the loose object rev names from the working copy's
// repository at dir and returns its id.
func deleteObject(s *sandbox, dir, rev string) string {
	s.t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", rev).Output()
	if err != nil {
		s.t.Fatalf("rev-parse %s: %v", rev, err)
	}
	id := strings.TrimSpace(string(out))
	if err := os.Remove(filepath.Join(dir, ".git", "objects", id[:2], id[2:])); err != nil {
		s.t.Fatal(err)
	}
	return id
}

// checkMissing: repo is indexed with rows flagged missing in its commits
// table and status, one warning of each kind, and file listed in the graph
// report as not parsed because its blob is missing.
func checkMissing(s *sandbox, r result, repo string, rows int, file string) {
	s.t.Helper()
	m := s.indexed(repo)
	var flagged int
	for _, p := range m.Parts {
		for _, v := range s.column(p.Key, "missing") {
			if v == "true" {
				flagged++
			}
		}
	}
	if flagged != rows {
		s.t.Errorf("%s: %d rows flagged missing in the commits table, want %d", repo, flagged, rows)
	}
	var st []struct {
		MissingRows int64 `json:"missing_rows"`
		Graph       struct {
			MissingFiles int    `json:"missing_files"`
			ReportKey    string `json:"report_key"`
		} `json:"graph"`
	}
	res := s.locus("status", "--json", repo)
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || len(st) != 1 {
		s.t.Fatalf("status --json %s: %v\n%v", repo, err, res)
	}
	if st[0].MissingRows != int64(rows) || st[0].Graph.MissingFiles != 1 {
		s.t.Errorf("status counts %d missing rows and %d missing files, want %d and 1", st[0].MissingRows, st[0].Graph.MissingFiles, rows)
	}
	if text := s.locus("status", repo); !strings.Contains(text.stdout, repo+": missing blobs: ") {
		s.t.Errorf("status does not count the missing blobs:\n%v", text)
	}
	out := r.stdout + r.stderr
	if n := strings.Count(out, "warning: "+repo+": the clone lacks blobs"); n != 1 {
		s.t.Errorf("%d summary warnings for %s, want 1\n%v", n, repo, r)
	}
	if n := strings.Count(out, "msg=\"blobs missing from the clone"); n != 1 {
		s.t.Errorf("%d scrape warnings, want 1\n%v", n, r)
	}
	data, err := os.ReadFile(filepath.Join(s.store(), filepath.FromSlash(st[0].Graph.ReportKey)))
	if err != nil {
		s.t.Fatalf("graph report: %v", err)
	}
	var rep struct {
		Skipped []struct{ Path, Reason string } `json:"skipped"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		s.t.Fatalf("graph report: %v", err)
	}
	found := false
	for _, sk := range rep.Skipped {
		found = found || sk.Path == file && strings.Contains(sk.Reason, "blob missing")
	}
	if !found {
		s.t.Errorf("the graph report does not list %s as not parsed for its missing blob: %+v", file, rep.Skipped)
	}
}
