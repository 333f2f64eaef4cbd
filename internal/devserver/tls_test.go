package devserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/internal/testutil/tlstest"
)

// A server with mutual TLS runs workflows for a client that presents a
// certificate its CA signed, and turns away one without a certificate,
// one that trusts another CA and one that speaks plain gRPC.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	f := tlstest.New(t)
	ctx := testctx.New(t)
	s, err := Start(ctx, Options{DataDir: t.TempDir(), Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug), UIAddress: "127.0.0.1:0",
		TLS: &TLS{CertFile: f.ServerCert, KeyFile: f.ServerKey, CAFile: f.CA, ClientCAFile: f.CA, ClientCertFile: f.ClientCert, ClientKeyFile: f.ClientKey}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Stop() })

	pool := func(file string) *x509.CertPool {
		pem, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(pem)
		return p
	}
	cert, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	dialTLS := func(cfg *tls.Config) (client.Client, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return client.DialContext(ctx, client.Options{HostPort: s.Address(), Namespace: s.Namespace(),
			Logger:            sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			ConnectionOptions: client.ConnectionOptions{TLS: cfg}})
	}
	c, err := dialTLS(&tls.Config{RootCAs: pool(f.CA), Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatalf("dial with the client certificate: %v", err)
	}
	t.Cleanup(c.Close)
	w := startWorker(t, c)
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-tls", TaskQueue: taskQueue}, GreetWorkflow, "tls")
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil || !strings.Contains(got, "tls") {
		t.Fatalf("workflow result %q, %v", got, err)
	}

	// The Web UI reaches the frontend over mutual TLS too.
	if code, _, body := get(t, s.UIURL()+"/api/v1/namespaces/default/workflows"); code != 200 || !strings.Contains(body, "greet-tls") {
		t.Errorf("the Web UI's workflow list: %d %s", code, body)
	}

	for _, tc := range []struct {
		name string
		cfg  *tls.Config
	}{
		{"no client certificate", &tls.Config{RootCAs: pool(f.CA)}},
		{"another CA", &tls.Config{RootCAs: pool(f.OtherCA), Certificates: []tls.Certificate{cert}}},
		{"plain gRPC", nil},
	} {
		if c, err := dialTLS(tc.cfg); err == nil {
			c.Close()
			t.Errorf("%s: dialled a mutual-TLS server", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
