package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
)

// clusterAuth is how a client proves itself to a secured Temporal cluster
// (a self-hosted one with mutual TLS, Temporal Cloud with mTLS or an API
// key): the --tls* and --api-key-env flags over the Temporal SDK's own
// environment variables and config file (TEMPORAL_TLS_CLIENT_CERT_PATH,
// TEMPORAL_API_KEY, TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE, … as
// go.temporal.io/sdk/contrib/envconfig reads them). Used with --temporal
// only: the embedded server speaks plain gRPC on the loopback.
type clusterAuth struct {
	tls        bool   // --tls: TLS with the system's CAs; default off unless a TLS setting or API key is given
	certPath   string // --tls-cert-path: client certificate (PEM) for mutual TLS; default none
	keyPath    string // --tls-key-path: its private key (PEM); default none
	caPath     string // --tls-ca-path: CA that signed the server's certificate; default the system's CAs
	serverName string // --tls-server-name: the name the server's certificate holds; default the host of --temporal
	apiKeyEnv  string // --api-key-env: environment variable holding an API key; default TEMPORAL_API_KEY (read by envconfig)
}

// authFlags adds the flags of clusterAuth to fs.
func authFlags(fs *flag.FlagSet, a *clusterAuth) {
	fs.BoolVar(&a.tls, "tls", false, "connect to --temporal over TLS (implied by the other --tls-* flags and by an API key); env TEMPORAL_TLS")
	fs.StringVar(&a.certPath, "tls-cert-path", "", "client certificate (PEM) for mutual TLS with --temporal; env TEMPORAL_TLS_CLIENT_CERT_PATH")
	fs.StringVar(&a.keyPath, "tls-key-path", "", "private key (PEM) of --tls-cert-path; env TEMPORAL_TLS_CLIENT_KEY_PATH")
	fs.StringVar(&a.caPath, "tls-ca-path", "", "CA certificate (PEM) the server's certificate is checked against; empty: the system's CAs; env TEMPORAL_TLS_SERVER_CA_CERT_PATH")
	fs.StringVar(&a.serverName, "tls-server-name", "", "server name the certificate is checked for; empty: the host of --temporal; env TEMPORAL_TLS_SERVER_NAME")
	fs.StringVar(&a.apiKeyEnv, "api-key-env", "", "environment variable holding the API key sent to --temporal (never a flag's value, which other users can see); empty: TEMPORAL_API_KEY")
}

// set reports whether any flag of a was given.
func (a clusterAuth) set() bool { return a.tlsGiven() || a.apiKeyEnv != "" }

// tlsGiven reports whether any TLS flag of a was given.
func (a clusterAuth) tlsGiven() bool {
	return a.tls || a.certPath != "" || a.keyPath != "" || a.caPath != "" || a.serverName != ""
}

// apply sets opts' TLS, credentials and gRPC headers for the cluster at
// opts.HostPort from the Temporal environment and a's flags (which win).
func (a clusterAuth) apply(opts *client.Options) error {
	p, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{})
	if err != nil {
		return fmt.Errorf("the Temporal client settings (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE, TEMPORAL_* variables): %w", err)
	}
	if a.apiKeyEnv != "" {
		k := os.Getenv(a.apiKeyEnv)
		if k == "" {
			return fmt.Errorf("--api-key-env %s: the variable is empty or unset", a.apiKeyEnv)
		}
		p.APIKey = k
	}
	if a.tlsGiven() {
		if p.TLS == nil {
			p.TLS = &envconfig.ClientConfigTLS{}
		}
		p.TLS.Disabled = false
		for _, f := range []struct {
			flag string
			dst  *string
		}{{a.certPath, &p.TLS.ClientCertPath}, {a.keyPath, &p.TLS.ClientKeyPath}, {a.caPath, &p.TLS.ServerCACertPath}, {a.serverName, &p.TLS.ServerName}} {
			if f.flag != "" {
				*f.dst = f.flag
			}
		}
		// A flag's path replaces what the environment gave as data.
		if a.certPath != "" || a.keyPath != "" {
			p.TLS.ClientCertData, p.TLS.ClientKeyData = nil, nil
		}
		if a.caPath != "" {
			p.TLS.ServerCACertData = nil
		}
	}
	if (a.certPath == "") != (a.keyPath == "") {
		return errors.New("--tls-cert-path and --tls-key-path go together: give both or neither")
	}
	o, err := p.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return fmt.Errorf("the TLS settings for Temporal at %s: %w", opts.HostPort, err)
	}
	opts.ConnectionOptions.TLS = o.ConnectionOptions.TLS
	opts.ConnectionOptions.TLSDisabled = o.ConnectionOptions.TLSDisabled
	opts.ConnectionOptions.Authority = o.ConnectionOptions.Authority
	opts.Credentials = o.Credentials
	opts.HeadersProvider = o.HeadersProvider
	return nil
}

// tlsHint is what to add to a failed dial's error with opts: a TLS connection
// without a client certificate is cut by a server that requires one (its
// reason, "certificate required", reaches the client only sometimes).
func tlsHint(opts client.Options) string {
	if t := opts.ConnectionOptions.TLS; t != nil && len(t.Certificates) == 0 && opts.Credentials == nil {
		return " (no client certificate was presented: a server with mutual TLS needs --tls-cert-path and --tls-key-path)"
	}
	return ""
}
