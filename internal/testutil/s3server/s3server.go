// Package s3server runs a real S3 server (versitygw) on 127.0.0.1 for tests.
package s3server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	// EnvBinary names a versitygw binary to use instead of searching for one.
	EnvBinary = "LOCUS_VERSITYGW"
	// Module is what gets installed when no binary is found.
	Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"
	// Region is the region the server and clients agree on.
	Region = "us-east-1"

	startTimeout   = 30 * time.Second
	installTimeout = 10 * time.Minute
)

// Server is a running versitygw with a POSIX backend in a temp directory.
type Server struct {
	// Endpoint is the base URL, e.g. http://127.0.0.1:40123; use path-style addressing.
	Endpoint string
	// AccessKey and SecretKey are the root credentials, random per server.
	AccessKey, SecretKey string
	// Bucket is created empty by Start.
	Bucket string
	// Dir is the POSIX root: one directory per bucket.
	Dir string

	client *s3.Client
	seq    atomic.Int64
}

// Start runs a server until the test ends. It skips the test when versitygw
// can be neither found nor installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := findOrInstall(t)
	dir := t.TempDir()
	s := &Server{AccessKey: "locus" + strings.ToLower(rand.Text()[:12]), SecretKey: rand.Text(), Dir: dir}
	var lastErr error
	// The free port is found by binding and releasing it, so another process
	// can take it before versitygw binds; trying again with a new port fixes that.
	for range 3 {
		if lastErr = s.start(t, bin); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("s3server: %v", lastErr)
	}
	s.client = s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       Region,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
	s.Bucket = s.NewBucket(t)
	return s
}

func (s *Server) start(t testing.TB, bin string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()

	logPath := filepath.Join(t.TempDir(), "versitygw.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", s.Dir)
	// A minimal environment: versitygw reads many VGW_* and other variables.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"ROOT_ACCESS_KEY=" + s.AccessKey,
		"ROOT_SECRET_KEY=" + s.SecretKey,
		"VGW_REGION=" + Region,
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	endpoint := "http://" + addr
	if err := waitReady(endpoint, exited); err != nil {
		stop()
		out, _ := os.ReadFile(logPath)
		return fmt.Errorf("versitygw on %s: %w; output:\n%s", addr, err, tail(out, 2000))
	}
	t.Cleanup(stop)
	s.Endpoint = endpoint
	return nil
}

// waitReady polls until the server answers any HTTP request (an unsigned one
// gets 403, which is fine).
func waitReady(endpoint string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("exited during startup")
		default:
		}
		if resp, err := client.Get(endpoint + "/"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not answering after %v", startTimeout)
}

// NewBucket creates a fresh empty bucket and returns its name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("locus-test-%d", s.seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3server: create bucket %s: %v", name, err)
	}
	return name
}

// Client is an S3 client with root credentials, for checks the blob API
// does not offer (e.g. listing multipart uploads).
func (s *Server) Client() *s3.Client { return s.client }

// URL is a blob.Open URL for bucket and prefix. Credentials are not part of
// it: pass Env to the process that opens it.
func (s *Server) URL(bucket, prefix string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {Region}, "path_style": {"true"}}
	return (&url.URL{Scheme: "s3", Host: bucket, Path: "/" + prefix, RawQuery: q.Encode()}).String()
}

// Env is the AWS credential environment for the server's root user.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=" + Region}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
