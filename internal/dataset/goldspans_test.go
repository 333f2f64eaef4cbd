package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// TestGoldFromPatchAgreesWithGoldSpans derives the gold functions of every
// Python instance of ../shared/bench/swe-dev.jsonl with GoldFromPatch at its
// base commit and compares them with the hand-made gold_spans. Needs the
// repositories: LOCUS_REPO_DIR names a directory holding their bare clones.
func TestGoldFromPatchAgreesWithGoldSpans(t *testing.T) {
	dir := os.Getenv("LOCUS_REPO_DIR")
	if dir == "" {
		t.Skip("LOCUS_REPO_DIR not set: point it at a directory with bare clones of the swe-dev repositories to compare GoldFromPatch with gold_spans")
	}
	bench := filepath.Join("..", "..", "..", "shared", "bench", "swe-dev.jsonl")
	f, err := os.Open(bench)
	if err != nil {
		t.Skipf("benchmark file not found (%v); it lives in ../shared/bench beside the checkout", err)
	}
	defer f.Close()
	type instance struct {
		ID         string              `json:"instance_id"`
		Repo       string              `json:"repo"`
		BaseCommit string              `json:"base_commit"`
		Patch      string              `json:"patch"`
		GoldSpans  map[string][]string `json:"gold_spans"`
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var exact, total, missingRepo int
	var report []string
	for sc.Scan() {
		var in instance
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatal(err)
		}
		if len(in.GoldSpans) == 0 {
			continue
		}
		gitDir, err := RepoDir(dir, in.Repo)
		if err != nil {
			missingRepo++
			continue
		}
		head, ok := gitrepo.ParseHash(in.BaseCommit)
		if !ok {
			t.Fatalf("%s: bad base commit %q", in.ID, in.BaseCommit)
		}
		g, err := codegraph.BuildCommit(context.Background(), gitDir, gitrepo.BackendAuto, head, codegraph.Options{})
		if err != nil {
			t.Fatalf("%s: %v", in.ID, err)
		}
		got, err := GoldFromPatch(g, in.Patch)
		if err != nil {
			t.Fatalf("%s: %v", in.ID, err)
		}
		kinds := map[string]string{}
		for _, n := range g.Nodes {
			kinds[n.ID] = n.Type
		}
		// gold_spans name classes too (edits at class level); GoldFromPatch
		// returns functions only, so compare the function part.
		var want, classes, unknown []string
		for file, names := range in.GoldSpans {
			for _, n := range names {
				id := codegraph.EntityID(file, n)
				switch kinds[id] {
				case codegraph.TypeFunction:
					want = append(want, id)
				case codegraph.TypeClass:
					classes = append(classes, id)
				default:
					unknown = append(unknown, id)
				}
			}
		}
		sort.Strings(want)
		total++
		if strings.Join(got, ",") == strings.Join(want, ",") {
			exact++
			continue
		}
		report = append(report, fmt.Sprintf("%s:\n  GoldFromPatch %v\n  gold_spans functions %v (classes %v, not in our graph %v)",
			in.ID, got, want, classes, unknown))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if missingRepo > 0 {
		t.Logf("%d instances skipped: repository not under %s", missingRepo, dir)
	}
	t.Logf("GoldFromPatch agrees exactly with gold_spans (functions) on %d of %d Python instances", exact, total)
	for _, r := range report {
		t.Log(r)
	}
	if total > 0 && exact*10 < total*8 {
		t.Errorf("agreement %d/%d fell below 80%%", exact, total)
	}
}
