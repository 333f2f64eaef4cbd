package backlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// Ranked is one ranked function of an issue's answer (the workflow's
// payload type: one definition for the workflow, the activities and the
// Parquet parts).
type Ranked = schema.BacklogRanked

// Result is one issue's answer, as the LocalizeBacklog workflow passes it on.
type Result = schema.BacklogIssueResult

// FilesOf returns the distinct files of items in rank order.
func FilesOf(items []Ranked) []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		if it.File != "" && !seen[it.File] {
			seen[it.File] = true
			out = append(out, it.File)
		}
	}
	return out
}

// PartInfo describes one stored results part.
type PartInfo struct {
	Key    string `json:"key"`
	Issues int    `json:"issues"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // hex SHA-256 of the part as written
}

// format is the layout version a part records.
var format = objio.Format{Key: "locus.backlog_version", Version: schema.BacklogVersion}

// readable are the layout versions readPart reads: version 1 lacks the
// commit, line and code columns, which read as empty.
var readable = []string{"1", strconv.Itoa(schema.BacklogVersion)}

// PartKey is schema.BacklogPartKey, the key of results part n of a run.
func PartKey(run string, n int) string { return schema.BacklogPartKey(run, n) }

// rows flattens results into Parquet rows, strings made valid UTF-8.
func rows(rs []Result) []schema.BacklogRow {
	var out []schema.BacklogRow
	for _, r := range rs {
		base := schema.BacklogRow{IssueID: v(r.IssueID), Repo: v(r.Repo), BaseCommit: v(r.BaseCommit), Commit: v(r.Commit), Method: v(r.Method),
			TokensIn: int64(r.TokensIn), TokensOut: int64(r.TokensOut), Cached: r.Cached, Selector: v(r.Selector),
			SelectorUnavailable: r.SelectorUnavailable, BudgetExhausted: r.BudgetExhausted, IssueBudgetSkipped: int32(r.IssueBudgetSkipped),
			Truncated: r.Truncated, Error: v(r.Error), Source: v(r.Source)}
		for _, n := range r.Notes {
			base.Notes = append(base.Notes, v(n))
		}
		if len(r.Items) == 0 {
			out = append(out, base)
			continue
		}
		for _, it := range r.Items {
			row := base
			row.Rank, row.FunctionID, row.File, row.Score = int32(it.Rank), v(it.FunctionID), v(it.File), it.Score
			row.ItemMethod, row.Why, row.Line, row.Code = v(it.Method), v(it.Why), int32(it.Line), v(it.Code)
			out = append(out, row)
		}
	}
	return out
}

func v(s string) string { return schema.ValidUTF8(s) }

// WritePart stores results at key as one Parquet part (zstd), replacing
// what is there: one row per (issue, rank), and one row with rank 0 for an
// issue without items (a failed one has its error set). Strings that are
// not valid UTF-8 are stored with U+FFFD in place of the bad bytes.
func WritePart(ctx context.Context, b *blob.Bucket, key string, rs []Result) (PartInfo, error) {
	info := PartInfo{Key: key, Issues: len(rs)}
	for _, r := range rs {
		if r.Error != "" && len(r.Items) > 0 {
			return info, fmt.Errorf("backlog part %s: issue %q has both an error and %d items", key, r.IssueID, len(r.Items))
		}
		for i, it := range r.Items {
			// ReadParts tells issues apart by rank: each starts at 1 and increases.
			if it.Rank < 1 || i > 0 && it.Rank <= r.Items[i-1].Rank || i == 0 && it.Rank != 1 {
				return info, fmt.Errorf("backlog part %s: issue %q: item %d has rank %d; want ranks 1, 2, ... increasing", key, r.IssueID, i, it.Rank)
			}
		}
	}
	rows := rows(rs)
	info.Rows = int64(len(rows))
	ref, err := objio.WriteParquet(ctx, b, key, rows, format)
	if err != nil {
		return info, fmt.Errorf("backlog part: %w", err)
	}
	info.Bytes, info.SHA256 = ref.Size, ref.SHA256
	return info, nil
}

// ReadParts reads the results of parts in the order given (each part's
// issues in the order written). A part that is not readable Parquet of this
// layout is an error naming its key and wrapping blob.ErrCorrupt; a missing
// one wraps blob.ErrNotFound.
func ReadParts(ctx context.Context, b *blob.Bucket, keys []string) ([]Result, error) {
	infos := make([]PartInfo, len(keys))
	for i, k := range keys {
		infos[i] = PartInfo{Key: k}
	}
	return ReadPartsOf(ctx, b, infos)
}

// ReadPartsOf is ReadParts that also checks each part's size and SHA-256
// against what WritePart returned (where recorded).
func ReadPartsOf(ctx context.Context, b *blob.Bucket, parts []PartInfo) ([]Result, error) {
	var out []Result
	for _, p := range parts {
		rs, err := readPart(ctx, b, p)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func readPart(ctx context.Context, b *blob.Bucket, p PartInfo) ([]Result, error) {
	f, err := objio.OpenParquet(ctx, b, objio.Ref{Key: p.Key, Size: p.Bytes, SHA256: p.SHA256}, objio.Format{})
	if err != nil {
		return nil, fmt.Errorf("backlog part: %w", err)
	}
	if ver, _ := f.Lookup(format.Key); !slices.Contains(readable, ver) {
		return nil, fmt.Errorf("backlog part: %s: layout version %q, want one of %v: %w", p.Key, ver, readable, blob.ErrCorrupt)
	}
	rows, err := objio.Rows[schema.BacklogRow](p.Key, f)
	if err != nil {
		return nil, fmt.Errorf("backlog part: %w", err)
	}
	var out []Result
	for _, row := range rows {
		if len(row.Notes) == 0 {
			row.Notes = nil // read back as written
		}
		if len(out) == 0 || row.Rank <= 1 || out[len(out)-1].IssueID != row.IssueID {
			out = append(out, Result{IssueID: row.IssueID, Repo: row.Repo, BaseCommit: row.BaseCommit, Commit: row.Commit, Method: row.Method,
				Selector: row.Selector, TokensIn: int(row.TokensIn), TokensOut: int(row.TokensOut), Cached: row.Cached,
				SelectorUnavailable: row.SelectorUnavailable, BudgetExhausted: row.BudgetExhausted, IssueBudgetSkipped: int(row.IssueBudgetSkipped),
				Truncated: row.Truncated, Error: row.Error, Source: row.Source, Notes: row.Notes})
		}
		if row.Rank > 0 {
			last := &out[len(out)-1]
			last.Items = append(last.Items, Ranked{Rank: int(row.Rank), FunctionID: row.FunctionID, File: row.File,
				Score: row.Score, Method: row.ItemMethod, Why: row.Why, Line: int(row.Line), Code: row.Code})
		}
	}
	for i := range out {
		out[i].Files = FilesOf(out[i].Items)
	}
	return out, nil
}

// DetailKey is schema.BacklogDetailKey, the key of the details beside
// results part n of a run.
func DetailKey(run string, n int) string { return schema.BacklogDetailKey(run, n) }

// detailLine is one line of a details file.
type detailLine struct {
	IssueID string          `json:"issue_id"`
	Detail  json.RawMessage `json:"detail"`
}

// WriteDetails stores at key, as JSON Lines, the Detail of every result
// that has one ({"issue_id": …, "detail": …}); it writes nothing when none
// has.
func WriteDetails(ctx context.Context, b *blob.Bucket, key string, rs []Result) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range rs {
		if len(r.Detail) == 0 {
			continue
		}
		if err := enc.Encode(detailLine{IssueID: v(r.IssueID), Detail: r.Detail}); err != nil {
			return fmt.Errorf("backlog details %s: issue %q: %w", key, r.IssueID, err)
		}
	}
	if buf.Len() == 0 {
		return nil
	}
	if err := b.WriteAll(ctx, key, buf.Bytes()); err != nil {
		return fmt.Errorf("backlog details %s: %w", key, err)
	}
	return nil
}

// ReadDetail is the Detail of issue id in the details file at key (ids are
// compared as stored: not valid UTF-8 made valid, as in the parts); a
// missing file wraps blob.ErrNotFound, an unreadable one blob.ErrCorrupt.
func ReadDetail(ctx context.Context, b *blob.Bucket, key, id string) (json.RawMessage, error) {
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("backlog details %s: %w", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for line := 1; ; line++ {
		var d detailLine
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("backlog details %s: no issue %q", key, id)
		} else if err != nil {
			return nil, fmt.Errorf("backlog details %s: record %d: %v: %w", key, line, err, blob.ErrCorrupt)
		}
		if d.IssueID == v(id) {
			return d.Detail, nil
		}
	}
}
