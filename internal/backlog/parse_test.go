package backlog

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file    string
		opts    ParseOptions
		format  Format
		want    []Issue
		skipped int
	}{
		{
			file: "swe.jsonl", format: FormatJSONL,
			want: []Issue{
				{ID: "pallets__flask-5063", Repo: "pallets/flask", BaseCommit: "182ce3dd15dfa3537391c3efaf9c3ff407d134d4",
					Text:   "Flask routes to return domain/sub-domains information\nCurrently when checking **flask routes** it provides all routes but **it is no way to see which routes are assigned to which subdomain**.\r\n",
					Source: "testdata/swe.jsonl:1"},
				{ID: "sqlfluff__sqlfluff-4764", Repo: "sqlfluff/sqlfluff", BaseCommit: "a820c139ccbe6d1865d73c4a459945cd69899f8f",
					Text:   "Enable quiet mode/no-verbose in CLI for use in pre-commit hook\nThere seems to be only an option to increase the level of verbosity when using SQLFluff.\n",
					Source: "testdata/swe.jsonl:2"},
				{ID: "fasterxml__jackson-core-1016", Repo: "FasterXML/jackson-core", BaseCommit: "315ac5ad2ad5228129a3df50623570d9bc2d7045",
					Text:   "`JsonFactory` implementations should respect `CANONICALIZE_FIELD_NAMES`\nThis is a follow-up based on the conversation in #995.\r\n",
					Source: "testdata/swe.jsonl:4"}, // line 3 is blank
			},
		},
		{
			file: "issues.csv", format: FormatCSV,
			want: []Issue{
				{ID: "101", Repo: "pallets/flask", Title: "Crash on empty JSON body",
					// encoding/csv turns \r\n inside quoted fields into \n.
					Body:   "Steps:\n1. POST {}\n2. see \"KeyError: data\", then 500",
					Text:   "Crash on empty JSON body\n\nSteps:\n1. POST {}\n2. see \"KeyError: data\", then 500",
					Source: "testdata/issues.csv:2"},
				{ID: "102", Repo: "./checkouts/flask", BaseCommit: "182ce3dd15df", Title: "Title only, with a comma",
					Text: "Title only, with a comma", Source: "testdata/issues.csv:5"},
				{ID: "103", Repo: "flask=https://github.com/pallets/flask.git", Body: "Body only:\n\n    app.run(debug=True)\n",
					Text: "Body only:\n\n    app.run(debug=True)\n", Source: "testdata/issues.csv:6"},
			},
		},
		{
			file: "github-issues.json", format: FormatGitHub, skipped: 1,
			opts: ParseOptions{DefaultRepo: "./flask"},
			want: []Issue{
				{ID: "5612", Repo: "./flask", URL: "https://github.com/pallets/flask/issues/5612", Title: "`send_file` ignores `max_age` when `conditional=False`",
					Body:   "Calling `send_file(path, conditional=False, max_age=60)` returns\r\n`Cache-Control: no-cache`.\r\n\r\n```python\r\nreturn send_file(\"report.pdf\", conditional=False, max_age=60)\r\n```\r\n\r\nExpected `max-age=60`.",
					Text:   "`send_file` ignores `max_age` when `conditional=False`\n\nCalling `send_file(path, conditional=False, max_age=60)` returns\r\n`Cache-Control: no-cache`.\r\n\r\n```python\r\nreturn send_file(\"report.pdf\", conditional=False, max_age=60)\r\n```\r\n\r\nExpected `max-age=60`.",
					Source: "testdata/github-issues.json:#0"},
				{ID: "5608", Repo: "./flask", URL: "https://github.com/pallets/flask/issues/5608", Title: "Blueprint url_prefix with a trailing slash doubles the slash",
					Text: "Blueprint url_prefix with a trailing slash doubles the slash", Source: "testdata/github-issues.json:#2"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.ToSlash(filepath.Join("testdata", tc.file))
			p, err := parseFile(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Format != tc.format {
				t.Errorf("format %q, want %q", p.Format, tc.format)
			}
			if len(p.Errors) > 0 {
				t.Errorf("parse errors: %v", p.Errors)
			}
			if p.SkippedPullRequests != tc.skipped {
				t.Errorf("skipped %d pull requests, want %d", p.SkippedPullRequests, tc.skipped)
			}
			if !reflect.DeepEqual(p.Issues, tc.want) {
				t.Errorf("issues:\n got %#v\nwant %#v", p.Issues, tc.want)
			}
		})
	}
}

// TestGitHubRepoFromExport: without --repo, a GitHub export's issues take
// their repository from repository_url.
func TestGitHubRepoFromExport(t *testing.T) {
	p, err := parseFile("testdata/github-issues.json", ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Issues) != 2 || p.Issues[0].Repo != "pallets/flask" || p.Issues[1].Repo != "pallets/flask" {
		t.Errorf("issues %+v, want 2 of pallets/flask", p.Issues)
	}
}

func parseFile(path string, opts ParseOptions) (Parsed, error) {
	issues, errs, err := ParseFile(path, opts)
	if err != nil {
		return Parsed{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Parsed{}, err
	}
	p, err := ParseDetailed(path, data, opts)
	if err != nil {
		return Parsed{}, err
	}
	if !reflect.DeepEqual(p.Issues, issues) || !reflect.DeepEqual(p.Errors, errs) {
		return Parsed{}, errors.New("ParseFile and ParseDetailed disagree")
	}
	return p, nil
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want Format
		err  error
	}{
		{`{"id": 1}`, FormatJSONL, nil},
		{"\ufeff\n  {\"id\": 1}\n", FormatJSONL, nil},
		{"  [\n{}]", FormatGitHub, nil},
		{"[]", FormatGitHub, nil},
		{"instance_id,repo,problem_statement\nx,y,z\n", FormatCSV, nil},
		{"\ufeffNumber,Title\n1,t\n", FormatCSV, nil},
		{"ID,Body", FormatCSV, nil},
		{"", "", ErrEmpty},
		{" \r\n\t\n", "", ErrEmpty},
		{"\ufeff", "", ErrEmpty},
		{"name,description\nx,y\n", "", ErrUnknownFormat}, // CSV, but no id column
		{"id,repo\n1,a/b\n", "", ErrUnknownFormat},        // no text column
		{"hello world\n", "", ErrUnknownFormat},           // prose
		{"<?xml version=\"1.0\"?>\n<issues/>", "", ErrUnknownFormat},
	}
	for _, tc := range tests {
		got, err := Detect([]byte(tc.in))
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("Detect(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	_, _, err := Parse("notes.txt", []byte("hello world\n"), ParseOptions{})
	if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "notes.txt") || !strings.Contains(err.Error(), `"hello world"`) {
		t.Errorf("Parse of prose: %v; want an unknown-format error naming the file and quoting the first line", err)
	}
	_, _, err = Parse("empty.jsonl", nil, ParseOptions{})
	if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "empty.jsonl") {
		t.Errorf("Parse of nothing: %v", err)
	}
	if _, _, err := ParseFile(filepath.Join(t.TempDir(), "missing.jsonl"), ParseOptions{}); err == nil {
		t.Error("ParseFile of a missing file: no error")
	}
}

// TestBadRecords: each bad record is one ParseError naming file, line and
// field; the good records around it are still read.
func TestBadRecords(t *testing.T) {
	good := func(id string) string {
		return `{"id":"` + id + `","repo":"a/b","problem_statement":"text ` + id + `"}`
	}
	tests := []struct {
		name   string
		file   string
		data   string
		opts   ParseOptions
		errors []string // ParseError.Error() of each
		ids    []string // the issues read
	}{
		{name: "jsonl", file: "issues.jsonl", data: strings.Join([]string{
			good("a"),
			`{"id":"b","repo":"a/b"`, // 2: cut short
			`{"repo":"a/b","problem_statement":"no id"}`,                                      // 3
			`{"id":"c","repo":"a/b","problem_statement":"   \n\t"}`,                           // 4
			`{"id":"d","repo":"a/b","title":"","body":null}`,                                  // 5
			`{"id":"e","repo":"a/b"}`,                                                         // 6
			`{"id":"f","repo":"a/b","problem_statement":42}`,                                  // 7
			`{"id":1.5,"repo":"a/b","problem_statement":"x"}`,                                 // 8
			`{"id":"g","repo":["a/b"],"problem_statement":"x"}`,                               // 9
			`{"id":"h","repo":"a/b","base_commit":"abc def","problem_statement":"x"}`,         // 10
			`{"id":"i","repo":"a/b","base_commit":"--upload-pack=x","problem_statement":"x"}`, // 11
			`["id","x"]`, // 12
			`null`,       // 13
			good("a"),    // 14: duplicate
			`{"id":"  ","repo":"a/b","problem_statement":"x"}`,   // 15
			`{"id":"j\nk","repo":"a/b","problem_statement":"x"}`, // 16
			good("z"),
		}, "\n"),
			errors: []string{
				`issues.jsonl:2: not a JSON object: unexpected end of JSON input`,
				`issues.jsonl:3: field "id": missing (want id, instance_id or number)`,
				`issues.jsonl:4: field "problem_statement": empty issue text (problem_statement blank)`,
				`issues.jsonl:5: field "title": empty issue text (title blank)`,
				`issues.jsonl:6: field "problem_statement": missing: the issue has no text (want problem_statement, or title and body)`,
				`issues.jsonl:7: field "problem_statement": want a string, got the number 42`,
				`issues.jsonl:8: field "id": want a string or an integer, got 1.5`,
				`issues.jsonl:9: field "repo": want a string, got an array`,
				`issues.jsonl:10: field "base_commit": contains white space: "abc def"`,
				`issues.jsonl:11: field "base_commit": "--upload-pack=x" is not a revision (starts with -)`,
				`issues.jsonl:12: want a JSON object, got a JSON array`,
				`issues.jsonl:13: want a JSON object, got null`,
				`issues.jsonl:14: field "id": duplicate id "a" (first at issues.jsonl:1)`,
				`issues.jsonl:15: field "id": empty`,
				`issues.jsonl:16: field "id": contains U+000A: "j\nk"`,
			},
			ids: []string{"a", "z"}},
		{name: "repo required", file: "r.jsonl", opts: ParseOptions{RequireRepo: true},
			data:   `{"id":7,"problem_statement":"x"}` + "\n" + `{"id":8,"repo":"o/n","problem_statement":"y"}`,
			errors: []string{`r.jsonl:1: field "repo": missing, and no default repository was given (--repo)`},
			ids:    []string{"8"}},
		{name: "csv", file: "b.csv", data: "instance_id,repo,problem_statement\r\n" +
			"x1,a/b,fine\r\n" +
			"x2,a/b\r\n" + // 3: short row
			"x3,a/b,\"unterminated \"quote\r\n" + // 4: bare quote
			"x4,a/b,\r\n" + // 5: empty text
			",a/b,no id\r\n" + // 6
			"x5,a/b,\"multi\r\nline\"\r\n" + // 7-8
			"x1,a/b,again\r\n" + // 9: duplicate
			"x6,a/b,last\r\n",
			errors: []string{
				`b.csv:3: 2 fields, the header names 3`,
				`b.csv:4: CSV: extraneous or missing " in quoted-field (line 4, column 22)`,
				`b.csv:5: field "problem_statement": missing: the issue has no text (want problem_statement, or title and body)`,
				`b.csv:6: field "id": missing (want id, instance_id or number)`,
				`b.csv:9: field "instance_id": duplicate id "x1" (first at b.csv:2)`,
			},
			ids: []string{"x1", "x5", "x6"}},
		{name: "csv quote never closed", file: "q.csv", data: "id,repo,problem_statement\n" +
			"a,o/n,fine\n" +
			"b,o/n,\"opens here\n" + // 3: the quote runs to the end
			"c,o/n,swallowed\n" +
			"d,o/n,swallowed too\n",
			errors: []string{`q.csv:3: CSV: a quoted field opened on line 3 is never closed, so lines 3 to 5 were read into it (the rows there are not read)`},
			ids:    []string{"a"}},
		{name: "github", file: "gh.json", opts: ParseOptions{DefaultRepo: "o/n"}, data: "[\n" +
			`{"number": 1, "title": "ok", "body": null},` + "\n" +
			`{"title": "no number", "body": "b", "id": 99},` + "\n" +
			`"a string",` + "\n" +
			`{"number": 2, "title": "", "body": ""},` + "\n" +
			`{"number": 3, "title": "pr", "pull_request": {"url": "u"}},` + "\n" +
			`{"number": 1, "title": "dup"}` + "\n" +
			"]\n" + `[{"number": 4, "title": "second page"}]`,
			errors: []string{
				`gh.json:#2 (line 4): want a JSON object, got a JSON string`,
				`gh.json:#3 (line 5): field "title": empty issue text (title, body blank)`,
				`gh.json:#5 (line 7): field "number": duplicate id "1" (first at gh.json:#0)`,
			},
			ids: []string{"1", "99", "4"}},
		{name: "github cut short", file: "gh.json", opts: ParseOptions{DefaultRepo: "o/n"},
			data:   "[{\"number\": 1, \"title\": \"ok\"},\n {\"number\": 2, \"title\": \"cut",
			errors: []string{`gh.json:#1 (line 2): not JSON: unexpected EOF`},
			ids:    []string{"1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			issues, perrs, err := Parse(tc.file, []byte(tc.data), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range perrs {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tc.errors) {
				t.Errorf("parse errors:\n got %q\nwant %q", got, tc.errors)
			}
			var ids []string
			for _, is := range issues {
				ids = append(ids, is.ID)
				if strings.TrimSpace(is.Text) == "" || !utf8.ValidString(is.Text) {
					t.Errorf("issue %s: text %q", is.ID, is.Text)
				}
			}
			if !reflect.DeepEqual(ids, tc.ids) {
				t.Errorf("issues %q, want %q", ids, tc.ids)
			}
		})
	}
}

func TestInvalidUTF8(t *testing.T) {
	data := []byte("{\"id\":\"ok\",\"repo\":\"a/b\",\"title\":\"caf\xe9\",\"body\":\"b\xff\xfeody\"}\n" +
		"{\"id\":\"bad\xff\",\"repo\":\"a/b\",\"problem_statement\":\"x\"}\n" +
		"{\"id\":\"r\",\"repo\":\"a/\xc3\",\"problem_statement\":\"x\"}\n" +
		"{\"id\":\"c\",\"repo\":\"a/b\",\"base_commit\":\"ab\xffcd\",\"problem_statement\":\"x\"}\n" +
		"{\"id\":\"esc\",\"repo\":\"a/b\",\"problem_statement\":\"lone \\udc00 surrogate\"}\n")
	issues, perrs, err := Parse("u.jsonl", data, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantErrs := []string{
		`u.jsonl:2: field "id": invalid UTF-8: "bad�"`,
		`u.jsonl:3: field "repo": invalid UTF-8: "a/�"`,
		`u.jsonl:4: field "base_commit": invalid UTF-8: "ab�cd"`,
	}
	var got []string
	for _, e := range perrs {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, wantErrs) {
		t.Errorf("parse errors:\n got %q\nwant %q", got, wantErrs)
	}
	if len(issues) != 2 {
		t.Fatalf("issues %+v, want ok and esc", issues)
	}
	ok := issues[0]
	want := Issue{ID: "ok", Repo: "a/b", Title: "caf\uFFFD", Body: "b\uFFFD\uFFFDody", Text: "caf\uFFFD\n\nb\uFFFD\uFFFDody",
		Source: "u.jsonl:1", Notes: []string{`field "title": invalid UTF-8 replaced with U+FFFD`, `field "body": invalid UTF-8 replaced with U+FFFD`}}
	if !reflect.DeepEqual(ok, want) {
		t.Errorf("issue:\n got %#v\nwant %#v", ok, want)
	}
	// An escaped lone surrogate is valid JSON: decoded to U+FFFD, no note.
	if issues[1].Text != "lone \uFFFD surrogate" || issues[1].Notes != nil {
		t.Errorf("escaped surrogate: %+v", issues[1])
	}

	// The same in CSV.
	csvData := []byte("id,repo,body\n1,a/b,\"x\xffy\"\n2\xff,a/b,z\n")
	issues, perrs, err = Parse("u.csv", csvData, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(issues) != 1 || issues[0].Text != "x\uFFFDy" || len(issues[0].Notes) != 1 {
		t.Errorf("csv issues %+v", issues)
	}
	if len(perrs) != 1 || perrs[0].Error() != `u.csv:3: field "id": invalid UTF-8: "2\xff"` {
		t.Errorf("csv parse errors %q", perrs)
	}
}

func TestTruncate(t *testing.T) {
	// A 1 MB body, with a 3-byte rune across the cap.
	body := strings.Repeat("a", DefaultMaxTextBytes-len("big\n\n")-1) + "€" + strings.Repeat("b", 1<<20)
	data := `{"number": 9, "title": "big", "body": "` + body + `"}`
	issues, perrs, err := Parse("big.json", []byte("["+data+"]"), ParseOptions{DefaultRepo: "o/n"})
	if err != nil || len(perrs) > 0 || len(issues) != 1 {
		t.Fatalf("%v %v %d", err, perrs, len(issues))
	}
	is := issues[0]
	if !is.Truncated || len(is.Text) > DefaultMaxTextBytes || !utf8.ValidString(is.Text) || !strings.HasPrefix(is.Text, "big\n\naaa") {
		t.Errorf("text: %d bytes, truncated %v, valid %v", len(is.Text), is.Truncated, utf8.ValidString(is.Text))
	}
	if len(is.Text) != DefaultMaxTextBytes-1 { // the € would end 2 bytes past the cap
		t.Errorf("text is %d bytes, want %d", len(is.Text), DefaultMaxTextBytes-1)
	}
	if len(is.Body) > DefaultMaxTextBytes {
		t.Errorf("body %d bytes, over the cap", len(is.Body))
	}
	wantNote := "text cut from " + strconv.Itoa(len("big\n\n")+len(body)) + " to 262144 bytes"
	if !reflect.DeepEqual(is.Notes, []string{wantNote}) {
		t.Errorf("notes %q, want %q", is.Notes, wantNote)
	}

	// Other caps; a negative one means none.
	for _, tc := range []struct {
		max, want int
		cut       bool
	}{{4, 2, true}, {5, 5, true}, {-1, 8, false}, {8, 8, false}} {
		issues, _, _ := Parse("s.jsonl", []byte(`{"id":1,"problem_statement":"ab€cde"}`), ParseOptions{MaxTextBytes: tc.max})
		if len(issues) != 1 || len(issues[0].Text) != tc.want || issues[0].Truncated != tc.cut {
			t.Errorf("MaxTextBytes %d: %+v; want %d bytes, truncated %v", tc.max, issues, tc.want, tc.cut)
		}
	}
}

func TestRepoPrecedence(t *testing.T) {
	data := `[{"number":1,"title":"t","repository_url":"https://api.github.com/repos/o/from-url"},` +
		`{"number":2,"title":"t","repo":"own/repo"},` +
		`{"number":3,"title":"t"}]`
	for _, tc := range []struct {
		def  string
		want []string
	}{
		{"", []string{"o/from-url", "own/repo", ""}},
		{"flag/repo", []string{"flag/repo", "own/repo", "flag/repo"}},
	} {
		issues, perrs, err := Parse("p.json", []byte(data), ParseOptions{DefaultRepo: tc.def})
		if err != nil || len(perrs) > 0 {
			t.Fatal(err, perrs)
		}
		var got []string
		for _, is := range issues {
			got = append(got, is.Repo)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("default %q: repos %q, want %q", tc.def, got, tc.want)
		}
	}
}

func TestParseErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    ParseError
		want string
	}{
		{ParseError{File: "issues.jsonl", Line: 7, Field: "repo", Msg: "missing"}, `issues.jsonl:7: field "repo": missing`},
		{ParseError{File: "issues.jsonl", Line: 7, Msg: "not a JSON object"}, `issues.jsonl:7: not a JSON object`},
		{ParseError{File: "x.json", Line: 40, Element: true, Index: 3, Field: "number", Msg: "missing"}, `x.json:#3 (line 40): field "number": missing`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// An issue's url (html_url first) is kept when it is an http(s) URL and
// left out, with a note, when it is anything else: the report page links
// to it.
func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name, line, want, note string
	}{
		{"https", `{"id":"1","repo":"o/n","title":"t","url":"https://tracker.example/o/n/issues/1"}`, "https://tracker.example/o/n/issues/1", ""},
		{"html_url first", `{"id":"1","repo":"o/n","title":"t","url":"https://api.example/1","html_url":"https://web.example/1"}`, "https://web.example/1", ""},
		{"javascript", `{"id":"1","repo":"o/n","title":"t","url":"javascript:alert(1)"}`, "", `field "url": not an http(s) URL`},
		{"relative", `{"id":"1","repo":"o/n","title":"t","url":"/issues/1"}`, "", `field "url": not an http(s) URL`},
		{"control", `{"id":"1","repo":"o/n","title":"t","url":"https://x.example/\u0007"}`, "", `field "url": not an http(s) URL`},
		{"none", `{"id":"1","repo":"o/n","title":"t"}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issues, errs, err := Parse("x.jsonl", []byte(tc.line+"\n"), ParseOptions{})
			if err != nil || len(errs) > 0 || len(issues) != 1 {
				t.Fatalf("Parse: %v %v %v", issues, errs, err)
			}
			if got := issues[0].URL; got != tc.want {
				t.Errorf("URL = %q, want %q", got, tc.want)
			}
			notes := strings.Join(issues[0].Notes, "; ")
			if tc.note == "" && notes != "" || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}
