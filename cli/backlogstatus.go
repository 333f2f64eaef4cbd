package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// How long `backlog status` waits for Temporal: to connect, and for one
// run's description and progress query (a query waits for a worker).
const (
	statusDialTimeout  = 5 * time.Second
	statusQueryTimeout = 5 * time.Second
)

// backlogStatus is one run as `locus backlog status` shows it.
type backlogStatus struct {
	Run      string `json:"run"`
	Finished bool   `json:"finished"`
	// State is "finished"; "running" when the counts come from the running
	// workflow; "running or stopped" when they come from the store only; or
	// the workflow's state when it closed without a summary ("failed",
	// "terminated", "canceled", "timed out").
	State string `json:"state"`
	// Live: Done, Failed, Running, Pending and the tokens are the running
	// workflow's own counts (its progress query), not the stored parts'.
	Live  bool `json:"live"`
	Total int  `json:"total"`
	// Stored is how many issues' results are stored (in whole parts).
	Stored      int `json:"stored"`
	Done        int `json:"done"`
	Failed      int `json:"failed"`
	Running     int `json:"running"`
	Pending     int `json:"pending"`
	ParseErrors int `json:"parse_errors"`
	TokensIn    int `json:"tokens_in"`
	TokensOut   int `json:"tokens_out"`
	// Started is when the run started (live runs); RatePerSecond is issues
	// finished per second since then and ETASeconds the time the rest
	// need at that rate (-1: unknown).
	Started       *time.Time `json:"started,omitempty"`
	RatePerSecond float64    `json:"rate_per_second,omitempty"`
	ETASeconds    float64    `json:"eta_seconds,omitempty"`
	// Failures of an unfinished run known so far: the records that could
	// not be read and the failed issues of the stored parts.
	Failures []backlog.Failure `json:"failures,omitempty"`
	// Summary is the finished run's summary.
	Summary *backlog.Summary `json:"summary,omitempty"`
	// Note says why live counts are missing for an unfinished run.
	Note string `json:"note,omitempty"`
}

// runBacklogStatus reports runs: a finished run's summary from the store;
// an unfinished one's live progress when its workflow is reachable (the
// --temporal cluster, or the embedded server of the `locus backlog`
// process that runs it), else what it has stored so far.
func runBacklogStatus(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("backlog status", &g)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus backlog status [flags] [RUN]\n\nWithout RUN, every backlog run in the store.\n"+
			"An unfinished run's progress is asked of its workflow when it is reachable\n"+
			"(--temporal, or the embedded server of the locus process running it).\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitError{code: 2, msg: "backlog status takes at most one run"}
	}
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	var runs []string
	if fs.NArg() == 1 {
		runs = []string{fs.Arg(0)}
	} else {
		dirs, err := b.ListDirs(ctx, "backlogs/")
		if err != nil {
			return err
		}
		for _, d := range dirs {
			runs = append(runs, strings.TrimSuffix(strings.TrimPrefix(d, "backlogs/"), "/"))
		}
	}
	sts, err := backlogStatuses(ctx, &g, b, runs)
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(sts)
	}
	printBacklogStatus(stdout, sts)
	return nil
}

// backlogStatuses reads the runs from the store and asks the unfinished
// ones' workflows for their progress.
func backlogStatuses(ctx context.Context, g *Globals, b *blob.Bucket, runs []string) ([]backlogStatus, error) {
	var sts []backlogStatus
	for _, r := range runs {
		st, err := readBacklogStatus(ctx, b, r)
		if err != nil {
			return nil, err
		}
		sts = append(sts, st)
	}
	live := &liveProgress{g: g}
	defer live.close()
	for i := range sts {
		if !sts[i].Finished {
			live.fill(ctx, &sts[i], time.Now())
		}
	}
	return sts, nil
}

func printBacklogStatus(w io.Writer, sts []backlogStatus) {
	if len(sts) == 0 {
		fmt.Fprintln(w, "no backlog runs in the store")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATE\tISSUES\tDONE\tFAILED\tPENDING\tNOT READ\tTOKENS IN\tTOKENS OUT")
	for _, s := range sts {
		state := s.State
		if !s.Finished && !s.Live {
			state = fmt.Sprintf("%s (%d stored)", s.State, s.Stored)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Run, state, s.Total, s.Done, s.Failed, s.Pending, s.ParseErrors, s.TokensIn, s.TokensOut)
	}
	tw.Flush()
	for _, s := range sts {
		switch {
		case s.Live:
			l := progressLine{FleetProgress: schema.FleetProgress{Total: s.Total, Done: s.Done, Failed: s.Failed,
				Running: s.Running, Pending: s.Pending}, Rate: s.RatePerSecond, ETA: time.Duration(s.ETASeconds * float64(time.Second)), Noun: "issues"}
			if s.ETASeconds < 0 {
				l.ETA = -1
			}
			fmt.Fprintf(w, "%s: %s\n", s.Run, l)
		case s.Note != "":
			fmt.Fprintf(w, "%s: %s\n", s.Run, termtext.Escape(s.Note))
		}
	}
	if len(sts) != 1 {
		return
	}
	fails := sts[0].Failures
	if sts[0].Summary != nil {
		fails = sts[0].Summary.Failures
	}
	for _, f := range fails {
		fmt.Fprintf(w, "%s (%s): %s\n", termtext.Escape(f.IssueID), termtext.Escape(f.Source), termtext.Escape(f.Error))
	}
	if n := sts[0].Failed + sts[0].ParseErrors - len(fails); sts[0].Live && n > 0 {
		fmt.Fprintf(w, "%d more failed issues are not stored yet (they are listed when their part is written)\n", n)
	}
}

// readBacklogStatus reads one run's state from the store.
func readBacklogStatus(ctx context.Context, b *blob.Bucket, run string) (backlogStatus, error) {
	st := backlogStatus{Run: run, State: "running or stopped"}
	data, err := b.ReadAll(ctx, schema.BacklogKey(run, "summary.json"))
	if err == nil {
		var s backlog.Summary
		if err := json.Unmarshal(data, &s); err != nil {
			return st, fmt.Errorf("backlog %s: summary: %w", run, err)
		}
		st.Finished, st.State, st.Summary = true, "finished", &s
		st.Total, st.Stored, st.Done, st.Failed, st.ParseErrors = s.Total, s.Done+s.Failed, s.Done, s.Failed, s.ParseErrors
		st.TokensIn, st.TokensOut = s.TokensIn, s.TokensOut
		return st, nil
	}
	if !errors.Is(err, blob.ErrNotFound) {
		return st, err
	}
	data, err = b.ReadAll(ctx, schema.BacklogKey(run, "input.json"))
	if errors.Is(err, blob.ErrNotFound) {
		return st, exitError{code: 1, msg: fmt.Sprintf("no backlog run %q in the store (locus backlog status lists them)", run)}
	}
	if err != nil {
		return st, err
	}
	var issues []schema.BacklogIssue
	if err := json.Unmarshal(data, &issues); err != nil {
		return st, fmt.Errorf("backlog %s: input: %w", run, err)
	}
	st.Total = len(issues)
	if data, err := b.ReadAll(ctx, activities.BacklogParseErrorsKey(run)); err == nil {
		var fs []backlog.Failure
		if json.Unmarshal(data, &fs) == nil {
			st.ParseErrors = len(fs)
			st.Failures = fs
		}
	}
	objs, err := b.List(ctx, schema.BacklogKey(run, "part-"))
	if err != nil {
		return st, err
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	rs, err := backlog.ReadParts(ctx, b, keys)
	if err != nil {
		return st, fmt.Errorf("backlog %s: %w", run, err)
	}
	s := activities.BacklogSummary(run, rs)
	st.Stored, st.Done, st.Failed, st.TokensIn, st.TokensOut = len(rs), s.Done, s.Failed, s.TokensIn, s.TokensOut
	st.Pending = st.Total - st.Stored
	st.Failures = append(st.Failures, s.Failures...)
	return st, nil
}

// liveProgress asks running backlog workflows for their progress. It
// connects once, on first use: to --temporal, or to the embedded server a
// `locus backlog` process runs over the same data dir (its address is in
// the data dir's lock file while it serves).
type liveProgress struct {
	g      *Globals
	tried  bool
	c      client.Client
	reason string // why there is no client
}

func (l *liveProgress) close() {
	if l.c != nil {
		l.c.Close()
	}
}

func (l *liveProgress) client(ctx context.Context) client.Client {
	if l.tried {
		return l.c
	}
	l.tried = true
	addr := l.g.temporal
	if addr == "" {
		a, err := devserver.Running(filepath.Join(l.g.dataDir, "temporal"))
		if err != nil {
			l.reason = err.Error() + "; counts from the store"
			return nil
		}
		if a == "" {
			l.reason = "no locus process is running it (its embedded Temporal server is not up); counts from the store"
			return nil
		}
		addr = a
	}
	dctx, cancel := context.WithTimeout(ctx, statusDialTimeout)
	defer cancel()
	opts := client.Options{HostPort: addr, Namespace: l.g.namespace,
		Logger: tlog.NewStructuredLogger(slog.New(sdkLogHandler(l.g.logger().Handler(), false)))}
	if l.g.temporal != "" {
		if err := l.g.auth.apply(&opts); err != nil {
			l.reason = err.Error() + "; counts from the store"
			return nil
		}
	}
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		l.reason = fmt.Sprintf("Temporal at %s is not reachable (%v); counts from the store", addr, err)
		return nil
	}
	l.c = c
	return c
}

// fill overlays st, read from the store, with the run's live progress, or
// says in st.Note why there is none.
func (l *liveProgress) fill(ctx context.Context, st *backlogStatus, now time.Time) {
	c := l.client(ctx)
	if c == nil {
		st.Note = l.reason
		return
	}
	qctx, cancel := context.WithTimeout(ctx, statusQueryTimeout)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(qctx, st.Run, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		st.Note = "its workflow is not known to this Temporal server; counts from the store"
		return
	case err != nil:
		st.Note = fmt.Sprintf("describe workflow %s: %v; counts from the store", st.Run, err)
		return
	}
	status := desc.GetWorkflowExecutionInfo().GetStatus()
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		st.State = closedState(status)
		st.Note = "its workflow is " + st.State + " without a summary; run the same locus backlog command again to resume it"
		return
	}
	v, err := c.QueryWorkflow(qctx, st.Run, "", workflows.ProgressQuery)
	var p schema.BacklogProgress
	if err == nil {
		err = v.Get(&p)
	}
	if err != nil {
		st.Note = fmt.Sprintf("its workflow runs but did not answer the progress query (%v): no worker may be running; counts from the store", err)
		return
	}
	st.Live, st.State = true, "running"
	st.Total, st.Done, st.Failed, st.Running, st.Pending = p.Total, p.Done, p.Failed, p.Running, p.Pending
	st.TokensIn, st.TokensOut = p.TokensIn, p.TokensOut
	st.ETASeconds = -1
	if !p.Started.IsZero() {
		started := p.Started
		st.Started = &started
		if el := now.Sub(started).Seconds(); el > 0 && p.Done+p.Failed > 0 {
			st.RatePerSecond = float64(p.Done+p.Failed) / el
			st.ETASeconds = float64(max(p.Total-p.Done-p.Failed, 0)) / st.RatePerSecond
		}
	}
}

// closedState names a closed workflow's status the way the table shows it.
func closedState(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "canceled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	}
	return strings.ToLower(s.String())
}
