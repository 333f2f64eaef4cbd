package fileclass

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/go-enry/go-enry/v2/data"
)

// oneExpression is vendorPaths as the single alternation IsVendor ran
// before it prefiltered by literal: the reference it must agree with.
func oneExpression() *regexp.Regexp {
	var alts []string
	for _, m := range data.VendorMatchers {
		if m != nil && !notVendor[m.String()] {
			alts = append(alts, "(?:"+m.String()+")")
		}
	}
	for _, m := range moreVendor {
		alts = append(alts, "(?:"+m+")")
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}

// checkoutPaths are this checkout's files, relative to its root.
func checkoutPaths(t testing.TB) []string {
	out, err := exec.Command("git", "ls-files", "--full-name", ":/").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Fields(string(out))
}

// vendorCorpus is this checkout's paths, each also under a few vendored
// and look-alike directories, and every expression's own literal placed
// in a path: matches and near misses of every kind.
func vendorCorpus(t testing.TB) []string {
	var paths []string
	for _, p := range checkoutPaths(t) {
		paths = append(paths, p)
		for _, dir := range []string{"vendor/", "node_modules/x/", "src/third_party/", "Pods/", "deps/", "a/cache/", "x/_vendor/", "Vendor/", "b/dist/"} {
			paths = append(paths, dir+p)
		}
	}
	for _, m := range vendorPaths {
		if m.lit != "" {
			paths = append(paths, m.lit, "a/"+m.lit+"b.js", "a/"+m.lit+"/c.min.js", strings.ToUpper(m.lit)+"/x.c")
		}
	}
	return paths
}

// IsVendor with its literal prefilter answers as the one expression does.
func TestIsVendorAgreesWithOneExpression(t *testing.T) {
	ref := oneExpression()
	paths := vendorCorpus(t)
	matched := 0
	for _, p := range paths {
		want := ref.MatchString(p)
		if IsVendor(p) != want {
			t.Errorf("IsVendor(%q) = %v, the one expression says %v", p, !want, want)
		}
		if want {
			matched++
		}
	}
	withLit := 0
	for _, m := range vendorPaths {
		if m.lit != "" {
			withLit++
		}
	}
	t.Logf("%d paths, %d vendored; %d of %d expressions have a literal", len(paths), matched, withLit, len(vendorPaths))
	if matched == 0 || matched == len(paths) || withLit == 0 {
		t.Errorf("the corpus does not tell: %d of %d paths vendored, %d expressions with a literal", matched, len(paths), withLit)
	}
}

func TestRequiredLiteral(t *testing.T) {
	for expr, want := range map[string]string{
		`(^|/)node_modules/`: "node_modules/",
		`\.min\.js$`:         ".min.js",
		`(?i)(^|/)vendor/`:   "",
		`^(a|b)/`:            "/",
		`(^|/)_vendor/`:      "_vendor/",
	} {
		if got := requiredLiteral(expr); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", expr, got, want)
		}
	}
}

func BenchmarkIsVendor(b *testing.B) {
	paths := vendorCorpus(b)
	b.Run("prefiltered", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				IsVendor(p)
			}
		}
	})
	ref := oneExpression()
	b.Run("one-expression", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				ref.MatchString(p)
			}
		}
	})
}
