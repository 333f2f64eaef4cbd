package codegraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// canonical is a graph's nodes and edges, sorted, as JSON: two graphs are
// the same when these bytes are.
func canonical(t *testing.T, g *Graph) []byte {
	t.Helper()
	nodes := slices.Clone(g.Nodes)
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	edges := slices.Clone(g.Edges)
	slices.SortFunc(edges, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.Src, b.Src), strings.Compare(a.Dst, b.Dst), strings.Compare(string(a.Type), string(b.Type)))
	})
	data, err := json.Marshal(struct {
		Nodes []Node
		Edges []Edge
	}{nodes, edges})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestIncrementalEqualsFullRebuild walks the last 30 commits of this
// repository's own history (a real, multi-package Go project with Python
// and JavaScript test data) on first parents: at each commit the graph
// built from the previous commit's extractions equals a full rebuild, node
// for node and edge for edge, while parsing only the files that changed.
func TestIncrementalEqualsFullRebuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// The common directory holds the objects, also in a linked worktree
	// (whose own git directory has none).
	gitDir := gitOut(t, "rev-parse", "--path-format=absolute", "--git-common-dir")
	ids := strings.Fields(gitOut(t, "rev-list", "--first-parent", "-n", "30", "HEAD"))
	if len(ids) < 30 {
		t.Fatalf("this repository's history has %d commits on first parents; the test needs 30 (a shallow clone? fetch the history)", len(ids))
	}
	slices.Reverse(ids)
	var prev *Extracts
	parsedAll, parsedIncr := 0, 0
	for i, id := range ids {
		h, _ := gitrepo.ParseHash(id)
		full, err := BuildCommit(ctx, gitDir, "", h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		incr, err := BuildCommit(ctx, gitDir, "", h, Options{Reuse: prev, KeepExtracts: true})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := canonical(t, full), canonical(t, incr); !bytes.Equal(a, b) {
			t.Fatalf("commit %s (%d of %d): the incremental graph differs from a full rebuild (%d and %d bytes)", id, i+1, len(ids), len(b), len(a))
		}
		if i > 0 {
			parsedAll += full.Stats.Files
			parsedIncr += incr.Stats.Files - incr.Stats.Reused
		}
		prev = incr.Extracts
	}
	t.Logf("29 incremental builds parsed %d files; full rebuilds %d", parsedIncr, parsedAll)
	if parsedIncr*10 > parsedAll {
		t.Errorf("incremental builds parsed %d files of %d: want only the changed ones", parsedIncr, parsedAll)
	}
}

// Extractions from an older extractor, or of a file whose content changed,
// are never reused.
func TestReuseOnlySameContentAndVersion(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.py": "def f():\n    return 1\n", "b.py": "def g():\n    return f()\n"})
	c1 := r.Commit("first")
	r.Write(map[string]string{"a.py": "def f():\n    return 2\n"})
	c2 := r.Commit("second")
	build := func(c string, o Options) *Graph {
		t.Helper()
		h, _ := gitrepo.ParseHash(c)
		g, err := BuildCommit(context.Background(), r.Dir+"/.git", "", h, o)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := build(c1, Options{KeepExtracts: true})
	if first.Stats.Reused != 0 || len(first.Extracts.Files) != 2 {
		t.Fatalf("first build: reused %d, kept %d", first.Stats.Reused, len(first.Extracts.Files))
	}
	second := build(c2, Options{Reuse: first.Extracts, KeepExtracts: true})
	if second.Stats.Reused != 1 || !bytes.Equal(canonical(t, second), canonical(t, build(c2, Options{}))) {
		t.Errorf("second build: reused %d (want b.py only), or it differs from a full build", second.Stats.Reused)
	}
	old := &Extracts{Version: schema.ExtractVersion - 1, Files: first.Extracts.Files}
	if g := build(c2, Options{Reuse: old}); g.Stats.Reused != 0 {
		t.Errorf("an older extractor's results were reused for %d files", g.Stats.Reused)
	}
	garbage := &Extracts{Version: schema.ExtractVersion, Files: map[string][]byte{}}
	for k := range first.Extracts.Files {
		garbage.Files[k] = []byte("not gob")
	}
	if g := build(c1, Options{Reuse: garbage}); g.Stats.Reused != 0 || !bytes.Equal(canonical(t, g), canonical(t, first)) {
		t.Errorf("damaged kept extractions: reused %d, or the graph differs", g.Stats.Reused)
	}
}

func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
