package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

const scheduleUsage = `usage: locus schedule create NAME (--every D | --cron EXPR) (--repos-file F | REPO...) [flags]
       locus schedule list
       locus schedule describe NAME
       locus schedule pause NAME [--note TEXT]
       locus schedule unpause NAME
       locus schedule trigger NAME
       locus schedule backfill NAME --start TIME [--end TIME] [--overlap buffer-one]
       locus schedule delete NAME

Schedules re-index a fleet on Temporal Schedules: a run still going when the next is
due makes that one skip; a repos file is read again at every run. Runs execute on the
workers of the Temporal server (with the embedded server: while "locus worker" runs),
with those workers' embedder and LLM.
`

// scheduleCommands are the subcommands of locus schedule.
var scheduleCommands = []string{"create", "list", "describe", "pause", "unpause", "trigger", "backfill", "delete"}

func runSchedule(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, scheduleUsage)
		return exitError{code: 2, msg: "schedule needs a subcommand"}
	}
	if isHelp(args[0]) || args[0] == "help" {
		fmt.Fprint(stdout, scheduleUsage)
		return nil
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "create":
		return runScheduleCreate(ctx, rest)
	case "list":
		return runScheduleList(ctx, rest)
	case "describe":
		return runScheduleDescribe(ctx, rest)
	case "pause", "unpause", "trigger", "delete":
		return runScheduleAction(ctx, jobs.ScheduleAction(sub), rest)
	case "backfill":
		return runScheduleBackfill(ctx, rest)
	}
	fmt.Fprint(stderr, scheduleUsage)
	msg := fmt.Sprintf("unknown schedule subcommand %q", sub)
	if s := nearest(sub, scheduleCommands); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return exitError{code: 2, msg: msg}
}

func runScheduleCreate(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("schedule create", &g)
	every := fs.Duration("every", 0, "run at this interval (e.g. 1h)")
	cron := fs.String("cron", "", `run at the times of this cron expression, UTC (e.g. "0 * * * *")`)
	reposFile := fs.String("repos-file", "", "file with one repository spec per line, read again at every run (relative paths from its directory)")
	catchup := fs.Duration("catchup-window", 0, "how late a run missed while the server was down may still start; 0: the server's default (a year)")
	paused := fs.Bool("paused", false, "create the schedule paused")
	note := fs.String("note", "", "why (shown by describe)")
	window := fs.Int("window", workflows.DefaultWindow, "repositories indexed at once")
	maxDiff := fs.Int("max-diff-bytes", 256<<10, "cap on the stored diff of one file in one commit")
	maxBlob := fs.Int("max-blob-size", 0, maxBlobSizeUsage)
	primary := fs.Bool("primary-language-only", false, "build the code graph of the repository's main language only")
	summaries := fs.Bool("summaries", false, "have the workers' LLM summarize functions without a stored summary")
	hostWait := fs.Duration("host-wait", workflows.DefaultHostWait, hostWaitUsage)
	fs.Usage = func() { fmt.Fprint(fs.Output(), scheduleUsage+"\nFlags of create:\n"); fs.PrintDefaults() }
	name, rest, err := nameArg(fs, args, "create")
	if err != nil {
		return err
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	if err := check(fs, intRange("window", *window, 1, workflows.MaxWindow), intRange("max-diff-bytes", *maxDiff, 1, -1), intRange("max-blob-size", *maxBlob, 0, -1), checkHostWait(*hostWait), jobs.CheckScheduleName(name)); err != nil {
		return err
	}
	spec := jobs.ScheduleSpec{Every: *every, Cron: *cron, CatchupWindow: *catchup, Paused: *paused, Note: *note}
	if err := checkScheduleSpec(spec); err != nil {
		return err
	}
	in := workflows.ScheduledIndexInput{Options: schema.FleetOptions{Window: *window,
		Index: schema.IndexOptions{MaxDiffBytes: *maxDiff, PrimaryLanguageOnly: *primary, Summaries: *summaries, MaxBlobSize: int64(*maxBlob),
			HostWait: defaultZero(*hostWait, workflows.DefaultHostWait)}}}
	switch {
	case *reposFile != "" && fs.NArg() > 0:
		return exitError{code: 2, msg: "schedule create: give --repos-file or repositories, not both"}
	case *reposFile != "":
		abs, err := filepath.Abs(*reposFile)
		if err != nil {
			return err
		}
		// Read now so that a bad line is reported now; runs read it again.
		if _, err := gitrepo.ReadSpecs(nil, abs, filepath.Dir(abs)); err != nil {
			return err
		}
		in.ReposFile = abs
	default:
		if in.Repos, err = gitrepo.ReadSpecs(fs.Args(), "", ""); err != nil {
			return err
		}
		if len(in.Repos) == 0 {
			fs.Usage()
			return exitError{code: 2, msg: "schedule create: no repositories given"}
		}
	}
	c, closeAll, err := g.connect(ctx, g.logger())
	if err != nil {
		return err
	}
	defer closeAll()
	if err := jobs.CreateSchedule(ctx, c, name, spec, in); err != nil {
		return err
	}
	v, err := jobs.DescribeSchedule(ctx, c, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "schedule %s created: %s, next run %s\n", name, v.Spec, nextText(v))
	if !v.Paused {
		warnNoWorker(&g, v.Workers)
	}
	return nil
}

// checkScheduleSpec refuses, before anything starts, an interval that is
// not positive and a cron expression the server would not take.
func checkScheduleSpec(spec jobs.ScheduleSpec) error {
	switch {
	case spec.Every != 0 && spec.Cron != "":
		return exitError{code: 2, msg: "schedule create: give --every or --cron, not both"}
	case spec.Every == 0 && spec.Cron == "":
		return exitError{code: 2, msg: "schedule create: give --every D (e.g. 1h) or --cron EXPR"}
	case spec.Every < 0:
		return exitError{code: 2, msg: fmt.Sprintf("schedule create: --every %s: want a positive interval of at least 1s, e.g. 1h", spec.Every)}
	case spec.Every > 0 && spec.Every < time.Second:
		return exitError{code: 2, msg: fmt.Sprintf("schedule create: --every %s: want at least 1s", spec.Every)}
	case spec.Cron != "":
		if err := devserver.CheckCron(spec.Cron); err != nil {
			return exitError{code: 2, msg: fmt.Sprintf("schedule create: --cron %q: %v (want 5 to 7 fields: [second] minute hour day-of-month month day-of-week [year], UTC, e.g. \"0 3 * * *\")", spec.Cron, errors.Unwrap(err))}
		}
	}
	return nil
}

// warnNoWorker says, when no worker polls the runs' task queue, that
// nothing will run the schedule until one does.
func warnNoWorker(g *Globals, workers int) {
	if workers > 0 {
		return
	}
	if g.temporal == "" {
		fmt.Fprintf(stderr, "warning: no worker runs this schedule: the embedded Temporal server stops when this command ends, and runs start only while \"locus worker\" runs on data directory %s (then give other commands --temporal %s --no-worker)\n",
			g.dataDir, devserver.DefaultAddress)
		return
	}
	fmt.Fprintf(stderr, "warning: no worker polls task queue %s on %s: nothing runs this schedule until one does (start one: locus worker --temporal %s)\n",
		workflows.IndexQueue, g.addr, g.addr)
}

func runScheduleList(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("schedule list", &g)
	scheduleUsageOf(fs, "list")
	if err := parse(fs, args); err != nil {
		return err
	}
	c, closeAll, err := g.connect(ctx, g.logger())
	if err != nil {
		return err
	}
	defer closeAll()
	vs, err := jobs.ListSchedules(ctx, c)
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(vs)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSPEC\tSTATE\tNEXT RUN\tLAST RUN\tLAST RUN STATE\tRUNS\tREPOSITORIES")
	var failed []string
	for _, v := range vs {
		last, ok := v.LastRun()
		lastState := "-"
		if ok {
			lastState = runText(last)
			if last.Failed() {
				failed = append(failed, runFailure(v.Name, last))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", v.Name, v.Spec, stateText(v), nextText(v), lastText(v), lastState, v.Actions, reposText(v))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range failed {
		fmt.Fprintln(stdout, f)
	}
	for _, v := range vs {
		if !v.Paused { // every schedule's runs go to the same task queue
			warnNoWorker(&g, v.Workers)
			break
		}
	}
	return nil
}

func runScheduleDescribe(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("schedule describe", &g)
	scheduleUsageOf(fs, "describe NAME")
	name, c, closeAll, err := scheduleSetup(ctx, fs, &g, args, "describe", nil)
	if err != nil {
		return err
	}
	defer closeAll()
	v, err := jobs.DescribeSchedule(ctx, c, name)
	if err != nil {
		return scheduleError(err)
	}
	if g.json {
		return printJSON(v)
	}
	fmt.Fprintf(stdout, "schedule %s: %s, %s\n", v.Name, v.Spec, stateText(v))
	if v.Note != "" {
		fmt.Fprintf(stdout, "note: %s\n", v.Note)
	}
	fmt.Fprintf(stdout, "repositories: %s\n", reposText(v))
	fmt.Fprintf(stdout, "next run: %s\n", nextText(v))
	fmt.Fprintf(stdout, "runs: %d started, %d skipped (one still going), %d missed (too late to catch up)\n", v.Actions, v.SkippedOverlap, v.MissedCatchup)
	for _, r := range v.Runs {
		fmt.Fprintf(stdout, "  %s  %s  %s\n", r.Due.UTC().Format(time.RFC3339), r.WorkflowID, runText(r))
		if r.Error != "" {
			fmt.Fprintf(stdout, "      error: %s\n", r.Error)
		}
	}
	if !v.Paused || len(v.Running) > 0 {
		warnNoWorker(&g, v.Workers)
	}
	return nil
}

// runFailure is the line list and status print for a schedule whose last
// run r failed.
func runFailure(name string, r jobs.ScheduleRun) string {
	return fmt.Sprintf("schedule %s: last run %s %s: %s", name, r.WorkflowID, r.State, r.Error)
}

// runText is a run's state as list and describe show it.
func runText(r jobs.ScheduleRun) string {
	switch {
	case r.State == "completed" && r.FailedRepos > 0:
		return fmt.Sprintf("completed, %d of %d repositories failed (locus status shows why)", r.FailedRepos, r.Repos)
	case r.State == "completed" && r.Repos == 1:
		return "completed, 1 repository"
	case r.State == "completed":
		return fmt.Sprintf("completed, %d repositories", r.Repos)
	}
	return r.State
}

func runScheduleAction(ctx context.Context, a jobs.ScheduleAction, args []string) error {
	var g Globals
	fs := newFlags("schedule "+string(a), &g)
	note := fs.String("note", "", "why (pause and unpause)")
	synopsis := string(a) + " NAME"
	if a == jobs.SchedulePause || a == jobs.ScheduleUnpause {
		synopsis += " [--note TEXT]"
	}
	scheduleUsageOf(fs, synopsis)
	name, c, closeAll, err := scheduleSetup(ctx, fs, &g, args, string(a), nil)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := jobs.ActOnSchedule(ctx, c, name, a, *note); err != nil {
		return scheduleError(err)
	}
	fmt.Fprintf(stdout, "schedule %s: %s\n", name, actionDone[a])
	if a == jobs.ScheduleTrigger || a == jobs.ScheduleUnpause {
		n, err := jobs.QueueWorkers(ctx, c)
		if err != nil {
			return err
		}
		warnNoWorker(&g, n)
	}
	return nil
}

// actionDone is what each action says once the server took it.
var actionDone = map[jobs.ScheduleAction]string{
	jobs.SchedulePause:   "paused",
	jobs.ScheduleUnpause: "unpaused",
	jobs.ScheduleTrigger: "a run is requested (skipped if one is still going; schedule describe shows it)",
	jobs.ScheduleDelete:  "deleted (runs already started go on)",
}

func runScheduleBackfill(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("schedule backfill", &g)
	scheduleUsageOf(fs, "backfill NAME --start TIME [--end TIME] [--overlap buffer-one]")
	start := fs.String("start", "", "take the runs due after this time (RFC 3339, e.g. 2026-11-20T00:00:00Z); required")
	end := fs.String("end", "", "and up to this time (RFC 3339); default now")
	overlap := fs.String("overlap", "buffer-one", "a run due while another is going: skip, buffer-one, buffer-all or allow-all")
	var from, to time.Time
	check := func() error {
		if *start == "" {
			return exitError{code: 2, msg: "schedule backfill needs --start"}
		}
		var err error
		if from, err = backfillTime("--start", *start); err != nil {
			return err
		}
		to = time.Now()
		if *end != "" {
			if to, err = backfillTime("--end", *end); err != nil {
				return err
			}
		}
		if !to.After(from) {
			return exitError{code: 2, msg: fmt.Sprintf("schedule backfill: --end %s is not after --start %s", to.Format(time.RFC3339), from.Format(time.RFC3339))}
		}
		if _, ok := jobs.BackfillOverlaps[*overlap]; !ok {
			return exitError{code: 2, msg: fmt.Sprintf("schedule backfill: --overlap %q: want skip, buffer-one, buffer-all or allow-all", *overlap)}
		}
		return nil
	}
	name, c, closeAll, err := scheduleSetup(ctx, fs, &g, args, "backfill", check)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := jobs.BackfillSchedule(ctx, c, name, from, to, *overlap); err != nil {
		return scheduleError(err)
	}
	fmt.Fprintf(stdout, "schedule %s: backfill of %s to %s requested (%s)\n", name, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), *overlap)
	return nil
}

// backfillTime parses the RFC 3339 time a backfill flag gives.
func backfillTime(flagName, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, exitError{code: 2, msg: fmt.Sprintf("schedule backfill: %s %q: want an RFC 3339 time such as 2026-11-20T00:00:00Z", flagName, v)}
	}
	return t, nil
}

// scheduleSetup takes the schedule's NAME, parses the flags after it, runs
// check on them (nil: none) and connects to the Temporal server; the caller
// calls closeAll.
func scheduleSetup(ctx context.Context, fs *flag.FlagSet, g *Globals, args []string, sub string, check func() error) (string, client.Client, func(), error) {
	name, rest, err := nameArg(fs, args, sub)
	if err != nil {
		return "", nil, nil, err
	}
	if err := parse(fs, rest); err != nil {
		return "", nil, nil, err
	}
	if check != nil {
		if err := check(); err != nil {
			return "", nil, nil, err
		}
	}
	c, closeAll, err := g.connect(ctx, g.logger())
	if err != nil {
		return "", nil, nil, err
	}
	return name, c, closeAll, nil
}

// scheduleUsageOf sets fs's usage: the subcommand's synopsis, then its flags.
func scheduleUsageOf(fs *flag.FlagSet, synopsis string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus schedule %s [flags]\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
}

// nameArg takes the schedule name: the first argument that is neither a
// flag nor a flag's value, so that flags may come before or after it. It
// returns the other arguments, in order, for the flags to parse.
func nameArg(fs *flag.FlagSet, args []string, sub string) (string, []string, error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if isHelp(a) {
			return "", nil, parse(fs, []string{a}) // usage on stdout, exit 0
		}
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return a, append(args[:i:i], args[i+1:]...), nil
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) {
			i++ // its value
		}
	}
	// A flag error (an unknown flag, say) is the one to report.
	if err := parse(fs, args); err != nil {
		return "", nil, err
	}
	fs.Usage()
	return "", nil, exitError{code: 2, msg: "schedule " + sub + " needs a NAME"}
}

// isBoolFlag reports whether f takes no value (-json, not -json true).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// scheduleError says what to do about a schedule that does not exist.
func scheduleError(err error) error {
	if errors.Is(err, jobs.ErrNoSchedule) {
		return exitError{code: 1, msg: err.Error() + " (locus schedule list shows them)"}
	}
	return err
}

func stateText(v jobs.ScheduleView) string {
	if v.Paused {
		return "paused"
	}
	return "active"
}

func nextText(v jobs.ScheduleView) string {
	if v.Paused || len(v.Next) == 0 {
		return "-"
	}
	return v.Next[0].UTC().Format(time.RFC3339)
}

func lastText(v jobs.ScheduleView) string {
	if len(v.Runs) == 0 {
		return "-"
	}
	return v.Runs[len(v.Runs)-1].Started.UTC().Format(time.RFC3339)
}

func reposText(v jobs.ScheduleView) string {
	if v.ReposFile != "" {
		return "from " + v.ReposFile
	}
	if len(v.Repos) > 3 {
		return strings.Join(v.Repos[:3], ", ") + fmt.Sprintf(" and %d more", len(v.Repos)-3)
	}
	return strings.Join(v.Repos, ", ")
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }
