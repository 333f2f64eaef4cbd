package backlog

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/testutil/parquetcheck"
)

// TestPartReadByDuckDB reads a part WritePart wrote with DuckDB (through
// tools/parquetcheck), a reader that shares no code with parquet-go, and
// compares every row with what was written.
func TestPartReadByDuckDB(t *testing.T) {
	duck := parquetcheck.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rs := sampleResults()
	rs = append(rs, Result{IssueID: "bad\xff", Repo: "o/n", Error: "invalid \xfe bytes", Source: "x.jsonl:9"})
	key := PartKey("run-1", 0)
	if _, err := WritePart(ctx, b, key, rs); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Columns []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"columns"`
		Rows   int               `json:"rows"`
		KV     map[string]string `json:"kv"`
		Values []map[string]any  `json:"values"`
	}
	duck.Run(t, &got, "--table", filepath.Join(dir, filepath.FromSlash(key)))

	wantCols := []string{"issue_id VARCHAR", "repo VARCHAR", "base_commit VARCHAR", "commit VARCHAR", "rank INTEGER", "function_id VARCHAR",
		"file VARCHAR", "score DOUBLE", "method VARCHAR", "item_method VARCHAR", "why VARCHAR", "line INTEGER", "code VARCHAR", "tokens_in BIGINT",
		"tokens_out BIGINT", "cached BOOLEAN", "selector VARCHAR", "selector_unavailable BOOLEAN", "budget_exhausted BOOLEAN", "issue_budget_skipped INTEGER",
		"truncated BOOLEAN", "error VARCHAR", "source VARCHAR", "notes VARCHAR[]"}
	var cols []string
	for _, c := range got.Columns {
		cols = append(cols, c.Name+" "+c.Type)
	}
	if !reflect.DeepEqual(cols, wantCols) {
		t.Errorf("DuckDB columns:\n got %q\nwant %q", cols, wantCols)
	}
	if got.KV["locus.backlog_version"] != "2" {
		t.Errorf("key-value metadata %v", got.KV)
	}
	// The rows as DuckDB decoded them (JSON numbers are float64), against rows().
	want := rows(rs)
	if got.Rows != len(want) || len(got.Values) != len(want) {
		t.Fatalf("DuckDB read %d rows, %d were written", got.Rows, len(want))
	}
	for i, w := range want {
		g := got.Values[i]
		notes := []any{}
		for _, n := range w.Notes {
			notes = append(notes, n)
		}
		exp := map[string]any{"issue_id": w.IssueID, "repo": w.Repo, "base_commit": w.BaseCommit, "commit": w.Commit, "rank": float64(w.Rank),
			"function_id": w.FunctionID, "file": w.File, "score": w.Score, "method": w.Method, "item_method": w.ItemMethod,
			"why": w.Why, "line": float64(w.Line), "code": w.Code, "tokens_in": float64(w.TokensIn), "tokens_out": float64(w.TokensOut), "cached": w.Cached,
			"selector": w.Selector, "selector_unavailable": w.SelectorUnavailable, "budget_exhausted": w.BudgetExhausted,
			"issue_budget_skipped": float64(w.IssueBudgetSkipped),
			"truncated":            w.Truncated, "error": w.Error, "source": w.Source, "notes": notes}
		if !reflect.DeepEqual(g, exp) {
			t.Errorf("row %d:\n DuckDB %v\nwritten %v", i, g, exp)
		}
	}
	if last := got.Values[len(got.Values)-1]; last["issue_id"] != "bad\uFFFD" || last["error"] != "invalid \uFFFD bytes" {
		t.Errorf("invalid UTF-8 row as DuckDB read it: %v", last)
	}
}
