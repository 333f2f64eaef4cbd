package devserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// DefaultUIAddress is where Temporal's Web UI listens unless told otherwise:
// the address `temporal server start-dev` serves it on.
const DefaultUIAddress = "127.0.0.1:8233"

// uiFallbackPorts is how many ports above a taken UI port Start tries when
// Options.UIFallback is set.
const uiFallbackPorts = 100

// ErrUIAddress is returned (wrapped) by Start when the Web UI cannot listen
// on Options.UIAddress (taken, or not an address of this host); the error
// names the address.
var ErrUIAddress = errors.New("web UI cannot listen on")

// uiListen is where the Web UI will listen and, when that is not the port
// asked for, the address that was taken.
type uiListen struct {
	host  string
	port  int
	taken string
}

// pickUIPort finds the port the Web UI listens on: port 0 is any free port;
// a taken port is an error, or with fallback the next free port above it.
func pickUIPort(host string, port int, fallback bool) (uiListen, error) {
	if port == 0 {
		ps, err := pickPorts(host, 1)
		if err != nil {
			return uiListen{}, err
		}
		return uiListen{host: host, port: ps[0]}, nil
	}
	asked := net.JoinHostPort(host, strconv.Itoa(port))
	err := checkPortFree(asked)
	if err == nil {
		return uiListen{host: host, port: port}, nil
	}
	if fallback {
		for p := port + 1; p <= min(port+uiFallbackPorts, 65535); p++ {
			if checkPortFree(net.JoinHostPort(host, strconv.Itoa(p))) == nil {
				return uiListen{host: host, port: p, taken: asked}, nil
			}
		}
		return uiListen{}, fmt.Errorf("%w %s or the %d ports above it: %v", ErrUIAddress, asked, uiFallbackPorts, err)
	}
	return uiListen{}, fmt.Errorf("%w %s: %v", ErrUIAddress, asked, err)
}

// startUI serves Temporal's Web UI (the ui-server module, as `temporal
// server start-dev` embeds it) for the frontend at s.address, and returns
// once it answers.
func (s *Server) startUI(ctx context.Context, l uiListen, fallback bool) error {
	// ui-server listens in Start, exits the process when it cannot (echo's
	// Logger.Fatal) and takes no listener. So the port is checked once more
	// right before, and, among locus processes, under a lock held until the
	// UI answers: two commands started at once (the default port taken,
	// both falling back) never pick the same port.
	unlock := lockUIPorts(ctx)
	defer unlock()
	addr := net.JoinHostPort(l.host, strconv.Itoa(l.port))
	if err := checkPortFree(addr); err != nil {
		if !fallback {
			return fmt.Errorf("%w %s: %v", ErrUIAddress, addr, err)
		}
		again, err := pickUIPort(l.host, l.port, true)
		if err != nil {
			return err
		}
		again.taken = cmp.Or(l.taken, again.taken)
		l = again
		s.uiTaken = l.taken
	}
	cfg := &uiconfig.Config{
		Host:                l.host,
		Port:                l.port,
		TemporalGRPCAddress: s.address,
		EnableUI:            true,
		DefaultNamespace:    s.namespace,
		// Served over plain HTTP on this host: the CSRF cookie must not
		// require HTTPS.
		CORS: uiconfig.CORS{CookieInsecure: true},
		// No requests to the internet (news, releases) and no access log.
		DisableNewsFetch: true,
		HideLogs:         true,
	}
	if t := s.tlsOpts; t != nil {
		// The UI dials the frontend as the server's own clients do.
		cfg.TLS = uiconfig.TLS{CaFile: t.CAFile, CertFile: t.ClientCertFile, KeyFile: t.ClientKeyFile,
			ServerName: s.clientTLS.ServerName, EnableHostVerification: true}
	}
	ui := uiserver.NewServer(uioptions.WithConfigProvider(cfg))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ui.Start() // nil once Stop closes it
	}()
	s.ui, s.uiDone = ui, done
	s.uiAddress = net.JoinHostPort(dialHost(l.host), strconv.Itoa(l.port))
	return waitHTTP(ctx, "http://"+s.uiAddress+"/healthz")
}

// waitHTTP polls u until it answers 200 OK.
func waitHTTP(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("web UI at %s not ready: %w (last error: %v)", u, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopUI closes the Web UI's listener and waits for its server to return.
func (s *Server) stopUI() {
	if s.ui == nil {
		return
	}
	s.ui.Stop()
	<-s.uiDone
}

// UIAddress is the host:port a browser reaches the Web UI at; "" when
// Start serves none.
func (s *Server) UIAddress() string { return s.uiAddress }

// UITakenAddress is the Web UI address that was asked for but taken, when
// Options.UIFallback moved the UI to the next free port; "" otherwise.
func (s *Server) UITakenAddress() string { return s.uiTaken }

// UIURL is the Web UI's address as a URL; "" when Start serves none.
func (s *Server) UIURL() string {
	if s.uiAddress == "" {
		return ""
	}
	return "http://" + s.uiAddress
}

// WorkflowURL is the Web UI's page of the workflow with this id in the
// server's namespace (the UI opens its latest run); "" when Start serves no
// UI.
func (s *Server) WorkflowURL(id string) string {
	if s.uiAddress == "" {
		return ""
	}
	return WorkflowURL(s.UIURL(), s.namespace, id)
}

// WorkflowURL is the page of a workflow in the Web UI at base (its latest
// run), in the URL layout of the UI this package serves.
func WorkflowURL(base, namespace, id string) string {
	return base + "/namespaces/" + url.PathEscape(namespace) + "/workflows/" + url.PathEscape(id)
}

// lockUIPorts takes the lock locus processes choose a Web UI port under (a
// file in the system's temporary directory), waiting for it at most until
// ctx ends; the returned func releases it. When the lock cannot be had,
// the UI starts without it.
func lockUIPorts(ctx context.Context) (unlockFn func()) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "locus-webui-ports.lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return func() {}
	}
	for {
		ok, err := tryLock(f)
		if ok {
			return func() { unlock(f); f.Close() }
		}
		if err != nil {
			f.Close()
			return func() {}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return func() {}
		case <-time.After(20 * time.Millisecond):
		}
	}
}
