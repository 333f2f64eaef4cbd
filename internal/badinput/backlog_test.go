package badinput

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// goodIssue is a backlog record the seeded repository answers; every
// backlog case holds one next to its bad records, which must not stop it.
const goodIssue = `{"id": "good", "repo": "fixtures/base", "problem_statement": "bind accepts a negative port"}`

// backlogOut is what one `locus backlog --json --out DIR` run left.
type backlogOut struct {
	summary struct {
		Total       int `json:"total"`
		Done        int `json:"done"`
		Failed      int `json:"failed"`
		ParseErrors int `json:"parse_errors"`
		Truncated   int `json:"truncated"`
		Failures    []struct {
			IssueID string `json:"issue_id"`
			Source  string `json:"source"`
			Error   string `json:"error"`
		} `json:"failures"`
	}
	results  map[string]resultLine // by issue id
	markdown string
}

type resultLine struct {
	ID        string `json:"id"`
	Functions []struct {
		ID string `json:"id"`
	} `json:"functions"`
	Flags  []string `json:"flags"`
	Notes  []string `json:"notes"`
	Error  string   `json:"error"`
	Source string   `json:"source"`
}

// readBacklogOut reads the --json summary and the --out files.
func readBacklogOut(s *sandbox, r result) backlogOut {
	s.t.Helper()
	var o backlogOut
	if err := json.Unmarshal([]byte(r.stdout), &o.summary); err != nil {
		s.t.Fatalf("backlog --json: %v\n%v", err, r)
	}
	f, err := os.Open(filepath.Join(s.dir, "out", "results.jsonl"))
	if err != nil {
		s.t.Fatalf("results.jsonl: %v\n%v", err, r)
	}
	defer f.Close()
	o.results = map[string]resultLine{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l resultLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			s.t.Fatalf("results.jsonl: %v: %s", err, sc.Text())
		}
		o.results[l.ID] = l
	}
	md, err := os.ReadFile(filepath.Join(s.dir, "out", "summary.md"))
	if err != nil {
		s.t.Fatal(err)
	}
	o.markdown = string(md)
	return o
}

// ranked fails unless issue id was answered with the seeded repository's
// Server.bind among its functions.
func (o backlogOut) ranked(s *sandbox, id string) resultLine {
	s.t.Helper()
	l, ok := o.results[id]
	if !ok {
		s.t.Fatalf("results.jsonl has no line for issue %q", id)
	}
	var ids []string
	for _, f := range l.Functions {
		ids = append(ids, f.ID)
	}
	if l.Error != "" || !slices.Contains(ids, "app/server.py:Server.bind") {
		s.t.Errorf("issue %q: error %q, ranked %v; want app/server.py:Server.bind among them", id, l.Error, ids)
	}
	return l
}

// failed fails unless the summary (--json and summary.md) lists a failure
// at source (file:line, the file as given) whose error holds every want.
func (o backlogOut) failed(s *sandbox, id, source string, want ...string) {
	s.t.Helper()
	for _, f := range o.summary.Failures {
		if f.IssueID != id || f.Source != source {
			continue
		}
		for _, w := range want {
			if !strings.Contains(f.Error, w) {
				s.t.Errorf("failure of %q at %s says %q, want it to say %q", id, source, f.Error, w)
			}
		}
		if !strings.Contains(o.markdown, f.Error) {
			s.t.Errorf("summary.md does not give the failure of %q at %s (%q):\n%s", id, source, f.Error, o.markdown)
		}
		return
	}
	s.t.Errorf("the summary lists no failure of %q at %s: %+v", id, source, o.summary.Failures)
}

// backlogArgs writes the backlog file (relative to the sandbox, so its
// sources read NAME:LINE) and returns the command that ranks it.
func backlogArgs(s *sandbox, name, content string, extra ...string) []string {
	s.t.Helper()
	writeFile(s, name, content)
	return append(append([]string{"backlog", "--json", "--out", filepath.Join(s.dir, "out")}, extra...), name)
}

var backlogCases = []badCase{
	{
		name:  "backlog-unknown-repository",
		input: "a backlog issue naming a repository that was never indexed (`\"repo\": \"nope/never\"`), next to a good one",
		want:  "exit 1; the issue fails with \"nope/never: not indexed (run locus index first)\", named with its file:line in the summary (--json, summary.md) and results.jsonl; the good issue is ranked",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+`{"id": "lost", "repo": "nope/never", "problem_statement": "bind port"}`+"\n")
		},
		code:  1,
		names: []string{"1 of 2 issues failed"},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			o.failed(s, "lost", "issues.jsonl:2", "nope/never", "not indexed")
			if o.results["lost"].Error == "" {
				s.t.Errorf("results.jsonl has no error for the issue: %+v", o.results["lost"])
			}
		},
	},
	{
		name:  "backlog-base-commit-missing",
		input: "a backlog issue whose `base_commit` is not in its repository (`deadbeef…`), next to a good one",
		want:  "exit 1; the issue fails naming the commit and the repository (\"base_commit … is not a commit of snap/r\"); no snapshot is stored for it; the good issue is ranked",
		setup: func(s *sandbox) []string {
			if r := s.locus("index", "snap/r="+s.simpleRepo("r").Dir); r.code != 0 {
				s.t.Fatalf("index: %v", r)
			}
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+
				`{"id": "old", "repo": "snap/r", "base_commit": "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef", "problem_statement": "helper doubles"}`+"\n")
		},
		code:  1,
		names: []string{"1 of 2 issues failed"},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			o.failed(s, "old", "issues.jsonl:2", "base_commit deadbeefdeadbeefdeadbeefdeadbeefdeadbeef is not a commit of snap/r")
			if left, _ := snapshot(filepath.Join(s.store(), "repos", "snap", "r", "snapshots")); len(left) > 0 {
				s.t.Errorf("files stored for the missing commit: %v", slices.Sorted(maps.Keys(left)))
			}
		},
	},
	{
		name:  "backlog-empty-issue-text",
		input: "backlog records with an empty issue text: a blank `problem_statement`, a blank title and body, and no text field at all",
		want:  "exit 1; each record is refused with its file:line and field (`field \"problem_statement\": empty issue text`, `missing: the issue has no text`) and counted as not read; the good issue is ranked",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+
				`{"id": "blank", "repo": "fixtures/base", "problem_statement": "  \n\t"}`+"\n"+
				`{"id": "blank-title", "repo": "fixtures/base", "title": " ", "body": ""}`+"\n"+
				`{"id": "none", "repo": "fixtures/base"}`+"\n")
		},
		code:  1,
		names: []string{"issues.jsonl:2:", "issues.jsonl:3:", "issues.jsonl:4:", "3 records could not be read"},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			o.failed(s, "blank", "issues.jsonl:2", `field "problem_statement"`, "empty issue text")
			o.failed(s, "blank-title", "issues.jsonl:3", `field "title"`, "empty issue text")
			o.failed(s, "none", "issues.jsonl:4", `field "problem_statement"`, "the issue has no text")
			if o.summary.ParseErrors != 3 || o.summary.Total != 1 {
				s.t.Errorf("summary counts %d issues, %d records not read; want 1 and 3", o.summary.Total, o.summary.ParseErrors)
			}
		},
	},
	{
		name:  "backlog-issue-1mb",
		input: "a backlog issue whose body is 1 MB",
		want:  "exit 0; the text is cut to 256 KiB for ranking (and the LLM), the issue is ranked and flagged `truncated` in results.jsonl with a note giving both sizes; the summary counts it",
		setup: func(s *sandbox) []string {
			big, _ := json.Marshal(map[string]string{"id": "big", "repo": "fixtures/base", "title": "bind",
				"body": strings.Repeat("bind accepts a negative port ", 1<<20/28)})
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+string(big)+"\n")
		},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			l := o.ranked(s, "big")
			if !slices.Contains(l.Flags, "truncated") || len(l.Notes) == 0 || !strings.Contains(l.Notes[0], "to 262144 bytes") {
				s.t.Errorf("the big issue is not flagged truncated: flags %v, notes %v", l.Flags, l.Notes)
			}
			if o.summary.Truncated != 1 {
				s.t.Errorf("summary counts %d truncated issues, want 1", o.summary.Truncated)
			}
		},
	},
	{
		name:  "backlog-invalid-utf8",
		input: "a backlog issue whose text holds invalid UTF-8 bytes, and one whose id does",
		want:  "exit 1; the text's bad bytes become U+FFFD and the issue is ranked with a note saying so; the bad id is refused with its file:line and field (`field \"id\": invalid UTF-8`); the good issue is ranked",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+
				"{\"id\": \"latin\", \"repo\": \"fixtures/base\", \"problem_statement\": \"bind \xff\xfe port \xc3( negative\"}\n"+
				"{\"id\": \"x\xffy\", \"repo\": \"fixtures/base\", \"problem_statement\": \"bind port\"}\n")
		},
		code:  1,
		names: []string{"issues.jsonl:3:", "invalid UTF-8"},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			l := o.ranked(s, "latin")
			if len(l.Notes) == 0 || !strings.Contains(l.Notes[0], "invalid UTF-8 replaced") {
				s.t.Errorf("the issue has no note about its bytes: %v", l.Notes)
			}
			o.failed(s, "", "issues.jsonl:3", `field "id"`, "invalid UTF-8")
		},
	},
	{
		name:  "backlog-malformed-jsonl",
		input: "a JSON Lines backlog with a line cut short, a line that is an array, and a field of the wrong type",
		want:  "exit 1; each bad line is refused with its file:line (and the field, `issues.jsonl:4: field \"problem_statement\": want a string, got the number 5`) and counted as not read; the good issues, before and after them, are ranked",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.jsonl", goodIssue+"\n"+
				`{"id": "cut", "repo": "fixtures/base", "problem_statement": "bind`+"\n"+
				`["id", "array"]`+"\n"+
				`{"id": "num", "repo": "fixtures/base", "problem_statement": 5}`+"\n"+
				`{"id": "after", "repo": "fixtures/base", "problem_statement": "bind accepts a negative port"}`+"\n")
		},
		code:  1,
		names: []string{"issues.jsonl:2:", "issues.jsonl:3:", `issues.jsonl:4: field "problem_statement": want a string, got the number 5`, "3 records could not be read"},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			o.ranked(s, "after")
			o.failed(s, "", "issues.jsonl:2", "not a JSON object")
			o.failed(s, "", "issues.jsonl:3", "want a JSON object, got a JSON array")
			o.failed(s, "num", "issues.jsonl:4", `field "problem_statement"`, "want a string")
		},
	},
	{
		name:  "backlog-malformed-csv",
		input: "a CSV backlog with a row of too many fields, a row with an invalid repository name, and a quote that is never closed",
		want:  "exit 1; each bad row is refused with its file:line (`issues.csv:3: 4 fields, the header names 3`, `field \"repo\"`), the unclosed quote names the line it opens on and says the rows after it were read into it; the good rows before are ranked",
		setup: func(s *sandbox) []string {
			return backlogArgs(s, "issues.csv", "id,repo,problem_statement\n"+
				"good,fixtures/base,bind accepts a negative port\n"+
				"wide,fixtures/base,bind,extra\n"+
				"dots,../x,bind port\n"+
				"open,fixtures/base,\"bind accepts\n"+
				"lost,fixtures/base,bind port\n")
		},
		code:  1,
		names: []string{"issues.csv:3: 4 fields, the header names 3", "issues.csv:4:", `part ".." is not allowed`, "issues.csv:5:", "never closed"},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "good")
			o.failed(s, "dots", "issues.csv:4", `field "repo"`)
			o.failed(s, "", "issues.csv:5", "never closed", "lines 5 to 6")
		},
	},
	{
		name:  "backlog-github-pull-requests",
		input: "a GitHub issues export (`gh api --paginate`, two arrays) whose entries include pull requests",
		want:  "exit 0; the pull requests are skipped (neither ranked nor counted as failures), every issue is ranked, its repository read from repository_url",
		setup: func(s *sandbox) []string {
			repoURL := `"repository_url": "https://api.github.com/repos/fixtures/base"`
			return backlogArgs(s, "export.json", `[{"number": 7, "title": "bind accepts a negative port", "body": "it should refuse", `+repoURL+`},
 {"number": 8, "title": "Fix bind", "body": "fixes #7", "pull_request": {"url": "https://api.github.com/repos/fixtures/base/pulls/8"}, `+repoURL+`}]
[{"number": 9, "title": "Reject negative port in bind", "pull_request": {"url": "x"}, `+repoURL+`},
 {"number": 10, "title": "start binds a negative port", "body": null, `+repoURL+`}]
`)
		},
		check: func(s *sandbox, r result) {
			o := readBacklogOut(s, r)
			o.ranked(s, "7")
			o.ranked(s, "10")
			if len(o.results) != 2 || o.summary.Total != 2 || o.summary.ParseErrors != 0 || len(o.summary.Failures) != 0 {
				s.t.Errorf("results for %v, summary %+v: want issues 7 and 10 only, no failures", slices.Sorted(maps.Keys(o.results)), o.summary)
			}
		},
	},
}
