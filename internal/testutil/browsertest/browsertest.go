// Package browsertest loads pages in a real browser, headless Chromium, for
// tests: the DOM after the page's scripts ran, and a screenshot that must
// not be blank.
package browsertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/png" // screenshots are PNG
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Env, when set (CI sets it), makes a test that finds no Chromium fail
// instead of skipping: there a missing browser is a broken setup.
const Env = "LOCUS_REQUIRE_BROWSER"

// BinEnv names a Chromium binary to use instead of the first of
// chromium, chromium-browser, google-chrome on PATH.
const BinEnv = "LOCUS_CHROMIUM"

// Browser is a headless Chromium binary.
type Browser struct {
	Bin string
	// Budget is the virtual time, in milliseconds, a page gets to run its
	// scripts and fetches before the DOM or screenshot is taken; 0: 5000.
	Budget int
}

// Find returns the Chromium that BinEnv names, else the first one on PATH.
func Find() (Browser, error) {
	if b := os.Getenv(BinEnv); b != "" {
		if _, err := exec.LookPath(b); err != nil {
			return Browser{}, fmt.Errorf("%s=%s: %w", BinEnv, b, err)
		}
		return Browser{Bin: b}, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return Browser{Bin: p}, nil
		}
	}
	return Browser{}, errors.New("no Chromium: install Debian's chromium package or set " + BinEnv)
}

// Need returns the browser Find finds. When there is none, t fails under
// Env and is skipped elsewhere.
func Need(t testing.TB) Browser {
	t.Helper()
	b, err := Find()
	if err != nil {
		if os.Getenv(Env) != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return b
}

func (b Browser) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	budget := b.Budget
	if budget <= 0 {
		budget = 5000
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--virtual-time-budget=" + strconv.Itoa(budget)}
	cmd := exec.CommandContext(ctx, b.Bin, append(base, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w; stderr: %s", b.Bin, strings.Join(args, " "), err, tail(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// DOM loads url and returns the document's HTML after its scripts ran.
func (b Browser) DOM(ctx context.Context, url string) (string, error) {
	dir, err := os.MkdirTemp("", "locus-browser-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	out, err := b.run(ctx, dir, "--dump-dom", url)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// Screenshot loads url in a w×h window and returns the PNG picture of it
// (also written to file when file is not empty).
func (b Browser) Screenshot(ctx context.Context, url string, w, h int, file string) (image.Image, []byte, error) {
	dir, err := os.MkdirTemp("", "locus-browser-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	shot := filepath.Join(dir, "shot.png")
	if _, err := b.run(ctx, dir, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h), url); err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		return nil, nil, fmt.Errorf("screenshot of %s: %w", url, err)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("screenshot of %s: %w", url, err)
	}
	if file != "" {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return nil, nil, err
		}
	}
	return img, data, nil
}

// NotBlank reports an error when img is (nearly) one colour: fewer than
// minShare of its pixels differ from its most common colour.
func NotBlank(img image.Image, minShare float64) error {
	counts := map[color.RGBA]int{}
	r := img.Bounds()
	total := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			counts[c]++
			total++
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	if total == 0 {
		return errors.New("the screenshot has no pixels")
	}
	if share := float64(total-top) / float64(total); share < minShare {
		return fmt.Errorf("the screenshot is blank: %.4f of its %d pixels differ from the background (want ≥ %.4f), %d colours", share, total, minShare, len(counts))
	}
	return nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
