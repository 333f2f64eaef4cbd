package onnx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Hub downloads a model from a Hugging Face hub once and keeps it, with
// the SHA-256 of each file, for offline use afterwards.
type Hub struct {
	// Endpoint is the hub; default $LOCUS_HF_ENDPOINT, else
	// https://huggingface.co.
	Endpoint string
	// Dir keeps the models, one directory per repository (Dir/org/name).
	Dir string
	// Client; default http.DefaultClient.
	Client *http.Client
	// Progress is told about each file as it downloads; default a log line
	// every few seconds.
	Progress func(file string, done, total int64)
	// Offline forbids the network: a model not downloaded before (or
	// placed by hand) is an error naming it and Dir. Offline mode is also
	// on when HF_HUB_OFFLINE is set to 1 (or true, yes, on), as the
	// Hugging Face libraries read it.
	Offline bool
}

// OfflineEnv is the environment variable that turns offline mode on.
const OfflineEnv = "HF_HUB_OFFLINE"

// offline: h.Offline, or HF_HUB_OFFLINE set to a true value.
func (h *Hub) offline() bool {
	if h.Offline {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(os.Getenv(OfflineEnv))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// hubRecord is Dir/org/name/locus-download.json: where the files came from
// and their checksums.
type hubRecord struct {
	Repo     string            `json:"repo"`
	Revision string            `json:"revision"`
	Endpoint string            `json:"endpoint"`
	Time     time.Time         `json:"time"`
	SHA256   map[string]string `json:"sha256"` // file (as stored) → hex digest
}

const hubRecordFile = "locus-download.json"

// Fetch returns the directory holding repo (org/name) at revision
// (default main): downloaded now, or earlier and checked against the
// recorded checksums, or placed there by hand (model.onnx and a tokenizer,
// no record), which is used as it is.
//
// file, when not "", is the ONNX file to fetch (onnx/model_quantized.onnx),
// stored under its own path; default onnx/model.onnx, else model.onnx,
// stored as model.onnx.
func (h *Hub) Fetch(ctx context.Context, repo, revision, file string) (string, error) {
	if revision == "" {
		revision = "main"
	}
	parts := strings.Split(repo, "/")
	if len(parts) != 2 || !validSegment(parts[0]) || !validSegment(parts[1]) {
		return "", fmt.Errorf("hugging face model %q: want organisation/name", repo)
	}
	dir := filepath.Join(h.Dir, parts[0], parts[1])
	var rec hubRecord
	if b, err := os.ReadFile(filepath.Join(dir, hubRecordFile)); err == nil {
		if err := json.Unmarshal(b, &rec); err != nil {
			return "", fmt.Errorf("hugging face model %s: %s: %w (delete %s to download it again)", repo, filepath.Join(dir, hubRecordFile), err, dir)
		}
	}
	// A download of another revision, or without the model file asked for,
	// is replaced by a new one (the directory holds one download).
	want := "model.onnx"
	if file != "" {
		want = filepath.ToSlash(file)
	}
	if rec.Repo != "" && rec.Revision == revision && rec.SHA256[want] != "" {
		for name, want := range rec.SHA256 {
			got, err := fileSHA256(filepath.Join(dir, name))
			if err != nil {
				return "", fmt.Errorf("hugging face model %s: %w (delete %s to download it again)", repo, err, dir)
			}
			if got != want {
				return "", fmt.Errorf("hugging face model %s: %s has SHA-256 %s, not the %s recorded at download: the file changed (delete %s to download it again)",
					repo, filepath.Join(dir, name), got, want, dir)
			}
		}
		return dir, nil
	}
	if rec.Repo == "" && handPlaced(dir, file) {
		slog.Info("using a model placed by hand", "model", repo, "dir", dir)
		return dir, nil
	}
	if h.offline() {
		what := "it"
		if rec.Repo != "" {
			what = fmt.Sprintf("revision %s (the cache holds %s)", revision, rec.Revision)
			if rec.Revision == revision {
				what = fmt.Sprintf("%s (the cache lacks it)", want)
			}
		}
		mode := "offline mode is on"
		if v := os.Getenv(OfflineEnv); v != "" {
			mode = fmt.Sprintf("offline mode is on (%s=%s)", OfflineEnv, v)
		}
		return "", fmt.Errorf("hugging face model %s is not in the local model cache %s, and %s, so %s is not downloaded: "+
			"unset %s to download it once, or place model.onnx and tokenizer.json (or vocab.txt) in %s by hand, or use onnx:///DIR",
			repo, dir, mode, what, OfflineEnv, dir)
	}
	endpoint := h.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("LOCUS_HF_ENDPOINT")
	}
	if endpoint == "" {
		endpoint = "https://huggingface.co"
	}
	endpoint = strings.TrimRight(endpoint, "/")
	manual := fmt.Sprintf("without network access, place model.onnx and tokenizer.json (or vocab.txt) in %s by hand, or in any directory and use onnx:///DIR", dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("hugging face model %s: %w", repo, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".download-")
	if err != nil {
		return "", fmt.Errorf("hugging face model %s: %w", repo, err)
	}
	defer os.RemoveAll(tmp)
	rec = hubRecord{Repo: repo, Revision: revision, Endpoint: endpoint, Time: time.Now().UTC(), SHA256: map[string]string{}}
	model := struct {
		name     string
		paths    []string
		required bool
	}{"model.onnx", []string{"onnx/model.onnx", "model.onnx"}, true}
	if file != "" {
		if !filepath.IsLocal(file) || strings.Contains(file, "\\") {
			return "", fmt.Errorf("hugging face model %s: file=%q: want a path inside the repository", repo, file)
		}
		model.name, model.paths = filepath.ToSlash(file), []string{filepath.ToSlash(file)}
	}
	// Each file is looked for at these paths in the repository, in order;
	// the first found is stored under the name given.
	for _, f := range []struct {
		name     string
		paths    []string
		required bool
	}{
		model,
		{"tokenizer.json", []string{"tokenizer.json"}, false},
		{"vocab.txt", []string{"vocab.txt"}, false},
		{"config.json", []string{"config.json"}, false},
		{"tokenizer_config.json", []string{"tokenizer_config.json"}, false},
	} {
		if f.name == "vocab.txt" && rec.SHA256["tokenizer.json"] != "" {
			continue // tokenizer.json is preferred and complete
		}
		var found bool
		for _, p := range f.paths {
			url := fmt.Sprintf("%s/%s/resolve/%s/%s", endpoint, repo, revision, p)
			dst := filepath.Join(tmp, filepath.FromSlash(f.name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", err
			}
			sum, err := h.download(ctx, url, dst)
			if errors.Is(err, errNotFound) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("hugging face model %s: %w; %s", repo, err, manual)
			}
			rec.SHA256[f.name], found = sum, true
			break
		}
		if !found && f.required {
			return "", fmt.Errorf("hugging face model %s: no ONNX export (looked for %s at %s, revision %s); %s",
				repo, strings.Join(f.paths, " and "), endpoint, revision, manual)
		}
	}
	if rec.SHA256["tokenizer.json"] == "" && rec.SHA256["vocab.txt"] == "" {
		return "", fmt.Errorf("hugging face model %s: neither tokenizer.json nor vocab.txt at %s, revision %s; %s", repo, endpoint, revision, manual)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, hubRecordFile), b, 0o644); err != nil {
		return "", err
	}
	// The directory appears whole or not at all.
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("hugging face model %s: %w", repo, err)
	}
	return dir, nil
}

var errNotFound = errors.New("not found")

// download writes url's body to path and returns its SHA-256; a 404 is
// errNotFound.
func (h *Hub) download(ctx context.Context, url, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if tok := os.Getenv("HF_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return "", errNotFound
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", fmt.Errorf("download %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	progress := h.Progress
	if progress == nil {
		progress = logProgress()
	}
	name := filepath.Base(path)
	hash := sha256.New()
	pr := &progressReader{r: resp.Body, fn: func(n int64) { progress(name, n, resp.ContentLength) }}
	n, err := io.Copy(io.MultiWriter(f, hash), pr)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", url, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return "", fmt.Errorf("download %s: got %d of %d bytes", url, n, resp.ContentLength)
	}
	progress(name, n, n)
	if err := f.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

type progressReader struct {
	r    io.Reader
	n    int64
	fn   func(done int64)
	last time.Time
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if time.Since(p.last) > 200*time.Millisecond {
		p.last = time.Now()
		p.fn(p.n)
	}
	return n, err
}

// logProgress logs a download's progress every few seconds: bytes, rate
// and time left.
func logProgress() func(file string, done, total int64) {
	start, last := time.Now(), time.Time{}
	return func(file string, done, total int64) {
		if time.Since(last) < 3*time.Second && done != total {
			return
		}
		last = time.Now()
		rate := float64(done) / max(time.Since(start).Seconds(), 1e-3)
		args := []any{"file", file, "done_mib", fmt.Sprintf("%.1f", float64(done)/(1<<20)), "mib_per_s", fmt.Sprintf("%.1f", rate/(1<<20))}
		if total > 0 {
			args = append(args, "total_mib", fmt.Sprintf("%.1f", float64(total)/(1<<20)))
			if rate > 0 && done < total {
				args = append(args, "eta", time.Duration(float64(total-done)/rate*float64(time.Second)).Round(time.Second).String())
			}
		}
		slog.Info("downloading model", args...)
	}
}

// handPlaced: dir holds the model (file, or model.onnx) and a tokenizer
// without a download record.
func handPlaced(dir, file string) bool {
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	model := exists("model.onnx") || exists("onnx/model.onnx")
	if file != "" {
		model = exists(file)
	}
	return model && (exists("tokenizer.json") || exists("vocab.txt"))
}

func validSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
