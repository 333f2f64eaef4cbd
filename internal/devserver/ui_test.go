package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
)

// get fetches u and returns its status, content type and body.
func get(t *testing.T, u string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// TestWebUI serves the Web UI of a server whose UI port is taken, with
// fallback: it moves to a free port above, serves the UI's page for any
// route (the workflow link included), and its API, proxied to the
// frontend, lists a workflow started there. Stop frees its port.
func TestWebUI(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	s, err := Start(ctx, Options{DataDir: t.TempDir(), Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelWarn),
		UIAddress: taken.Addr().String(), UIFallback: true})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s.Stop()
	if s.UITakenAddress() != taken.Addr().String() {
		t.Errorf("UITakenAddress = %q, want %s", s.UITakenAddress(), taken.Addr())
	}
	_, p, _ := net.SplitHostPort(s.UIAddress())
	if port, _ := strconv.Atoi(p); port <= taken.Addr().(*net.TCPAddr).Port {
		t.Errorf("the UI listens on %s, want a port above the taken %s", s.UIAddress(), taken.Addr())
	}

	c := dial(t, s.Address(), s.Namespace())
	const id = "ui-listed/1" // a slash: the link must escape it
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, GreetWorkflow, "ui"); err != nil {
		t.Fatal(err)
	}
	waitListed(t, c, id, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)

	link := s.WorkflowURL(id)
	if want := "http://" + s.UIAddress() + "/namespaces/default/workflows/ui-listed%2F1"; link != want {
		t.Errorf("WorkflowURL = %q, want %q", link, want)
	}
	for _, u := range []string{s.UIURL() + "/", link} {
		code, ctype, body := get(t, u)
		if code != http.StatusOK || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, "/_app/immutable/entry/start.") {
			t.Errorf("GET %s: %d %s, want the UI's page; body:\n%.500s", u, code, ctype, body)
		}
	}

	// What the UI's workflow list asks for.
	var list struct {
		Executions []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
		} `json:"executions"`
	}
	code, ctype, body := get(t, s.UIURL()+"/api/v1/namespaces/default/workflows")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "application/json") {
		t.Fatalf("the UI's API listing workflows: %d %s: %.500s", code, ctype, body)
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("the UI's API listing workflows: %v: %.500s", err, body)
	}
	if len(list.Executions) != 1 || list.Executions[0].Execution.WorkflowID != id {
		t.Errorf("the UI's API lists %+v, want the one workflow %s", list.Executions, id)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := checkPortFree(s.UIAddress()); err != nil {
		t.Errorf("the UI's port is still bound after Stop: %v", err)
	}
}

// TestUIAddressTaken: a UI address that is in use, with no fallback, fails
// Start before the server starts, naming the address, and leaves the data
// dir free.
func TestUIAddressTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	s, err := Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug),
		UIAddress: taken.Addr().String()})
	if err == nil {
		_ = s.Stop()
		t.Fatal("Start with a taken UI address succeeded")
	}
	if !errors.Is(err, ErrUIAddress) || !strings.Contains(err.Error(), "web UI cannot listen on "+taken.Addr().String()+": ") ||
		!strings.Contains(err.Error(), "address already in use") {
		t.Errorf("err = %v, want ErrUIAddress naming %s and saying it is in use", err, taken.Addr())
	}
	// Refused before the server starts: its database was never made.
	if _, err := os.Stat(filepath.Join(dir, DBFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refusal came after the server's database was made (stat: %v)", err)
	}
	if addr, err := Running(dir); err != nil || addr != "" {
		t.Errorf("after the refusal Running = %q, %v; want nothing running", addr, err)
	}
	l, err := acquireLock(filepath.Join(dir, LockFileName))
	if err != nil {
		t.Fatalf("the data dir is still locked after the refusal: %v", err)
	}
	l.release()
}

// Two servers started at once whose UI port is taken both fall back, to
// different ports (ui-server would end the process on a port taken twice).
func TestUIFallbackConcurrent(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var wg sync.WaitGroup
	srvs := make([]*Server, 2)
	errs := make([]error, 2)
	for i := range srvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srvs[i], errs[i] = Start(context.Background(), Options{DataDir: t.TempDir(), Address: "127.0.0.1:0",
				Logger: testlog.New(t, slog.LevelWarn), UIAddress: taken.Addr().String(), UIFallback: true})
		}()
	}
	wg.Wait()
	for i, s := range srvs {
		if errs[i] != nil {
			t.Fatalf("server %d: %v", i, errs[i])
		}
		t.Cleanup(func() { s.Stop() })
		if s.UITakenAddress() != taken.Addr().String() {
			t.Errorf("server %d: taken address %q, want %s", i, s.UITakenAddress(), taken.Addr())
		}
	}
	if srvs[0].UIAddress() == srvs[1].UIAddress() {
		t.Errorf("both UIs at %s", srvs[0].UIAddress())
	}
}
