package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/workflows"
)

func TestPrintLocalizeSelectorUnavailable(t *testing.T) {
	items := []spider.Item{
		{ID: "a.py:f", Score: 0.9, Rank: 1, Reason: spider.ReasonCenter},
		{ID: "a.py:h", Score: 0.7, Rank: 2, Reason: spider.ReasonNeighbour, Center: "a.py:f", Selector: "m"},
		{ID: "b.py:g", Score: 0.8, Rank: 3, Reason: spider.ReasonCenter},
	}
	healthy := workflows.LocalizeResult{Result: search.Result{Repo: "acme/x", Commit: "c0ffee0123", Method: "spider", Selector: "m", Items: items}}
	down := healthy
	down.Failed = []string{"b.py:g"}
	down.SelectorUnavailable = []workflows.UnavailableCenter{{Center: "b.py:g", URL: "http://llm:8000/v1/chat/completions", Attempts: 5, Error: "HTTP 500"}}
	down.Warning = "LLM at http://llm:8000/v1/chat/completions unavailable after 5 attempts over 15.2 s: HTTP 500; results for center b.py:g have no selected neighbours"
	reranked := healthy
	reranked.Items = append([]spider.Item{}, items...)
	reranked.Items[0].Reranker, reranked.Items[0].RerankedFrom = "m", 2
	reranked.Rerank = &search.RerankInfo{Model: "m", N: 2, Calls: 1}
	rerankFailed := healthy
	rerankFailed.Rerank = &search.RerankInfo{N: 3, Calls: 2, Error: "invalid model output"}
	rerankFailed.Warning = "LLM reranker at http://llm:8000/v1/chat/completions failed after 2 attempts: invalid model output; the first 3 items keep their order"
	for _, tc := range []struct {
		name        string
		res         workflows.LocalizeResult
		json        bool
		strict      bool
		wantOut     []string
		notOut      []string
		wantWarn    bool
		wantExit    int // 0: no error
		unavailJSON int
	}{
		{name: "healthy table", res: healthy, wantOut: []string{"a.py:f", "b.py:g"}, notOut: []string{"unavailable"}},
		{name: "healthy strict", res: healthy, strict: true},
		{name: "down table", res: down, wantOut: []string{"selector unavailable"}, wantWarn: true},
		{name: "down strict", res: down, strict: true, wantWarn: true, wantExit: 3},
		{name: "down json", res: down, json: true, wantWarn: true, unavailJSON: 1},
		{name: "down json strict", res: down, json: true, strict: true, wantWarn: true, wantExit: 3, unavailJSON: 1},
		{name: "reranked", res: reranked, strict: true, wantOut: []string{"first 2 reranked by m", "reranked by m from position 2"}},
		{name: "rerank failed strict", res: rerankFailed, strict: true, wantOut: []string{"rerank failed"}, notOut: []string{"reranked by"}, wantWarn: true, wantExit: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, warn bytes.Buffer
			err := printLocalize(&out, &warn, tc.res, tc.json)
			if err == nil && tc.strict {
				err = strictResult(tc.res)
			}
			var ee exitError
			switch {
			case tc.wantExit == 0 && err != nil:
				t.Fatalf("err %v, want none", err)
			case tc.wantExit != 0 && (!errors.As(err, &ee) || ee.code != tc.wantExit):
				t.Fatalf("err %v, want exit %d", err, tc.wantExit)
			}
			if got := strings.Contains(warn.String(), tc.res.Warning) && strings.Count(warn.String(), "\n") == 1; got != tc.wantWarn {
				t.Errorf("stderr %q: want one warning line %v", warn.String(), tc.wantWarn)
			}
			for _, s := range tc.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tc.notOut {
				if strings.Contains(out.String(), s) {
					t.Errorf("stdout has %q:\n%s", s, out.String())
				}
			}
			if tc.json {
				var got struct {
					SelectorUnavailable []workflows.UnavailableCenter `json:"selector_unavailable"`
					Warning             string                        `json:"warning"`
				}
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("--json output: %v\n%s", err, out.String())
				}
				if len(got.SelectorUnavailable) != tc.unavailJSON || got.Warning != tc.res.Warning {
					t.Errorf("--json output %+v", got)
				}
			}
			if !tc.json && tc.res.Warning != "" {
				// Only the center whose selector was down is marked.
				for _, line := range strings.Split(out.String(), "\n") {
					if strings.Contains(line, "unavailable") && !strings.Contains(line, "b.py:g") {
						t.Errorf("line %q marked, but only b.py:g's selector was unavailable", line)
					}
				}
			}
		})
	}
}

// TestLocalizeHugeIssue: a 4 MB issue file used to fail inside Temporal with
// "Blob data size exceeds limit." and no name; now it is cut to
// --max-issue-bytes with one warning naming the file, and the query runs.
func TestLocalizeHugeIssue(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store.get(key)\n\n    def evict(self, key):\n        self.store.pop(key)\n"})
	r.Commit("cache")
	data := t.TempDir()
	ctx := context.Background()
	if _, err := capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "warn", "--json", "acme/cache=" + r.Dir})
	}); err != nil {
		t.Fatal(err)
	}
	issueFile := filepath.Join(t.TempDir(), "issue-4mb.md")
	if err := os.WriteFile(issueFile, []byte(strings.Repeat("evict drops the wrong key from the cache store\n", 4<<20/47+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	oldErr := stderr
	stderr = &warn
	defer func() { stderr = oldErr }()
	out, err := capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--log-level", "warn", "--json", "--repo", "acme/cache",
			"--method", "sr", "--k", "2", "--issue-file", issueFile})
	})
	if err != nil {
		t.Fatalf("localize with a 4 MB issue: %v\nstderr: %s", err, warn.String())
	}
	var res workflows.LocalizeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Items) == 0 {
		t.Fatalf("--json output (%v): %s", err, out)
	}
	if !strings.Contains(warn.String(), issueFile) || !strings.Contains(warn.String(), "over the 256.0 KiB limit") {
		t.Errorf("stderr %q: want one warning naming %s and the limit", warn.String(), issueFile)
	}
	// A limit beyond what the payloads allow is refused, naming the issue.
	_, err = capture(t, func() error {
		return runLocalize(ctx, []string{"--data-dir", data, "--log-level", "warn", "--repo", "acme/cache",
			"--max-issue-bytes", "4000000", "--issue-file", issueFile})
	})
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(ee.msg, issueFile) {
		t.Errorf("--max-issue-bytes 4000000: %v, want exit 2 naming %s", err, issueFile)
	}
}

// A function id holding terminal controls is printed escaped in the table
// and exact in --json.
func TestPrintLocalizeEscapes(t *testing.T) {
	id := "\x1b[2J\x1b]0;owned\x07\nrow.py:f"
	res := workflows.LocalizeResult{Result: search.Result{Repo: "acme/x", Commit: "c0ffee0123", Method: "sr",
		Items: []spider.Item{{ID: id, Score: 1, Rank: 1, Reason: spider.ReasonCenter}}}}
	var out, warn bytes.Buffer
	if err := printLocalize(&out, &warn, res, false); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") || !strings.Contains(out.String(), `\x1b[2J\x1b]0;owned\a\nrow.py:f`) {
		t.Errorf("table:\n%q\nwant the id escaped on one line", out.String())
	}
	out.Reset()
	if err := printLocalize(&out, &warn, res, true); err != nil {
		t.Fatal(err)
	}
	var back workflows.LocalizeResult
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || len(back.Items) != 1 || back.Items[0].ID != id {
		t.Errorf("--json gives %+v, %v; want the id exact", back.Items, err)
	}
}

func TestLocalizeErrorSaysRepoOnce(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"localize psf/requests: not indexed (run locus index first)", "localize psf/requests: not indexed (run locus index first)"},
		{"localize psf/requests@abc1234: no snapshot of that commit is built: not indexed", "localize psf/requests@abc1234: no snapshot of that commit is built: not indexed"},
		{"backlog r1 has no result for issue issue", "localize psf/requests: backlog r1 has no result for issue issue"},
		{"localize psf/requestsx: other", "localize psf/requests: localize psf/requestsx: other"},
	} {
		if got := localizeError("psf/requests", errors.New(tc.in)).Error(); got != tc.want {
			t.Errorf("localizeError(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
