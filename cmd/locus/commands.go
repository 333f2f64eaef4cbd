package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
)

func runStatus(ctx context.Context, args []string) (err error) {
	var g globals
	fs := newFlags("status", &g)
	if err := parse(fs, args); err != nil {
		return err
	}
	// Optional REPO arguments (owner/name, a path, '.' or a URL) filter the list.
	want := map[schema.RepoName]string{}
	for _, a := range fs.Args() {
		n, err := gitrepo.ResolveRepoArg(a)
		if err != nil {
			return err
		}
		want[n] = a
	}
	g.logger()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
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
				missing = append(missing, fmt.Sprintf("%s (from %q)", n, a))
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
			err = exitError{code: 1, msg: fmt.Sprintf("%d repositories have a damaged manifest (re-run locus index on them)", len(bad))}
		}
	}()
	for _, e := range bad {
		fmt.Fprintf(stderr, "DAMAGED %s: %v\n", e.Repo, e.Err)
	}
	for _, m := range ms {
		w, err := languageWarning(ctx, b, m)
		if err != nil {
			w = err.Error() // one unreadable file list must not hide the others
		}
		if w != "" {
			fmt.Fprintln(stderr, "warning:", w)
		}
	}
	if g.json {
		for i := range ms {
			ms[i].Parts = nil
		}
		return printJSON(ms)
	}
	if len(ms) == 0 {
		fmt.Fprintln(stdout, "nothing indexed yet; try: locus index .")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tHEAD\tCOMMITS\tROWS\tPARTS\tGRAPH FILES\tNODES\tEMBEDDER\tVECTORS\tINDEXED\tURL")
	for _, m := range ms {
		nodes := "-"
		if m.Graph != nil {
			nodes = fmt.Sprint(m.Graph.Nodes)
		}
		emb, vec := searchColumns(m)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Repo, short(m.Head), m.Commits, m.Rows, len(m.Parts),
			graphLanguages(m.Graph), nodes, emb, vec, m.IndexedAt.Local().Format(time.DateTime), m.URL)
	}
	return tw.Flush()
}

func runServer(ctx context.Context, args []string) error {
	var g globals
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
	srv, err := devserver.Start(ctx, devserver.Options{DataDir: dir, Address: *addr, Namespace: g.namespace, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Fprintf(os.Stderr, "Temporal server listening on %s (namespace %q, data in %s); Ctrl-C stops it\n", srv.Address(), srv.Namespace(), dir)
	<-ctx.Done()
	return nil
}

func runWorker(ctx context.Context, args []string) error {
	var g globals
	fs := newFlags("worker", &g)
	backend := fs.String("git-backend", "", "how objects are read: cat-file, go-git, or empty for automatic")
	conc := fs.Int("activities", 4, "concurrent activities per task queue")
	embedded := fs.String("embedded-address", devserver.DefaultAddress, "with no --temporal: the address of the embedded Temporal server this worker starts")
	workerFlags(fs, &g)
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
	}
	fmt.Fprintf(stderr, "worker: connected to %s, queues locus-index and %s; Ctrl-C stops it\n", g.addr, workers.HostQueue(g.dataDir))
	return workers.Run(ctx, cfg, c)
}
