package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/internal/testutil/tlstest"
)

// Against a Temporal server that requires mutual TLS, index (its client and
// its in-process workers) runs with the --tls-* flags, and fails with
// TLS's reason without a client certificate, with another CA, or with the
// flags but no --temporal.
func TestIndexOverMutualTLS(t *testing.T) {
	f := tlstest.New(t)
	srv, err := devserver.Start(testctx.New(t), devserver.Options{DataDir: t.TempDir(), Address: "127.0.0.1:0",
		Logger: testlog.New(t, slog.LevelWarn),
		TLS: &devserver.TLS{CertFile: f.ServerCert, KeyFile: f.ServerKey, CAFile: f.CA,
			ClientCAFile: f.CA, ClientCertFile: f.ClientCert, ClientKeyFile: f.ClientKey}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.py": "def f():\n    return 1\n"})
	r.Commit("one")
	data := t.TempDir()
	index := func(extra ...string) (int, string) {
		t.Helper()
		args := append([]string{"index", "--data-dir", data}, extra...)
		code, _, errOut := runCLI(t, append(args, "acme/a="+r.Dir)...)
		return code, errOut
	}
	at := []string{"--temporal", srv.Address()}
	mtls := append(append([]string{}, at...), "--tls-ca-path", f.CA, "--tls-cert-path", f.ClientCert, "--tls-key-path", f.ClientKey)
	if code, errOut := index(mtls...); code != 0 {
		t.Fatalf("index with mutual TLS: exit %d\n%s", code, errOut)
	}
	// The same from the Temporal SDK's environment variables alone.
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", f.CA)
	t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", f.ClientCert)
	t.Setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", f.ClientKey)
	if code, errOut := index(at...); code != 0 {
		t.Fatalf("index with mutual TLS from TEMPORAL_TLS_*: exit %d\n%s", code, errOut)
	}
	for _, k := range []string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH"} {
		os.Unsetenv(k) // t.Setenv restores them after the test
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no client certificate", append(append([]string{}, at...), "--tls-ca-path", f.CA), "no client certificate was presented"},
		{"another CA", append(append([]string{}, at...), "--tls-ca-path", f.OtherCA, "--tls-cert-path", f.ClientCert, "--tls-key-path", f.ClientKey), "certificate signed by unknown authority"},
		{"a certificate without its key", append(append([]string{}, at...), "--tls-cert-path", f.ClientCert), "give both or neither"},
		{"a missing CA file", append(append([]string{}, at...), "--tls-ca-path", filepath.Join(data, "nope.pem")), "nope.pem"},
		{"an empty API key variable", append(append([]string{}, at...), "--api-key-env", "LOCUS_TEST_NO_SUCH_KEY"), "LOCUS_TEST_NO_SUCH_KEY"},
		{"TLS without --temporal", []string{"--tls-ca-path", f.CA}, "give its address with --temporal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, errOut := index(tc.args...)
			t.Logf("exit %d: %s", code, strings.TrimSpace(errOut))
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want an error saying %q:\n%s", code, tc.want, errOut)
			}
		})
	}
}
