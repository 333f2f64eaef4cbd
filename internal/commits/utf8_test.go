package commits

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/parquetcheck"
	"github.com/locus-dev/locus/schema"
)

// invalidUTF8Repo has a file whose name and code are Latin-1 (not UTF-8), a
// commit whose message and author are not UTF-8 and carry no encoding header,
// and a commit whose header declares ISO-8859-1.
func invalidUTF8Repo(t *testing.T) (r *gitfixture.Repo, first, second string) {
	t.Helper()
	r = gitfixture.New(t)
	r.Write(map[string]string{
		"caf\xe9.py": "def caf():\n    return '\xe9'\n\n\nclass K:\n    def m(self):\n        return caf()\n",
		"ok.py":      "def ok():\n    return 1\n",
	})
	r.Git("add", "-A")
	// git commit would convert these to UTF-8 (it assumes Latin-1); old
	// repositories and other tools store the bytes as they are.
	tree := strings.TrimSpace(r.Git("write-tree"))
	obj := "tree " + tree + "\n" +
		"author Jos\xe9 <jos\xe9@example.com> 1700000060 +0000\n" +
		"committer Ada <ada@example.com> 1700000060 +0000\n\n" +
		"invalid \xff byte in the message\n"
	objFile := filepath.Join(t.TempDir(), "commit")
	if err := os.WriteFile(objFile, []byte(obj), 0o644); err != nil {
		t.Fatal(err)
	}
	first = strings.TrimSpace(r.Git("hash-object", "-t", "commit", "-w", objFile))
	r.Git("update-ref", "HEAD", first)
	r.Tick()
	r.Write(map[string]string{"caf\xe9.py": "def caf():\n    return 'caf\xe9'\n\n\nclass K:\n    def m(self):\n        return caf()\n"})
	r.Tick()
	r.Git("add", "-A")
	r.Git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-m", "caf\xe9 in latin-1")
	second = r.Head()
	return r, first, second
}

// invalidStrings returns the names of string fields (also inside slices) of v
// that are not valid UTF-8.
func invalidStrings(v any) []string {
	var bad []string
	rv := reflect.ValueOf(v)
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		switch {
		case f.Kind() == reflect.String && !utf8.ValidString(f.String()):
			bad = append(bad, rv.Type().Field(i).Name)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for j := 0; j < f.Len(); j++ {
				if !utf8.ValidString(f.Index(j).String()) {
					bad = append(bad, rv.Type().Field(i).Name)
				}
			}
		}
	}
	return bad
}

func TestInvalidUTF8StoredValidWithRawBytes(t *testing.T) {
	r, first, second := invalidUTF8Repo(t)
	b := blobtest.Bucket(t)
	_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{})
	rows := readRows(t, b, m)

	type want struct {
		message, messageRaw, author, authorRaw, email, emailRaw string
	}
	wants := map[string]want{
		first: {"invalid \uFFFD byte in the message\n", "invalid \xff byte in the message\n",
			"Jos\uFFFD", "Jos\xe9", "jos\uFFFD@example.com", "jos\xe9@example.com"},
		// Decoded from the declared encoding, as `git log` shows it.
		second: {"café in latin-1\n", "caf\xe9 in latin-1\n", "Ada", "", "ada@example.com", ""},
	}
	var changed []string
	seen := map[string]bool{}
	for _, row := range rows {
		if bad := invalidStrings(row); len(bad) > 0 {
			t.Errorf("commit %.10s %q: fields %v are not valid UTF-8", row.CommitID, row.Path, bad)
		}
		w, ok := wants[row.CommitID]
		if !ok {
			t.Fatalf("unexpected commit %s", row.CommitID)
		}
		seen[row.CommitID] = true
		got := want{row.Message, string(row.MessageRaw), row.AuthorName, string(row.AuthorNameRaw), row.AuthorEmail, string(row.AuthorEmailRaw)}
		if got != w {
			t.Errorf("commit %.10s: got %+q, want %+q", row.CommitID, got, w)
		}
		switch row.Path {
		case "caf\uFFFD.py":
			if string(row.PathRaw) != "caf\xe9.py" {
				t.Errorf("commit %.10s: path_raw %q, want %q", row.CommitID, row.PathRaw, "caf\xe9.py")
			}
			if row.CommitID == second {
				changed = row.ChangedFunctions
			}
		case "ok.py":
			if row.PathRaw != nil {
				t.Errorf("commit %.10s: path_raw %q set for a UTF-8 path", row.CommitID, row.PathRaw)
			}
		default:
			t.Errorf("commit %.10s: unexpected path %q", row.CommitID, row.Path)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("read commits %v, want both %s and %s", seen, first, second)
	}
	if !slices.Contains(changed, "caf\uFFFD.py:caf") {
		t.Errorf("changed_functions of %.10s = %q, want it to hold %q", second, changed, "caf\uFFFD.py:caf")
	}

	// The graph of the same head stores the same ids, so the two tables join.
	info, g := writeGraph(t, b, r, second)
	ids := map[string]bool{}
	for _, n := range g.Nodes {
		if bad := invalidStrings(n); len(bad) > 0 {
			t.Errorf("node %q: fields %v are not valid UTF-8", n.ID, bad)
		}
		ids[n.ID] = true
		wantRaw := ""
		if strings.HasPrefix(n.Path, "caf\uFFFD.py") {
			wantRaw = "caf\xe9.py"
		}
		if string(n.PathRaw) != wantRaw {
			t.Errorf("node %q: path_raw %q, want %q", n.ID, n.PathRaw, wantRaw)
		}
	}
	for _, e := range g.Edges {
		if bad := invalidStrings(e); len(bad) > 0 {
			t.Errorf("edge %q -> %q: fields %v are not valid UTF-8", e.Src, e.Dst, bad)
		}
		if !ids[e.Src] || !ids[e.Dst] {
			t.Errorf("edge %q -> %q: an end is not a node id", e.Src, e.Dst)
		}
	}
	for _, id := range changed {
		if !ids[id] {
			t.Errorf("changed function %q is not a node of the graph %s", id, info.NodesKey)
		}
	}
	if !ids["caf\uFFFD.py:K.m"] {
		t.Errorf("graph lacks the method caf\uFFFD.py:K.m; ids %v", ids)
	}
}

// writeGraph builds, stores and reads back the graph of commit.
func writeGraph(t *testing.T, b *blob.Bucket, r *gitfixture.Repo, commit string) (schema.GraphInfo, *codegraph.Graph) {
	t.Helper()
	ctx := context.Background()
	h, ok := gitrepo.ParseHash(commit)
	if !ok {
		t.Fatalf("commit %q", commit)
	}
	g, err := codegraph.BuildCommit(ctx, filepath.Join(r.Dir, ".git"), gitrepo.BackendAuto, h, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := graphstore.Write(ctx, b, "acme/widgets", commit, g)
	if err != nil {
		t.Fatal(err)
	}
	back, err := graphstore.Read(ctx, b, info)
	if err != nil {
		t.Fatal(err)
	}
	return info, back
}

// TestInvalidUTF8ReadByDuckDB reads the commits and graph tables of a
// repository with non-UTF-8 paths, messages, authors and code with DuckDB,
// which rejects string columns that are not UTF-8 ("Invalid string encoding").
func TestInvalidUTF8ReadByDuckDB(t *testing.T) {
	duck := parquetcheck.New(t)
	r, first, second := invalidUTF8Repo(t)
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	scrapeAndPublish(t, b, r, schema.IndexOptions{})
	info, _ := writeGraph(t, b, r, second)

	var rep duckReport
	duck.Run(t, &rep, filepath.Join(dir, filepath.FromSlash(schema.RepoName("acme/widgets").CommitsPrefix())))
	rawHex := strings.ToUpper(hex.EncodeToString([]byte("caf\xe9.py")))
	for id, w := range map[string]struct{ message, author, email string }{
		first:  {"invalid \uFFFD byte in the message\n", "Jos\uFFFD", "jos\uFFFD@example.com"},
		second: {"café in latin-1\n", "Ada", "ada@example.com"},
	} {
		c, ok := rep.Commits[id]
		if !ok {
			t.Errorf("DuckDB did not read commit %s", id)
			continue
		}
		if c.Message != w.message || c.AuthorName != w.author || c.AuthorEmail != w.email {
			t.Errorf("commit %.10s: DuckDB read message %q author %q <%q>, want %q %q <%q>", id, c.Message, c.AuthorName, c.AuthorEmail, w.message, w.author, w.email)
		}
		if c.MessageRawHex == nil {
			t.Errorf("commit %.10s: message_raw is null, want the exact bytes", id)
		}
		if want := [][]string{{"caf\uFFFD.py", rawHex}}; !reflect.DeepEqual(c.RawPaths, want) {
			t.Errorf("commit %.10s: DuckDB read raw paths %q, want %q", id, c.RawPaths, want)
		}
	}

	for _, tc := range []struct {
		key  string
		rows int
	}{{info.NodesKey, info.Nodes}, {info.EdgesKey, info.Edges}} {
		var tab duckTable
		duck.Run(t, &tab, "--table", filepath.Join(dir, filepath.FromSlash(tc.key)))
		if tab.Rows != tc.rows {
			t.Errorf("%s: DuckDB read %d rows, the graph has %d", tc.key, tab.Rows, tc.rows)
		}
		if tc.key != info.NodesKey {
			continue
		}
		found := false
		hash := ""
		for _, v := range tab.Values {
			if v["id"] == "caf\uFFFD.py" {
				found = true
				if v["path_raw"] != rawHex {
					t.Errorf("%s: node %q path_raw %v, want %s", tc.key, v["id"], v["path_raw"], rawHex)
				}
			}
			if v["id"] == "caf\uFFFD.py:caf" {
				hash, _ = v["content_hash"].(string)
			}
		}
		if !found {
			t.Errorf("%s: DuckDB read no node caf\uFFFD.py", tc.key)
		}
		// The function's code lives in the repository's code store, by
		// content hash; DuckDB reads it there.
		code := ""
		for _, seg := range info.Code {
			var ct duckTable
			duck.Run(t, &ct, "--table", filepath.Join(dir, filepath.FromSlash(seg.Key)))
			for _, v := range ct.Values {
				if v["hash"] == hash {
					code, _ = v["code"].(string)
				}
			}
		}
		if hash == "" || !strings.Contains(code, "caf\uFFFD'") {
			t.Errorf("code of caf\uFFFD.py:caf (content hash %q) in the code store: %q, want the Latin-1 byte as U+FFFD", hash, code)
		}
	}
}

// TestReadVersion1Parts reads a part written with the version 1 layout (no
// author_*_raw columns) and a version 1 graph (no path_raw).
func TestReadVersion1Parts(t *testing.T) {
	type v1Row struct {
		Repo       string `parquet:"repo,dict"`
		CommitID   string `parquet:"commit_id,dict"`
		AuthorName string `parquet:"author_name,dict"`
		Message    string `parquet:"message,dict"`
		MessageRaw []byte `parquet:"message_raw,optional"`
		Path       string `parquet:"path"`
		Additions  int32  `parquet:"additions"`
	}
	type v1Node struct {
		ID   string `parquet:"id"`
		Type string `parquet:"type,dict"`
		Path string `parquet:"path,dict"`
	}
	ctx := context.Background()
	b := blobtest.Bucket(t)
	write := func(key string, rows any) {
		var buf bytes.Buffer
		switch rs := rows.(type) {
		case []v1Row:
			if err := parquet.Write(&buf, rs); err != nil {
				t.Fatal(err)
			}
		case []v1Node:
			if err := parquet.Write(&buf, rs); err != nil {
				t.Fatal(err)
			}
		case []schema.GraphEdge: // unchanged since version 1
			if err := parquet.Write(&buf, rs); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.WriteAll(ctx, key, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	write("v1/part.parquet", []v1Row{{Repo: "acme/widgets", CommitID: strings.Repeat("a", 40), AuthorName: "Ada", Message: "m\uFFFD", MessageRaw: []byte("m\xff"), Path: "x.py", Additions: 3}})
	var got []schema.CommitFile
	if err := ReadPart(ctx, b, "v1/part.parquet", func(r *schema.CommitFile) error {
		got = append(got, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].AuthorName != "Ada" || got[0].AuthorNameRaw != nil || string(got[0].MessageRaw) != "m\xff" || got[0].Additions != 3 || got[0].Path != "x.py" {
		t.Errorf("version 1 part read as %+v", got)
	}
	write("v1/nodes.parquet", []v1Node{{ID: "x.py", Type: "file", Path: "x.py"}})
	write("v1/edges.parquet", []schema.GraphEdge{{Src: "/", Dst: "x.py", Type: "contains"}})
	g, err := graphstore.Read(ctx, b, schema.GraphInfo{NodesKey: "v1/nodes.parquet", EdgesKey: "v1/edges.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 1 || g.Nodes[0].ID != "x.py" || g.Nodes[0].PathRaw != nil {
		t.Errorf("version 1 nodes read as %+v", g.Nodes)
	}
}
