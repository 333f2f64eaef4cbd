package webpage

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/eval/metrics"
	"github.com/locus-dev/locus/internal/eval/report"
	"github.com/locus-dev/locus/internal/testutil/browsertest"
	"github.com/locus-dev/locus/internal/testutil/golden"
	"github.com/locus-dev/locus/schema"
)

var (
	update = flag.Bool("update", false, "rewrite the golden pages in testdata")
	docs   = flag.Bool("docs", false, "write the pages' screenshots to docs/ (TestScreenshots)")
)

const sha = "182ce3dd15dfa3537391c3efaf9c3ff407d134d4"

// sampleRun is a small finished run: two issues ranked, one failed, one
// record that was not an issue.
func sampleRun() BacklogRun {
	started := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	return BacklogRun{
		Run: "backlog-7f3a",
		Summary: &backlog.Summary{Run: "backlog-7f3a", Started: started, Finished: started.Add(4200 * time.Millisecond),
			Total: 3, Done: 2, Failed: 1, ParseErrors: 1, Method: "hybrid", Selector: "heuristic"},
		Issues: []schema.BacklogIssue{
			{ID: "5612", Repo: "pallets/flask", Title: "send_file ignores max_age when conditional=False", URL: "https://github.com/pallets/flask/issues/5612",
				Text: "send_file ignores max_age when conditional=False\n\nCalling send_file(...)"},
			{ID: "5608", Repo: "pallets/flask", Text: "Blueprint url_prefix with a trailing slash doubles the slash\nmore"},
			{ID: "5599", Repo: "o/gone", Text: "Crash on start"},
		},
		Results: []backlog.Result{
			{IssueID: "5612", Repo: "pallets/flask", Commit: sha, Method: "hybrid", Selector: "heuristic", TokensIn: 1200, TokensOut: 40,
				Files: []string{"src/flask/helpers.py"},
				Items: []backlog.Ranked{
					{Rank: 1, FunctionID: "src/flask/helpers.py:send_file", File: "src/flask/helpers.py", Score: 0.91, Line: 388,
						Why: "center, fused rank 1: BM25 #2, memory #1, hotspots #4", Code: "def send_file(\n    path_or_file,\n    mimetype=None,"},
					{Rank: 2, FunctionID: "src/flask/helpers.py:get_send_file_max_age", File: "src/flask/helpers.py", Score: 0.42, Line: 290,
						Why:  "neighbour of center src/flask/helpers.py:send_file (2 hops, fused rank 7: BM25 #9, memory #3), selected by heuristic; reranked by gpt-4o-mini from position 3",
						Code: "def get_send_file_max_age(filename):"},
				}},
			{IssueID: "5608", Repo: "pallets/flask", Commit: sha, Method: "hybrid", Selector: "heuristic", Notes: []string{"text cut from 300000 to 262144 bytes"},
				Items: []backlog.Ranked{{Rank: 1, FunctionID: "src/flask/blueprints.py:Blueprint.__init__", File: "src/flask/blueprints.py", Score: 0.7, Line: 171,
					Why: "fused rank 1: BM25 #1", Code: "def __init__(\n    self,"}}},
			{IssueID: "5599", Repo: "o/gone", Error: `field "repo": repository "o/gone" is not indexed (run locus index first)`},
		},
		RepoURLs: map[string]string{"pallets/flask": "https://github.com/pallets/flask.git"},
		Records:  []backlog.Failure{{Source: "issues.jsonl:4", Error: `field "id": missing (want id, instance_id or number)`}},
	}
}

// hostile is a run whose every string tries to be markup, carries control
// characters or is not valid UTF-8.
func hostile() BacklogRun {
	evil := `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'"><b id="inj">bold</b>`
	return BacklogRun{
		Run: "run<script>x</script>",
		Issues: []schema.BacklogIssue{{ID: "h1", Repo: "o/n", Title: evil + "\x1b[31m\x00\xff\xfe", URL: "https://tracker.example/?a=1&b=<x>",
			Text: "body " + evil}},
		Results: []backlog.Result{
			{IssueID: "h1", Repo: "o/n", Commit: sha, Method: "sr", Notes: []string{evil},
				Items: []backlog.Ranked{{Rank: 1, FunctionID: "x/<b id=\"inj2\">.py:" + evil, File: "x/<b id=\"inj2\">.py", Score: 1, Line: 2,
					Why: evil, Code: "def f():\n    return '</pre><script>document.title=\"pwned\"</script>'\x07\xff"}}},
			{IssueID: "h2</summary><b id=inj3>", Repo: "o/n", Error: evil + "\r\n\x00"},
		},
		RepoURLs: map[string]string{"o/n": "https://github.com/o/n"},
		Records:  []backlog.Failure{{IssueID: evil, Source: "x.jsonl:1", Error: evil}},
	}
}

func pageOf(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// withoutAssets is page with its stylesheet and script left out: the
// golden pages hold what the templates made of the data.
func withoutAssets(page string) string {
	page = strings.Replace(page, css, "/* style.css */", 1)
	return strings.Replace(page, js, "/* page.js */", 1)
}

func TestBacklogGolden(t *testing.T) {
	got := withoutAssets(pageOf(t, func(b *bytes.Buffer) error { return WriteBacklog(b, sampleRun()) }))
	golden.Check(t, filepath.Join("testdata", "backlog.golden.html"), got, *update, "go test ./internal/webpage -run TestBacklogGolden -update")
}

func TestEvalGolden(t *testing.T) {
	got := withoutAssets(pageOf(t, func(b *bytes.Buffer) error { return WriteEval(b, sampleEval(t)) }))
	// The plots' bytes depend on the plotting library's rendering; the
	// rest of the page is compared.
	got = regexp.MustCompile(`data:image/png;base64,[A-Za-z0-9+/=&#;]+`).ReplaceAllString(got, "data:image/png;base64,PLOT")
	golden.Check(t, filepath.Join("testdata", "eval.golden.html"), got, *update, "go test ./internal/webpage -run TestEvalGolden -update")
}

// What the page says of a run with nothing to show.
func TestBacklogEmptyAndFailed(t *testing.T) {
	only := sampleRun()
	only.Summary, only.Records = nil, nil
	only.Results = only.Results[2:]
	only.Issues = only.Issues[2:]
	for _, tc := range []struct {
		name string
		run  BacklogRun
		want []string
	}{
		{"no issues", BacklogRun{Run: "r0"}, []string{"This run has no issues."}},
		{"no readable record", BacklogRun{Run: "r1", Records: []backlog.Failure{{Source: "x.jsonl:1", Error: "not JSON"}}},
			[]string{"No record of the input could be read as an issue", "x.jsonl:1", "not JSON"}},
		{"only failures", only, []string{"Every issue failed (1): none was ranked.", "is not indexed", `class="status failed"`}},
		{"unfinished", BacklogRun{Run: "r2", Issues: []schema.BacklogIssue{{ID: "1", Text: "a"}, {ID: "2", Text: "b"}}},
			[]string{"2 not ranked yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pageOf(t, func(b *bytes.Buffer) error { return WriteBacklog(b, tc.run) })
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the page lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// Hostile strings are text: escaped in the HTML, with no control
// characters or invalid UTF-8 left.
func TestBacklogHostileHTML(t *testing.T) {
	got := pageOf(t, func(b *bytes.Buffer) error { return WriteBacklog(b, hostile()) })
	for _, bad := range []string{`<script>document`, `<img`, `<b id="inj"`, `<b id=inj3`, `<b id="inj2"`, "\x00", "\x1b", "\x07", "\xff"} {
		if strings.Contains(got, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if n := strings.Count(got, "<script"); n != 1 {
		t.Errorf("%d script elements, want the page's own only", n)
	}
	if !strings.Contains(got, `&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;`) {
		t.Errorf("the hostile title is not shown as text")
	}
}

func fileURL(t *testing.T, html, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}

// The backlog page in Chromium from file://: issues and rankings listed,
// the search box (given ?q=) filters them, the screenshot is not blank.
func TestBacklogInBrowser(t *testing.T) {
	b := browsertest.Need(t)
	ctx := context.Background()
	url := fileURL(t, pageOf(t, func(w *bytes.Buffer) error { return WriteBacklog(w, sampleRun()) }), "report.html")
	dom, err := b.DOM(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 of 3 shown", "src/flask/helpers.py:388", `href="https://github.com/pallets/flask/blob/` + sha + `/src/flask/helpers.py#L388"`,
		"def send_file(", `href="https://github.com/pallets/flask/issues/5612"`, "is not indexed"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	dom, err = b.DOM(ctx, url+"?q=blueprint")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dom, "1 of 3 shown") || strings.Count(dom, `class="issue hidden"`) != 2 ||
		!regexp.MustCompile(`<details class="issue" data-search="5608 `).MatchString(dom) {
		t.Errorf("?q=blueprint did not leave issue 5608 alone shown:\n%s", dom)
	}
	img, _, err := b.Screenshot(ctx, url, 1000, 700, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := browsertest.NotBlank(img, 0.02); err != nil {
		t.Error(err)
	}
}

// A large run's rankings are packed into the page: Chromium unpacks them
// into their issues, the hostile ones as text too.
func TestBacklogPackedInBrowser(t *testing.T) {
	b := browsertest.Need(t)
	ctx := context.Background()
	large := largeRun(300, 20)
	html := pageOf(t, func(w *bytes.Buffer) error { return WriteBacklog(w, large) })
	if !strings.Contains(html, `id="parts"`) || strings.Contains(html, large.Results[299].Items[19].Why) {
		t.Fatal("300 issues' rankings are not packed")
	}
	dom, err := b.DOM(ctx, fileURL(t, html, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	last := large.Results[299].Items[19]
	if !strings.Contains(dom, "300 of 300 shown") || !strings.Contains(dom, last.Why) || strings.Contains(dom, "Unpacking the ranking") {
		t.Errorf("the packed rankings were not unpacked (the last issue's last function, %q, is missing)", last.Why)
	}
	defer func(n int) { inlineLimit = n }(inlineLimit)
	inlineLimit = 0
	html = pageOf(t, func(w *bytes.Buffer) error { return WriteBacklog(w, hostile()) })
	dom, err = b.DOM(ctx, fileURL(t, html, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if injected(dom) || !strings.Contains(dom, `&lt;/pre&gt;&lt;script&gt;`) {
		t.Errorf("hostile packed content became markup, or is missing:\n%s", dom)
	}
}

// The hostile run as Chromium builds it: the literal text is there, and no
// element or script of it is.
func TestBacklogHostileInBrowser(t *testing.T) {
	b := browsertest.Need(t)
	ctx := context.Background()
	url := fileURL(t, pageOf(t, func(w *bytes.Buffer) error { return WriteBacklog(w, hostile()) }), "report.html")
	dom, err := b.DOM(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if injected(dom) {
		t.Errorf("hostile content became markup or ran:\n%s", dom)
	}
	for _, want := range []string{`&lt;script&gt;document.title="pwned"&lt;/script&gt;&lt;img src=x onerror=`, `x/&lt;b id="inj2"&gt;.py:2`,
		`h2&lt;/summary&gt;&lt;b id=inj3&gt;`, `&lt;/pre&gt;&lt;script&gt;`, "\uFFFD"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks the literal %q", want)
		}
	}
}

// injected reports whether the hostile run's markup became elements of
// dom or ran: in a serialized DOM, text has its < escaped, so a literal
// "<b id" or "<img" is an element.
func injected(dom string) bool {
	return strings.Contains(dom, "<title>pwned") || strings.Contains(dom, "<img") || strings.Contains(dom, "<b id") ||
		strings.Count(dom, "<script") != 1
}

// A generated run of 1,000 issues of 20 functions each stays under 5 MB.
func TestBacklogSize(t *testing.T) {
	r := largeRun(1000, 20)
	got := pageOf(t, func(b *bytes.Buffer) error { return WriteBacklog(b, r) })
	t.Logf("1,000 issues × 20 functions: %d bytes (%.2f MB)", len(got), float64(len(got))/1e6)
	if len(got) > 5e6 {
		t.Errorf("the page of 1,000 issues is %d bytes, over 5 MB", len(got))
	}
}

// largeRun is n issues of k ranked functions each, shaped like a real run:
// paths, ids, whys and code of typical lengths, with names drawn at random
// (seeded) from 5,000 random identifiers, so that the page compresses
// no better than a real one.
func largeRun(n, k int) BacklogRun {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		b := make([]byte, 3+rng.IntN(8))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		vocab[i] = string(b)
	}
	word := func() string { return vocab[rng.IntN(len(vocab))] }
	r := BacklogRun{Run: "backlog-large", RepoURLs: map[string]string{"org/service": "https://github.com/org/service"}}
	for i := range n {
		id := fmt.Sprintf("org__service-%05d", i)
		r.Issues = append(r.Issues, schema.BacklogIssue{ID: id, Repo: "org/service", URL: fmt.Sprintf("https://github.com/org/service/issues/%d", i),
			Title: fmt.Sprintf("%s %s drops the %s header when %s times out", word(), word(), word(), word())})
		res := backlog.Result{IssueID: id, Repo: "org/service", Commit: sha, Method: "hybrid", Selector: "heuristic", TokensIn: 900, TokensOut: 30}
		for j := range k {
			file := fmt.Sprintf("pkg/%s/%s/%s.py", word(), word(), word())
			fn, center := word()+"_"+word(), word()
			code := fmt.Sprintf("def %s(self, %s, *, %s=None):\n    \"\"\"%s %s %s %s.\"\"\"\n    %s = dict(%s.%s)\n    %s = %s.get(%q)\n    if %s is None:\n        return self.%s(%s)\n",
				fn, word(), word(), word(), word(), word(), word(), word(), word(), word(), word(), word(), word(), word(), word(), word())
			res.Items = append(res.Items, backlog.Ranked{Rank: j + 1, FunctionID: file + ":" + word() + "." + fn, File: file,
				Score: 1 / float64(j+1), Line: 1 + rng.IntN(900), Why: fmt.Sprintf("neighbour of center %s:%s.%s (2 hops, fused rank %d: BM25 #%d, memory #%d), selected by heuristic", file, word(), center, j+3, 1+rng.IntN(500), 1+rng.IntN(50)),
				Code: backlog.CodeHead(code)})
		}
		r.Results = append(r.Results, res)
	}
	return r
}

func sampleEval(t *testing.T) *report.ResultSet {
	t.Helper()
	type q struct {
		id, group string
		gold      []string
		hybrid    []string
		sr        []string
	}
	qs := []q{
		{"flask-5612", "python", []string{"src/flask/helpers.py:send_file"}, []string{"src/flask/helpers.py:send_file", "src/flask/app.py:Flask.send_static_file"}, []string{"src/flask/app.py:Flask.send_static_file", "src/flask/helpers.py:send_file"}},
		{"flask-5608", "python", []string{"src/flask/blueprints.py:Blueprint.__init__", "src/flask/sansio/blueprints.py:Blueprint.register"}, []string{"src/flask/blueprints.py:Blueprint.__init__"}, []string{"src/flask/app.py:Flask.__init__"}},
		{"gin-3910", "go", []string{"context.go:Context.JSON"}, []string{"render/json.go:JSON.Render", "context.go:Context.JSON"}, []string{"context.go:Context.JSON"}},
		{"gin-3922 <script>", "go", []string{"tree.go:node.addRoute"}, []string{"gin.go:Engine.addRoute"}, []string{"tree.go:node.addRoute"}},
	}
	ks := []int{1, 5, 10, 20}
	var insts []report.Instance
	for _, in := range qs {
		for _, m := range []struct {
			name   string
			ranked []string
		}{{"hybrid", in.hybrid}, {"sr", in.sr}} {
			v, err := metrics.Compute(m.ranked, in.gold, ks)
			if err != nil {
				t.Fatal(err)
			}
			insts = append(insts, report.Instance{ID: in.id, Method: m.name, Group: in.group, Level: "function", Gold: in.gold, Ranked: m.ranked, Values: v})
		}
	}
	rs, err := report.Build(insts, report.BuildOptions{Benchmark: "swe-dev", Methods: []string{"hybrid", "sr"}, Levels: []string{"function"},
		Metrics: []string{metrics.Recall, metrics.Acc}, Ks: ks, Uncut: []string{metrics.MRR}, Baselines: []string{"sr"},
		Bootstrap: metrics.DefaultBootstrap(1)})
	if err != nil {
		t.Fatal(err)
	}
	rs.Notes = []string{"1 instance without a function-level edit excluded"}
	return rs
}

// An evaluation with no instance evaluated says so rather than show empty
// tables.
func TestEvalEmpty(t *testing.T) {
	got := pageOf(t, func(b *bytes.Buffer) error {
		return WriteEval(b, &report.ResultSet{Benchmark: "swe-dev", Methods: []string{"sr"}, Levels: []string{"function"}})
	})
	if !strings.Contains(got, "No instance was evaluated: there are no figures.") || strings.Contains(got, "<h2>Plots</h2>") {
		t.Errorf("the page of an empty evaluation:\n%s", withoutAssets(got))
	}
}

// The eval page in Chromium: the headline figures, the plots, the full
// tables one click away, the instances with gold marked; ?q= filters them.
func TestEvalInBrowser(t *testing.T) {
	b := browsertest.Need(t)
	ctx := context.Background()
	url := fileURL(t, pageOf(t, func(w *bytes.Buffer) error { return WriteEval(w, sampleEval(t)) }), "report.html")
	dom, err := b.DOM(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<th class=\"num\">Recall@20</th>", "<th class=\"num\">Acc@20</th>", "<th class=\"num\">MRR</th>",
		"function level, by group", `<img src="data:image/png;base64,`, `<details class="full"><summary>All figures`,
		`<li class="gold"><span class="fn">src/flask/helpers.py:send_file</span>`, "8 of 8 shown", "gin-3922 &lt;script&gt;",
		"Gold not in the first 20"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	dom, err = b.DOM(ctx, url+"#q=gin-3910")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dom, "2 of 8 shown") {
		t.Errorf("#q=gin-3910 did not leave its two rankings shown")
	}
	img, _, err := b.Screenshot(ctx, url, 1000, 700, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := browsertest.NotBlank(img, 0.02); err != nil {
		t.Error(err)
	}
}

// TestScreenshots renders the pages the README shows as screenshots, which
// must not be blank; -docs writes them to docs/*.png.
func TestScreenshots(t *testing.T) {
	b := browsertest.Need(t)
	ctx := context.Background()
	for name, html := range map[string]string{
		"backlog-report.png": pageOf(t, func(w *bytes.Buffer) error { return WriteBacklog(w, sampleRun()) }),
		"eval-report.png":    pageOf(t, func(w *bytes.Buffer) error { return WriteEval(w, sampleEval(t)) }),
	} {
		out := ""
		if *docs {
			out = filepath.Join("..", "..", "docs", name)
		}
		img, _, err := b.Screenshot(ctx, fileURL(t, html, "report.html"), 1100, 820, out)
		if err != nil {
			t.Fatal(err)
		}
		if err := browsertest.NotBlank(img, 0.02); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
