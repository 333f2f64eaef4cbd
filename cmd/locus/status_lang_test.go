package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

func TestMainLanguage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
		want  string
		graph bool
		ok    bool
	}{
		{"go", []string{"a.go", "b.go", "README.md", "x.py"}, "go", true, true},
		{"rust with scripts", []string{"src/a.rs", "src/b.rs", "src/C.RS", "tools/gen.py", "build.sh"}, "rust", false, true},
		{"tie by name", []string{"a.py", "b.rb"}, "python", true, true},
		{"no source", []string{"README.md", "LICENSE", "docs/x.txt"}, "", false, false},
		{"extension of a directory only", []string{"dir.rs/README"}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := mainLanguage(tc.paths)
			if ok != tc.ok || got.name != tc.want || got.graph != tc.graph {
				t.Fatalf("mainLanguage = %+v, %v; want %q (graph %v), %v", got, ok, tc.want, tc.graph, tc.ok)
			}
		})
	}
}

func TestLanguageWarning(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	store := func(repo schema.RepoName, head string, paths ...string) string {
		ids := commits.NewFileIDs()
		for _, p := range paths {
			ids.Touch(head, p)
		}
		var buf bytes.Buffer
		if _, err := ids.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		key := repo.FileIDsKey(head)
		if err := b.WriteAll(ctx, key, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		return key
	}
	rust := schema.Manifest{Repo: "acme/rusty", Head: "c1", FileIDs: store("acme/rusty", "c1", "src/a.rs", "src/b.rs", "gen.py"),
		Graph: &schema.GraphInfo{Files: 1, Languages: map[string]int{"python": 1}}}
	goRepo := schema.Manifest{Repo: "acme/gopher", Head: "c2", FileIDs: store("acme/gopher", "c2", "a.go", "b.go", "x.rs"),
		Graph: &schema.GraphInfo{Files: 2, Languages: map[string]int{"go": 2}}}
	docs := schema.Manifest{Repo: "acme/docs", Head: "c3", FileIDs: store("acme/docs", "c3", "README.md"), Graph: &schema.GraphInfo{}}
	old := schema.Manifest{Repo: "acme/old", Head: "c4"} // written before file lists and graphs
	empty := schema.Manifest{Repo: "acme/empty"}
	missing := schema.Manifest{Repo: "acme/gone", Head: "c5", FileIDs: "repos/acme/gone/commits/fileids-c5.txt.gz"}
	for _, tc := range []struct {
		name    string
		m       schema.Manifest
		want    string
		wantErr string
	}{
		{"unsupported main language", rust, "acme/rusty: main language rust (2 files) has no code graph support; the graph covers python:1 files", ""},
		{"supported main language", goRepo, "", ""},
		{"no source at all", docs, "acme/docs: no code graph", ""},
		{"old manifest without graph", old, "acme/old: no code graph", ""},
		{"empty repository", empty, "", ""},
		{"file list missing", missing, "", "fileids-c5.txt.gz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := languageWarning(ctx, b, tc.m)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), string(tc.m.Repo)) {
					t.Fatalf("err = %v, want one naming %s and %q", err, tc.m.Repo, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("warning %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatusColumns(t *testing.T) {
	if g := graphLanguages(&schema.GraphInfo{Languages: map[string]int{"python": 3, "go": 12, "java": 3}}); g != "go:12,java:3,python:3" {
		t.Errorf("graphLanguages = %q", g)
	}
	if g := graphLanguages(nil); g != "-" {
		t.Errorf("graphLanguages(nil) = %q", g)
	}
	for _, tc := range []struct {
		m        schema.Manifest
		emb, vec string
	}{
		{schema.Manifest{}, "-", "-"},
		{schema.Manifest{Search: &schema.SearchInfo{Model: "lexical-hash-256", Vectors: "local"}}, "lexical-hash-256", "local"},
		{schema.Manifest{Search: &schema.SearchInfo{Model: "m"}}, "m", "unrecorded"},
	} {
		if e, v := searchColumns(tc.m); e != tc.emb || v != tc.vec {
			t.Errorf("searchColumns(%+v) = %q, %q; want %q, %q", tc.m.Search, e, v, tc.emb, tc.vec)
		}
	}
}
