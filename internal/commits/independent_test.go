package commits

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/parquetcheck"
	"github.com/locus-dev/locus/schema"
)

// TestParquetReadByDuckDB reads the parts Scrape writes with DuckDB (through
// tools/parquetcheck, a Node script) instead of parquet-go, and checks what it
// reads against `git log` of the same repository.
func TestParquetReadByDuckDB(t *testing.T) {
	duck := parquetcheck.New(t)

	// A repository with one of each kind of change.
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"README.md":   "# widgets\n\nA fixture.\n",
		"src/main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"logo.png":    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01",
	})
	r.Commit("initial import\n\nWith a body that spans\ntwo lines.")
	r.Write(map[string]string{
		"src/main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
		"docs/guide.md": strings.Repeat("a line of the guide\n", 12),
	})
	r.Commit("modify main, add a guide")
	r.Git("mv", "docs/guide.md", "docs/manual.md")
	r.Commit("rename the guide")
	if err := os.MkdirAll(filepath.Join(r.Dir, "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("mv", "src/main.go", "cmd/main.go")
	r.Write(map[string]string{"cmd/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"})
	r.Commit("move main and edit it")
	if err := os.Remove(filepath.Join(r.Dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	r.Commit("delete the readme")
	r.Git("checkout", "-q", "-b", "feature")
	r.Write(map[string]string{"feature.txt": "a feature\n", "docs/manual.md": strings.Repeat("a line of the guide\n", 12) + "and one more\n"})
	r.Commit("feature work")
	r.Git("checkout", "-q", "main")
	r.Write(map[string]string{"logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x02\x03"})
	r.Commit("change the binary logo")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "--no-edit", "-m", "Merge branch 'feature'", "feature")
	r.Commit("") // an empty commit with an empty message
	r.Commit("an empty commit")
	r.Git("checkout", "-q", "-b", "side")
	r.Write(map[string]string{"side.txt": "discarded\n"})
	r.Commit("side work")
	r.Git("checkout", "-q", "main")
	r.Tick()
	r.Git("merge", "-q", "--no-ff", "--no-edit", "-s", "ours", "-m", "Merge branch 'side' (ours: no change)", "side")

	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{CommitsPerPart: 3})
	if len(m.Parts) < 2 {
		t.Fatalf("parts = %d, want at least 2", len(m.Parts))
	}

	want := gitLogCommits(t, r)
	count, err := strconv.Atoi(strings.TrimSpace(r.Git("rev-list", "--count", "HEAD")))
	if err != nil {
		t.Fatal(err)
	}
	if count != len(want) {
		t.Fatalf("git rev-list --count HEAD = %d but git log listed %d commits", count, len(want))
	}
	wantRows := 0
	for _, c := range want {
		wantRows += max(1, len(c.files))
	}

	// Read the parts with DuckDB.
	partsDir := filepath.Join(dir, filepath.FromSlash(schema.RepoName("acme/widgets").CommitsPrefix()))
	var got duckReport
	duck.Run(t, &got, partsDir)
	t.Logf("read by %s; columns: %v", got.Reader, got.Columns)

	// Column types as DuckDB sees them.
	types := map[string]string{}
	for _, c := range got.Columns {
		types[c.Name] = c.Type
	}
	for col, prefix := range map[string]string{
		"commit_time": "TIMESTAMP", "author_time": "TIMESTAMP", "diff": "BLOB", "message_raw": "BLOB",
		"path_raw": "BLOB", "changed_functions": "VARCHAR[]", "additions": "INTEGER", "is_merge": "BOOLEAN",
	} {
		if !strings.HasPrefix(types[col], prefix) {
			t.Errorf("DuckDB types column %s as %q, want %s", col, types[col], prefix)
		}
	}

	// The files DuckDB read are exactly the published parts.
	if len(got.Files) != len(m.Parts) {
		t.Errorf("DuckDB read %d files, the manifest lists %d parts", len(got.Files), len(m.Parts))
	}
	parts := map[string]schema.Part{}
	for _, p := range m.Parts {
		parts[p.Key] = p
	}
	for _, f := range got.Files {
		rel, err := filepath.Rel(dir, f.File)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := parts[filepath.ToSlash(rel)]
		if !ok {
			t.Errorf("DuckDB read %s, which the manifest does not list", rel)
			continue
		}
		if f.Rows != p.Rows {
			t.Errorf("%s: DuckDB counts %d rows, the manifest %d", rel, f.Rows, p.Rows)
		}
		if f.KV["locus.repo"] != "acme/widgets" || f.KV["locus.commits_version"] != strconv.Itoa(schema.CommitsVersion) {
			t.Errorf("%s: key-value metadata %v", rel, f.KV)
		}
	}

	if got.DistinctCommits != count {
		t.Errorf("DuckDB: %d distinct commit ids, git rev-list --count HEAD = %d", got.DistinctCommits, count)
	}
	if got.TotalRows != wantRows || int64(got.TotalRows) != m.Rows {
		t.Errorf("DuckDB: %d rows; git log has %d (commit, file) pairs plus empty commits; manifest says %d", got.TotalRows, wantRows, m.Rows)
	}
	if len(got.Commits) != len(want) {
		t.Errorf("DuckDB described %d commits, git log lists %d", len(got.Commits), len(want))
	}
	for _, w := range want {
		g, ok := got.Commits[w.id]
		if !ok {
			t.Errorf("commit %s (%q) is not in the Parquet", w.id, firstLine(w.message))
			continue
		}
		name := fmt.Sprintf("commit %.10s (%q)", w.id, firstLine(w.message))
		if !g.Uniform {
			t.Errorf("%s: commit-level columns differ between its rows", name)
		}
		if g.Message != w.message {
			t.Errorf("%s: message %q, git %%B %q", name, g.Message, w.message)
		}
		if g.MessageRawHex != nil {
			t.Errorf("%s: message_raw set (%s) for a UTF-8 message", name, *g.MessageRawHex)
		}
		if g.CommitTime != w.commitTime || g.AuthorTime != w.authorTime {
			t.Errorf("%s: commit_time %d author_time %d, git %%ct %d %%at %d", name, g.CommitTime, g.AuthorTime, w.commitTime, w.authorTime)
		}
		if g.IsMerge != (len(w.parents) > 1) || g.NumParents != len(w.parents) {
			t.Errorf("%s: is_merge %v num_parents %d, git parents %v", name, g.IsMerge, g.NumParents, w.parents)
		}
		wantParent := ""
		if len(w.parents) > 0 {
			wantParent = w.parents[0]
		}
		if g.ParentID != wantParent {
			t.Errorf("%s: parent_id %q, want first parent %q", name, g.ParentID, wantParent)
		}
		var wantFiles []gitFile
		for _, f := range w.files {
			f.binary = false // DuckDB's list has no such field; binary paths are compared below
			wantFiles = append(wantFiles, f)
		}
		if len(wantFiles) == 0 {
			wantFiles = []gitFile{{status: schema.StatusEmpty}}
		}
		if g.Rows != len(wantFiles) {
			t.Errorf("%s: %d rows, want %d", name, g.Rows, len(wantFiles))
		}
		gotFiles, err := g.files()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(gotFiles, wantFiles) {
			t.Errorf("%s: files\n got (DuckDB)  %v\nwant (git log) %v", name, gotFiles, wantFiles)
		}
		var wantBinary []string
		for _, f := range w.files {
			if f.binary {
				wantBinary = append(wantBinary, f.path)
			}
		}
		if len(g.BinaryPaths) != 0 || len(wantBinary) != 0 {
			if !reflect.DeepEqual(g.BinaryPaths, wantBinary) {
				t.Errorf("%s: binary paths %v, git numstat shows -/- for %v", name, g.BinaryPaths, wantBinary)
			}
		}
	}
}

// duckTable is what check.mjs --table prints.
type duckTable struct {
	Reader  string `json:"reader"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Rows   int               `json:"rows"`
	KV     map[string]string `json:"kv"`
	Values []map[string]any  `json:"values"`
}

// duckReport is the JSON check.mjs prints.
type duckReport struct {
	Reader  string `json:"reader"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Files []struct {
		File string            `json:"file"`
		Rows int64             `json:"rows"`
		KV   map[string]string `json:"kv"`
	} `json:"files"`
	TotalRows       int                   `json:"total_rows"`
	DistinctCommits int                   `json:"distinct_commits"`
	Commits         map[string]duckCommit `json:"commits"`
	Missing         []string              `json:"missing"`
}

type duckCommit struct {
	Rows          int        `json:"rows"`
	Files         [][]any    `json:"files"` // [path, additions, deletions, status]
	BinaryPaths   []string   `json:"binary_paths"`
	Message       string     `json:"message"`
	MessageRawHex *string    `json:"message_raw_hex"`
	AuthorName    string     `json:"author_name"`
	AuthorEmail   string     `json:"author_email"`
	RawPaths      [][]string `json:"raw_paths"` // [path, hex of path_raw]
	IsMerge       bool       `json:"is_merge"`
	NumParents    int        `json:"num_parents"`
	ParentID      string     `json:"parent_id"`
	CommitTime    int64      `json:"commit_time"`
	AuthorTime    int64      `json:"author_time"`
	DiffBytes     int64      `json:"diff_bytes"`
	Uniform       bool       `json:"uniform"`
}

func (c duckCommit) files() ([]gitFile, error) {
	var out []gitFile
	for _, f := range c.Files {
		if len(f) != 4 {
			return nil, fmt.Errorf("file entry %v: want [path, additions, deletions, status]", f)
		}
		p, ok1 := f[0].(string)
		a, ok2 := f[1].(float64)
		d, ok3 := f[2].(float64)
		s, ok4 := f[3].(string)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, fmt.Errorf("file entry %v: unexpected types", f)
		}
		out = append(out, gitFile{path: p, additions: int(a), deletions: int(d), status: s})
	}
	sortFiles(out)
	return out, nil
}

// gitFile is one changed file as git reports it; binary is only used for the
// expectation (numstat's "-"), and is false in what DuckDB returns.
type gitFile struct {
	path                 string
	additions, deletions int
	status               string
	binary               bool
}

func (f gitFile) String() string {
	return fmt.Sprintf("[%s +%d -%d %s]", f.path, f.additions, f.deletions, f.status)
}

func sortFiles(fs []gitFile) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].path != fs[j].path {
			return fs[i].path < fs[j].path
		}
		return fs[i].status < fs[j].status
	})
}

type gitCommit struct {
	id                     string
	parents                []string
	commitTime, authorTime int64
	message                string
	files                  []gitFile
}

// gitLogCommits reads the history with git itself: numstat for the line counts
// and name-status for the kind of change, merges diffed against their first
// parent and renames detected, as Scrape does.
func gitLogCommits(t *testing.T, r *gitfixture.Repo) []gitCommit {
	t.Helper()
	const format = "--format=%x01%H%x00%P%x00%ct%x00%at%x00%B"
	numstat := r.Git("log", "-z", "--numstat", "--diff-merges=first-parent", "-M", format, "HEAD")
	statuses := r.Git("log", "-z", "--name-status", "--diff-merges=first-parent", "-M", "--format=%x01%H", "HEAD")

	// Status per (commit, path) from --name-status -z: "M\0path\0", "R100\0old\0new\0".
	status := map[string]string{}
	for _, chunk := range strings.Split(statuses, "\x01")[1:] {
		id, rest, _ := strings.Cut(chunk, "\x00")
		tok := strings.Split(strings.TrimPrefix(rest, "\n"), "\x00")
		for i := 0; i < len(tok); i++ {
			code := tok[i]
			if code == "" {
				continue
			}
			var st string
			switch code[0] {
			case 'A':
				st = schema.StatusAdded
			case 'M':
				st = schema.StatusModified
			case 'D':
				st = schema.StatusDeleted
			case 'R':
				st = schema.StatusRenamed
				i++ // the old path
			default:
				t.Fatalf("git log --name-status: unexpected status %q in commit %s", code, id)
			}
			i++
			if i >= len(tok) {
				t.Fatalf("git log --name-status: truncated entry in commit %s", id)
			}
			status[id+"\x00"+tok[i]] = st
		}
	}

	// Each commit: "\x01" H \0 P \0 ct \0 at \0 B \0, then, when it changes
	// files, "\n" and numstat entries "add\tdel\tpath\0" or "add\tdel\t\0old\0new\0".
	var out []gitCommit
	for _, chunk := range strings.Split(numstat, "\x01")[1:] {
		f := strings.SplitN(chunk, "\x00", 6)
		if len(f) < 5 {
			t.Fatalf("git log: short record %q", chunk)
		}
		c := gitCommit{id: f[0], parents: strings.Fields(f[1]), message: f[4]}
		var err1, err2 error
		c.commitTime, err1 = strconv.ParseInt(f[2], 10, 64)
		c.authorTime, err2 = strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("git log: times %q %q", f[2], f[3])
		}
		rest := ""
		if len(f) == 6 {
			rest = strings.TrimPrefix(f[5], "\n")
		}
		tok := strings.Split(rest, "\x00")
		for i := 0; i < len(tok); i++ {
			if tok[i] == "" {
				continue
			}
			parts := strings.SplitN(tok[i], "\t", 3)
			if len(parts) != 3 {
				t.Fatalf("git log --numstat: entry %q in commit %s", tok[i], c.id)
			}
			gf := gitFile{path: parts[2]}
			if parts[0] == "-" && parts[1] == "-" {
				gf.binary = true // git prints no line counts; Scrape stores 0 and 0
			} else {
				var err1, err2 error
				gf.additions, err1 = strconv.Atoi(parts[0])
				gf.deletions, err2 = strconv.Atoi(parts[1])
				if err1 != nil || err2 != nil {
					t.Fatalf("git log --numstat: entry %q in commit %s", tok[i], c.id)
				}
			}
			if gf.path == "" { // a rename: the old and new paths follow
				if i+2 >= len(tok) {
					t.Fatalf("git log --numstat: truncated rename in commit %s", c.id)
				}
				gf.path = tok[i+2]
				i += 2
			}
			st, ok := status[c.id+"\x00"+gf.path]
			if !ok {
				t.Fatalf("git log: no --name-status entry for %s in commit %s", gf.path, c.id)
			}
			gf.status = st
			c.files = append(c.files, gf)
		}
		sortFiles(c.files)
		out = append(out, c)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
