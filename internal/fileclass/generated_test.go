package fileclass

import (
	"strings"
	"testing"

	enry "github.com/go-enry/go-enry/v2"
	"github.com/go-enry/go-enry/v2/data"
)

// generatedNameCorpus is this checkout's paths, each also under a few
// directories, and names each of linguist's generated-name matchers
// matches, in other cases too.
func generatedNameCorpus(t testing.TB) []string {
	var paths []string
	for _, p := range checkoutPaths(t) {
		paths = append(paths, p, "vendor/github.com/x/"+p, "a/Pods/"+p, "node_modules/"+p, "x/.idea/"+p)
	}
	for _, p := range []string{
		"a/.idea/workspace.xml", ".idea/x", "Pods/x.h", "a/Pods/b.m", "a/pods/b.m", "Carthage/Build/x", "a/Carthage/Build/y",
		"Form.Designer.cs", "a/form.designer.vb", "x.Feature.CS", "b/x.feature.cs", "vendor/github.com/x/y.go",
		"vendor/golang.org/x/net/a.go", "Gopkg.lock", "a/glide.lock", "poetry.lock", "pdm.lock", "uv.lock",
		"a/b.esy.lock", "esy.lock", "esy_lock", "deno.lock", "npm-shrinkwrap.json", "a/package-lock.json",
		"pnpm-lock.yaml", ".pnp.cjs", "a/.pnp.loader.mjs", "Godeps/Godeps.json", "composer.lock", "a.zep.c",
		"b/x.zep.php", "Cargo.lock", "Cargo.toml.orig", "flake.lock", "a/flake.lock", "MODULE.bazel.lock",
		"Pipfile.lock", ".terraform.lock.hcl", "a/.terraform.lock.hcl", "web/__generated__/q.graphql.ts",
		"A_TLB.PAS", "b/x_tlb.pas", "htmlcov/index.html", "a/htmlcov/x.js", ".sqlx/query-abc.json",
		"a/.sqlx/query-1.json", "form.deſigner.cs", "x_tlb.paſ",
	} {
		paths = append(paths, p, strings.ToUpper(p), strings.ToLower(p))
	}
	return paths
}

// Each literal is in the lower-cased name wherever its matcher matches,
// and each matcher with a literal matches some name of the corpus; with
// them, IsGenerated answers as enry does.
func TestGeneratedNameLiterals(t *testing.T) {
	if len(generatedNameLiterals) != len(data.GeneratedCodeNameMatchers) {
		t.Fatalf("go-enry has %d generated-name matchers, generatedNameLiterals %d: list a literal for each, index for index",
			len(data.GeneratedCodeNameMatchers), len(generatedNameLiterals))
	}
	paths := generatedNameCorpus(t)
	matched := make([]int, len(generatedNameLiterals))
	for _, p := range paths {
		lower := strings.ToLower(p)
		for i, m := range data.GeneratedCodeNameMatchers {
			if !m(p) {
				continue
			}
			matched[i]++
			if lit := generatedNameLiterals[i]; !strings.Contains(lower, lit) {
				t.Errorf("matcher %d matches %q, which lacks its literal %q", i, p, lit)
			}
		}
		for _, content := range [][]byte{nil, []byte("package x\n")} {
			if got, want := enryGenerated(p, content), enry.IsGenerated(p, content); got != want {
				t.Errorf("enryGenerated(%q, %q) = %v, enry.IsGenerated %v", p, content, got, want)
			}
		}
	}
	for i, lit := range generatedNameLiterals {
		if lit != "" && matched[i] == 0 {
			t.Errorf("matcher %d (literal %q) matches no name of the corpus", i, lit)
		}
	}
}

func BenchmarkIsGenerated(b *testing.B) {
	paths := generatedNameCorpus(b)
	content := []byte("package x\n\nfunc f() {}\n")
	b.Run("prefiltered", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				enryGenerated(p, content)
			}
		}
	})
	b.Run("enry", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				enry.IsGenerated(p, content)
			}
		}
	})
}
