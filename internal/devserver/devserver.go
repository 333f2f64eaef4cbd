// Package devserver runs the embedded Temporal server locus uses when no cluster is given, persisted in a SQLite file under a data dir.
package devserver

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"

	uiserver "github.com/temporalio/ui-server/v2/server"
)

const (
	// DefaultAddress is the frontend address used when Options.Address is empty.
	DefaultAddress = "127.0.0.1:7233"
	// DefaultNamespace is the namespace created when Options.Namespace is empty.
	DefaultNamespace = "default"
	// DBFileName and LockFileName are the files Start keeps in the data dir.
	DBFileName   = "temporal.db"
	LockFileName = "temporal.lock"

	// NamespaceRetention is how long closed workflows are kept.
	NamespaceRetention = 7 * 24 * time.Hour

	clusterName  = "active"
	internalHost = "127.0.0.1"
	readyTimeout = 30 * time.Second
)

// pickPorts is freePorts; tests replace it to force a port conflict.
var pickPorts = freePorts

// Options configure Start. Zero values get the defaults written next to each field.
type Options struct {
	// DataDir holds the SQLite database (DataDir/temporal.db) and the lock
	// file; required. Created if missing.
	DataDir string
	// Address is the frontend gRPC listen address; default "127.0.0.1:7233".
	// Port 0 picks a free port; Server.Address reports the one chosen.
	Address string
	// Namespace is created on start if missing; default "default".
	Namespace string
	// Logger receives the server's warnings and errors; default slog.Default().
	Logger *slog.Logger
	// UIAddress is where Temporal's Web UI listens (host:port, e.g.
	// DefaultUIAddress); empty: no UI. Port 0 picks a free port;
	// Server.UIAddress reports the one chosen.
	UIAddress string
	// UIFallback: when UIAddress's port is taken, the UI listens on the next
	// free port above it (Server.UITakenAddress says which was taken)
	// instead of Start failing with ErrUIAddress.
	UIFallback bool
	// TLS, when set, serves the frontend over TLS; default nil: plain gRPC.
	TLS *TLS
}

// TLS is the embedded server's frontend TLS: what a secured cluster's
// frontend does, so that clients' TLS settings can be tested against it.
type TLS struct {
	// CertFile and KeyFile are the frontend's certificate and key (PEM);
	// required.
	CertFile, KeyFile string
	// CAFile is the CA that signed CertFile, which the server's own clients
	// (its system worker, its readiness check) trust; required.
	CAFile string
	// ServerName is a name CertFile holds; default the listen host.
	ServerName string
	// ClientCAFile, when set, makes it mutual TLS: clients must present a
	// certificate this CA signed, and the server's own clients present
	// ClientCertFile and ClientKeyFile. Default empty: no client
	// certificate asked for.
	ClientCAFile, ClientCertFile, ClientKeyFile string
}

// clientConfig is the tls.Config of the server's own clients.
func (t *TLS) clientConfig(host string) (*tls.Config, error) {
	ca, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("TLS CA %s: no PEM certificate", t.CAFile)
	}
	c := &tls.Config{RootCAs: pool, ServerName: cmp.Or(t.ServerName, host), MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		cert, err := tls.LoadX509KeyPair(t.ClientCertFile, t.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// apply sets the frontend's TLS and its system worker's in conf.
func (t *TLS) apply(conf *config.Config, host string) {
	client := config.ClientTLS{ServerName: cmp.Or(t.ServerName, host), RootCAFiles: []string{t.CAFile}}
	conf.Global.TLS.Frontend = config.GroupTLS{
		Server: config.ServerTLS{CertFile: t.CertFile, KeyFile: t.KeyFile},
		Client: client,
	}
	conf.Global.TLS.SystemWorker = config.WorkerTLS{Client: client}
	if t.ClientCAFile != "" {
		conf.Global.TLS.Frontend.Server.ClientCAFiles = []string{t.ClientCAFile}
		conf.Global.TLS.Frontend.Server.RequireClientAuth = true
		conf.Global.TLS.SystemWorker.CertFile = t.ClientCertFile
		conf.Global.TLS.SystemWorker.KeyFile = t.ClientKeyFile
	}
}

// Server is a running embedded Temporal server.
type Server struct {
	address   string
	namespace string
	srv       temporal.Server
	lock      *dirLock
	logs      *logState
	clientTLS *tls.Config // the server's own clients', with Options.TLS
	tlsOpts   *TLS        // Options.TLS

	ui        *uiserver.Server
	uiDone    chan struct{} // closed when the UI server has returned
	uiAddress string
	uiTaken   string

	stopOnce sync.Once
	stopErr  error
}

// Start runs a Temporal server (frontend, history, matching and worker
// services) in this process, persisting to DataDir/temporal.db, and returns
// once the frontend answers for the namespace. The data dir is locked until
// Stop, so a second process using it fails fast.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.DataDir == "" {
		return nil, errors.New("devserver: Options.DataDir is required")
	}
	if o.Address == "" {
		o.Address = DefaultAddress
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	host, port, err := parseAddress(o.Address)
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	var uiHost string
	var uiPort int
	if o.UIAddress != "" {
		if uiHost, uiPort, err = parseAddress(o.UIAddress); err != nil {
			return nil, fmt.Errorf("devserver: web UI %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	dir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("devserver: data dir %q: %w", o.DataDir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("devserver: create data dir: %w", err)
	}

	lock, err := acquireLock(filepath.Join(dir, LockFileName))
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	started := false
	defer func() {
		if !started {
			lock.release()
		}
	}()

	if port != 0 {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		if err := checkPortFree(addr); err != nil {
			return nil, fmt.Errorf("devserver: frontend address %s is not free (%w); if a Temporal server already runs there, connect to it with --temporal %s, or choose another address", addr, err, addr)
		}
	}
	// Checked before the server starts, so that a taken port costs nothing;
	// after the lock, so that a second process on the data dir is told so.
	var ui uiListen
	if o.UIAddress != "" {
		if ui, err = pickUIPort(uiHost, uiPort, o.UIFallback); err != nil {
			return nil, fmt.Errorf("devserver: %w", err)
		}
	}

	dbPath := filepath.Join(dir, DBFileName)
	sqlCfg := sqliteConfig(dbPath)
	if err := prepareDB(sqlCfg, o.Namespace); err != nil {
		return nil, fmt.Errorf("devserver: %s: %w", dbPath, err)
	}

	// Ports are picked last to keep the window in which another process
	// could take one short.
	if port == 0 {
		ps, err := pickPorts(host, 1)
		if err != nil {
			return nil, fmt.Errorf("devserver: %w", err)
		}
		port = ps[0]
	}
	// history, matching, worker
	internalPorts, err := pickPorts(internalHost, 3)
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}

	s := &Server{
		address:   net.JoinHostPort(dialHost(host), strconv.Itoa(port)),
		namespace: o.Namespace,
		lock:      lock,
		logs:      &logState{},
	}
	s.logs.min.Set(slog.LevelWarn)
	logger := newServerLogger(o.Logger, s.logs)

	conf := serverConfig(host, port, internalPorts, s.address, sqlCfg)
	if o.TLS != nil {
		if s.clientTLS, err = o.TLS.clientConfig(dialHost(host)); err != nil {
			return nil, fmt.Errorf("devserver: %w", err)
		}
		o.TLS.apply(conf, dialHost(host))
		s.tlsOpts = o.TLS
	}
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("devserver: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("devserver: claim mapper: %w", err)
	}
	hosts := map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(s.address),
		primitives.HistoryService:  static.SingleLocalHost(net.JoinHostPort(internalHost, strconv.Itoa(internalPorts[0]))),
		primitives.MatchingService: static.SingleLocalHost(net.JoinHostPort(internalHost, strconv.Itoa(internalPorts[1]))),
		primitives.WorkerService:   static.SingleLocalHost(net.JoinHostPort(internalHost, strconv.Itoa(internalPorts[2]))),
	}
	srv, err := s.build(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		// Static membership: no ringpop, so no membership ports and no gossip.
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dynamicConfig()),
	)
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	s.srv = srv
	started = true

	if err := s.waitReady(ctx, o.Logger); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("devserver: %w", err)
	}
	if o.UIAddress != "" {
		s.uiTaken = ui.taken
		if err := s.startUI(ctx, ui, o.UIFallback); err != nil {
			_ = s.Stop()
			return nil, fmt.Errorf("devserver: %w", err)
		}
	}
	if err := lock.write(lockInfo{PID: os.Getpid(), Address: s.address}); err != nil {
		o.Logger.Warn("devserver: could not record address in lock file", "error", err)
	}
	return s, nil
}

// build creates and starts the server, turning a Fatal logged on the way
// into an error (see serverLogger). After such a failure some listeners the
// server opened may stay bound until the process exits.
func (s *Server) build(opts ...temporal.ServerOption) (srv temporal.Server, err error) {
	s.logs.starting.Store(true)
	defer s.logs.starting.Store(false)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("start server: %w", f)
		}
	}()
	srv, err = temporal.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("create server: %w", err)
	}
	if err := srv.Start(); err != nil {
		s.logs.min.Set(slog.LevelError)
		s.logs.stopping.Store(true)
		_ = srv.Stop()
		return nil, fmt.Errorf("start server: %w", err)
	}
	return srv, nil
}

// Address is the host:port clients dial.
func (s *Server) Address() string { return s.address }

// Namespace is the namespace Start ensured exists.
func (s *Server) Namespace() string { return s.namespace }

// Stop shuts the server down and releases the data dir. Safe to call more
// than once; later calls return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		// Services stopping one by one warn about peers that are already
		// gone; those warnings say nothing about the user's work.
		s.logs.min.Set(slog.LevelError)
		s.logs.stopping.Store(true)
		s.stopUI()
		if err := s.srv.Stop(); err != nil {
			s.stopErr = fmt.Errorf("devserver: stop: %w", err)
		}
		s.lock.release()
	})
	return s.stopErr
}

// waitReady returns once the frontend serves the namespace, so callers can
// dial and start workflows immediately.
func (s *Server) waitReady(ctx context.Context, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	nc, err := sdkclient.NewNamespaceClient(sdkclient.Options{
		HostPort:          s.address,
		Logger:            sdklog.NewStructuredLogger(slog.New(levelFilter{next: logger.Handler(), min: &s.logs.min})),
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: s.clientTLS},
	})
	if err != nil {
		return fmt.Errorf("readiness client: %w", err)
	}
	defer nc.Close()
	for {
		callCtx, callCancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = nc.Describe(callCtx, s.namespace)
		callCancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server at %s not ready for namespace %q: %w (last error: %v)", s.address, s.namespace, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func serverConfig(host string, port int, internalPorts []int, dialAddr string, sqlCfg *config.SQL) *config.Config {
	const store = "sqlite-default"
	conf := &config.Config{}
	// Bounds how long services may take to start (twice this).
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = internalHost
	// Metrics (nil) and pprof (port 0) stay off: nothing listens beyond the
	// gRPC ports below, and the frontend's HTTP API (HTTPPort 0) is off too.
	conf.Persistence.DefaultStore = store
	conf.Persistence.VisibilityStore = store
	// Fixed once the database exists.
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{store: {SQL: sqlCfg}}
	conf.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             dialAddr,
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	internal := func(p int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: p, BindOnIP: internalHost}}
	}
	conf.Services = map[string]config.Service{
		string(primitives.FrontendService): {RPC: config.RPC{GRPCPort: port, BindOnIP: host}},
		string(primitives.HistoryService):  internal(internalPorts[0]),
		string(primitives.MatchingService): internal(internalPorts[1]),
		string(primitives.WorkerService):   internal(internalPorts[2]),
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The worker service's system workflows dial the frontend through this.
	conf.PublicClient.HostPort = dialAddr
	return conf
}

// dynamicConfig holds the dev-server settings the Temporal CLI uses too.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Search attributes and Nexus endpoints are usable right after they are
		// created, instead of after a cache refresh.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		dynamicconfig.ForceNexusEndpointRefreshOnRead.Key():         true,
		// Reading through the caches above costs persistence calls; raise the
		// limits in the same ratio as the defaults.
		dynamicconfig.FrontendPersistenceMaxQPS.Key(): 10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():  45000,
		// List/Count workflows are the usual way to watch a local run.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// One process: keep the mutable-state cache small.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8096,
	}
}
