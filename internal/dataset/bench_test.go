package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadSWE(t *testing.T) {
	got, err := LoadSWE("testdata/swe.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d instances, want 3", len(got))
	}
	want0 := SWEInstance{
		InstanceID: "psf__requests-1", Repo: "psf/requests", Language: "python", BaseCommit: "aaa",
		ProblemStatement: "Session breaks", Patch: "--- a/requests/sessions.py\n+++ b/requests/sessions.py\n",
		GoldSpans: map[string][]string{"requests/sessions.py": {"Session.request"}}, Source: "swe-bench-lite",
	}
	if !reflect.DeepEqual(got[0], want0) {
		t.Errorf("got[0] = %+v\nwant %+v", got[0], want0)
	}
	if got[1].GoldSpans != nil || got[2].GoldSpans != nil {
		t.Errorf("absent/null gold_spans should be nil: %v %v", got[1].GoldSpans, got[2].GoldSpans)
	}
	if got[1].InstanceID != "grpc__grpc-go-2" || got[1].Language != "go" {
		t.Errorf("got[1] = %+v", got[1])
	}
}

func TestLoadCommits(t *testing.T) {
	got, err := LoadCommits("testdata/commits.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want0 := CommitQuery{QueryID: "redis/redis-train-0", Repo: "redis/redis", Split: "train", CommitID: "c0",
		CommitDate: 1512063006, Query: "crash on expire", GoldFiles: []string{"src/server.c", "src/db.c"}}
	if len(got) != 3 || !reflect.DeepEqual(got[0], want0) {
		t.Fatalf("got %+v", got)
	}
}

func TestMalformed(t *testing.T) {
	_, err := LoadSWE("testdata/swe-bad.jsonl")
	if err == nil || !strings.Contains(err.Error(), "testdata/swe-bad.jsonl:3:") {
		t.Errorf("LoadSWE bad: %v; want file:line 3", err)
	}
	_, err = LoadCommits("testdata/commits-bad.jsonl")
	if err == nil || !strings.Contains(err.Error(), "testdata/commits-bad.jsonl:2:") || !strings.Contains(err.Error(), "commit_date") {
		t.Errorf("LoadCommits bad: %v; want file:line 2 naming commit_date", err)
	}
	// A SWE file is not a commits file: required fields are missing.
	_, err = LoadCommits("testdata/swe.jsonl")
	if err == nil || !strings.Contains(err.Error(), "swe.jsonl:1:") || !strings.Contains(err.Error(), "query_id") {
		t.Errorf("LoadCommits(swe file): %v", err)
	}
	if _, err := LoadSWE("testdata/nope.jsonl"); err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"query_id":"a","repo":"r/x","commit_id":"c","commit_date":1,"query":"q","gold_files":["f"]}` + "\n" +
			`{"query_id":"a","repo":"r/x","commit_id":"c","commit_date":1,"query":"q","gold_files":["f"]}`, "x.jsonl:2: duplicate query_id \"a\" (first on line 1)"},
		{`{"query_id":"a","repo":"noslash","commit_id":"c","commit_date":1,"query":"q","gold_files":["f"]}`, "x.jsonl:1: repo \"noslash\""},
		{`{"query_id":"a","repo":"r/x","commit_id":"c","commit_date":1,"query":"q","gold_files":[]}`, "x.jsonl:1: missing or empty field(s) gold_files"},
		{`{"query_id":"a","repo":"r/x","commit_id":"c","commit_date":1,"query":"q","gold_files":["f"]} {}`, "x.jsonl:1: more than one JSON value"},
		{"\n\n[1,2]", "x.jsonl:3:"},
	}
	for _, c := range cases {
		_, err := ReadCommits(strings.NewReader(c.in), "x.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadCommits(%q) = %v; want %q", c.in, err, c.want)
		}
	}
}

func TestFilter(t *testing.T) {
	swe, err := LoadSWE("testdata/swe.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ids := func(xs []SWEInstance) (out []string) {
		for _, x := range xs {
			out = append(out, x.InstanceID)
		}
		return out
	}
	for _, c := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"psf__requests-1", "grpc__grpc-go-2", "psf__requests-3"}},
		{ByRepo("PSF/Requests"), []string{"psf__requests-1", "psf__requests-3"}},
		{ByLanguage("go"), []string{"grpc__grpc-go-2"}},
		{Limit(2), []string{"psf__requests-1", "grpc__grpc-go-2"}},
		{Filter{Repos: []string{"psf/requests"}, Limit: 1}, []string{"psf__requests-1"}},
		{Filter{Languages: []string{"python"}, IDs: []string{"psf__requests-3"}}, []string{"psf__requests-3"}},
		{ByRepo("nobody/none"), nil},
	} {
		if got := ids(c.f.SWE(swe)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %v want %v", c.f, got, c.want)
		}
	}
	if got := SWERepos(swe); !reflect.DeepEqual(got, []string{"psf/requests", "grpc/grpc-go"}) {
		t.Errorf("SWERepos = %v", got)
	}

	cq, err := LoadCommits("testdata/commits.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got := (Filter{Repos: []string{"redis/redis"}, Splits: []string{"train"}}).Commits(cq); len(got) != 1 || got[0].QueryID != "redis/redis-train-0" {
		t.Errorf("commits filter: %+v", got)
	}
	if got := (Filter{Languages: []string{"java"}, Limit: 2}).Commits(cq); len(got) != 2 {
		t.Errorf("languages must be ignored for commits: %+v", got)
	}
	if got := CommitRepos(cq); !reflect.DeepEqual(got, []string{"redis/redis", "apache/kafka"}) {
		t.Errorf("CommitRepos = %v", got)
	}
}

// mkBare makes a directory that looks like a bare git repository.
func mkBare(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRepoDirLayouts(t *testing.T) {
	for _, c := range []struct{ layout, repo string }{
		{"psf+requests/repo", "psf/requests"},
		{"psf+requests", "psf/requests"},
		{"psf/requests.git", "psf/requests"},
		{"psf/requests", "psf/requests"},
		{"requests.git", "psf/requests"},
		{"requests", "psf/requests"},
		{"psf/requests/.git", "psf/requests"},                     // a work tree
		{"FasterXML+jackson-core/repo", "fasterxml/Jackson-Core"}, // case-insensitive
	} {
		root := t.TempDir()
		want := filepath.Join(root, filepath.FromSlash(c.layout))
		mkBare(t, want)
		got, err := RepoDir(root, c.repo)
		if err != nil {
			t.Errorf("%s: %v", c.layout, err)
			continue
		}
		if got != want {
			t.Errorf("%s: got %s want %s", c.layout, got, want)
		}
	}
}

func TestRepoDirPreference(t *testing.T) {
	root := t.TempDir()
	mkBare(t, filepath.Join(root, "requests"))
	mkBare(t, filepath.Join(root, "psf+requests", "repo"))
	got, err := RepoDir(root, "psf/requests")
	if err != nil || got != filepath.Join(root, "psf+requests", "repo") {
		t.Errorf("got %s, %v; want the fetch layout first", got, err)
	}
}

func TestRepoDirErrors(t *testing.T) {
	root := t.TempDir()
	// A directory that is not a git directory does not count.
	if err := os.MkdirAll(filepath.Join(root, "psf", "requests"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := RepoDir(root, "psf/requests")
	if err == nil {
		t.Fatal("want an error")
	}
	for _, l := range []string{"psf+requests/repo", "psf+requests", "psf/requests.git", "psf/requests", "requests.git", "requests"} {
		if !strings.Contains(err.Error(), filepath.Join(root, filepath.FromSlash(l))) {
			t.Errorf("error does not list %s: %v", l, err)
		}
	}
	if _, err := RepoDir(root, "requests"); err == nil || !strings.Contains(err.Error(), "owner/name") {
		t.Errorf("bad repo name: %v", err)
	}
	if _, err := RepoDir(filepath.Join(root, "missing"), "psf/requests"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing root: %v", err)
	}
}

// TestSharedBench loads the real benchmark files when present.
func TestSharedBench(t *testing.T) {
	const dir = "../../../shared/bench"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("shared bench not present")
	}
	swe, err := LoadSWE(filepath.Join(dir, "swe-dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(swe) != 171 {
		t.Errorf("swe-dev: %d instances, want 171", len(swe))
	}
	cq, err := LoadCommits(filepath.Join(dir, "commits-dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cq) != 1000 {
		t.Errorf("commits-dev: %d queries, want 1000", len(cq))
	}
}
