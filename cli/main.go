// Package cli is the locus command line: its commands, the flags they share,
// the store, the connection to Temporal and the in-process workers, and how
// errors and progress are printed. cmd/locus runs Main; cmd/locus-dev builds
// its benchmark commands on the exported flag and output helpers.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/embed"
	"github.com/locus-dev/locus/internal/metrics"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/vectors/milvus"
	"github.com/locus-dev/locus/workers"
)

const usage = `locus indexes git repositories for issue localization.

Usage:
  locus index  [flags] REPO...   index repositories (REPO is [name=]url-or-path[#ref])
  locus status [flags]           show what is indexed
  locus schedule create|list|describe|pause|unpause|trigger|backfill|delete
                                 re-index a fleet on a Temporal Schedule (--every 1h or --cron)
  locus localize [flags] ISSUE   rank the functions an issue is likely to need changed
  locus backlog [flags] FILE     rank the functions for every issue of a backlog (JSONL, CSV, GitHub export)
  locus backlog status [RUN]     done / failed / pending and tokens of backlog runs
  locus triplets --out DIR REPO...    mine training triplets (query, positives, hard negatives) from history
  locus triplets stats DIR       write a triplets output's stats.md and plots again
  locus triplets fit DIR         fit the hybrid method's fusion weights on a triplets output
  locus rank train DIR           train the learned ranker (LambdaMART) on a triplets output
  locus eval --bench F --repo-dir D   evaluate retrieval on a benchmark, write a report
  locus server [flags]           run only the embedded Temporal server
  locus worker [flags]           run workers against a Temporal server

  locus --version                print the version and commit locus was built from

Run "locus COMMAND -h" for the flags of a command. Every flag can also be set
with an environment variable LOCUS_<FLAG> (dashes become underscores).
`

type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// Globals are the flags every command shares, and what they open once per
// process.
type Globals struct {
	dataDir   string      // default $LOCUS_HOME or ./.locus
	temporal  string      // Temporal frontend host:port; default "" = embedded server in the data dir
	namespace string      // default "default"
	store     string      // object store URL; default file://<data-dir>/store
	logLevel  string      // debug, info, warn, error; default info
	json      bool        // machine-readable output
	embedder  string      // embedding model URL (see embed.Open); default the local lexical embedder
	llm       string      // neighbour selector URL (see llm.Open); default the heuristic
	llmConc   int         // concurrent selection calls per worker; default 4
	vectors   string      // vector index URL: "" (local, in the store) or milvus://host:19530
	queryInst string      // instruction prefixed to queries for instruction-tuned embedders; default none
	auth      clusterAuth // TLS and API key for --temporal; default plain gRPC

	// embeddedAddr is where an embedded server listens; default a free
	// loopback port (only this process needs to reach it).
	embeddedAddr string
	// addr is the Temporal frontend connect dialled.
	addr string
	// disk watches the embedded server's log for a full disk; nil with
	// --temporal.
	disk *diskWatch
	// reportsFailures is set by commands that print every failure in their
	// result (index, localize): the SDK's own "Activity error." record of a
	// failed attempt would say it a second time, with the Temporal error
	// chain, so their in-process workers log it at debug. `locus worker`
	// keeps it at error, for its operators.
	reportsFailures bool
	// metricsAddr, when set (--metrics-addr), serves Prometheus metrics
	// there, the Temporal client's included.
	metricsAddr string
	// ui is --ui-addr: where an embedded server serves Temporal's Web UI.
	ui uiAddr
	// uiURL is the Web UI of the embedded server connect started; "" when
	// none.
	uiURL string
	// emb is --embedder once opened: checking the flags opens it, and the
	// workers use the same one (a local model is loaded, a sidecar started,
	// once per process).
	emb embed.Embedder
}

const embedderHelp = "embedding model: onnx:///MODEL-DIR?pool=mean&max_tokens=256 (local encoder on the CPU), openai://host?model=M&dim=D, openai+http://…, tei://…, bedrock://MODEL?dim=D; empty: local lexical embedder (no model)"

// workerFlags adds the flags of commands that run workers in this process.
func workerFlags(fs *flag.FlagSet, g *Globals) {
	fs.StringVar(&g.embedder, "embedder", "", embedderHelp)
	fs.StringVar(&g.vectors, "vectors", "", "vector index: milvus://host:19530[?collection=C&db=D] (token from $LOCUS_MILVUS_TOKEN); empty: exact local index in the store")
	fs.StringVar(&g.queryInst, "query-instruction", "", "prefix for queries sent to the embedder (e.g. SweRank's \"Instruct: Given a github issue, identify the code that needs to be changed to fix the issue.\\nQuery: \")")
	fs.IntVar(&g.llmConc, "llm-concurrency", 4, "LLM calls (neighbour selection and rerank) this process's workers make at once (what the LLM servers' rate limit allows)")
	fs.StringVar(&g.llm, "llm", "", "neighbour selector and reranker: openai://…?model=M, anthropic://…?model=M, bedrock://MODEL; empty: deterministic heuristic (no LLM)")
}

// openEmbedder opens --embedder, once per process; models named by a
// Hugging Face id are kept in the data dir's models/.
func (g *Globals) openEmbedder(ctx context.Context) (embed.Embedder, error) {
	if g.emb != nil {
		return g.emb, nil
	}
	embed.ModelDir = filepath.Join(g.dataDir, "models")
	e, err := embed.Open(ctx, g.embedder)
	if err != nil {
		return nil, err
	}
	g.emb = e
	return e, nil
}

// workerConfig is the worker configuration the flags describe.
func (g *Globals) workerConfig(ctx context.Context, b *blob.Bucket) (workers.Config, error) {
	e, err := g.openEmbedder(ctx)
	if err != nil {
		return workers.Config{}, err
	}
	deps := search.Deps{Embedder: e, QueryInstruction: g.queryInst}
	if g.vectors != "" {
		u, err := milvusAddress(g.vectors)
		if err != nil {
			return workers.Config{}, err
		}
		ix, err := milvus.Open(ctx, milvus.Options{Address: u.Host, Collection: u.Query().Get("collection"), DB: u.Query().Get("db"),
			Model: e.Name(), Dim: e.Dim(), Token: os.Getenv("LOCUS_MILVUS_TOKEN")})
		if err != nil {
			return workers.Config{}, err
		}
		deps.Vectors = ix
	}
	// A command's own embedded server, on a private port, has no other workers.
	onlyHost := g.temporal == "" && g.embeddedAddr == ""
	return workers.Config{DataDir: g.dataDir, Bucket: b, LLM: g.llm, LLMConcurrency: g.llmConc, Search: deps, Namespace: g.namespace,
		OnlyHost: onlyHost}, nil
}

func newFlags(name string, g *Globals) *flag.FlagSet { return NewFlags("locus "+name, g) }

// NewFlags is a flag set named "PROGRAM COMMAND" with the flags every
// command shares, bound to g.
func NewFlags(name string, g *Globals) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	home := os.Getenv("LOCUS_HOME")
	if home == "" {
		home = ".locus"
	}
	fs.StringVar(&g.dataDir, "data-dir", home, "data directory: clones, embedded Temporal database, default store (env LOCUS_HOME)")
	fs.StringVar(&g.temporal, "temporal", "", "Temporal frontend host:port; empty runs an embedded server in the data dir")
	uiFlag(fs, &g.ui)
	fs.StringVar(&g.namespace, "namespace", "default", "Temporal namespace")
	authFlags(fs, &g.auth)
	fs.StringVar(&g.store, "store", "", "object store URL: file:///dir or s3://bucket/prefix?endpoint=…&region=…&path_style=true (default file://<data-dir>/store)")
	fs.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.BoolVar(&g.json, "json", false, "print machine-readable JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [flags]\n\n", fs.Name())
		fs.PrintDefaults()
	}
	return fs
}

// flagsFirst moves the flags that follow positional arguments in args
// before them, so `locus index REPO --data-dir D` means what it says
// instead of indexing a repository named "--data-dir" (the flag package
// stops at the first positional argument). Everything after "--" stays
// positional; a flag's separate value (`--data-dir D`) moves with it,
// except for boolean flags, which take none. A dash word that names no
// flag stays where it is once a positional argument came (an issue's
// text: `locus localize --repo a/b crash with -v`); before one, the flag
// package reports it as unknown.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, _, withValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil && len(pos) > 0 {
			pos = append(pos, a) // words of an issue text (localize), as before
			continue
		}
		flags = append(flags, a)
		if f == nil || withValue {
			continue // an unknown flag is the flag package's to report
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if len(pos) == 0 {
		return flags
	}
	return append(append(flags, "--"), pos...)
}

// parse parses args, letting LOCUS_<NAME> environment variables fill flags
// not given on the command line. -h prints the usage to stdout and returns
// errHelp (exit 0); a bad flag is one message (exit 2) that names the nearest
// flag there is; the global flags are checked before any work starts.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // the flag package would print errors and usage itself
	err := fs.Parse(flagsFirst(fs, args))
	fs.SetOutput(stderr)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(stderr)
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		env := "LOCUS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = exitError{code: 2, msg: fmt.Sprintf("%s: %s=%q: %v", fs.Name(), env, v, e)}
			}
		}
	})
	if err != nil {
		return err
	}
	if f := fs.Lookup("log-level"); f != nil {
		if err := checkLogLevel(f.Value.String()); err != nil {
			return usageError(fs, err)
		}
	}
	if f := fs.Lookup("temporal"); f != nil && f.Value.String() != "" {
		if err := checkHostPort("--temporal", f.Value.String()); err != nil {
			return usageError(fs, err)
		}
	}
	if f := fs.Lookup("ui-addr"); f != nil {
		if u, ok := f.Value.(*uiAddr); ok {
			if err := checkUIAddr(u); err != nil {
				return usageError(fs, err)
			}
		}
	}
	if f := fs.Lookup("store"); f != nil {
		if err := checkStore(f.Value.String()); err != nil {
			return usageError(fs, err)
		}
	}
	if f := fs.Lookup("data-dir"); f != nil && strings.TrimSpace(f.Value.String()) == "" {
		return usageError(fs, errors.New("--data-dir is empty: want a directory"))
	}
	return nil
}

func (g *Globals) logger() *slog.Logger {
	lvl, err := parseLogLevel(g.logLevel)
	if err != nil { // parse has checked it; an unchecked caller gets info
		lvl = slog.LevelInfo
	}
	l := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(l)
	return l
}

func (g *Globals) openStore(ctx context.Context) (*blob.Bucket, error) {
	u := g.store
	if u == "" {
		abs, err := filepath.Abs(filepath.Join(g.dataDir, "store"))
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("create store %s: %w", abs, err)
		}
		u = "file://" + abs
	}
	b, err := blob.Open(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", u, err)
	}
	return b, nil
}

// connect dials the Temporal server, starting the embedded one when no
// address is given. close stops both.
func (g *Globals) connect(ctx context.Context, log *slog.Logger) (client.Client, func(), error) {
	addr := g.temporal
	var srv *devserver.Server
	if addr == "" && g.auth.set() {
		return nil, nil, errors.New("the --tls* and --api-key-env flags are for a Temporal cluster: give its address with --temporal")
	}
	if addr == "" {
		var err error
		listen := g.embeddedAddr
		if listen == "" {
			listen = "127.0.0.1:0"
		}
		g.disk = newDiskWatch(filepath.Join(g.dataDir, "temporal"))
		o := devserver.Options{
			DataDir: filepath.Join(g.dataDir, "temporal"), Address: listen, Namespace: g.namespace, Logger: slog.New(g.disk.handler(log.Handler())),
		}
		g.ui.uiOptions(&o)
		srv, err = devserver.Start(ctx, o)
		if err != nil {
			return nil, nil, fmt.Errorf("start the embedded Temporal server on %s: %w", listen, uiStartError(err))
		}
		noteUI(srv)
		addr, g.uiURL = srv.Address(), srv.UIURL()
		log.Debug("embedded Temporal server", "address", addr, "data", filepath.Join(g.dataDir, "temporal"))
	}
	opts := client.Options{
		HostPort: addr, Namespace: g.namespace,
		Logger: tlog.NewStructuredLogger(slog.New(sdkLogHandler(log.Handler(), g.reportsFailures))),
	}
	if g.metricsAddr != "" {
		opts.MetricsHandler = metrics.SDKHandler()
	}
	if srv == nil {
		if err := g.auth.apply(&opts); err != nil {
			return nil, nil, err
		}
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		if srv != nil {
			srv.Stop()
		}
		return nil, nil, fmt.Errorf("connect to Temporal at %s: %w%s", addr, err, tlsHint(opts))
	}
	g.addr = addr
	return c, func() {
		c.Close()
		if srv != nil {
			srv.Stop()
		}
	}, nil
}

// sdkLogHandler is the Temporal SDK's log handler: warnings and errors only
// (the SDK logs every worker start at info), and, when the command reports
// failures itself, its per-attempt "Activity error." records at debug.
// Records whose error is "context canceled" are at debug too: they follow
// an end the command reports itself (an attempt that finished while its
// heartbeat was in flight, workers stopping at exit), never a fault.
func sdkLogHandler(h slog.Handler, reportsFailures bool) slog.Handler {
	f := levelFloor{Handler: h, min: slog.LevelWarn}
	if reportsFailures {
		f.demote = map[string]bool{"Activity error.": true}
	}
	return f
}

// levelFloor drops records below min, after lowering to debug the records
// whose message is in demote and those whose error is "context canceled".
type levelFloor struct {
	slog.Handler
	min    slog.Level
	demote map[string]bool
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l) || h.Handler.Enabled(ctx, slog.LevelDebug)
}

func (h levelFloor) Handle(ctx context.Context, r slog.Record) error {
	demoted := r.Level > slog.LevelDebug && (h.demote[r.Message] || canceledRecord(r))
	if demoted {
		r.Level = slog.LevelDebug
	}
	if r.Level < h.min && !(demoted && h.Handler.Enabled(ctx, slog.LevelDebug)) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// canceledRecord: r's error (the SDK's "Error" attribute) ends in a context
// cancellation (a gRPC "code = Canceled desc = context canceled" too), not
// a deadline or any other failure.
func canceledRecord(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if strings.EqualFold(a.Key, "error") {
			found = strings.HasSuffix(a.Value.String(), context.Canceled.Error())
			return false
		}
		return true
	})
	return found
}

func (h levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(a), h.min, h.demote}
}

func (h levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(n), h.min, h.demote}
}

var stdout io.Writer = os.Stdout

// printJSON writes v to stdout as indented JSON (what --json prints).
// backends names the retrieval backends that decide a ranking's answers.
func (g *Globals) backends() []string { return []string{g.embedder, g.llm, g.vectors, g.queryInst} }

func printJSON(v any) error { return writeJSON(stdout, v) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// startWorkers starts this process's workers as the flags describe (tweak
// adjusts the configuration); stop ends them.
func (g *Globals) startWorkers(ctx context.Context, b *blob.Bucket, c client.Client, tweak func(*workers.Config)) (stop func(), err error) {
	wc, err := g.workerConfig(ctx, b)
	if err != nil {
		return nil, err
	}
	if tweak != nil {
		tweak(&wc)
	}
	ws, err := workers.Start(wc, c)
	if err != nil {
		return nil, err
	}
	return func() {
		for _, w := range ws {
			w.Stop()
		}
	}, nil
}

// connectWorking connects to Temporal (see connect) and, when withWorkers is
// set, starts this process's workers on it (see startWorkers); closeAll
// stops the workers, then the connection and an embedded server.
func (g *Globals) connectWorking(ctx context.Context, log *slog.Logger, b *blob.Bucket, withWorkers bool, tweak func(*workers.Config)) (client.Client, func(), error) {
	c, closeAll, err := g.connect(ctx, log)
	if err != nil || !withWorkers {
		return c, closeAll, err
	}
	stop, err := g.startWorkers(ctx, b, c, tweak)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return c, func() { stop(); closeAll() }, nil
}

// metricsFlag adds --metrics-addr to fs.
func metricsFlag(fs *flag.FlagSet, g *Globals) {
	fs.StringVar(&g.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (locus's and the Temporal SDK's) at http://ADDR/metrics, e.g. :9090; empty: none")
}

// serveMetrics starts the metrics endpoint when --metrics-addr asks for
// one; stop ends it.
func (g *Globals) serveMetrics(ctx context.Context) (stop func(), err error) {
	if g.metricsAddr == "" {
		return func() {}, nil
	}
	addr, stop, err := metrics.Serve(ctx, g.metricsAddr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "metrics: http://%s/metrics\n", addr)
	return stop, nil
}
