package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// indexKeeping indexes commit of gitDir as repo's head the way IndexRepo
// publishes it: the graph keeps its extractions, the BM25 index its
// documents' hashes and digest.
func indexKeeping(tb testing.TB, b *blob.Bucket, repo schema.RepoName, gitDir, commit string) {
	tb.Helper()
	publishHead(tb, b, repo, gitDir, gitDir, commit, time.Unix(0, 0), true)
}

// sameSnapshot fails unless the snapshots got and want are equal: every
// node (code included) and edge, the graph's counts, and the BM25 index
// byte for byte (so every document length, document frequency and
// posting) with its documents' hashes.
func sameSnapshot(t *testing.T, what string, bGot *blob.Bucket, got *schema.SnapshotManifest, bWant *blob.Bucket, want *schema.SnapshotManifest) {
	t.Helper()
	ctx := context.Background()
	gg, err := graphstore.Read(ctx, bGot, got.Graph)
	if err != nil {
		t.Fatalf("%s: derived graph: %v", what, err)
	}
	gw, err := graphstore.Read(ctx, bWant, want.Graph)
	if err != nil {
		t.Fatalf("%s: graph from scratch: %v", what, err)
	}
	if len(gg.Nodes) != len(gw.Nodes) || len(gg.Edges) != len(gw.Edges) {
		t.Fatalf("%s: derived graph has %d nodes and %d edges, from scratch %d and %d", what, len(gg.Nodes), len(gg.Edges), len(gw.Nodes), len(gw.Edges))
	}
	for i := range gw.Nodes {
		if !reflect.DeepEqual(gg.Nodes[i], gw.Nodes[i]) {
			t.Fatalf("%s: node %d differs:\nderived      %+v\nfrom scratch %+v", what, i, gg.Nodes[i], gw.Nodes[i])
		}
	}
	for i := range gw.Edges {
		if gg.Edges[i] != gw.Edges[i] {
			t.Fatalf("%s: edge %d differs: derived %+v, from scratch %+v", what, i, gg.Edges[i], gw.Edges[i])
		}
	}
	ig, iw := got.Graph, want.Graph
	if ig.Nodes != iw.Nodes || ig.Edges != iw.Edges || ig.Files != iw.Files || ig.NodesSHA256 != iw.NodesSHA256 || ig.EdgesSHA256 != iw.EdgesSHA256 ||
		!reflect.DeepEqual(ig.Languages, iw.Languages) || !reflect.DeepEqual(ig.Unresolved, iw.Unresolved) || !reflect.DeepEqual(ig.CodeBytes, iw.CodeBytes) {
		t.Errorf("%s: graph info differs:\nderived      %+v\nfrom scratch %+v", what, ig, iw)
	}
	for _, k := range [][2]string{{got.Search.SparseKey, want.Search.SparseKey}, {got.Search.SparseDocsKey, want.Search.SparseDocsKey}} {
		a, err := bGot.ReadAll(ctx, k[0])
		if err != nil {
			t.Fatal(err)
		}
		b, err := bWant.ReadAll(ctx, k[1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs from a build from scratch (%d and %d bytes)", what, k[0], len(a), len(b))
		}
	}
	if got.Search.Functions != want.Search.Functions || got.Search.SparseSHA256 != want.Search.SparseSHA256 {
		t.Errorf("%s: search info differs: derived %+v, from scratch %+v", what, got.Search, want.Search)
	}
}

// history is a repository whose commits rename, delete, break and add
// files, a binary among them; the cross-file calls follow the renames.
func history(t *testing.T) (*gitfixture.Repo, []string) {
	g := gitfixture.New(t)
	var commits []string
	g.Write(map[string]string{
		"app/main.py":  "from app.util import helper, Parser\n\n\ndef run(x):\n    return helper(x) + Parser().parse(x)\n",
		"app/util.py":  "def helper(x):\n    return x + 1\n\n\nclass Parser:\n    def parse(self, x):\n        return str(x)\n",
		"app/extra.py": "def extra():\n    return 'extra'\n",
		"tools/cli.go": "package tools\n\nfunc Main() int { return Helper() }\n\nfunc Helper() int { return 1 }\n",
		"README.md":    "# app\n",
	})
	g.WriteBytes("assets/logo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"))
	commits = append(commits, g.Commit("first"))
	// Rename util.py (content unchanged), delete extra.py, add a file that
	// does not parse, change the binary.
	g.Git("mv", "app/util.py", "app/helpers.py")
	g.Git("rm", "-q", "app/extra.py")
	g.Write(map[string]string{
		"app/main.py":   "from app.helpers import helper, Parser\n\n\ndef run(x):\n    return helper(x) + Parser().parse(x)\n",
		"app/broken.py": "def broken(:\n    return (\n\nclass\n",
	})
	g.WriteBytes("assets/logo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x01\rIHDR\x00\x01"))
	commits = append(commits, g.Commit("rename, delete, break"))
	// Change the callee's file only: main.py's calls are resolved again.
	g.Write(map[string]string{
		"app/helpers.py": "def helper(x):\n    return x + 2\n\n\ndef other(y):\n    return helper(y)\n\n\nclass Parser:\n    def parse(self, x):\n        return repr(x)\n",
		"tools/cli.go":   "package tools\n\nfunc Main() int { return Helper() + Other() }\n\nfunc Helper() int { return 1 }\n\nfunc Other() int { return 2 }\n",
	})
	commits = append(commits, g.Commit("change the callees"))
	// Mend the broken file, rename a directory.
	g.Git("mv", "tools", "cmdtools")
	g.Write(map[string]string{"app/broken.py": "def broken():\n    return helper(1)\n\nfrom app.helpers import helper\n"})
	commits = append(commits, g.Commit("mend, move a directory"))
	g.Write(map[string]string{"app/main.py": "from app.helpers import helper, Parser, other\n\n\ndef run(x):\n    return other(helper(x)) + Parser().parse(x)\n"})
	commits = append(commits, g.Commit("head"))
	return g, commits
}

func TestDerivedSnapshotEqualsScratch(t *testing.T) {
	ctx := context.Background()
	g, commits := history(t)
	gitDir := g.Dir + "/.git"
	head := commits[len(commits)-1]
	derived, scratch := blobtest.Bucket(t), blobtest.Bucket(t)
	indexKeeping(t, derived, repo, gitDir, head)
	indexKeeping(t, scratch, repo, gitDir, head)
	// In this order each derives from the nearest built one: the head, then
	// a snapshot (commits[2] from commits[3], commits[0] from commits[1]
	// or [2]).
	order := []int{3, 1, 2, 0}
	bases := map[string]bool{}
	for _, i := range order {
		c := commits[i]
		var warned []string
		cfg := Config{Bucket: derived, GitDir: gitDir, Warn: func(msg string, args ...any) { warned = append(warned, fmt.Sprint(msg, args)) }}
		got, err := Ensure(ctx, cfg, repo, c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Ensure(ctx, Config{Bucket: scratch, GitDir: gitDir, Scratch: true}, repo, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(warned) > 0 {
			t.Errorf("commit %d: warnings %q", i, warned)
		}
		if got.Base == "" || want.Base != "" {
			t.Fatalf("commit %d: derived from %q, scratch from %q: want a base, and none", i, got.Base, want.Base)
		}
		bases[got.Base] = true
		files := got.Manifest.Graph.Files
		if got.Parsed >= files || want.Parsed != files {
			t.Errorf("commit %d: derived parsed %d of %d files, scratch %d: want fewer derived, all from scratch", i, got.Parsed, files, want.Parsed)
		}
		if got.Manifest.Search.SparseReused == 0 {
			t.Errorf("commit %d: no BM25 document taken over from %s", i, got.Base)
		}
		sameSnapshot(t, fmt.Sprintf("commit %d", i), derived, got.Manifest, scratch, want.Manifest)
		if !strings.Contains(fmt.Sprint(got.Manifest.Extracts), "extracts/") {
			t.Errorf("commit %d: no extraction segment recorded: %+v", i, got.Manifest.Extracts)
		}
	}
	if len(bases) < 2 || !bases[head] {
		t.Errorf("bases %v: want the head and at least one snapshot", bases)
	}
	// A derived snapshot reads back as stored, like any other.
	res, err := Ensure(ctx, Config{Bucket: derived, GitDir: gitDir}, repo, commits[0])
	if err != nil || !res.Reused {
		t.Fatalf("second Ensure: %v, reused %v", err, res != nil && res.Reused)
	}
}

// A base whose stored extractions or BM25 document hashes are damaged or
// gone is passed over with a warning; with no other base left the snapshot
// is built from scratch, and equals one built so.
func TestDerivedSnapshotDamagedBase(t *testing.T) {
	ctx := context.Background()
	garbage := func(t *testing.T, b *blob.Bucket, key string) {
		if err := b.WriteAll(ctx, key, []byte("not what was written")); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(t *testing.T, b *blob.Bucket, key string) {
		if err := b.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	// each applies to every key of the kind.
	extracts := func(do func(*testing.T, *blob.Bucket, string)) func(*testing.T, *blob.Bucket, string) {
		return func(t *testing.T, b *blob.Bucket, head string) {
			objs, err := b.List(ctx, repo.Prefix()+"extracts/")
			if err != nil || len(objs) == 0 {
				t.Fatalf("extraction segments: %v, %d", err, len(objs))
			}
			for _, o := range objs {
				do(t, b, o.Key)
			}
			_, _, _, key := schema.GraphTableKeys(repo.GraphPrefix(head))
			do(t, b, key)
		}
	}
	docs := func(t *testing.T, b *blob.Bucket, head string) {
		objs, err := b.List(ctx, repo.Prefix())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range objs {
			if strings.HasSuffix(o.Key, ".bm25.docs") {
				garbage(t, b, o.Key)
				n++
			}
		}
		if n != 2 {
			t.Fatalf("damaged %d BM25 document-hash files, want the head's and the snapshot's", n)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, b *blob.Bucket, head string)
	}{
		{"extraction segments damaged", extracts(garbage)},
		{"extraction segments gone", extracts(remove)},
		{"BM25 document hashes damaged", docs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, commits := history(t)
			gitDir := g.Dir + "/.git"
			head := commits[len(commits)-1]
			b, scratch := blobtest.Bucket(t), blobtest.Bucket(t)
			indexKeeping(t, b, repo, gitDir, head)
			indexKeeping(t, scratch, repo, gitDir, head)
			if res, err := Ensure(ctx, Config{Bucket: b, GitDir: gitDir}, repo, commits[3]); err != nil || res.Base != head {
				t.Fatalf("first snapshot: %v (want it derived from the head)", err)
			}
			tc.damage(t, b, head)
			var warned []string
			got, err := Ensure(ctx, Config{Bucket: b, GitDir: gitDir, Warn: func(msg string, args ...any) { warned = append(warned, fmt.Sprint(msg, args)) }}, repo, commits[1])
			if err != nil {
				t.Fatal(err)
			}
			if got.Base != "" || len(warned) != 2 || !strings.Contains(warned[0], "damaged") {
				t.Errorf("derived from %q with warnings %q: want two warnings (both bases) and a build from scratch", got.Base, warned)
			}
			want, err := Ensure(ctx, Config{Bucket: scratch, GitDir: gitDir, Scratch: true}, repo, commits[1])
			if err != nil {
				t.Fatal(err)
			}
			sameSnapshot(t, tc.name, b, got.Manifest, scratch, want.Manifest)
		})
	}
}

// On this repository's own history, snapshots derived from one another and
// from the head equal snapshots built from scratch.
func TestDerivedSnapshotEqualsScratchOnThisRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds this repository's graph 11 times")
	}
	ctx := context.Background()
	// The common directory holds the objects, also in a linked worktree.
	out, err := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	gitDir := strings.TrimSpace(string(out))
	out, err = exec.Command("git", "rev-list", "--first-parent", "-n", "61", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(string(out))
	if len(ids) < 61 {
		t.Fatalf("this repository's history has %d commits on first parents; the test needs 61 (a shallow clone? fetch the history)", len(ids))
	}
	derived, scratch := blobtest.Bucket(t), blobtest.Bucket(t)
	indexKeeping(t, derived, repo, gitDir, ids[0])
	indexKeeping(t, scratch, repo, gitDir, ids[0])
	parsed, files := 0, 0
	for _, k := range []int{60, 3, 20, 45, 12} {
		got, err := Ensure(ctx, Config{Bucket: derived, GitDir: gitDir}, repo, ids[k])
		if err != nil {
			t.Fatal(err)
		}
		want, err := Ensure(ctx, Config{Bucket: scratch, GitDir: gitDir, Scratch: true}, repo, ids[k])
		if err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, "HEAD~"+fmt.Sprint(k), derived, got.Manifest, scratch, want.Manifest)
		if got.Base == "" {
			t.Errorf("HEAD~%d built from scratch", k)
		}
		parsed += got.Parsed
		files += got.Manifest.Graph.Files
		t.Logf("HEAD~%d from %s: parsed %d of %d files, %d of %d BM25 documents taken over", k, got.Base[:10], got.Parsed,
			got.Manifest.Graph.Files, got.Manifest.Search.SparseReused, got.Manifest.Search.Functions)
	}
	if parsed*4 > files {
		t.Errorf("derived snapshots parsed %d of %d files: want only the changed ones", parsed, files)
	}
}

// Snapshots of an older locus kept nothing to derive from: however many
// lie nearer in time, the snapshot is derived from the head.
func TestDeriveFromHeadPastOldSnapshots(t *testing.T) {
	ctx := context.Background()
	g := gitfixture.New(t)
	var commits []string
	for i := range maxBaseReads + 4 {
		g.Write(map[string]string{"lib.py": fmt.Sprintf("def f():\n    return %d\n", i), "keep.py": "def k():\n    return 0\n"})
		commits = append(commits, g.Commit(fmt.Sprint(i)))
	}
	gitDir := g.Dir + "/.git"
	b := blobtest.Bucket(t)
	head := commits[len(commits)-1]
	indexKeeping(t, b, repo, gitDir, head)
	for _, c := range commits[1 : len(commits)-1] { // all nearer commits[0] than the head
		res, err := Ensure(ctx, Config{Bucket: b, GitDir: gitDir, Scratch: true}, repo, c)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Manifest
		m.Extracts, m.Search.SparseDocsKey = nil, "" // as written before derivation
		if err := search.PublishSnapshot(ctx, b, m); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Ensure(ctx, Config{Bucket: b, GitDir: gitDir}, repo, commits[0])
	if err != nil {
		t.Fatal(err)
	}
	if res.Base != head || res.Parsed != 1 {
		t.Errorf("derived from %q, %d files parsed; want the head's, 1 parsed", res.Base, res.Parsed)
	}
}
