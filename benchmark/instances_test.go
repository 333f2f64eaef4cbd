package benchmark

import (
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/testctx"
)

// TestHistoryInstances selects instances from a small real history: a
// merged pull request and a plain commit that edit functions become
// instances whose patch's gold, read against the base commit's graph, is
// the edited function; commits that only add code, edit only tests, or say
// too little are passed over and counted.
func TestHistoryInstances(t *testing.T) {
	ctx := testctx.New(t)
	r := gitfixture.New(t)
	r.Write(map[string]string{
		"pkg/parse.py": "def parse(text):\n    return text.split()\n\ndef render(items):\n    return ' '.join(items)\n",
	})
	r.Commit("add the parser and the renderer")
	r.Write(map[string]string{"tests/test_parse.py": "def test_parse():\n    assert parse('a b') == ['a', 'b']\n"})
	r.Commit("cover the parser with a test of two words")
	r.Write(map[string]string{"pkg/parse.py": "def parse(text):\n    return text.strip().split()\n\ndef render(items):\n    return ' '.join(items)\n"})
	plain := r.Commit("strip surrounding blanks before the parser splits its text")
	r.Write(map[string]string{"pkg/parse.py": "def parse(text):\n    return text.strip().split()\n\ndef render(items):\n    return ', '.join(items)\n"})
	r.Commit("wip")
	r.Git("checkout", "-q", "-b", "feature", "HEAD~1")
	r.Write(map[string]string{"pkg/parse.py": "def parse(text):\n    return text.strip().split()\n\ndef render(items):\n    return ' | '.join(items)\n"})
	r.Commit("separate rendered items with bars")
	r.Git("checkout", "-q", "main")
	r.Write(map[string]string{"pkg/extra.py": "def extra():\n    return 1\n"})
	r.Commit("an extra helper that returns one")
	r.Git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "Merge pull request #7 from someone/feature\n\nRender items with bars between them (#7)", "feature")
	merge := r.Head()

	gitDir, head, err := Target(r.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	insts, st, err := HistoryInstances(ctx, HistoryOptions{GitDir: gitDir, Head: head, Repo: "acme/parse", N: 7})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range insts {
		ids = append(ids, in.InstanceID)
	}
	want := []string{"acme__parse-" + plain[:12], "acme__parse-" + merge[:12]}
	if !slices.Equal(ids, want) {
		t.Fatalf("instances %q, want %q (stats %+v)", ids, want, st)
	}
	if st.FirstParent != 6 || st.Skipped[skipNoEdit] != 3 || st.Skipped[skipFewWords] != 1 {
		t.Errorf("stats %+v: want 6 first-parent commits, 3 without an edit, 1 saying too little", st)
	}
	if got := insts[1].ProblemStatement; got != "Render items with bars between them" {
		t.Errorf("merge's problem statement %q", got)
	}
	for i, gold := range []string{"pkg/parse.py:parse", "pkg/parse.py:render"} {
		in := insts[i]
		if in.Language != "python" || in.Source != "history" || in.Repo != "acme/parse" {
			t.Errorf("%s: %+v", in.InstanceID, in)
		}
		base, ok := gitrepo.ParseHash(in.BaseCommit)
		if !ok {
			t.Fatalf("%s: base %q", in.InstanceID, in.BaseCommit)
		}
		g, err := codegraph.BuildCommit(ctx, gitDir, gitrepo.BackendAuto, base, codegraph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := dataset.GoldFromPatch(g, in.Patch)
		if err != nil {
			t.Fatalf("%s: %v\n%s", in.InstanceID, err, in.Patch)
		}
		if !slices.Equal(got, []string{gold}) {
			t.Errorf("%s: gold %q, want %q\n%s", in.InstanceID, got, gold, in.Patch)
		}
		if strings.Contains(in.Patch, "tests/") {
			t.Errorf("%s: patch holds a test file\n%s", in.InstanceID, in.Patch)
		}
	}

	// Nothing usable: an error naming the repository, not an empty file.
	if _, _, err := HistoryInstances(ctx, HistoryOptions{GitDir: gitDir, Head: head, Repo: "acme/parse", MinWords: 50}); err == nil || !strings.Contains(err.Error(), gitDir) {
		t.Fatalf("no usable commit: %v", err)
	}
	if _, _, err := HistoryInstances(ctx, HistoryOptions{GitDir: gitDir, Head: head, Repo: "parse"}); err == nil {
		t.Fatal("a repository name without an owner was accepted")
	}
}
