package badinput

import (
	"encoding/json"
	"strings"
)

// evalCases are benchmark runs whose instances cannot all be evaluated.
var evalCases = []badCase{
	{
		name:  "eval-instance-fails",
		input: "a function-level benchmark with a good instance, one whose `base_commit` is not in its repository and one with no function-level edit",
		want:  "exit 1 after the report is written: the failed instance is named with its reason and counted apart from the excluded one (`1 skipped, 1 failed`); the figures cover the good instance only and say so",
		setup: func(s *sandbox) []string {
			r := s.repo("shop")
			r.Write(map[string]string{"shop/cart.py": "class Cart:\n    def total(self, prices):\n        return sum(prices)\n"})
			base := r.Commit("cart")
			patch := "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1,3 +1,3 @@\n class Cart:\n     def total(self, prices):\n-        return sum(prices)\n+        return round(sum(prices), 2)\n"
			docs := "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n"
			var lines []string
			for _, in := range []map[string]string{
				{"instance_id": "good", "base_commit": base, "problem_statement": "the cart total of prices is not rounded", "patch": patch},
				{"instance_id": "gone", "base_commit": "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef", "problem_statement": "the cart total is wrong", "patch": patch},
				{"instance_id": "docs", "base_commit": base, "problem_statement": "docs typo", "patch": docs},
			} {
				in["repo"], in["language"], in["source"] = "acme/shop", "python", "swe-bench-lite"
				b, err := json.Marshal(in)
				if err != nil {
					s.t.Fatal(err)
				}
				lines = append(lines, string(b))
			}
			writeFile(s, "bench.jsonl", strings.Join(lines, "\n")+"\n")
			return []string{"eval", "--bench", s.dir + "/bench.jsonl", "--repo-path", "acme/shop=" + r.Dir, "--methods", "sr", "--out", s.dir + "/report"}
		},
		code:  1,
		names: []string{"failed: gone:", "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef", "1 skipped, 1 failed", "1 instances failed and are not in the figures"},
	},
}
