package e2e

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/devserver"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/browsertest"
	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
	"github.com/locus-dev/locus/schema"
)

// webUIShot is the screenshot of the Web UI's workflow list that the README
// shows; -update writes it again.
var webUIShot = filepath.Join("..", "..", "docs", "webui-workflows.png")

// TestWebUIShowsFleet indexes a fleet on the embedded server with its Web
// UI: the UI's workflow list, loaded in headless Chromium, shows the
// fleet's and its children's ids once the page's scripts ran, and its
// screenshot is not blank.
func TestWebUIShowsFleet(t *testing.T) {
	t.Parallel()
	b := browsertest.Need(t)
	// The list renders after the UI's API answered; virtual time waits
	// while requests are in flight, so this is a budget, not a deadline.
	b.Budget = 15000
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{DataDir: t.TempDir(), Address: "127.0.0.1:0", UIAddress: "127.0.0.1:0",
		Logger: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	c := dial(t, srv)
	startWorkers(t, c, t.TempDir(), blobtest.Bucket(t))
	const id = "index-fleet-webui"
	in := schema.IndexFleetInput{Repos: []schema.RepoSpec{spec(t, "fixtures/alpha", newAlpha(t).Dir), spec(t, "fixtures/beta", newBeta(t).Dir)}}
	if _, res := runFleet(ctx, t, c, id, in); res.Done != 2 {
		t.Fatalf("fleet result %+v, want 2 done", res)
	}

	list := srv.UIURL() + "/namespaces/default/workflows"
	dom, err := b.DOM(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{id, "index-repo/fixtures/alpha", "index-repo/fixtures/beta", "IndexFleet"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the Web UI's workflow list lacks %q after its scripts ran:\n%.3000s", want, dom)
		}
	}
	file := ""
	if *update {
		file = webUIShot
	}
	img, _, err := b.Screenshot(ctx, list, 1280, 560, file)
	if err != nil {
		t.Fatal(err)
	}
	if err := browsertest.NotBlank(img, 0.02); err != nil {
		t.Error(err)
	}
}
