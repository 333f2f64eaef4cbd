package badinput

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/locus-dev/locus/internal/testutil/browsertest"
)

// hostileMarkup is markup an issue, a file name or code may carry: shown
// as text, it never becomes an element or runs.
const hostileMarkup = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`

// pagesCases are report pages (report.html) of runs with hostile or no
// content, and `backlog report` of runs that are not there.
var pagesCases = append([]badCase{
	{
		name:  "backlog-report-unknown-run",
		input: "`locus backlog report` of a run the store does not have",
		want:  "exit 1 naming the run and how to list the runs there are; no page is written",
		setup: func(s *sandbox) []string {
			return []string{"backlog", "report", "--out", filepath.Join(s.dir, "page"), "no-such-run"}
		},
		code:  1,
		names: []string{`"no-such-run"`, "locus backlog status lists them"},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.dir, "page", "report.html")); err == nil {
				s.t.Errorf("a page was written for a run that does not exist")
			}
		},
	},
	{
		name: "backlog-report-hostile",
		input: "a backlog whose issue id, title, body and url hold HTML and `<script>`, control characters and invalid UTF-8 " +
			"(url `javascript:alert(1)`), against a repository with a file named `<img src=x onerror=alert(1)>.py` whose code closes `</pre>` and opens a `<script>`",
		want: "exit 0; every issue is ranked and report.html shows each string as text: the page's own script is its only one, " +
			"no element comes from the input (Chromium's DOM after scripts), the url is left out with a note, bad bytes are U+FFFD",
		setup: func(s *sandbox) []string {
			r := s.repo("evil")
			r.Write(map[string]string{"web/<img src=x onerror=alert(1)>.py": "def render_page(title):\n    return '</pre><script>document.title=\"pwned\"</script>' + title\n"})
			r.Commit("page")
			if res := s.locus("index", "evil/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+
				`{"id": "<b id=inj>1</b>", "repo": "evil/r", "title": "render_page `+strings.ReplaceAll(hostileMarkup, `"`, `\"`)+` \u0007\u001b[31m", `+
				"\"body\": \"render page title \xff\xfe\", \"url\": \"javascript:alert(1)\"}\n")
		},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			page := readPage(s)
			for _, bad := range []string{"<b id=inj>", "<img src=x", `<script>document`, `href="javascript:`, "\x07", "\x1b", "\xff"} {
				if strings.Contains(page, bad) {
					s.t.Errorf("report.html holds %q as it was given", bad)
				}
			}
			for _, want := range []string{"&lt;b id=inj&gt;1&lt;/b&gt;", "&lt;img src=x onerror=alert(1)&gt;.py:1", "&lt;/pre&gt;&lt;script&gt;", `not an http(s) URL`} {
				if !strings.Contains(page, want) {
					s.t.Errorf("report.html lacks %q as text", want)
				}
			}
			domCheck(s, func(dom string) {
				if strings.Count(dom, "<script") != 1 || strings.Contains(dom, "<img") || strings.Contains(dom, "<b id") || strings.Contains(dom, "<title>pwned") {
					s.t.Errorf("the input became markup in Chromium's DOM:\n%s", dom)
				}
				if !strings.Contains(dom, `&lt;script&gt;document.title="pwned"&lt;/script&gt;`) {
					s.t.Errorf("Chromium's DOM lacks the hostile title as text")
				}
			})
		},
	},
	{
		name:  "backlog-report-only-failures",
		input: "a backlog whose every issue fails (repositories never indexed)",
		want:  "exit 1; report.html is still written and says that every issue failed, with each issue's reason",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.jsonl", `{"id": "a", "repo": "nope/never", "problem_statement": "bind port"}`+"\n"+
				`{"id": "b", "repo": "nope/other", "problem_statement": "bind port"}`+"\n")
		},
		code:  1,
		names: []string{"2 of 2 issues failed"},
		check: func(s *sandbox, r result) {
			page := readPage(s)
			for _, want := range []string{"Every issue failed (2): none was ranked.", "nope/never", "nope/other", `class="status failed"`} {
				if !strings.Contains(page, want) {
					s.t.Errorf("report.html lacks %q", want)
				}
			}
		},
	},
	{
		name:  "backlog-report-no-issues",
		input: "a backlog file none of whose records is an issue (one malformed line)",
		want:  "exit 1 naming the line; report.html is still written and says the run has no issues, listing the record that was not read",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.jsonl", `{"id": "a", "repo": "fixtures/base"`+"\n")
		},
		code:  1,
		names: []string{"issues.jsonl:1:"},
		check: func(s *sandbox, r result) {
			page := readPage(s)
			for _, want := range []string{"No record of the input could be read as an issue", "issues.jsonl:1"} {
				if !strings.Contains(page, want) {
					s.t.Errorf("report.html lacks %q", want)
				}
			}
		},
	},
}, evalPageCase)

// evalPageCase: an evaluation whose instance id is markup.
var evalPageCase = badCase{
	name:  "eval-report-hostile",
	input: "a function-level benchmark whose instance id is HTML (`<img src=x onerror=alert(1)>`)",
	want:  "exit 0; report.html is written beside report.md with Recall@20, Acc@20 and MRR per method up front, and shows the id as text in the instance rankings",
	setup: func(s *sandbox) []string {
		r := s.repo("shop")
		r.Write(map[string]string{"shop/cart.py": "class Cart:\n    def total(self, prices):\n        return sum(prices)\n"})
		base := r.Commit("cart")
		patch := "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1,3 +1,3 @@\n class Cart:\n     def total(self, prices):\n-        return sum(prices)\n+        return round(sum(prices), 2)\n"
		line, err := json.Marshal(map[string]string{"instance_id": "<img src=x onerror=alert(1)>", "repo": "acme/shop", "language": "python",
			"source": "swe-bench-lite", "base_commit": base, "problem_statement": "the cart total of prices is not rounded", "patch": patch})
		if err != nil {
			s.t.Fatal(err)
		}
		writeFile(s, "bench.jsonl", string(line)+"\n")
		return []string{"eval", "--bench", s.dir + "/bench.jsonl", "--repo-path", "acme/shop=" + r.Dir, "--methods", "sr", "--out", s.dir + "/report"}
	},
	check: func(s *sandbox, r result) {
		data, err := os.ReadFile(filepath.Join(s.dir, "report", "report.html"))
		if err != nil {
			s.t.Fatalf("report.html: %v", err)
		}
		page := string(data)
		for _, want := range []string{">Recall@20<", ">Acc@20<", ">MRR<", "&lt;img src=x onerror=alert(1)&gt;", `<li class="gold"><span class="fn">shop/cart.py:Cart.total</span>`} {
			if !strings.Contains(page, want) {
				s.t.Errorf("report.html lacks %q", want)
			}
		}
		if strings.Contains(page, "<img src=x") {
			s.t.Errorf("the instance id became an element")
		}
	},
}

// readPage reads the report.html a backlog run wrote to its --out.
func readPage(s *sandbox) string {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.dir, "out", "report.html"))
	if err != nil {
		s.t.Fatalf("report.html: %v", err)
	}
	return string(data)
}

// domCheck hands check the DOM of the run's report.html as Chromium builds
// it; without Chromium it is skipped, unless browsertest.Env requires one.
func domCheck(s *sandbox, check func(dom string)) {
	s.t.Helper()
	b, err := browsertest.Find()
	if err != nil {
		if os.Getenv(browsertest.Env) != "" {
			s.t.Error(err)
		}
		return
	}
	dom, err := b.DOM(context.Background(), "file://"+filepath.Join(s.dir, "out", "report.html"))
	if err != nil {
		s.t.Fatal(err)
	}
	check(dom)
}
