package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/schema"
)

// A damaged manifest still names a stored repository: it resolves (the
// command reading it reports the damage) and is listed with the others.
func TestResolveRepoDamagedManifest(t *testing.T) {
	ctx := context.Background()
	b, err := blob.OpenFile(t.TempDir(), fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	good, _ := json.Marshal(schema.Manifest{Version: schema.ManifestVersion, Repo: "acme/good", URL: "https://example.com/acme/good"})
	if err := b.WriteAll(ctx, schema.RepoName("acme/good").ManifestKey(), good); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, schema.RepoName("other/r").ManifestKey(), []byte("{garbage")); err != nil {
		t.Fatal(err)
	}
	if n, err := resolveRepo(ctx, b, "other/r"); err != nil || n != "other/r" {
		t.Errorf("resolveRepo(other/r) = %q, %v; want other/r", n, err)
	}
	_, err = resolveRepo(ctx, b, "nope/x")
	if !errors.Is(err, gitrepo.ErrNotIndexed) || !strings.Contains(err.Error(), "indexed: acme/good, other/r") {
		t.Errorf("resolveRepo(nope/x): %v; want not indexed, listing acme/good and other/r", err)
	}
	if n, err := resolveRepoOrName(ctx, b, "nope/x"); err != nil || n != "nope/x" {
		t.Errorf("resolveRepoOrName(nope/x) = %q, %v; want the name kept", n, err)
	}
	if _, err := resolveRepoOrName(ctx, b, t.TempDir()); !errors.Is(err, gitrepo.ErrNotIndexed) {
		t.Errorf("resolveRepoOrName(a directory nothing was indexed from): %v; want not indexed", err)
	}
}
