package webpage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/schema"
)

// ErrNoRun is wrapped by LoadBacklog's error for a run the store does not have.
var ErrNoRun = errors.New("no such backlog run")

// ReportKey is where a backlog run's report page is stored.
func ReportKey(run string) string { return schema.BacklogKey(run, "report.html") }

// LoadBacklog reads what the page shows of a run from the store: its input,
// its stored result parts, its summary when it has finished, the records
// that were not issues, and its repositories' URLs.
func LoadBacklog(ctx context.Context, b *blob.Bucket, run string) (BacklogRun, error) {
	r := BacklogRun{Run: run, RepoURLs: map[string]string{}}
	data, err := b.ReadAll(ctx, schema.BacklogKey(run, "input.json"))
	if errors.Is(err, blob.ErrNotFound) {
		return r, fmt.Errorf("backlog %q: %w in the store (locus backlog status lists them)", run, ErrNoRun)
	}
	if err != nil {
		return r, fmt.Errorf("backlog %s: input: %w", run, err)
	}
	if err := json.Unmarshal(data, &r.Issues); err != nil {
		return r, fmt.Errorf("backlog %s: input: %v: %w", run, err, blob.ErrCorrupt)
	}
	if data, err := b.ReadAll(ctx, schema.BacklogKey(run, "summary.json")); err == nil {
		var s backlog.Summary
		if err := json.Unmarshal(data, &s); err != nil {
			return r, fmt.Errorf("backlog %s: summary: %v: %w", run, err, blob.ErrCorrupt)
		}
		r.Summary = &s
	} else if !errors.Is(err, blob.ErrNotFound) {
		return r, fmt.Errorf("backlog %s: summary: %w", run, err)
	}
	if data, err := b.ReadAll(ctx, schema.BacklogKey(run, "parse-errors.json")); err == nil {
		if err := json.Unmarshal(data, &r.Records); err != nil {
			return r, fmt.Errorf("backlog %s: parse errors: %v: %w", run, err, blob.ErrCorrupt)
		}
	} else if !errors.Is(err, blob.ErrNotFound) {
		return r, fmt.Errorf("backlog %s: parse errors: %w", run, err)
	}
	objs, err := b.List(ctx, schema.BacklogKey(run, "part-"))
	if err != nil {
		return r, fmt.Errorf("backlog %s: %w", run, err)
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	slices.Sort(keys)
	if r.Results, err = backlog.ReadParts(ctx, b, keys); err != nil {
		return r, fmt.Errorf("backlog %s: %w", run, err)
	}
	for _, res := range r.Results {
		if _, ok := r.RepoURLs[res.Repo]; ok {
			continue
		}
		r.RepoURLs[res.Repo] = ""
		name, err := schema.ParseRepoName(res.Repo)
		if err != nil {
			continue
		}
		// A repository whose manifest cannot be read gets no links; the
		// page is still written.
		if m, err := manifest.Read(ctx, b, name); err == nil && m != nil {
			r.RepoURLs[res.Repo] = m.URL
		}
	}
	return r, nil
}

// StoreBacklog renders run's report from the store and stores it at
// ReportKey; it returns the page.
func StoreBacklog(ctx context.Context, b *blob.Bucket, run string) ([]byte, error) {
	r, err := LoadBacklog(ctx, b, run)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := WriteBacklog(&buf, r); err != nil {
		return nil, err
	}
	if err := b.WriteAll(ctx, ReportKey(run), buf.Bytes()); err != nil {
		return nil, fmt.Errorf("backlog %s: report: %w", run, err)
	}
	return buf.Bytes(), nil
}
