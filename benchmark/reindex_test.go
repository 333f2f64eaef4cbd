package benchmark

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/testctx"
	"github.com/locus-dev/locus/internal/testutil/testlog"
)

// TestReindex re-indexes the backlog fixture after its last commit (one
// new file): the re-index scrapes one commit and parses one file, reusing
// the rest, while the full index at the head parses every file.
func TestReindex(t *testing.T) {
	ctx, cancel := context.WithCancel(testctx.New(t))
	defer cancel()
	gitDir, head, err := Target(backlogFixture(t).Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Reindex(ctx, ReindexOptions{GitDir: gitDir, Head: head, Logger: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Passes) != 3 || r.ChangedFiles != 1 || r.Ratio <= 0 {
		t.Fatalf("result %+v", r)
	}
	first, re, full := r.Passes[0], r.Passes[1], r.Passes[2]
	if first.NewCommits != 3 || first.FilesParsed != 3 || first.FilesReused != 0 {
		t.Errorf("first index: %+v", first)
	}
	if re.NewCommits != 1 || re.FilesParsed != 1 || re.FilesReused != 3 || re.Functions != full.Functions {
		t.Errorf("re-index: %+v (full %+v)", re, full)
	}
	if full.NewCommits != 4 || full.FilesParsed != 4 || full.FilesReused != 0 || full.Commit != head.String() {
		t.Errorf("full index: %+v", full)
	}
	// The new commit adds a file of 2 functions: only those are embedded,
	// upserted and tokenized.
	if re.FunctionsEmbedded != 2 || re.VectorsUpserted != 2 || re.VectorsDeleted != 0 || re.DocsTokenized != 2 || re.DocsReused != first.Functions {
		t.Errorf("re-index work: %+v, want the 2 new functions only", re)
	}
	if full.FunctionsEmbedded != full.Functions || full.VectorsUpserted != full.Functions || full.DocsReused != 0 {
		t.Errorf("full index work: %+v", full)
	}
	// Each pass lists the repository workflow's activities, in order.
	for _, p := range r.Passes {
		var names []string
		for _, st := range p.Steps {
			if len(names) == 0 || names[len(names)-1] != st.Activity {
				names = append(names, st.Activity)
			}
			if st.Seconds <= 0 || st.Start < 0 {
				t.Errorf("%s: step %+v", p.Name, st)
			}
		}
		if got := strings.Join(names, " "); got != "Sync ScrapeCommits BuildGraph PlanEmbed EmbedBatch FinishIndex PublishManifest" {
			t.Errorf("%s: activities %s", p.Name, got)
		}
	}
	var out bytes.Buffer
	if err := WriteReindexTable(&out, r); err != nil || !strings.Contains(out.String(), "re-index / full index at head") ||
		!strings.Contains(out.String(), "re-index (head): activities (s): Sync ") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	if _, err := Reindex(ctx, ReindexOptions{GitDir: gitDir, Head: head, Back: 10}); err == nil || !strings.Contains(err.Error(), "10 commits before") {
		t.Errorf("back beyond the history: %v", err)
	}
}
