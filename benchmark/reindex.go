package benchmark

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// ReindexOptions of Reindex.
type ReindexOptions struct {
	GitDir string
	Head   gitrepo.Hash
	// Back is how many first-parent commits before Head the first index
	// stops at; default 1 (one new commit to re-index).
	Back   int
	Logger *slog.Logger
	// Embedder embeds the functions; nil: the local lexical embedder.
	Embedder embed.Embedder
}

// ReindexPass is one index of the repository and the work it did.
type ReindexPass struct {
	Name       string  `json:"name"`
	Commit     string  `json:"commit"`
	Seconds    float64 `json:"seconds"`
	NewCommits int     `json:"new_commits"`
	// Graph files parsed and reused; functions embedded (not in the
	// embedding cache); vectors upserted and deleted; BM25 documents
	// tokenized and taken over from the previous index.
	FilesParsed       int `json:"files_parsed"`
	FilesReused       int `json:"files_reused"`
	Functions         int `json:"functions"`
	FunctionsEmbedded int `json:"functions_embedded"`
	VectorsUpserted   int `json:"vectors_upserted"`
	VectorsDeleted    int `json:"vectors_deleted"`
	DocsTokenized     int `json:"bm25_docs_tokenized"`
	DocsReused        int `json:"bm25_docs_reused"`
	// EmbedSeconds is the wall time during which the embedder was working.
	EmbedSeconds float64 `json:"embed_seconds"`
	// Steps are the repository workflow's activities, in the order they
	// were scheduled, each from scheduled to closed; the rest of Seconds
	// is orchestration (workflow tasks, the fleet workflow, the child's
	// start and end).
	Steps []ReindexStep `json:"steps"`
}

// ReindexStep is one activity of a pass: scheduled Start seconds after
// the first activity was, closed Seconds later.
type ReindexStep struct {
	Activity string  `json:"activity"`
	Start    float64 `json:"start"`
	Seconds  float64 `json:"seconds"`
}

// ReindexResult compares re-indexing after new commits with a full index.
type ReindexResult struct {
	Repository   string        `json:"repository"`
	Base         string        `json:"base"`
	Head         string        `json:"head"`
	ChangedFiles int           `json:"changed_files"` // files the new commits changed (git diff --name-only)
	GOMAXPROCS   int           `json:"gomaxprocs"`
	Passes       []ReindexPass `json:"passes"`
	// Ratio is the re-index's time over the full index's at Head.
	Ratio float64 `json:"ratio"`
}

// Reindex indexes the repository at Back commits before Head, then
// re-indexes it at Head (the new commits only), and, in a fresh store, the
// full index at Head that the re-index is measured against; each as
// `locus index` runs it (an IndexFleet on an embedded server with this
// process's workers).
func Reindex(ctx context.Context, o ReindexOptions) (*ReindexResult, error) {
	if o.Back == 0 {
		o.Back = 1
	}
	if o.Back < 0 {
		return nil, fmt.Errorf("bench reindex: back %d: want at least 1", o.Back)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	base, err := gitOutput(ctx, o.GitDir, "rev-parse", fmt.Sprintf("%s~%d", o.Head, o.Back))
	if err != nil {
		return nil, fmt.Errorf("bench reindex %s: %d commits before %s: %w", o.GitDir, o.Back, o.Head, err)
	}
	baseHash, ok := gitrepo.ParseHash(base)
	if !ok {
		return nil, fmt.Errorf("bench reindex %s: base %q is not a commit", o.GitDir, base)
	}
	changed, err := gitOutput(ctx, o.GitDir, "diff", "--name-only", base, o.Head.String())
	if err != nil {
		return nil, fmt.Errorf("bench reindex %s: %w", o.GitDir, err)
	}
	res := &ReindexResult{Repository: o.GitDir, Base: base, Head: o.Head.String(), ChangedFiles: len(strings.Fields(changed)),
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
	name := benchRepo(o.GitDir)
	if o.Embedder == nil {
		o.Embedder = &embed.Lexical{}
	}
	timed := &timedEmbedder{Embedder: o.Embedder}
	pass := func(e *env, label string, head gitrepo.Hash) error {
		t := time.Now()
		embedded0 := timed.nanos.Load()
		if err := indexAt(ctx, e.c, "bench-reindex-"+label, name, o.GitDir, head); err != nil {
			return err
		}
		p := ReindexPass{Name: label, Commit: head.String(), Seconds: time.Since(t).Seconds(),
			EmbedSeconds: time.Duration(timed.nanos.Load() - embedded0).Seconds()}
		m, err := manifest.Read(ctx, e.b, name)
		if err != nil {
			return err
		}
		if m == nil || m.Graph == nil || m.Search == nil || m.Graph.Commit != head.String() {
			return fmt.Errorf("bench reindex %s: the index is not at %s after indexing", o.GitDir, head)
		}
		p.FilesParsed, p.FilesReused = m.Graph.Parsed, m.Graph.Reused
		si := m.Search
		p.Functions, p.FunctionsEmbedded, p.VectorsUpserted, p.VectorsDeleted = si.Functions, si.Embedded, si.Upserted, si.Deleted
		p.DocsTokenized, p.DocsReused = si.Functions-si.SparseReused, si.SparseReused
		p.NewCommits = newCommits(ctx, e, label)
		if p.Steps, err = activitySteps(ctx, e.c, workflows.RepoWorkflowID(string(name))); err != nil {
			return err
		}
		res.Passes = append(res.Passes, p)
		return nil
	}
	e, err := newEnv(ctx, "reindex", "", o.Logger, timed)
	if err != nil {
		return nil, err
	}
	err = pass(e, "first index (base)", baseHash)
	if err == nil {
		err = pass(e, "re-index (head)", o.Head)
	}
	e.close()
	if err != nil {
		return nil, err
	}
	full, err := newEnv(ctx, "reindex-full", "", o.Logger, timed)
	if err != nil {
		return nil, err
	}
	defer full.close()
	if err := pass(full, "full index (head)", o.Head); err != nil {
		return nil, err
	}
	res.Ratio = res.Passes[1].Seconds / res.Passes[2].Seconds
	return res, nil
}

// timedEmbedder measures the wall time during which at least one call to
// its embedder is in progress (concurrent calls, which a local model runs
// one after another, count once).
type timedEmbedder struct {
	embed.Embedder
	mu     sync.Mutex
	active int
	since  time.Time
	nanos  atomic.Int64
}

func (t *timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	t.mu.Lock()
	if t.active++; t.active == 1 {
		t.since = time.Now()
	}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		if t.active--; t.active == 0 {
			t.nanos.Add(int64(time.Since(t.since)))
		}
		t.mu.Unlock()
	}()
	return t.Embedder.Embed(ctx, texts)
}

// indexAt runs IndexFleet under id over the one repository at head.
func indexAt(ctx context.Context, c client.Client, id string, name schema.RepoName, gitDir string, head gitrepo.Hash) error {
	in := schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: name, URL: gitDir, Ref: head.String()}}}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.IndexQueue}, workflows.IndexFleet, in)
	if err != nil {
		return fmt.Errorf("bench: start indexing: %w", err)
	}
	var res workflows.FleetResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("bench: index %s: %w", gitDir, err)
	}
	if res.Done != 1 {
		return fmt.Errorf("bench: index %s failed (see the fleet summary): %+v", gitDir, res)
	}
	return nil
}

// activitySteps reads the activities of the latest run of workflow id
// from its history: each one's time from scheduled to closed (completed,
// failed, timed out or canceled), in the order they were scheduled.
func activitySteps(ctx context.Context, c client.Client, id string) ([]ReindexStep, error) {
	type open struct {
		step int
		at   time.Time
	}
	var steps []ReindexStep
	var first time.Time
	scheduled := map[int64]open{}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("bench: history of %s: %w", id, err)
		}
		at := ev.GetEventTime().AsTime()
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			if first.IsZero() {
				first = at
			}
			scheduled[ev.GetEventId()] = open{len(steps), at}
			steps = append(steps, ReindexStep{Activity: a.GetActivityType().GetName(), Start: at.Sub(first).Seconds()})
			continue
		}
		var from int64
		switch {
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			from = ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
		case ev.GetActivityTaskFailedEventAttributes() != nil:
			from = ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
		case ev.GetActivityTaskTimedOutEventAttributes() != nil:
			from = ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
		case ev.GetActivityTaskCanceledEventAttributes() != nil:
			from = ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
		default:
			continue
		}
		if o, ok := scheduled[from]; ok {
			steps[o.step].Seconds = at.Sub(o.at).Seconds()
		}
	}
	return steps, nil
}

// newCommits is what the fleet run of pass label scraped.
func newCommits(ctx context.Context, e *env, label string) int {
	var res workflows.FleetResult
	if err := e.c.GetWorkflow(ctx, "bench-reindex-"+label, "").Get(ctx, &res); err != nil {
		return -1
	}
	sum, err := jobs.FleetSummary(ctx, e.b, res)
	if err != nil || len(sum.Results) != 1 {
		return -1
	}
	return sum.Results[0].NewCommits
}

func gitOutput(ctx context.Context, gitDir string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// WriteReindexTable prints r as an aligned table.
func WriteReindexTable(w io.Writer, r *ReindexResult) error {
	fmt.Fprintf(w, "repository %s: %s → %s, %d files changed, GOMAXPROCS %d\n", r.Repository, short(r.Base), short(r.Head), r.ChangedFiles, r.GOMAXPROCS)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PASS\tSECONDS\tEMBEDDING S\tNEW COMMITS\tFILES PARSED\tFILES REUSED\tFUNCTIONS\tEMBEDDED\tVECTORS UPSERTED\tDELETED\tBM25 TOKENIZED\tBM25 REUSED")
	for _, p := range r.Passes {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Name, p.Seconds, p.EmbedSeconds, p.NewCommits, p.FilesParsed, p.FilesReused,
			p.Functions, p.FunctionsEmbedded, p.VectorsUpserted, p.VectorsDeleted, p.DocsTokenized, p.DocsReused)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Passes {
		fmt.Fprintf(w, "%s: %s\n", p.Name, stepSummary(p))
	}
	_, err := fmt.Fprintf(w, "re-index / full index at head: %.3f\n", r.Ratio)
	return err
}

// stepSummary sums a pass's activities by type, in the order each type
// first ran (several at once, such as embedding batches, overlap), and
// the time outside every activity: orchestration.
func stepSummary(p ReindexPass) string {
	var b strings.Builder
	sums, counts := map[string]float64{}, map[string]int{}
	var types []string
	for _, st := range p.Steps {
		if counts[st.Activity] == 0 {
			types = append(types, st.Activity)
		}
		counts[st.Activity]++
		sums[st.Activity] += st.Seconds
	}
	for i, typ := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f", typ, sums[typ])
		if counts[typ] > 1 {
			fmt.Fprintf(&b, " (%d, summed)", counts[typ])
		}
	}
	// The union of the activities' spans.
	spans := slices.Clone(p.Steps)
	slices.SortFunc(spans, func(a, b ReindexStep) int { return cmp.Compare(a.Start, b.Start) })
	covered, end := 0.0, math.Inf(-1)
	for _, st := range spans {
		from, to := max(st.Start, end), st.Start+st.Seconds
		if to > from {
			covered += to - from
		}
		end = max(end, to)
	}
	fmt.Fprintf(&b, "; outside activities %.2f s", p.Seconds-covered)
	return "activities (s): " + b.String()
}

func short(h string) string { return h[:min(12, len(h))] }
