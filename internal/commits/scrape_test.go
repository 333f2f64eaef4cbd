package commits

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/changes"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// scrapeAndPublish runs one incremental scrape and publishes its manifest.
func scrapeAndPublish(t *testing.T, b *blob.Bucket, r *gitfixture.Repo, opts schema.IndexOptions) (*Result, *schema.Manifest) {
	t.Helper()
	ctx := context.Background()
	repo := schema.RepoName("acme/widgets")
	prev, err := manifest.Read(ctx, b, repo)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Scrape(ctx, Config{Bucket: b, Repo: repo, GitDir: filepath.Join(r.Dir, ".git"), Head: r.Head(), Prev: prev, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	sr := schema.ScrapeResult{Head: res.Head, NewCommits: res.NewCommits, Rows: res.Rows, Parts: res.Parts, FileIDs: res.FileIDsKey}
	if prev != nil {
		sr.BaseHead = prev.Head
	}
	m, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo, URL: r.Dir}, Head: res.Head, Scrape: sr})
	if err != nil {
		t.Fatal(err)
	}
	return res, m
}

func readRows(t *testing.T, b *blob.Bucket, m *schema.Manifest) []schema.CommitFile {
	t.Helper()
	var rows []schema.CommitFile
	err := ReadAll(context.Background(), b, m, func(r *schema.CommitFile) error {
		c := *r
		c.Diff = bytes.Clone(r.Diff)
		rows = append(rows, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestScrapeRowsAndFileIDs(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a/one.py": strings.Repeat("def f():\n    return 1\n", 20), "b.bin": "\x00\x01\x02"})
	first := r.Commit("add one")
	os.MkdirAll(filepath.Join(r.Dir, "c"), 0o755)
	r.Git("mv", "a/one.py", "c/two.py")
	r.Commit("rename one to two")
	r.Write(map[string]string{"c/two.py": strings.Repeat("def f():\n    return 1\n", 20) + "x = 1\n"})
	r.Commit("edit two")
	r.Write(map[string]string{"big.txt": strings.Repeat("a long line of text that repeats\n", 400)})
	r.Commit("big file")
	r.Commit("nothing")
	r.Write(map[string]string{"n\xe4me.txt": "latin-1 name\n"})
	r.Commit("non-UTF-8 path")

	b := blobtest.Bucket(t)
	res, m := scrapeAndPublish(t, b, r, schema.IndexOptions{MaxDiffBytes: 1024, CommitsPerPart: 2})
	if res.NewCommits != 6 || m.Commits != 6 {
		t.Fatalf("new commits %d, manifest commits %d, want 6", res.NewCommits, m.Commits)
	}
	if len(m.Parts) != 3 {
		t.Fatalf("parts = %d, want 3 (2 commits each)", len(m.Parts))
	}
	rows := readRows(t, b, m)
	if int64(len(rows)) != m.Rows {
		t.Fatalf("read %d rows, manifest says %d", len(rows), m.Rows)
	}
	byMsg := map[string][]schema.CommitFile{}
	for _, row := range rows {
		byMsg[strings.TrimSpace(row.Message)] = append(byMsg[strings.TrimSpace(row.Message)], row)
		if row.Repo != "acme/widgets" {
			t.Errorf("repo column = %q", row.Repo)
		}
	}
	add := byMsg["add one"]
	if len(add) != 2 || add[0].CommitID != first || add[0].ParentID != "" || add[0].Status != schema.StatusAdded {
		t.Fatalf("first commit rows: %+v", add)
	}
	var bin, py schema.CommitFile
	for _, row := range add {
		if row.Path == "b.bin" {
			bin = row
		} else {
			py = row
		}
	}
	if !bin.IsBinary || len(bin.Diff) != 0 {
		t.Errorf("binary file: is_binary=%v diff=%q", bin.IsBinary, bin.Diff)
	}
	if py.Extension != ".py" || py.Additions != 40 {
		t.Errorf("python file: ext=%q additions=%d", py.Extension, py.Additions)
	}
	ren := byMsg["rename one to two"]
	if len(ren) != 1 || ren[0].Status != schema.StatusRenamed || ren[0].PreviousPath != "a/one.py" || ren[0].Path != "c/two.py" {
		t.Fatalf("rename rows: %+v", ren)
	}
	edit := byMsg["edit two"]
	if ren[0].FileID != py.FileID || edit[0].FileID != py.FileID {
		t.Errorf("file id must follow the rename: add %s rename %s edit %s", py.FileID, ren[0].FileID, edit[0].FileID)
	}
	big := byMsg["big file"][0]
	if !big.DiffTruncated || len(big.Diff) > 1024 || big.Additions != 400 {
		t.Errorf("big diff: truncated=%v len=%d additions=%d", big.DiffTruncated, len(big.Diff), big.Additions)
	}
	empty := byMsg["nothing"]
	if len(empty) != 1 || empty[0].Status != schema.StatusEmpty || empty[0].Path != "" {
		t.Errorf("empty commit rows: %+v", empty)
	}
	raw := byMsg["non-UTF-8 path"]
	if len(raw) != 1 || string(raw[0].PathRaw) != "n\xe4me.txt" || raw[0].Path != "n\uFFFDme.txt" {
		t.Errorf("non-UTF-8 path: path=%q raw=%q", raw[0].Path, raw[0].PathRaw)
	}
}

func TestScrapeIncrementalAndInterrupted(t *testing.T) {
	r := gitfixture.New(t)
	for i := 0; i < 5; i++ {
		r.Write(map[string]string{"f.txt": strings.Repeat("x\n", i+1)})
		r.Commit("c")
	}
	b := blobtest.Bucket(t)
	_, m1 := scrapeAndPublish(t, b, r, schema.IndexOptions{CommitsPerPart: 2})
	if m1.Commits != 5 {
		t.Fatalf("commits = %d", m1.Commits)
	}
	// An interrupted run: a scrape that wrote parts but never published.
	for i := 0; i < 3; i++ {
		r.Write(map[string]string{"f.txt": strings.Repeat("y\n", i+1)})
		r.Commit("d")
	}
	ctx := context.Background()
	if _, err := Scrape(ctx, Config{Bucket: b, Repo: "acme/widgets", GitDir: filepath.Join(r.Dir, ".git"), Head: r.Head(), Prev: m1,
		Options: schema.IndexOptions{CommitsPerPart: 2}}); err != nil {
		t.Fatal(err)
	}
	// Readers go by the manifest: still the old state.
	if got := len(readRows(t, b, m1)); int64(got) != m1.Rows {
		t.Fatalf("rows visible after an unpublished scrape: %d, want %d", got, m1.Rows)
	}
	// The rerun publishes exactly the new commits once, and leftovers are swept.
	res, m2 := scrapeAndPublish(t, b, r, schema.IndexOptions{CommitsPerPart: 2})
	if res.NewCommits != 3 || m2.Commits != 8 {
		t.Fatalf("incremental: new %d total %d, want 3 and 8", res.NewCommits, m2.Commits)
	}
	rows := readRows(t, b, m2)
	seen := map[string]int{}
	for _, row := range rows {
		seen[row.CommitID]++
	}
	if len(seen) != 8 {
		t.Fatalf("distinct commits %d, want 8", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("commit %s appears in %d rows, want 1", id, n)
		}
	}
	objs, err := b.List(ctx, schema.RepoName("acme/widgets").CommitsPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if want := len(m2.Parts) + 1; len(objs) != want {
		t.Errorf("objects under commits/: %d, want %d (parts + file ids)", len(objs), want)
	}
	// Nothing new: a third run writes nothing.
	res, m3 := scrapeAndPublish(t, b, r, schema.IndexOptions{CommitsPerPart: 2})
	if res.NewCommits != 0 || m3.Commits != 8 || len(m3.Parts) != len(m2.Parts) {
		t.Fatalf("no-op run changed things: %+v", res)
	}
}

func TestTruncatedPartIsAnError(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"f.txt": "x\n"})
	r.Commit("c")
	b := blobtest.Bucket(t)
	_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{})
	ctx := context.Background()
	key := m.Parts[0].Key
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, key, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	err = ReadPart(ctx, b, key, func(*schema.CommitFile) error { return nil })
	if err == nil || !strings.Contains(err.Error(), key) {
		t.Fatalf("truncated part: err = %v, want an error naming %s", err, key)
	}
}

func TestScrapeNotARepository(t *testing.T) {
	b := blobtest.Bucket(t)
	dir := t.TempDir()
	_, err := Scrape(context.Background(), Config{Bucket: b, Repo: "x/y", GitDir: dir, Head: strings.Repeat("a", 40)})
	if err == nil || !strings.Contains(err.Error(), "x/y") {
		t.Fatalf("err = %v", err)
	}
	objs, _ := b.List(context.Background(), "")
	if len(objs) != 0 {
		t.Fatalf("a failed scrape left %d objects", len(objs))
	}
	t.Log(err)
}

func TestChangedFunctions(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"pkg/m.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n", "notes.txt": "x\n"})
	r.Commit("add")
	r.Write(map[string]string{"pkg/m.py": "def a():\n    return 1\n\n\ndef b():\n    return 3\n", "notes.txt": "y\n"})
	r.Commit("edit b")
	os.MkdirAll(filepath.Join(r.Dir, "lib"), 0o755)
	r.Git("mv", "pkg/m.py", "lib/m.py")
	r.Write(map[string]string{"lib/m.py": "def a():\n    return 10\n\n\ndef b():\n    return 3\n"})
	r.Commit("move and edit a")
	r.Git("rm", "-q", "lib/m.py")
	r.Commit("delete")

	b := blobtest.Bucket(t)
	_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{})
	got := map[string]string{}
	for _, row := range readRows(t, b, m) {
		if row.Extension == ".py" {
			got[strings.TrimSpace(row.Message)] = strings.Join(row.ChangedFunctions, " ")
		} else if len(row.ChangedFunctions) != 0 {
			t.Errorf("%s: a text file has changed functions %v", row.Path, row.ChangedFunctions)
		}
	}
	want := map[string]string{
		"add":             "pkg/m.py:a pkg/m.py:b",
		"edit b":          "pkg/m.py:b",
		"move and edit a": "lib/m.py:a pkg/m.py:a",
		"delete":          "lib/m.py:a lib/m.py:b",
	}
	for msg, w := range want {
		if got[msg] != w {
			t.Errorf("%s: changed functions %q, want %q", msg, got[msg], w)
		}
	}
}

// TestChangedFunctionsNative: changes map onto Rust methods, C functions
// and C++ methods, with the .h headers of a C++ repository read as C++ (a
// class's inline method is Class.m, not a parse error).
func TestChangedFunctionsNative(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"src/lib.rs":   "pub struct S;\n\nimpl S {\n    pub fn get(&self) -> u32 {\n        1\n    }\n}\n",
		"c/util.c":     "int twice(int x) {\n    return 2 * x;\n}\n",
		"cc/shape.h":   "class Shape {\n public:\n  int area() const {\n    return 1;\n  }\n};\n",
		"cc/shape.cpp": "#include \"shape.h\"\nint total(const Shape& s) {\n  return s.area();\n}\n",
		"cc/main.cpp":  "int main() {\n  return 0;\n}\n",
	})
	r.Commit("add")
	r.Write(map[string]string{
		"src/lib.rs": "pub struct S;\n\nimpl S {\n    pub fn get(&self) -> u32 {\n        2\n    }\n}\n",
		"c/util.c":   "int twice(int x) {\n    return x + x;\n}\n",
		"cc/shape.h": "class Shape {\n public:\n  int area() const {\n    return 2;\n  }\n};\n",
	})
	r.Commit("edit")
	b := blobtest.Bucket(t)
	_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{})
	got := map[string]string{}
	for _, row := range readRows(t, b, m) {
		if strings.TrimSpace(row.Message) == "edit" {
			got[row.Path] = strings.Join(row.ChangedFunctions, " ")
		}
	}
	want := map[string]string{"src/lib.rs": "src/lib.rs:S.get", "c/util.c": "c/util.c:twice", "cc/shape.h": "cc/shape.h:Shape.area"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changed functions %v, want %v", got, want)
	}
}

// TestScrapeResumesFromCheckpoint interrupts a scrape in its third part and
// resumes it from the last checkpoint: only the commits after it are diffed,
// and the parts and file-id map equal an uninterrupted scrape's byte for
// byte. A checkpoint that does not fit is not used.
func TestScrapeResumesFromCheckpoint(t *testing.T) {
	r := gitfixture.New(t)
	for i := range 7 {
		r.Write(map[string]string{fmt.Sprintf("d%d/f.py", i%3): strings.Repeat("def f():\n    return 1\n", i+1)})
		r.Commit(fmt.Sprintf("c%d", i))
	}
	repo := schema.RepoName("acme/widgets")
	opts := schema.IndexOptions{CommitsPerPart: 2}
	cfg := func(b *blob.Bucket) Config {
		return Config{Bucket: b, Repo: repo, GitDir: filepath.Join(r.Dir, ".git"), Head: r.Head(), Options: opts}
	}
	ctx := context.Background()
	whole := blobtest.Bucket(t)
	want, err := Scrape(ctx, cfg(whole))
	if err != nil {
		t.Fatal(err)
	}

	b := blobtest.Bucket(t)
	var cps []Checkpoint
	stopped, stop := context.WithCancel(ctx)
	c := cfg(b)
	c.Checkpoint = func(cp Checkpoint) { cps = append(cps, cp) }
	c.Progress = func(done, _ int) {
		if done == 5 {
			stop()
		}
	}
	if _, err := Scrape(stopped, c); err == nil {
		t.Fatal("the interrupted scrape succeeded")
	}
	if len(cps) != 2 || cps[1].Commits != 4 || len(cps[1].Parts) != 2 {
		t.Fatalf("checkpoints %+v, want 2, the last after 4 commits", cps)
	}

	c = cfg(b)
	c.Resume = &cps[1]
	var first []int
	c.Progress = func(done, _ int) { first = append(first, done) }
	got, err := Scrape(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 3 || first[0] != 5 {
		t.Errorf("resumed scrape reported %v, want commits 5..7 only", first)
	}
	if got.Resumed != 4 {
		t.Errorf("resumed %d commits, want 4", got.Resumed)
	}
	got.Resumed = 0
	// How file versions were read depends on what each run remembered.
	got.Functions, want.Functions = changes.MapperStats{}, changes.MapperStats{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed scrape %+v, uninterrupted %+v", got, want)
	}
	for _, key := range append([]string{want.FileIDsKey}, partKeys(want.Parts)...) {
		x, _ := whole.ReadAll(ctx, key)
		y, _ := b.ReadAll(ctx, key)
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs from the uninterrupted scrape's", key)
		}
	}

	// Checkpoints that do not fit: another head, a part gone, a part
	// damaged. Each is set aside and the scrape gives the same result.
	otherHead := cps[1]
	otherHead.Head = strings.Repeat("0", 40)
	damaged := blobtest.Bucket(t)
	for _, tc := range []struct {
		name  string
		cp    Checkpoint
		spoil func(b *blob.Bucket)
	}{
		{"another head", otherHead, func(*blob.Bucket) {}},
		{"a part gone", cps[1], func(b *blob.Bucket) { b.Delete(ctx, cps[1].Parts[0].Key) }},
		{"a part damaged", cps[1], func(b *blob.Bucket) {
			data, _ := b.ReadAll(ctx, cps[1].Parts[1].Key)
			data[len(data)/2] ^= 0xff
			b.WriteAll(ctx, cps[1].Parts[1].Key, data)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg(damaged)
			c.Checkpoint = func(Checkpoint) {}
			if _, err := Scrape(ctx, c); err != nil { // writes parts and checkpoint maps
				t.Fatal(err)
			}
			tc.spoil(damaged)
			c = cfg(damaged)
			c.Resume = &tc.cp
			var first []int
			c.Progress = func(done, _ int) { first = append(first, done) }
			got, err := Scrape(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			got.Functions = changes.MapperStats{}
			if len(first) != 7 || !reflect.DeepEqual(got, want) {
				t.Errorf("with an unusable checkpoint: progress %v, result %+v; want all 7 commits and %+v", first, got, want)
			}
		})
	}
}

func partKeys(parts []schema.Part) []string {
	var keys []string
	for _, p := range parts {
		keys = append(keys, p.Key)
	}
	return keys
}
