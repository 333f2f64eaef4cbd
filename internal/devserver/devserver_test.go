package devserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	persistencesql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/resolver"

	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
)

const taskQueue = "devserver-test"

// childDirEnv makes TestChildServer run a server on that dir for
// TestKilledServerKeepsState, which kills it with SIGKILL.
const childDirEnv = "LOCUS_DEVSERVER_TEST_CHILD_DIR"

func Greet(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

func GreetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, Greet, name).Get(ctx, &out)
	return out, err
}

// SignalWorkflow greets, then waits for a "go" signal and appends its value.
func SignalWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	if err := workflow.ExecuteActivity(ctx, Greet, name).Get(ctx, &greeting); err != nil {
		return "", err
	}
	var suffix string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &suffix)
	return greeting + suffix, nil
}

func startServer(t *testing.T, dir string) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	begin := time.Now()
	s, err := Start(ctx, Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("server at %s started in %v", s.Address(), time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

func dial(t *testing.T, addr, namespace string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  addr,
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

func startWorker(t *testing.T, c client.Client) worker.Worker {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(GreetWorkflow)
	w.RegisterWorkflow(SignalWorkflow)
	w.RegisterActivityWithOptions(Greet, activity.RegisterOptions{Name: "Greet"})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	return w
}

// waitListed polls visibility until the workflow shows up closed with status.
func waitListed(t *testing.T, c client.Client, id string, status enumspb.WorkflowExecutionStatus) {
	t.Helper()
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	query := fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = '%s'", id, status)
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil && len(resp.Executions) == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ListWorkflow %q: never found (last error %v)", query, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestRunWorkflow(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())
	if s.Namespace() != DefaultNamespace {
		t.Errorf("Namespace() = %q, want %q", s.Namespace(), DefaultNamespace)
	}
	c := dial(t, s.Address(), s.Namespace())
	w := startWorker(t, c)
	defer w.Stop()

	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	// A custom search attribute, usable at once (no cache delay).
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        s.Namespace(),
		SearchAttributes: map[string]enumspb.IndexedValueType{"LocusRepo": enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	}); err != nil {
		t.Fatalf("AddSearchAttributes: %v", err)
	}
	repoKey := temporal.NewSearchAttributeKeyKeyword("LocusRepo")
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    "greet-1",
		TaskQueue:             taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(repoKey.ValueSet("psf/requests")),
	}, GreetWorkflow, "locus")
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "hello locus" {
		t.Errorf("result = %q, want %q", got, "hello locus")
	}
	desc, err := c.DescribeWorkflowExecution(ctx, "greet-1", "")
	if err != nil {
		t.Fatalf("DescribeWorkflowExecution: %v", err)
	}
	if st := desc.WorkflowExecutionInfo.Status; st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("status = %v, want completed", st)
	}
	waitListed(t, c, "greet-1", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "LocusRepo = 'psf/requests'"})
	if err != nil || len(resp.Executions) != 1 {
		t.Errorf("ListWorkflow by custom search attribute: %d executions, err %v; want 1", len(resp.GetExecutions()), err)
	}
}

// waitBlocked waits until the workflow's last event is a completed workflow
// task after the activity completed, i.e. it sits waiting for the signal.
func waitBlocked(t *testing.T, c client.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	for {
		it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var activityDone bool
		var last enumspb.EventType
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history: %v", err)
			}
			last = ev.EventType
			if last == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
				activityDone = true
			}
		}
		if activityDone && last == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workflow %s never blocked on its signal (last event %v)", id, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func signalAndFinish(t *testing.T, c client.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	if err := c.SignalWorkflow(ctx, id, "", "go", ", again"); err != nil {
		t.Fatalf("SignalWorkflow: %v", err)
	}
	w := startWorker(t, c)
	defer w.Stop()
	var got string
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if want := "hello persisted, again"; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
	waitListed(t, c, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
}

// TestRestartKeepsState runs a workflow halfway on one server, stops it, and
// finishes the workflow on a new server over the same data dir.
func TestRestartKeepsState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const id = "restart-1"

	a, err := Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug)})
	if err != nil {
		t.Fatalf("Start A: %v", err)
	}
	ca, err := client.Dial(client.Options{
		HostPort:  a.Address(),
		Namespace: a.Namespace(),
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		t.Fatalf("dial A: %v", err)
	}
	wa := startWorker(t, ca)
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	if _, err := ca.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, SignalWorkflow, "persisted"); err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	waitBlocked(t, ca, id)
	wa.Stop()
	ca.Close()
	stopBegin := time.Now()
	if err := a.Stop(); err != nil {
		t.Fatalf("Stop A: %v", err)
	}
	t.Logf("server A stopped in %v", time.Since(stopBegin).Round(time.Millisecond))
	if err := a.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	b := startServer(t, dir)
	cb := dial(t, b.Address(), b.Namespace())
	signalAndFinish(t, cb, id)
}

// TestChildServer is the server process TestKilledServerKeepsState kills.
func TestChildServer(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("helper process for TestKilledServerKeepsState")
	}
	s, err := Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0"})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("ADDR", s.Address())
	select {}
}

// TestKilledServerKeepsState starts a workflow on a server in another
// process, kills that process with SIGKILL, and finishes the workflow on a
// new server over the same data dir. It also shows the lock dies with it.
func TestKilledServerKeepsState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const id = "killed-1"

	cmd := exec.Command(os.Args[0], "-test.run=^TestChildServer$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				addrCh <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
		close(addrCh)
	}()
	var addr string
	select {
	case a, ok := <-addrCh:
		if !ok {
			t.Fatalf("child server did not start; stderr:\n%s", stderr.String())
		}
		addr = a
	case <-testctx.New(t).Done():
		t.Fatalf("child server did not start before the test deadline; stderr:\n%s", stderr.String())
	}

	// While the child lives, the data dir is locked.
	_, err = Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug)})
	if !errors.Is(err, ErrDataDirLocked) || !strings.Contains(err.Error(), "--temporal "+addr) {
		t.Errorf("Start on a dir locked by another process: err = %v, want ErrDataDirLocked naming --temporal %s", err, addr)
	}

	ca, err := client.Dial(client.Options{
		HostPort:  addr,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		Namespace: DefaultNamespace,
	})
	if err != nil {
		t.Fatalf("dial child: %v", err)
	}
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	// No worker here: the workflow exists only as persisted state when the
	// child dies.
	if _, err := ca.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, SignalWorkflow, "persisted"); err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	ca.Close()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	_ = cmd.Wait()
	killed = true

	b := startServer(t, dir)
	cb := dial(t, b.Address(), b.Namespace())
	signalAndFinish(t, cb, id)
}

func TestLockedDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// An empty database file, as a process killed during its first start
	// leaves behind, is set up like a missing one.
	if err := os.WriteFile(filepath.Join(dir, DBFileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := startServer(t, dir)

	begin := time.Now()
	_, err := Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug)})
	if err == nil {
		t.Fatal("second Start on a locked data dir succeeded")
	}
	if !errors.Is(err, ErrDataDirLocked) {
		t.Errorf("err = %v, want ErrDataDirLocked", err)
	}
	for _, want := range []string{"another locus process", filepath.Join(dir, LockFileName), "--temporal " + a.Address()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("refusal took %v, want fast", d)
	}

	// Another data dir, but the frontend address is taken.
	_, err = Start(context.Background(), Options{DataDir: t.TempDir(), Address: a.Address(), Logger: testlog.New(t, slog.LevelDebug)})
	if err == nil || !strings.Contains(err.Error(), "--temporal "+a.Address()) {
		t.Errorf("Start on a taken address: err = %v, want it to suggest --temporal %s", err, a.Address())
	}
}

// TestInternalPortTaken covers the race between choosing a port and the
// server binding it: Start must fail with an error, not crash the process,
// and leave the data dir usable. Not parallel: it replaces pickPorts.
func TestInternalPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	pickPorts = func(host string, n int) ([]int, error) {
		ps, err := freePorts(host, n)
		if err == nil && n == 3 {
			ps[0] = takenPort // history
		}
		return ps, err
	}
	t.Cleanup(func() { pickPorts = freePorts })

	dir := t.TempDir()
	_, err = Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug)})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Start with a taken history port: err = %v, want one saying the address is in use", err)
	}
	pickPorts = freePorts
	startServer(t, dir)
}

func TestSchemaVersionMismatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := sqliteConfig(filepath.Join(dir, DBFileName))
	if err := prepareDB(cfg, DefaultNamespace); err != nil {
		t.Fatalf("prepareDB on a new dir: %v", err)
	}
	if err := prepareDB(cfg, DefaultNamespace); err != nil {
		t.Fatalf("prepareDB again: %v", err)
	}
	db, err := persistencesql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateSchemaVersion(schemaVersionKey, "0.1", "0.1"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	_, err = Start(context.Background(), Options{DataDir: dir, Address: "127.0.0.1:0", Logger: testlog.New(t, slog.LevelDebug)})
	if err == nil || !strings.Contains(err.Error(), "schema 0.1") {
		t.Errorf("Start on a database with another schema version: err = %v, want it to name schema 0.1", err)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no data dir", Options{}, "DataDir is required"},
		{"address without port", Options{DataDir: t.TempDir(), Address: "127.0.0.1"}, "want host:port"},
		{"host name", Options{DataDir: t.TempDir(), Address: "example.com:7233"}, "must be an IP"},
		{"bad port", Options{DataDir: t.TempDir(), Address: "127.0.0.1:99999"}, "port"},
		{"UI host name", Options{DataDir: t.TempDir(), Address: "127.0.0.1:0", UIAddress: "example.com:8233"}, `web UI address "example.com:8233": host must be an IP`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(context.Background(), tc.o)
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestRunning finds the address of a server running over a data dir, and
// nothing once it stopped or when its holder died without stopping it.
func TestRunning(t *testing.T) {
	dir := t.TempDir()
	if addr, err := Running(dir); err != nil || addr != "" {
		t.Fatalf("Running on a fresh dir = %q, %v; want none", addr, err)
	}
	s := startServer(t, dir)
	if addr, err := Running(dir); err != nil || addr != s.Address() {
		t.Errorf("Running while it serves = %q, %v; want %s", addr, err, s.Address())
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if addr, err := Running(dir); err != nil || addr != "" {
		t.Errorf("Running after Stop = %q, %v; want none", addr, err)
	}
	// A holder killed with kill -9 leaves its details but not its lock.
	stale := filepath.Join(t.TempDir(), LockFileName)
	if err := os.WriteFile(stale, []byte(`{"pid": 1, "address": "127.0.0.1:1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if addr, err := Running(filepath.Dir(stale)); err != nil || addr != "" {
		t.Errorf("Running over a dead holder's lock file = %q, %v; want none", addr, err)
	}
}
