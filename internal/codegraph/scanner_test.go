package codegraph

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/gitrepo"
)

// An independent count of definitions: line regexps, no parser. Each pattern
// counts something the graph must have one node for.
var scanners = map[string]struct {
	what string
	re   *regexp.Regexp
	// node selects the graph nodes the pattern counts.
	node func(n Node) bool
}{
	"python": {"def and class lines", regexp.MustCompile(`(?m)^[ \t]*(?:async[ \t]+def|def|class)[ \t]+[A-Za-z_]\w*[ \t]*[(:]`),
		func(n Node) bool { return n.Type == TypeFunction || n.Type == TypeClass }},
	"go": {"top-level func declarations", regexp.MustCompile(`(?m)^func[ \t(]`),
		func(n Node) bool { return n.Type == TypeFunction && strings.HasPrefix(n.Code, "func") }},
	"java": {"class, interface, enum and record declarations", regexp.MustCompile(`(?m)^[ \t]*(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp)[ \t]+)*(?:class|interface|enum|record|@interface)[ \t]+[A-Za-z_]\w*`),
		func(n Node) bool {
			return n.Type == TypeClass && !strings.Contains(n.Name, "$") && !isEnumConstantClass(n)
		}},
	"javascript": {"function declarations", regexp.MustCompile(`(?m)^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function[ \t]*\*?[ \t]*[A-Za-z_$][\w$]*[ \t]*\(`),
		func(n Node) bool {
			c := strings.TrimLeft(n.Code, " \t")
			c = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(c, "export "), "default "), "async ")
			return n.Type == TypeFunction && strings.HasPrefix(c, "function")
		}},
}

// isEnumConstantClass: enum constants with bodies are classes the pattern
// cannot see: their header (up to the body) has no class keyword.
func isEnumConstantClass(n Node) bool {
	header := n.Code
	if k := strings.IndexByte(header, '{'); k >= 0 {
		header = header[:k]
	}
	return !classKeyword.MatchString(header)
}

var classKeyword = regexp.MustCompile(`\b(?:class|interface|enum|record)\b`)

// compareWithScanner builds the graph of files and compares per-language node
// counts with the scanner's, allowing tol (fraction) of difference.
func compareWithScanner(t *testing.T, name string, files []File, tol float64) {
	t.Helper()
	g, err := Build(context.Background(), files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Type == TypeFile {
			parsed[n.Path] = true
		}
	}
	counts := map[string]int{}
	for _, f := range files {
		if !parsed[f.Path] {
			continue
		}
		lang := LanguageFor(f.Path)
		sc, ok := scanners[lang.Name()]
		if !ok {
			continue
		}
		data, err := f.Read()
		if err != nil {
			t.Fatal(err)
		}
		counts[lang.Name()] += len(sc.re.FindAll(stripBlockStrings(lang.Name(), data), -1))
	}
	nodes := map[string]int{}
	for _, n := range g.Nodes {
		if sc, ok := scanners[n.Language]; ok && n.Type != TypeFile && sc.node(n) {
			nodes[n.Language]++
		}
	}
	for lang, want := range counts {
		got := nodes[lang]
		diff := math.Abs(float64(got-want)) / math.Max(float64(want), 1)
		t.Logf("%s %s: graph %d, scanner %d (%s), difference %.2f%%", name, lang, got, want, scanners[lang].what, 100*diff)
		if diff > tol {
			t.Errorf("%s %s: graph has %d nodes, the scanner finds %d: more than %.0f%% apart", name, lang, got, want, 100*tol)
		}
	}
}

// stripBlockStrings blanks Python triple-quoted strings and Java/JS block
// comments, where definitions in examples would fool a line scanner.
func stripBlockStrings(lang string, src []byte) []byte {
	var re *regexp.Regexp
	switch lang {
	case "python":
		re = regexp.MustCompile(`(?s)""".*?"""|'''.*?'''`)
	case "java", "javascript", "go":
		re = regexp.MustCompile(`(?s)/\*.*?\*/`)
	default:
		return src
	}
	return re.ReplaceAllFunc(src, func(m []byte) []byte {
		return []byte(strings.Repeat("\n", strings.Count(string(m), "\n")))
	})
}

// TestNodeCountsAgreeWithScanner on this repository (Go), and on the
// benchmark repositories when LOCUS_REPO_DIR holds their bare clones.
func TestNodeCountsAgreeWithScanner(t *testing.T) {
	files, err := DirFiles(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var own []File
	for _, f := range files {
		if !strings.Contains(f.Path, "testdata/") { // fixtures include broken files on purpose
			own = append(own, f)
		}
	}
	compareWithScanner(t, "locus", own, 0.01)

	dir := os.Getenv("LOCUS_REPO_DIR")
	if dir == "" {
		t.Log("LOCUS_REPO_DIR not set: only this repository was checked")
		return
	}
	for _, repo := range []string{"pytest-dev/pytest", "psf/requests", "pallets/flask", "FasterXML/jackson-core", "grpc/grpc-go", "expressjs/express"} {
		gitDir := benchRepoDir(dir, repo)
		if gitDir == "" {
			t.Logf("%s: not under %s", repo, dir)
			continue
		}
		head, err := gitrepo.Resolve(gitDir, "")
		if err != nil {
			t.Fatal(err)
		}
		snap, err := gitrepo.OpenSnapshot(context.Background(), gitDir, "", head)
		if err != nil {
			t.Fatal(err)
		}
		var fs []File
		for _, f := range GitFiles(snap) {
			if !strings.Contains(f.Path, "testdata/") {
				fs = append(fs, f)
			}
		}
		compareWithScanner(t, repo, fs, 0.03)
		snap.Close()
	}
}

// benchRepoDir finds a bare clone of owner/name under dir, in the layouts
// people use: owner+name/repo (the fetch tool's), owner/name(.git), name(.git).
func benchRepoDir(dir, repo string) string {
	owner, name, _ := strings.Cut(repo, "/")
	for _, c := range []string{
		filepath.Join(dir, owner+"+"+name, "repo"), filepath.Join(dir, owner+"+"+name),
		filepath.Join(dir, owner, name+".git"), filepath.Join(dir, owner, name),
		filepath.Join(dir, name+".git"), filepath.Join(dir, name),
	} {
		if st, err := os.Stat(filepath.Join(c, "objects")); err == nil && st.IsDir() {
			return c
		}
		if st, err := os.Stat(filepath.Join(c, ".git", "objects")); err == nil && st.IsDir() {
			return filepath.Join(c, ".git")
		}
	}
	return ""
}
