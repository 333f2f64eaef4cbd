package embed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play a sidecar (LOCUS_FAKE_SIDECAR=mode).
func TestMain(m *testing.M) {
	if mode := os.Getenv("LOCUS_FAKE_SIDECAR"); mode != "" {
		fakeSidecar(mode)
		return
	}
	os.Exit(m.Run())
}

// fakeSidecar speaks the protocol with 3-d vectors (len, vowels, 1), or
// breaks it as mode says.
func fakeSidecar(mode string) {
	switch mode {
	case "no-ready":
		fmt.Println(`{"hello": 1}`)
		return
	case "dies-at-start":
		os.Exit(3)
	case "slow-start":
		time.Sleep(time.Minute)
	}
	fmt.Println(`{"ready": true, "model": "fake@1", "dim": 3}`)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<24)
	n := 0
	for in.Scan() {
		n++
		var req struct {
			ID    int      `json:"id"`
			Texts []string `json:"texts"`
		}
		json.Unmarshal(in.Bytes(), &req)
		switch {
		case mode == "garbage" && n == 2:
			fmt.Println("Segmentation fault (core dumped)")
			continue
		case mode == "dies" && n == 2:
			os.Exit(1)
		case mode == "wrong-id" && n == 2:
			req.ID += 7
		case mode == "short" && n == 2:
			req.Texts = req.Texts[:len(req.Texts)-1]
		case mode == "error" && n == 2:
			fmt.Printf("{\"id\": %d, \"error\": \"out of memory\"}\n", req.ID)
			continue
		case mode == "nan" && n == 2:
			fmt.Printf("{\"id\": %d, \"vectors\": [[1, 2, NaN]]}\n", req.ID)
			continue
		case mode == "hang" && n == 2:
			time.Sleep(time.Minute)
		}
		var vecs [][]float64
		for _, t := range req.Texts {
			v := []float64{float64(len(t)), float64(strings.Count(t, "a")), 1}
			if mode == "pid" {
				v[2] = float64(os.Getpid())
			}
			vecs = append(vecs, v)
		}
		b, _ := json.Marshal(map[string]any{"id": req.ID, "vectors": vecs})
		fmt.Println(string(b))
	}
}

func fake(t *testing.T, mode string) *Sidecar {
	t.Helper()
	t.Setenv("LOCUS_FAKE_SIDECAR", mode)
	s := &Sidecar{Command: []string{os.Args[0]}, ReadyTimeout: 5 * time.Second}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSidecar(t *testing.T) {
	ctx := context.Background()
	s := fake(t, "ok")
	v, err := s.Embed(ctx, []string{"banana", "kiwi"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "sidecar:fake@1" || s.Dim() != 3 || len(v) != 2 || v[0][0] != 6 || v[0][1] != 3 || v[1][1] != 0 {
		t.Fatalf("name %s, dim %d, vectors %v", s.Name(), s.Dim(), v)
	}
	if v, err := s.Embed(ctx, nil); err != nil || len(v) != 0 {
		t.Fatalf("no texts: %v, %v", v, err)
	}
}

// A pool sends each request to a free copy: one after another, two
// requests go to the two copies, whose vectors are equal.
func TestSidecarPool(t *testing.T) {
	ctx := context.Background()
	t.Setenv("LOCUS_FAKE_SIDECAR", "pid")
	p, err := StartSidecarPool(ctx, []string{os.Args[0]}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Size() != 2 || p.Name() != "sidecar:fake@1" || p.Dim() != 3 {
		t.Fatalf("size %d, name %s, dim %d", p.Size(), p.Name(), p.Dim())
	}
	pids := map[float32]bool{}
	for range 4 {
		v, err := p.Embed(ctx, []string{"banana"})
		if err != nil {
			t.Fatal(err)
		}
		if v[0][0] != 6 || v[0][1] != 3 {
			t.Fatalf("vector %v", v[0])
		}
		pids[v[0][2]] = true
	}
	if len(pids) != 2 {
		t.Errorf("4 requests went to %d copies, want 2", len(pids))
	}
	t.Setenv("LOCUS_FAKE_SIDECAR", "dies-at-start")
	if _, err := StartSidecarPool(ctx, []string{os.Args[0]}, "", 2); err == nil || !strings.Contains(err.Error(), os.Args[0]) {
		t.Errorf("copies that die at start: %v", err)
	}
}

// Each way a sidecar can break is an error naming it, with no vectors; the
// next call starts it again and works.
func TestSidecarFailures(t *testing.T) {
	for _, c := range []struct {
		mode, want string
		recovers   bool
	}{
		{"garbage", "not JSON", true},
		{"dies", "exited", true},
		{"wrong-id", "not for request", true},
		{"short", "1 vectors for 2 texts", true},
		{"error", "out of memory", true},
		{"nan", "not JSON", true}, // NaN is not JSON: the line is refused
		{"hang", "context deadline exceeded", true},
	} {
		t.Run(c.mode, func(t *testing.T) {
			s := fake(t, c.mode)
			ctx := context.Background()
			if _, err := s.Embed(ctx, []string{"a", "b"}); err != nil {
				t.Fatalf("first request: %v", err)
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			v, err := s.Embed(cctx, []string{"a", "b"})
			if err == nil || v != nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("broken answer: %v, %v; want an error saying %q", v, err, c.want)
			}
			if c.mode != "hang" && !strings.Contains(err.Error(), os.Args[0]) {
				t.Errorf("error %q does not name the sidecar", err)
			}
			// The third call works: the fake breaks only its second answer,
			// and a restarted one starts counting again.
			if v, err := s.Embed(ctx, []string{"aa"}); err != nil || len(v) != 1 {
				t.Fatalf("after the failure: %v, %v", v, err)
			}
		})
	}
	for _, c := range []struct{ mode, want string }{
		{"no-ready", "is not {\"ready\""},
		{"dies-at-start", "exited"},
		{"slow-start", "no answer in"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			s := fake(t, c.mode)
			s.ReadyTimeout = time.Second
			if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Start: %v; want %q", err, c.want)
			}
		})
	}
}

// The real Universal Sentence Encoder lite, when tools/use-lite has its
// npm packages (CI installs them): 512-d vectors, similar texts closer.
func TestUseLite(t *testing.T) {
	dir, err := filepath.Abs("../../tools/use-lite")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Skipf("tools/use-lite has no node_modules (npm ci there): %v", err) // CI installs them and fails this skip
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("no node: %v", err)
	}
	ctx := context.Background()
	if _, err := Open(ctx, "use-lite://?dir="+t.TempDir()); err == nil || !strings.Contains(err.Error(), "install-use-lite.sh") {
		t.Errorf("use-lite without an installation: %v", err)
	}
	if _, err := Open(ctx, "use-lite://?procs=0&dir="+dir); err == nil || !strings.Contains(err.Error(), "procs") {
		t.Errorf("procs=0: %v", err)
	}
	e, err := Open(ctx, "use-lite://?procs=2&dir="+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.(*Batched).Close()
	if p := e.(*Batched).E.(*SidecarPool); p.Size() != 2 || e.(*Batched).Opts.Concurrency != 2 {
		t.Errorf("procs=2: %d copies, %d requests at once", p.Size(), e.(*Batched).Opts.Concurrency)
	}
	v, err := e.Embed(ctx, []string{"parse the configuration file", "read the config file and parse it", "the cat sat on the mat"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 512 || e.Name() != "sidecar:use-lite@0.2.0" || len(v) != 3 || len(v[0]) != 512 {
		t.Fatalf("dim %d, name %s, %d vectors", e.Dim(), e.Name(), len(v))
	}
	if Cosine(v[0], v[1]) <= Cosine(v[0], v[2]) {
		t.Errorf("cos(config, config) %.3f <= cos(config, cat) %.3f", Cosine(v[0], v[1]), Cosine(v[0], v[2]))
	}
}
