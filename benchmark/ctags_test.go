package benchmark

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// TestCtagsAgreement runs the check on a small repository in the three
// languages: every plain definition matches, and each kind of difference
// lands in its class.
func TestCtagsAgreement(t *testing.T) {
	if _, err := exec.LookPath("ctags"); err != nil {
		t.Skip("universal-ctags is not installed (CI installs the Debian package)")
	}
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"src/lib.rs": `pub struct Server;

impl Server {
    pub fn new() -> Server { Server }
    pub fn run(&self) { helper(); }
}

fn helper() {}

macro_rules! log { ($e:expr) => { println!("{}", $e) }; }

cfg_net! {
    pub fn bind() {}
}
`,
		"src/list.c": `#include "list.h"
#define SQUARE(x) ((x) * (x))
#define LIMIT 10

static int twice(int x) { return 2 * x; }

int list_sum(const int *xs, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += twice(xs[i]);
    return s;
}

TEST_BEGIN(test_sum) {
    list_sum(0, 0);
}
TEST_END
`,
		"src/list.h": "int list_sum(const int *xs, int n);\n",
		"src/shape.cpp": `#include <vector>
namespace geo {
class Shape {
 public:
  virtual double area() const = 0;
  double twice() const { return 2 * area(); }
};
double Shape_total(const std::vector<Shape*>& v) {
  double t = 0;
  for (auto* s : v) t += s->area();
  auto add = [](double a, double b) { return a + b; };
  return add(t, 0);
}
}  // namespace geo
`,
	})
	r.Commit("three languages")
	head, _ := gitrepo.ParseHash(r.Head())
	res, err := Ctags(context.Background(), r.Dir+"/.git", head)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]CtagsLanguage{}
	for _, l := range res.Languages {
		got[l.Language] = l
	}
	for _, tc := range []struct {
		lang               string
		ours, ctags, match int
		onlyOurs           map[string]int
		onlyCtags          map[string]int
	}{
		// new, run, helper, log match; bind is inside cfg_net!.
		{"rust", 5, 4, 4, map[string]int{CtagsClassRustMacroItems: 1}, map[string]int{}},
		// SQUARE, twice, list_sum match; TEST_BEGIN(test_sum) is one
		// function under two names. LIMIT is no function.
		{"c", 4, 4, 3, map[string]int{CtagsClassRenamed: 1}, map[string]int{CtagsClassRenamed: 1}},
		// twice, Shape_total match; area is pure virtual; the lambda is
		// ctags' alone.
		{"cpp", 3, 3, 2, map[string]int{CtagsClassPureVirtual: 1}, map[string]int{CtagsClassLambda: 1}},
	} {
		l, ok := got[tc.lang]
		if !ok {
			t.Errorf("%s: not compared", tc.lang)
			continue
		}
		if l.Ours != tc.ours || l.Ctags != tc.ctags || l.Matched != tc.match ||
			!sameCounts(l.OnlyOurs, tc.onlyOurs) || !sameCounts(l.OnlyCtags, tc.onlyCtags) {
			t.Errorf("%s: ours %d ctags %d matched %d, only ours %v, only ctags %v; want %d %d %d %v %v (samples %v)",
				tc.lang, l.Ours, l.Ctags, l.Matched, l.OnlyOurs, l.OnlyCtags, tc.ours, tc.ctags, tc.match, tc.onlyOurs, tc.onlyCtags, l.Samples)
		}
		if l.Unexplained() != 0 {
			t.Errorf("%s: %.2f%% unexplained", tc.lang, 100*l.Unexplained())
		}
	}
	var out bytes.Buffer
	if err := WriteCtagsTable(&out, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cpp ") || !strings.Contains(out.String(), res.Command) {
		t.Errorf("table:\n%s", out.String())
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
