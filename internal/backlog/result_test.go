package backlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

func sampleResults() []Result {
	return []Result{
		{IssueID: "pallets__flask-5063", Repo: "pallets/flask", BaseCommit: "182ce3dd15df", Commit: "182ce3dd15dfa3537391c3efaf9c3ff407d134d4",
			Method: "spider", Selector: "openai:gpt-4o-mini",
			Items: []Ranked{
				{Rank: 1, FunctionID: "src/flask/cli.py:routes_command", File: "src/flask/cli.py", Score: 0.91, Method: "center", Why: "center, semantic rank 1",
					Line: 1018, Code: "def routes_command(sort: str, all_methods: bool) -> None:\n    \"\"\"Show all registered routes\"\"\""},
				{Rank: 2, FunctionID: "src/flask/app.py:Flask.url_map", File: "src/flask/app.py", Score: 0.5, Method: "neighbour", Why: "selected neighbour of src/flask/cli.py:routes_command"},
				{Rank: 3, FunctionID: "src/flask/cli.py:FlaskGroup.get_command", File: "src/flask/cli.py", Score: 0.42, Method: "rest", Why: "semantic rank 3"},
			},
			Files: []string{"src/flask/cli.py", "src/flask/app.py"}, TokensIn: 1200, TokensOut: 40, Source: "swe.jsonl:1"},
		{IssueID: "2", Repo: "o/n", Error: `repository "o/n" is not indexed (run locus index first)`, Source: "swe.jsonl:2", Truncated: true,
			Notes: []string{"text cut from 1048576 to 262144 bytes"}},
		{IssueID: "3", Repo: "o/n", Method: "spider", Selector: "heuristic", Cached: true, SelectorUnavailable: true, BudgetExhausted: true,
			IssueBudgetSkipped: 2, Items: []Ranked{{Rank: 1, FunctionID: "a.py:f", File: "a.py", Score: 1}}, Files: []string{"a.py"}, Source: "swe.jsonl:3"},
		{IssueID: "4", Repo: "o/n", Method: "sr", Source: "swe.jsonl:4"}, // answered, nothing ranked
		{IssueID: "5", Repo: "o/n", Method: "sr", Items: []Ranked{{Rank: 1, FunctionID: "ünïcode.py:f", File: "ünïcode.py", Score: 0.25, Why: "日本語"}},
			Files: []string{"ünïcode.py"}, Source: "swe.jsonl:5"},
	}
}

func TestPartRoundTrip(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	rs := sampleResults()
	key := PartKey("backlog-0123/abc", 3)
	if key != "backlogs/backlog-0123_abc/part-00003.parquet" {
		t.Errorf("PartKey = %q", key)
	}
	info, err := WritePart(ctx, b, key, rs)
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != 3+1+1+1+1 || info.Issues != 5 || info.Bytes == 0 || len(info.SHA256) != 64 {
		t.Errorf("info %+v", info)
	}
	second := PartKey("backlog-0123/abc", 4)
	if _, err := WritePart(ctx, b, second, rs[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := ReadParts(ctx, b, []string{key, second})
	if err != nil {
		t.Fatal(err)
	}
	want := append(sampleResults(), sampleResults()[0])
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if got, err := ReadPartsOf(ctx, b, []PartInfo{info}); err != nil || len(got) != 5 {
		t.Errorf("ReadPartsOf: %d results, %v", len(got), err)
	}

	// Invalid UTF-8 is stored with U+FFFD.
	bad := []Result{{IssueID: "x\xff", Repo: "o/n", Error: "boom \xfe"}}
	if _, err := WritePart(ctx, b, PartKey("r", 9), bad); err != nil {
		t.Fatal(err)
	}
	got, err = ReadParts(ctx, b, []string{PartKey("r", 9)})
	if err != nil || len(got) != 1 || got[0].IssueID != "x\uFFFD" || got[0].Error != "boom \uFFFD" {
		t.Errorf("invalid UTF-8: %+v, %v", got, err)
	}
}

// backlogRowV1 is a results row as layout version 1 wrote it: no commit,
// line or code columns.
type backlogRowV1 struct {
	IssueID    string   `parquet:"issue_id,dict"`
	Repo       string   `parquet:"repo,dict"`
	Rank       int32    `parquet:"rank"`
	FunctionID string   `parquet:"function_id"`
	File       string   `parquet:"file,dict"`
	Score      float64  `parquet:"score"`
	Why        string   `parquet:"why"`
	Notes      []string `parquet:"notes,list"`
}

// A part written before version 2 reads with the commit, lines and code
// empty; a version this build does not know is refused.
func TestReadPartVersion1(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	rows := []backlogRowV1{{IssueID: "1", Repo: "o/n", Rank: 1, FunctionID: "a.py:f", File: "a.py", Score: 0.5, Why: "BM25 rank 1"},
		{IssueID: "1", Repo: "o/n", Rank: 2, FunctionID: "a.py:g", File: "a.py", Score: 0.25, Why: "BM25 rank 2"}}
	if _, err := objio.WriteParquet(ctx, b, "v1.parquet", rows, objio.Format{Key: format.Key, Version: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadParts(ctx, b, []string{"v1.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{{IssueID: "1", Repo: "o/n", Items: []Ranked{{Rank: 1, FunctionID: "a.py:f", File: "a.py", Score: 0.5, Why: "BM25 rank 1"},
		{Rank: 2, FunctionID: "a.py:g", File: "a.py", Score: 0.25, Why: "BM25 rank 2"}}, Files: []string{"a.py"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("version 1 part:\n got %+v\nwant %+v", got, want)
	}
	if _, err := objio.WriteParquet(ctx, b, "v9.parquet", rows, objio.Format{Key: format.Key, Version: 9}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadParts(ctx, b, []string{"v9.parquet"}); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), `"9"`) {
		t.Errorf("version 9 part: %v, want a corrupt error naming the version", err)
	}
}

func TestWritePartRefuses(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	for _, r := range []Result{
		{IssueID: "a", Error: "failed", Items: []Ranked{{Rank: 1, FunctionID: "f"}}},
		{IssueID: "b", Items: []Ranked{{Rank: 0, FunctionID: "f"}}},
		{IssueID: "c", Items: []Ranked{{Rank: 1, FunctionID: "f"}, {Rank: 1, FunctionID: "g"}}},
	} {
		if _, err := WritePart(ctx, b, PartKey("r", 0), []Result{r}); err == nil || !strings.Contains(err.Error(), r.IssueID) {
			t.Errorf("WritePart of %+v: %v; want an error naming the issue", r, err)
		}
	}
	if ok, _ := b.Exists(ctx, PartKey("r", 0)); ok {
		t.Error("a refused part was written")
	}
}

func TestReadPartsDamaged(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	key := PartKey("run", 0)
	info, err := WritePart(ctx, b, key, sampleResults())
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0xff
	for _, tc := range []struct {
		name string
		data []byte
		read func() error
	}{
		{"truncated", data[:len(data)/2], nil},
		{"not parquet", []byte("{\"id\": 1}\n"), nil},
		{"flipped byte, checked by SHA-256", flipped, func() error {
			_, err := ReadPartsOf(ctx, b, []PartInfo{info})
			return err
		}},
		{"truncated, checked by size", data[:len(data)-1], func() error {
			_, err := ReadPartsOf(ctx, b, []PartInfo{{Key: key, Bytes: info.Bytes}})
			return err
		}},
	} {
		if err := b.WriteAll(ctx, key, tc.data); err != nil {
			t.Fatal(err)
		}
		read := tc.read
		if read == nil {
			read = func() error { _, err := ReadParts(ctx, b, []string{key}); return err }
		}
		err := read()
		if !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v; want an error naming %s and wrapping blob.ErrCorrupt", tc.name, err, key)
		}
	}
	_, err = ReadParts(ctx, b, []string{PartKey("run", 1)})
	if !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("missing part: %v; want blob.ErrNotFound", err)
	}
}

func TestWriteResultsJSONL(t *testing.T) {
	var buf bytes.Buffer
	rs := sampleResults()
	if err := WriteResultsJSONL(&buf, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(rs) {
		t.Fatalf("%d lines, want %d", len(lines), len(rs))
	}
	want := []string{
		`{"id":"pallets__flask-5063","repo":"pallets/flask","base_commit":"182ce3dd15df","commit":"182ce3dd15dfa3537391c3efaf9c3ff407d134d4","method":"spider","selector":"openai:gpt-4o-mini",` +
			`"functions":[{"rank":1,"id":"src/flask/cli.py:routes_command","file":"src/flask/cli.py","score":0.91,"line":1018,"why":"center, semantic rank 1"},` +
			`{"rank":2,"id":"src/flask/app.py:Flask.url_map","file":"src/flask/app.py","score":0.5,"why":"selected neighbour of src/flask/cli.py:routes_command"},` +
			`{"rank":3,"id":"src/flask/cli.py:FlaskGroup.get_command","file":"src/flask/cli.py","score":0.42,"why":"semantic rank 3"}],` +
			`"files":["src/flask/cli.py","src/flask/app.py"],"tokens":{"in":1200,"out":40},"cached":false,"flags":[],"source":"swe.jsonl:1"}`,
		`{"id":"2","repo":"o/n","functions":[],"files":[],"tokens":{"in":0,"out":0},"cached":false,"flags":["truncated"],` +
			`"error":"repository \"o/n\" is not indexed (run locus index first)","notes":["text cut from 1048576 to 262144 bytes"],"source":"swe.jsonl:2"}`,
		`{"id":"3","repo":"o/n","method":"spider","selector":"heuristic","functions":[{"rank":1,"id":"a.py:f","file":"a.py","score":1}],` +
			`"files":["a.py"],"tokens":{"in":0,"out":0},"cached":true,"flags":["selector_unavailable","budget_exhausted"],"source":"swe.jsonl:3"}`,
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], w)
		}
	}
	var l ResultLine
	if err := json.Unmarshal([]byte(lines[4]), &l); err != nil || l.Functions[0].ID != "ünïcode.py:f" {
		t.Errorf("line 5: %+v %v", l, err)
	}
}

func TestSummaryMarkdown(t *testing.T) {
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	base := Summary{Run: "backlog-ab12", Started: start, Finished: start.Add(100 * time.Second), Total: 10, Done: 7, Failed: 2,
		ParseErrors: 1, Selector: "openai:gpt-4o-mini", TokensIn: 2_000_000, TokensOut: 100_000,
		Failures: append([]Failure{{IssueID: "9", Source: "i.jsonl:9", Error: "base_commit abc | not\nfound"}},
			FailuresOf([]ParseError{{File: "i.jsonl", Line: 4, Field: "repo", Msg: "missing"}})...)}
	tests := []struct {
		name string
		edit func(*Summary)
		want []string
		not  []string
	}{
		{"unknown cost", func(*Summary) {}, []string{
			"# Backlog run `backlog-ab12`\n", "| issues | 10 |\n", "| done | 7 |\n", "| failed | 2 |\n", "| pending | 1 |\n",
			"| input records not read (parse errors) | 1 |\n", "| time | 1m40s (0.09 issues/s) |\n",
			"| tokens in / out | 2000000 / 100000 |\n", "| estimated cost | unknown (no token prices given) |\n",
			"| 9 | i.jsonl:9 | base_commit abc \\| not found |\n", "|  | i.jsonl:4 | field \"repo\": missing |\n",
		}, []string{"budget"}},
		{"priced", func(s *Summary) { s.EstimatedCostUSD = EstimateCostUSD(s.TokensIn, s.TokensOut, 0.15, 0.6) },
			[]string{"| estimated cost | $0.3600 |\n"}, []string{"unknown"}},
		{"no LLM", func(s *Summary) { s.TokensIn, s.TokensOut, s.Selector = 0, 0, "" },
			[]string{"| estimated cost | $0 (no LLM tokens) |\n", "| selector | none (heuristic) |\n"}, nil},
		{"budget", func(s *Summary) { s.BudgetExhausted, s.MaxTokens = 3, 50000 },
			[]string{"| ranked without the selector (token budget spent) | 3 |\n",
				"The run's token budget of 50000 tokens was spent: 3 issues were ranked without the LLM selector."}, nil},
		{"no failures", func(s *Summary) { s.Failures, s.Failed, s.Done = nil, 0, 10 }, nil, []string{"## Failures", "pending"}},
	}
	for _, tc := range tests {
		s := base
		tc.edit(&s)
		var buf bytes.Buffer
		if err := WriteSummaryMarkdown(&buf, s); err != nil {
			t.Fatal(err)
		}
		md := buf.String()
		for _, w := range tc.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: summary lacks %q:\n%s", tc.name, w, md)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(md, n) {
				t.Errorf("%s: summary has %q:\n%s", tc.name, n, md)
			}
		}
	}
	if got := EstimateCostUSD(1_000_000, 1_000_000, 0, 2); got != 0 {
		t.Errorf("cost with an unknown price = %v, want 0", got)
	}
}

// Details are written for the results that have one and read back by
// issue id; a file without the issue, a damaged file and a missing one are
// errors naming the key.
func TestDetails(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	key := DetailKey("run-1", 3)
	if key != "backlogs/run-1/detail-00003.jsonl" {
		t.Errorf("key %q", key)
	}
	rs := []Result{
		{IssueID: "a", Detail: json.RawMessage(`{"repo":"acme/x","items":[{"id":"f.py:g"}]}`)},
		{IssueID: "b", Error: "failed"},
		{IssueID: "c\xff", Detail: json.RawMessage(`{"repo":"acme/y"}`)},
	}
	if err := WriteDetails(ctx, b, key, rs); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDetail(ctx, b, key, "a")
	if err != nil || string(d) != `{"repo":"acme/x","items":[{"id":"f.py:g"}]}` {
		t.Errorf("detail of a: %s, %v", d, err)
	}
	if d, err := ReadDetail(ctx, b, key, "c\xff"); err != nil || string(d) != `{"repo":"acme/y"}` {
		t.Errorf("detail of an id that is not valid UTF-8: %s, %v", d, err)
	}
	if _, err := ReadDetail(ctx, b, key, "b"); err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), `no issue "b"`) {
		t.Errorf("issue without a detail: %v", err)
	}
	if _, err := ReadDetail(ctx, b, DetailKey("run-1", 4), "a"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("missing file: %v, want blob.ErrNotFound", err)
	}
	if err := b.WriteAll(ctx, key, []byte("{\"issue_id\":\"a\",\"detail\":{\"repo\"")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDetail(ctx, b, key, "a"); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), key) {
		t.Errorf("damaged file: %v, want blob.ErrCorrupt naming %s", err, key)
	}
	empty := DetailKey("run-1", 5)
	if err := WriteDetails(ctx, b, empty, []Result{{IssueID: "x"}}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Exists(ctx, empty); ok {
		t.Error("a details file was written for results without details")
	}
}

// AddCode fills line and code per repository and commit, one lookup each;
// a graph that cannot be read leaves its functions bare and says so.
func TestAddCode(t *testing.T) {
	long := strings.Repeat("x = 1\n", 20)
	rs := []Result{
		{IssueID: "1", Repo: "o/n", Commit: "c1", Items: []Ranked{{Rank: 1, FunctionID: "a.py:f"}, {Rank: 2, FunctionID: "a.py:gone"}}},
		{IssueID: "2", Repo: "o/n", Commit: "c1", Items: []Ranked{{Rank: 1, FunctionID: "a.py:long"}}},
		{IssueID: "3", Repo: "o/n", Commit: "c2", Items: []Ranked{{Rank: 1, FunctionID: "a.py:f"}}},
		{IssueID: "4", Repo: "o/n", Error: "failed"},
	}
	calls := 0
	errs := AddCode(context.Background(), rs, func(_ context.Context, repo, commit string, ids []string) (map[string]Function, error) {
		calls++
		if commit == "c2" {
			return nil, errors.New("graph gone")
		}
		return map[string]Function{"a.py:f": {Line: 3, Code: "def f():\n    pass\n"}, "a.py:long": {Line: 9, Code: "def long():\n" + long}}, nil
	})
	if calls != 2 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "o/n@c2: graph gone") {
		t.Errorf("%d lookups, errors %v", calls, errs)
	}
	if it := rs[0].Items[0]; it.Line != 3 || it.Code != "def f():\n    pass" {
		t.Errorf("a.py:f: %+v", it)
	}
	if it := rs[0].Items[1]; it.Line != 0 || it.Code != "" {
		t.Errorf("a.py:gone: %+v", it)
	}
	if it := rs[1].Items[0]; it.Line != 9 || strings.Count(it.Code, "\n") != CodeLines-1 {
		t.Errorf("a.py:long: %d lines: %q", strings.Count(it.Code, "\n")+1, it.Code)
	}
	if it := rs[2].Items[0]; it.Line != 0 || it.Code != "" {
		t.Errorf("c2's a.py:f: %+v", it)
	}
}
