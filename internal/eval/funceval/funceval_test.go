package funceval

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

const patch = `diff --git a/shop/cart.py b/shop/cart.py
--- a/shop/cart.py
+++ b/shop/cart.py
@@ -5,2 +5,2 @@ class Cart:
     def total(self):
-        return sum(self.prices)
+        return round(sum(self.prices), 2)
`

func TestRunnerDerivesGoldAndRanks(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"shop/cart.py": "class Cart:\n    def add(self, price):\n        self.prices.append(price)\n\n    def total(self):\n        return sum(self.prices)\n",
		"shop/user.py": "def login(name):\n    return name\n",
	})
	base := r.Commit("base")
	b := blobtest.Bucket(t)
	lookups := 0
	run := &Runner{Bucket: b, RepoDir: func(string) (string, error) { lookups++; return filepath.Join(r.Dir, ".git"), nil }, K: 5}
	instances := []Instance{
		{ID: "i1", Repo: "acme/shop", Language: "python", BaseCommit: base, Issue: "the cart total of prices is not rounded", Patch: patch},
		{ID: "i2", Repo: "acme/shop", Language: "python", BaseCommit: base, Issue: "docs", Patch: "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n"},
		{ID: "i3", Repo: "acme/missing", BaseCommit: base, Issue: "x", Patch: patch},
	}
	run.RepoDir = func(repo string) (string, error) {
		lookups++
		if repo == "acme/missing" {
			return "", errNoRepo
		}
		return filepath.Join(r.Dir, ".git"), nil
	}
	res, skips, err := run.Run(context.Background(), instances)
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != 2 || skips[0].Instance != "i2" || skips[0].Reason != "no function-level edit" || skips[1].Instance != "i3" {
		t.Fatalf("skips %+v", skips)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want one per method", len(res))
	}
	for _, x := range res {
		if !reflect.DeepEqual(x.Gold, []string{"shop/cart.py:Cart.total"}) || !reflect.DeepEqual(x.GoldFile, []string{"shop/cart.py"}) {
			t.Errorf("%s: gold %v files %v", x.Method, x.Gold, x.GoldFile)
		}
		if len(x.Ranked) == 0 || len(x.Ranked) > 5 {
			t.Errorf("%s: %d ranked", x.Method, len(x.Ranked))
		}
		if x.Method == search.MethodSR && x.Ranked[0] != "shop/cart.py:Cart.total" {
			t.Errorf("BM25 top is %s", x.Ranked[0])
		}
	}
	// A second run reuses the cached index: the repository is not read again.
	before := lookups
	if _, _, err := run.Run(context.Background(), instances[:1]); err != nil {
		t.Fatal(err)
	}
	if lookups != before {
		t.Errorf("the second run resolved the repository again (%d lookups): the index was not reused", lookups-before)
	}
}
