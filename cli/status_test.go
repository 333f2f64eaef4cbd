package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/schema"
)

// TestStatusIsolatesDamagedManifest: one garbage manifest.json is one line on
// stderr and a non-zero exit; the other repositories are still listed.
func TestStatusIsolatesDamagedManifest(t *testing.T) {
	dataDir := t.TempDir()
	b, err := blob.OpenFile(filepath.Join(dataDir, "store"), fileblob.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []schema.RepoName{"acme/good", "acme/broken", "zeta/fine"} {
		if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: r, URL: "/src/" + string(r)}, IndexedAt: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.WriteAll(ctx, schema.RepoName("acme/broken").ManifestKey(), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	b.Close()

	for _, args := range [][]string{
		{"status", "--data-dir", dataDir},
		{"status", "--data-dir", dataDir, "acme/good=/src/acme/good", "acme/broken=/src/acme/broken"},
	} {
		code, out, errOut := runStatusCLI(args...)
		if code == 0 {
			t.Errorf("%v: exit 0, want non-zero with a damaged manifest", args)
		}
		if !strings.Contains(out, "acme/good") || strings.Contains(out, "acme/broken") {
			t.Errorf("%v: stdout %q, want acme/good listed and acme/broken not", args, out)
		}
		if len(args) == 3 && !strings.Contains(out, "zeta/fine") {
			t.Errorf("%v: stdout %q, want zeta/fine listed", args, out)
		}
		if n := strings.Count(errOut, "DAMAGED "); n != 1 || !strings.Contains(errOut, "DAMAGED acme/broken") || !strings.Contains(errOut, "repos/acme/broken/manifest.json") {
			t.Errorf("%v: stderr %q, want one DAMAGED line naming acme/broken's manifest", args, errOut)
		}
	}
}

// runStatusCLI runs locus with args and returns its exit status, stdout and stderr.
func runStatusCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	oldOut, oldErr := stdout, stderr
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = oldOut, oldErr }()
	code := run(context.Background(), args)
	return code, out.String(), errOut.String()
}
