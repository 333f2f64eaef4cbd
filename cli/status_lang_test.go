package cli

import (
	"strings"
	"testing"

	"github.com/locus-dev/locus/schema"
)

func TestLanguageWarning(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    schema.Manifest
		want string
	}{
		{"unsupported main language", schema.Manifest{Repo: "acme/kotlin", Head: "c1",
			Graph: &schema.GraphInfo{Files: 1, Languages: map[string]int{"python": 1}, CodeBytes: map[string]int64{"kotlin": 900, "python": 100}}},
			"acme/kotlin: graph: unsupported language kotlin, 90% of code; the graph covers python 10%"},
		{"supported main language", schema.Manifest{Repo: "acme/gopher", Head: "c2",
			Graph: &schema.GraphInfo{Files: 2, Languages: map[string]int{"go": 2}, CodeBytes: map[string]int64{"go": 900, "ruby": 100}}}, ""},
		{"rust has a graph now", schema.Manifest{Repo: "acme/rusty", Head: "c3",
			Graph: &schema.GraphInfo{Files: 2, Languages: map[string]int{"rust": 2}, CodeBytes: map[string]int64{"rust": 900}}}, ""},
		{"no source at all", schema.Manifest{Repo: "acme/docs", Head: "c4", Graph: &schema.GraphInfo{}}, "acme/docs: graph: no file in a supported language"},
		{"old manifest without graph", schema.Manifest{Repo: "acme/old", Head: "c5"}, "acme/old: graph: none built"},
		{"empty repository", schema.Manifest{Repo: "acme/empty"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := languageWarning(tc.m)
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
