package funceval

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workers/workerstest"
)

const patch = `diff --git a/shop/cart.py b/shop/cart.py
--- a/shop/cart.py
+++ b/shop/cart.py
@@ -5,2 +5,2 @@ class Cart:
     def total(self):
-        return sum(self.prices)
+        return round(sum(self.prices), 2)
`

// TestRunnerDerivesGoldAndRanks evaluates through the workflows users run:
// the base commit is not the head, so every ranking and the gold come from
// its snapshot.
func TestRunnerDerivesGoldAndRanks(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"shop/cart.py": "class Cart:\n    def add(self, price):\n        self.prices.append(price)\n\n    def total(self):\n        return sum(self.prices)\n",
		"shop/user.py": "def login(name):\n    return name\n",
	})
	base := r.Commit("base")
	// The head moved on: total is gone, so only the snapshot at base has it.
	r.Write(map[string]string{"shop/cart.py": "class Cart:\n    def add(self, price):\n        self.prices.append(price)\n"})
	r.Commit("drop total")
	b := blobtest.Bucket(t)
	c := workerstest.Start(t, workers.Config{Bucket: b})
	run := &Runner{Bucket: b, Client: c, K: 5, RepoDir: func(repo string) (string, error) {
		if repo == "acme/missing" {
			return "", errors.New("no clone of acme/missing")
		}
		return filepath.Join(r.Dir, ".git"), nil
	}}
	instances := []Instance{
		{ID: "i1", Repo: "acme/shop", Language: "python", BaseCommit: base, Issue: "the cart total of prices is not rounded", Patch: patch},
		{ID: "i2", Repo: "acme/shop", Language: "python", BaseCommit: base, Issue: "docs", Patch: "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n"},
		{ID: "i3", Repo: "acme/missing", BaseCommit: base, Issue: "x", Patch: patch},
		{ID: "i4", Repo: "acme/shop", Language: "kotlin", BaseCommit: base, Issue: "x", Patch: patch},
		{ID: "i5", Repo: "acme/shop", Language: "python", BaseCommit: "0123456789abcdef0123456789abcdef01234567", Issue: "x", Patch: patch},
	}
	ctx := context.Background()
	res, skips, err := run.Run(ctx, instances)
	if err != nil {
		t.Fatal(err)
	}
	why, failed := map[string]string{}, map[string]bool{}
	for _, s := range skips {
		why[s.Instance], failed[s.Instance] = s.Reason, s.Failed
	}
	// What the protocol excludes is skipped; what should have run and did
	// not is a failure, so the eval cannot report figures over fewer
	// instances than it was given as if all were fine.
	if want := map[string]bool{"i2": false, "i3": true, "i4": false, "i5": true}; !reflect.DeepEqual(failed, want) {
		t.Errorf("failed %v, want %v", failed, want)
	}
	for id, want := range map[string]string{
		"i2": "no function-level edit: no graph for the files it edits: README (not source code)",
		"i3": "no clone of acme/missing",
		"i4": "unsupported language kotlin",
		"i5": "base_commit 0123456789abcdef0123456789abcdef01234567 is not a commit of acme/shop",
	} {
		if !strings.Contains(why[id], want) {
			t.Errorf("%s skipped for %q, want %q", id, why[id], want)
		}
	}
	if len(skips) != 4 {
		t.Errorf("skips %+v", skips)
	}
	if len(res) != len(search.Methods) {
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
	// A second run ranks again and answers the same.
	again, _, err := run.Run(ctx, instances[:1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, res) {
		t.Errorf("second run:\n%+v\nfirst:\n%+v", again, res)
	}
}
