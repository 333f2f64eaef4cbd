package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/schema"
)

// heldChat is an OpenAI-compatible chat server that holds every request
// until released, so a backlog run stays in flight.
type heldChat struct {
	URL     string
	gate    chan struct{}
	arrived chan struct{}
	once    sync.Once
	release func()
}

func newHeldChat(t *testing.T) *heldChat {
	h := &heldChat{gate: make(chan struct{}), arrived: make(chan struct{})}
	var gateOnce sync.Once
	h.release = func() { gateOnce.Do(func() { close(h.gate) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.once.Do(func() { close(h.arrived) })
		select {
		case <-h.gate:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "model": "m",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": `{"ids": []}`}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(func() { h.release(); srv.Close() })
	h.URL = srv.URL
	return h
}

// TestBacklogStatusLive runs a backlog whose selector is held, and asks
// `backlog status` about it meanwhile: the counts come from the running
// workflow (found through the embedded server the backlog process runs
// over the data dir), not from the store, which holds no part yet. Once
// the run is over, status reads its summary from the store.
func TestBacklogStatusLive(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	r := gitfixture.New(t)
	var src strings.Builder
	src.WriteString("class Port:\n")
	for _, m := range []string{"open", "close", "bind", "listen", "accept", "reject", "parse", "check"} {
		src.WriteString("    def " + m + "(self, port):\n        return port  # " + m + " the port\n\n")
	}
	r.Write(map[string]string{"port.py": src.String()})
	r.Commit("ports")
	data := t.TempDir()
	if _, err := capture(t, func() error {
		return runIndex(ctx, []string{"--data-dir", data, "--log-level", "warn", "acme/port=" + r.Dir})
	}); err != nil {
		t.Fatalf("index: %v", err)
	}
	file := filepath.Join(t.TempDir(), "issues.jsonl")
	lines := `{"id": "1", "repo": "acme/port", "problem_statement": "bind accepts a negative port"}
{"id": "2", "repo": "acme/port", "problem_statement": "listen never closes the port"}
{"id": "3", "repo": "acme/port", "problem_statement": "parse rejects a valid port"}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	chat := newHeldChat(t)
	done := make(chan error, 1)
	go func() {
		done <- runBacklog(ctx, []string{"--data-dir", data, "--log-level", "warn", "--json", "--window", "2",
			"--llm", "openai+" + chat.URL + "/v1?model=m", file})
	}()
	select {
	case <-chat.arrived:
	case err := <-done:
		t.Fatalf("the backlog ended before it asked its selector: %v", err)
	case <-ctx.Done():
		t.Fatal("the backlog never asked its selector")
	}

	g := Globals{dataDir: data, namespace: "default", logLevel: "warn"}
	b, err := g.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dirs, err := b.ListDirs(ctx, "backlogs/")
	if err != nil || len(dirs) != 1 {
		t.Fatalf("backlog runs in the store: %v, %v", dirs, err)
	}
	run := strings.TrimSuffix(strings.TrimPrefix(dirs[0], "backlogs/"), "/")
	sts, err := backlogStatuses(ctx, &g, b, []string{run})
	if err != nil {
		t.Fatal(err)
	}
	st := sts[0]
	if !st.Live || st.State != "running" || st.Note != "" {
		t.Fatalf("status of the running backlog: %+v, want live counts", st)
	}
	if st.Total != 3 || st.Running == 0 || st.Done+st.Failed+st.Running+st.Pending != 3 || st.Stored != 0 || st.Started == nil {
		t.Errorf("live counts %+v: want 3 issues, some running, none stored yet", st)
	}
	var buf bytes.Buffer
	printBacklogStatus(&buf, sts)
	if !strings.Contains(buf.String(), run+": 0/3 issues done") || !strings.Contains(buf.String(), "running") {
		t.Errorf("status table:\n%s", buf.String())
	}

	chat.release()
	if err := <-done; err != nil {
		t.Fatalf("backlog: %v", err)
	}
	out, err := capture(t, func() error { return runBacklog(ctx, []string{"status", "--data-dir", data, "--json", run}) })
	if err != nil {
		t.Fatal(err)
	}
	var after []backlogStatus
	if err := json.Unmarshal([]byte(out), &after); err != nil || len(after) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if a := after[0]; !a.Finished || a.State != "finished" || a.Live || a.Done != 3 || a.Summary == nil {
		t.Errorf("status of the finished run: %+v", a)
	}
}

// TestBacklogStatusFromStore: an unfinished run whose workflow cannot be
// reached is shown from the store, with the reason.
func TestBacklogStatusFromStore(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	g := Globals{dataDir: data, namespace: "default", logLevel: "warn"}
	b, err := g.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	issues, _ := json.Marshal([]schema.BacklogIssue{{ID: "1", Repo: "a/b", Text: "x"}, {ID: "2", Repo: "a/b", Text: "y"}})
	if err := b.WriteAll(ctx, schema.BacklogKey("backlog-x", "input.json"), issues); err != nil {
		t.Fatal(err)
	}
	sts, err := backlogStatuses(ctx, &g, b, []string{"backlog-x"})
	if err != nil {
		t.Fatal(err)
	}
	if st := sts[0]; st.Live || st.Total != 2 || st.Pending != 2 || !strings.Contains(st.Note, "no locus process is running it") {
		t.Errorf("status with no server: %+v", st)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	g.temporal = addr
	sts, err = backlogStatuses(ctx, &g, b, []string{"backlog-x"})
	if err != nil {
		t.Fatal(err)
	}
	if st := sts[0]; st.Live || st.Total != 2 || !strings.Contains(st.Note, addr) || !strings.Contains(st.Note, "not reachable") {
		t.Errorf("status with --temporal %s unreachable: %+v", addr, st)
	}
	var buf bytes.Buffer
	printBacklogStatus(&buf, sts)
	if !strings.Contains(buf.String(), "running or stopped (0 stored)") || !strings.Contains(buf.String(), "not reachable") {
		t.Errorf("status table:\n%s", buf.String())
	}
}
