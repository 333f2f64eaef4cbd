package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
)

func runStatus(ctx context.Context, args []string) (err error) {
	var g Globals
	fs := newFlags("status", &g)
	if err := parse(fs, args); err != nil {
		return err
	}
	g.logger()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	// Optional REPO arguments (owner/name, a path, '.' or a URL) filter the
	// list; a path or URL resolves to the stored repository indexed from it.
	want := map[schema.RepoName]string{}
	for _, a := range fs.Args() {
		n, err := resolveRepoOrName(ctx, b, a) // a name not indexed is reported below, with its last run
		if err != nil {
			return err
		}
		want[n] = a
	}
	// Named repositories are read one by one (no listing of the whole
	// store); a damaged manifest is reported for its repository alone.
	var ms []schema.Manifest
	var bad []manifest.RepoError
	if len(want) > 0 {
		var missing []string
		for n, a := range want {
			m, err := manifest.Read(ctx, b, n)
			switch {
			case err != nil:
				bad = append(bad, manifest.RepoError{Repo: n, Key: n.ManifestKey(), Err: err})
			case m == nil:
				why := ""
				if lr, _ := readLastRun(ctx, b, n); lr != nil && !lr.OK {
					why = fmt.Sprintf("; its last run, %s, failed: %s", lr.Fleet, lr.Error)
				}
				missing = append(missing, fmt.Sprintf("%s (from %q%s)", n, a, why))
			default:
				ms = append(ms, *m)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return exitError{code: 1, msg: "not indexed: " + strings.Join(missing, ", ")}
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].Repo < ms[j].Repo })
		sort.Slice(bad, func(i, j int) bool { return bad[i].Repo < bad[j].Repo })
	} else if ms, bad, err = manifest.ListAll(ctx, b); err != nil {
		return err
	}
	defer func() {
		if len(bad) > 0 && err == nil {
			err = exitError{code: 1, msg: fmt.Sprintf("%d repositories have a manifest that cannot be read", len(bad))}
		}
	}()
	for _, e := range bad {
		fmt.Fprintf(stderr, "DAMAGED %s: %s\n", e.Repo, termtext.Escape(e.Err.Error()))
		if errors.Is(e.Err, manifest.ErrDamaged) {
			src := cmp.Or(lastSource(ctx, b, e.Repo), "URL-OR-PATH")
			fmt.Fprintf(stderr, "  to rebuild it, index the repository again from its source: locus index %s=%s (the damaged manifest is kept as %s)\n",
				e.Repo, termtext.Escape(src), e.Repo.DamagedManifestKey())
		}
	}
	for _, m := range ms {
		if w := languageWarning(m); w != "" {
			fmt.Fprintln(stderr, "warning:", w)
		}
	}
	if g.json {
		for i := range ms {
			if ms[i].Parts == nil { // an empty repository: no parts, not "null"
				ms[i].Parts = []schema.Part{}
			}
		}
		return printJSON(ms)
	}
	if len(ms) == 0 {
		if len(bad) == 0 {
			fmt.Fprintln(stdout, "nothing indexed yet; try: locus index .")
		}
		return nil
	}
	next, schedFailed := scheduledNext(ctx, &g, ms)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tHEAD\tCOMMITS\tROWS\tPARTS\tGRAPH FILES\tNODES\tEMBEDDER\tVECTORS\tINDEXED\tLAST RUN\tNEXT SCHEDULED\tURL")
	var failed []string
	for _, m := range ms {
		nodes := "-"
		if m.Graph != nil {
			nodes = fmt.Sprint(m.Graph.Nodes)
		}
		emb, vec := searchColumns(m)
		last := "-"
		if lr, err := readLastRun(ctx, b, m.Repo); err != nil {
			last = "unreadable"
		} else if lr != nil {
			last = lr.Fleet
			if !lr.OK {
				last += " (failed)"
				failed = append(failed, fmt.Sprintf("%s: last run %s failed: %s", m.Repo, lr.Fleet, termtext.Escape(lr.Error)))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Repo, short(m.Head), m.Commits, m.Rows, len(m.Parts),
			graphLanguages(m.Graph), nodes, emb, vec, m.IndexedAt.Local().Format(time.DateTime), last, cmp.Or(next[m.Repo], "-"), termtext.Escape(m.URL))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range append(failed, schedFailed...) {
		fmt.Fprintln(stdout, f)
	}
	printMissing(ms)
	return nil
}

// lastSource is the URL or path the repository's last fleet run indexed it
// from, as that run's summary records it; "" when there is none to read.
func lastSource(ctx context.Context, b *blob.Bucket, repo schema.RepoName) string {
	lr, err := readLastRun(ctx, b, repo)
	if err != nil || lr == nil {
		return ""
	}
	data, err := b.ReadAll(ctx, schema.FleetSummaryKey(lr.Fleet))
	if err != nil {
		return ""
	}
	var sum schema.FleetSummary
	if json.Unmarshal(data, &sum) != nil {
		return ""
	}
	for _, r := range sum.Results {
		if r.Repo == repo {
			return r.URL
		}
	}
	return ""
}

// readLastRun is the repository's last fleet run (nil when none is stored).
func readLastRun(ctx context.Context, b *blob.Bucket, repo schema.RepoName) (*schema.LastRun, error) {
	data, err := b.ReadAll(ctx, repo.LastRunKey())
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lr schema.LastRun
	if err := json.Unmarshal(data, &lr); err != nil {
		return nil, fmt.Errorf("%s: %w", repo.LastRunKey(), err)
	}
	return &lr, nil
}

// scheduledNext is, per repository, the next run of the schedules that
// index it ("<time> (<schedule>)"), when --temporal names a server to ask
// or a locus process (locus worker) runs the data directory's embedded
// server; status never starts one (that process owns the data directory).
// failed says, for each schedule whose last run failed (a bad line in its
// repos file, say), which run and why. A server that cannot be asked
// leaves the column empty, with a warning.
func scheduledNext(ctx context.Context, g *Globals, ms []schema.Manifest) (out map[schema.RepoName]string, failed []string) {
	out = map[schema.RepoName]string{}
	if g.temporal == "" {
		addr, err := devserver.Running(filepath.Join(g.dataDir, "temporal"))
		if err != nil || addr == "" {
			return out, nil
		}
		running := *g
		running.temporal, g = addr, &running
	}
	c, closeAll, err := g.connect(ctx, g.logger())
	if err != nil {
		fmt.Fprintln(stderr, "warning: schedules not shown:", err)
		return out, nil
	}
	defer closeAll()
	vs, err := jobs.ListSchedules(ctx, c)
	if err != nil {
		fmt.Fprintln(stderr, "warning: schedules not shown:", err)
		return out, nil
	}
	best := map[schema.RepoName]time.Time{}
	for _, v := range vs {
		if last, ok := v.LastRun(); ok && last.Failed() {
			failed = append(failed, runFailure(v.Name, last))
		}
		if v.Paused || len(v.Next) == 0 {
			continue
		}
		repos := v.Repos
		if v.ReposFile != "" {
			specs, err := gitrepo.ReadSpecs(nil, v.ReposFile, filepath.Dir(v.ReposFile))
			if err != nil {
				fmt.Fprintf(stderr, "warning: schedule %s: %v\n", v.Name, err)
				continue
			}
			for _, s := range specs {
				repos = append(repos, string(s.Name))
			}
		}
		for _, r := range repos {
			n := schema.RepoName(r)
			if t, ok := best[n]; !ok || v.Next[0].Before(t) {
				best[n] = v.Next[0]
				out[n] = v.Next[0].Local().Format(time.DateTime) + " (" + v.Name + ")"
			}
		}
	}
	return out, failed
}

func runServer(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("server", &g)
	addr := fs.String("address", "127.0.0.1:7233", "frontend listen address")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs, checkHostPort("--address", *addr)); err != nil {
		return err
	}
	log := g.logger()
	dir := filepath.Join(g.dataDir, "temporal")
	o := devserver.Options{DataDir: dir, Address: *addr, Namespace: g.namespace, Logger: log}
	g.ui.uiOptions(&o)
	srv, err := devserver.Start(ctx, o)
	if err != nil {
		return uiStartError(err)
	}
	defer srv.Stop()
	noteUI(srv)
	fmt.Fprintf(stderr, "Temporal server listening on %s (namespace %q, data in %s); Ctrl-C stops it\n", srv.Address(), srv.Namespace(), dir)
	if u := srv.UIURL(); u != "" {
		fmt.Fprintf(stderr, "web UI: %s\n", u)
	}
	<-ctx.Done()
	return nil
}

func runWorker(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("worker", &g)
	backend := fs.String("git-backend", "", "how objects are read: cat-file, go-git, or empty for automatic")
	conc := fs.Int("activities", 4, "concurrent activities per task queue")
	embedded := fs.String("embedded-address", devserver.DefaultAddress, "with no --temporal: the address of the embedded Temporal server this worker starts")
	workerFlags(fs, &g)
	metricsFlag(fs, &g)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs,
		intRange("activities", *conc, 1, 10000),
		checkBackend(*backend),
		g.checkWorkerFlags(),
		checkHostPort("--embedded-address", *embedded),
	); err != nil {
		return err
	}
	log := g.logger()
	stopMetrics, err := g.serveMetrics(ctx)
	if err != nil {
		return err
	}
	defer stopMetrics()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	if g.temporal == "" {
		// A worker is only useful where others can reach its server: say
		// which one it starts, on a fixed address, rather than a private one.
		g.embeddedAddr = *embedded
		fmt.Fprintf(stderr, "worker: no --temporal given: starting the embedded Temporal server on %s (data in %s)\n",
			*embedded, filepath.Join(g.dataDir, "temporal"))
	}
	c, closeAll, err := g.connect(ctx, log)
	if err != nil {
		return err
	}
	defer closeAll()
	cfg, err := g.workerConfig(ctx, b)
	if err != nil {
		return err
	}
	cfg.Backend, cfg.MaxConcurrentActivities = gitrepo.Backend(*backend), *conc
	if g.temporal == "" {
		fmt.Fprintf(stderr, "worker: embedded Temporal server listening on %s; run other commands with --temporal %s --no-worker\n", g.addr, g.addr)
		if g.uiURL != "" {
			fmt.Fprintf(stderr, "worker: web UI: %s\n", g.uiURL)
		}
	}
	fmt.Fprintf(stderr, "worker: connected to %s, queues locus-index and %s; Ctrl-C stops it\n", g.addr, workers.HostQueue(g.dataDir))
	return workers.Run(ctx, cfg, c)
}
