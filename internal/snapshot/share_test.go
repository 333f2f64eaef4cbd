package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// indexHead indexes and publishes the head of g as IndexRepo would.
func indexHead(t *testing.T, b *blob.Bucket, g *gitfixture.Repo) schema.GraphInfo {
	t.Helper()
	info, _ := indexCommit(t, b, repo, g.Dir+"/.git", g.Dir, g.Head(), time.Unix(0, 0))
	return info
}

// indexCommit builds the graph of commit in gitDir, indexes it and
// publishes it as repo's head (url recorded), as IndexRepo would.
func indexCommit(tb testing.TB, b *blob.Bucket, repo schema.RepoName, gitDir, url, commit string, at time.Time) (schema.GraphInfo, *search.IndexResult) {
	return publishHead(tb, b, repo, gitDir, url, commit, at, false)
}

// publishHead is indexCommit; with keep, the graph also keeps its
// extractions and the BM25 index its documents' hashes and digest, as
// IndexRepo publishes a head that snapshots derive from.
func publishHead(tb testing.TB, b *blob.Bucket, repo schema.RepoName, gitDir, url, commit string, at time.Time, keep bool) (schema.GraphInfo, *search.IndexResult) {
	tb.Helper()
	ctx := context.Background()
	h, _ := gitrepo.ParseHash(commit)
	gr, err := codegraph.BuildCommit(ctx, gitDir, "", h, codegraph.Options{KeepExtracts: keep})
	if err != nil {
		tb.Fatal(err)
	}
	info, err := graphstore.Write(ctx, b, repo, commit, gr)
	if err != nil {
		tb.Fatal(err)
	}
	ires, err := search.IndexRepo(ctx, search.Deps{Bucket: b}, repo, info)
	if err != nil {
		tb.Fatal(err)
	}
	si := &schema.SearchInfo{Commit: commit, Model: ires.Model, Functions: ires.Functions, SparseKey: ires.SparseKey}
	if keep {
		si.SparseDocsKey = ires.SparseDocsKey
		if si.SparseBytes, si.SparseSHA256, err = sparse.Digest(ctx, b, si.SparseKey); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo, URL: url}, Head: commit,
		Graph: &info, Search: si, IndexedAt: at}); err != nil {
		tb.Fatal(err)
	}
	return info, ires
}

// codeKeys lists the segments of the code store.
func codeKeys(t *testing.T, b *blob.Bucket) map[string]bool {
	t.Helper()
	objs, err := b.List(context.Background(), repo.CodePrefix())
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, o := range objs {
		keys[o.Key] = true
	}
	return keys
}

// segmentRows reads a code segment's rows.
func segmentRows(t *testing.T, b *blob.Bucket, key string) []schema.CodeRow {
	t.Helper()
	data, err := b.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[schema.CodeRow](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("segment %s: %v", key, err)
	}
	return rows
}

const (
	sharedA = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"
	sharedB = "class Box:\n    def open(self):\n        return 'open'\n\n    def close(self):\n        return 'closed'\n\n\ndef gamma():\n    return 3\n"
)

// A snapshot writes to the code store only content that no stored graph
// (the head's, an earlier snapshot's) holds: the rows of the segments it adds
// are exactly the code of its nodes that is new, often none at all.
func TestSnapshotWritesOnlyNewCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change turns the first snapshot's tree into the second's.
		change func(g *gitfixture.Repo)
		// newNodes are the nodes whose code the second snapshot stores.
		newNodes []string
	}{
		{"one function edited", func(g *gitfixture.Repo) {
			g.Write(map[string]string{"pkg/a.py": strings.Replace(sharedA, "x + 1", "x + 2", 1)})
		}, []string{"pkg/a.py", "pkg/a.py:alpha"}},
		{"one method edited", func(g *gitfixture.Repo) {
			g.Write(map[string]string{"pkg/b.py": strings.Replace(sharedB, "'closed'", "'shut'", 1)})
		}, []string{"pkg/b.py", "pkg/b.py:Box", "pkg/b.py:Box.close"}},
		{"file renamed", func(g *gitfixture.Repo) { g.Git("mv", "pkg/a.py", "pkg/c.py") }, nil},
		{"nothing changed", func(g *gitfixture.Repo) { g.Write(map[string]string{"README": "readme\n"}) }, nil},
		{"back to the head's content", func(g *gitfixture.Repo) {
			g.Write(map[string]string{"pkg/a.py": sharedA + "\n\ndef delta():\n    return 4\n"})
		}, nil},
		{"file added", func(g *gitfixture.Repo) {
			g.Write(map[string]string{"pkg/new.py": "def fresh():\n    return 'fresh'\n"})
		}, []string{"pkg/new.py", "pkg/new.py:fresh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g := gitfixture.New(t)
			g.Write(map[string]string{"pkg/a.py": sharedA, "pkg/b.py": sharedB})
			first := g.Commit("first")
			tc.change(g)
			second := g.Commit("second")
			// The head is the first tree plus a function: it holds none of
			// the second's changes.
			g.Git("rm", "-r", "-q", "pkg")
			g.Git("checkout", first, "--", "pkg")
			g.Write(map[string]string{"pkg/a.py": sharedA + "\n\ndef delta():\n    return 4\n"})
			g.Commit("head")
			b := blobtest.Bucket(t)
			indexHead(t, b, g)
			c := Config{Bucket: b, GitDir: g.Dir + "/.git"}
			if _, err := Ensure(ctx, c, repo, first); err != nil {
				t.Fatal(err)
			}
			before := codeKeys(t, b)
			res, err := Ensure(ctx, c, repo, second)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range codeKeys(t, b) {
				if !before[k] {
					for _, r := range segmentRows(t, b, k) {
						got = append(got, r.Hash)
					}
				}
			}
			gr, err := graphstore.Read(ctx, b, res.Manifest.Graph)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, n := range gr.Nodes {
				if slices.Contains(tc.newNodes, n.ID) {
					want = append(want, n.ContentHash)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if len(want) != len(tc.newNodes) || !slices.Equal(got, want) {
				t.Errorf("second snapshot stored %d contents %v, want the code of %v (%v)", len(got), got, tc.newNodes, want)
			}
			// Every node reads its code back from the shared segments.
			for _, n := range gr.Nodes {
				if n.Type != codegraph.TypeDirectory && n.Code == "" {
					t.Errorf("node %s read back without code", n.ID)
				}
			}
			if res.Manifest.Graph.CodeNodes == 0 || len(res.Manifest.Graph.Code) == 0 {
				t.Errorf("snapshot graph lists no code segments: %+v", res.Manifest.Graph)
			}
		})
	}
}

// A damaged segment of the shared code store is named by every read of a
// graph that needs it, never read as wrong code, and a rebuild of the
// snapshot replaces it.
func TestSnapshotDamagedCodeSegment(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(data []byte) []byte
	}{
		{"garbage", func([]byte) []byte { return []byte("not parquet") }},
		{"one byte flipped", func(d []byte) []byte { d = bytes.Clone(d); d[len(d)/2] ^= 0x20; return d }},
		{"truncated", func(d []byte) []byte { return d[:len(d)-10] }},
		{"emptied", func([]byte) []byte { return nil }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			ctx := context.Background()
			b, g, first, _ := fixture(t)
			c := Config{Bucket: b, GitDir: g.Dir + "/.git"}
			res, err := Ensure(ctx, c, repo, first)
			if err != nil {
				t.Fatal(err)
			}
			m := res.Manifest
			// The segment holding old_only's code: the snapshot's own.
			var seg schema.CodeSegment
			for _, s := range m.Graph.Code {
				for _, r := range segmentRows(t, b, s.Key) {
					if strings.Contains(r.Code, "legacy banner") {
						seg = s
					}
				}
			}
			if seg.Key == "" {
				t.Fatalf("no segment of %v holds old_only's code", m.Graph.Code)
			}
			data, err := b.ReadAll(ctx, seg.Key)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.WriteAll(ctx, seg.Key, damage.do(data)); err != nil {
				t.Fatal(err)
			}
			search.ResetGraphCache()
			_, err = search.Code(ctx, search.Deps{Bucket: b}, repo, first, []string{"pkg/conf.py:old_only"})
			if !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), seg.Key) {
				t.Fatalf("code at the damaged snapshot: %v; want ErrCorrupt naming %s", err, seg.Key)
			}
			if err := search.VerifySnapshot(ctx, b, m); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), seg.Key) {
				t.Fatalf("VerifySnapshot: %v; want ErrCorrupt naming %s", err, seg.Key)
			}
			var warned []string
			c.Warn = func(msg string, args ...any) { warned = append(warned, fmt.Sprint(append([]any{msg}, args...)...)) }
			rebuilt, err := Ensure(ctx, c, repo, first)
			if err != nil || rebuilt.Reused {
				t.Fatalf("Ensure over a damaged code segment: %+v, %v; want a rebuild", rebuilt, err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], seg.Key) {
				t.Errorf("warnings %q, want one naming %s", warned, seg.Key)
			}
			if err := search.VerifySnapshot(ctx, b, rebuilt.Manifest); err != nil {
				t.Fatalf("rebuilt snapshot does not verify: %v", err)
			}
			code, err := search.Code(ctx, search.Deps{Bucket: b}, repo, first, []string{"pkg/conf.py:old_only", "pkg/conf.py:parse_config"})
			if err != nil || !strings.Contains(code["pkg/conf.py:old_only"], "legacy banner") || !strings.Contains(code["pkg/conf.py:parse_config"], "open(path)") {
				t.Errorf("code after the rebuild: %v, %v", code, err)
			}
			// The head, which shares the store, still reads.
			hm, err := manifest.Read(ctx, b, repo)
			if err != nil {
				t.Fatal(err)
			}
			if err := graphstore.Verify(ctx, b, *hm.Graph); err != nil {
				t.Errorf("head graph after the rebuild: %v", err)
			}
		})
	}
}

// A damaged segment the head's graph shares is named when the head is
// read, and a rebuild of a snapshot needing it stores its content again.
func TestSnapshotDamagedSharedSegment(t *testing.T) {
	ctx := context.Background()
	b, g, first, _ := fixture(t)
	hm, err := manifest.Read(ctx, b, repo)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Bucket: b, GitDir: g.Dir + "/.git"}
	res, err := Ensure(ctx, c, repo, first)
	if err != nil {
		t.Fatal(err)
	}
	shared := hm.Graph.Code[0]
	if !slices.Contains(res.Manifest.Graph.Code, shared) {
		t.Fatalf("snapshot segments %v do not include the head's %s", res.Manifest.Graph.Code, shared.Key)
	}
	if err := b.WriteAll(ctx, shared.Key, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	if err := graphstore.Verify(ctx, b, *hm.Graph); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), shared.Key) {
		t.Errorf("head graph over a damaged segment: %v; want ErrCorrupt naming %s", err, shared.Key)
	}
	rebuilt, err := Ensure(ctx, c, repo, first)
	if err != nil || rebuilt.Reused {
		t.Fatalf("Ensure: %+v, %v; want a rebuild", rebuilt, err)
	}
	if slices.ContainsFunc(rebuilt.Manifest.Graph.Code, func(s schema.CodeSegment) bool { return s.Key == shared.Key }) {
		t.Errorf("rebuilt snapshot still reads the damaged segment %s", shared.Key)
	}
	if err := search.VerifySnapshot(ctx, b, rebuilt.Manifest); err != nil {
		t.Errorf("rebuilt snapshot: %v", err)
	}
	if ok, _ := b.Exists(ctx, shared.Key); ok {
		t.Errorf("damaged segment %s left in the store", shared.Key)
	}
}

// Snapshots of two commits built at once share the code store without
// tearing each other's graphs.
func TestEnsureTwoSnapshotsConcurrent(t *testing.T) {
	ctx := context.Background()
	g := gitfixture.New(t)
	var commits []string
	for i := range 4 {
		g.Write(map[string]string{
			"pkg/a.py":                   sharedA,
			fmt.Sprintf("pkg/v%d.py", i): fmt.Sprintf("def version_%d():\n    return %d\n", i, i),
			"pkg/b.py":                   strings.Replace(sharedB, "return 3", fmt.Sprintf("return %d", 3+i), 1),
		})
		commits = append(commits, g.Commit(fmt.Sprint("c", i)))
	}
	b := blobtest.Bucket(t)
	indexHead(t, b, g)
	c := Config{Bucket: b, GitDir: g.Dir + "/.git"}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Ensure(ctx, c, repo, commits[i%3]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, commit := range commits[:3] {
		m, err := search.ReadSnapshot(ctx, b, repo, commit)
		if err != nil || m == nil {
			t.Fatalf("snapshot %s: %v", commit, err)
		}
		if err := search.VerifySnapshot(ctx, b, m); err != nil {
			t.Error(err)
		}
		id := fmt.Sprintf("pkg/v%d.py:version_%d", i, i)
		code, err := search.Code(ctx, search.Deps{Bucket: b}, repo, commit, []string{id, "pkg/b.py:gamma"})
		if err != nil || !strings.Contains(code[id], fmt.Sprintf("return %d", i)) || !strings.Contains(code["pkg/b.py:gamma"], fmt.Sprintf("return %d", 3+i)) {
			t.Errorf("code at %s: %v, %v", commit, code, err)
		}
	}
}

// A snapshot stored before the code store (SnapshotVersion 1: code inline in
// its nodes table, no segments listed) still reads and is reused as it is.
func TestSnapshotOldLayoutReads(t *testing.T) {
	ctx := context.Background()
	b, g, first, _ := fixture(t)
	c := Config{Bucket: b, GitDir: g.Dir + "/.git"}
	res, err := Ensure(ctx, c, repo, first)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	gr, err := graphstore.Read(ctx, b, m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite it as locus wrote it before: code inline, no segments.
	var buf bytes.Buffer
	if err := parquet.Write(&buf, gr.Nodes); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, m.Graph.NodesKey, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	m.Graph.NodesBytes, m.Graph.NodesSHA256, m.Graph.Code, m.Graph.CodeNodes = 0, "", nil, 0
	m.Version = 1
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, repo.SnapshotManifestKey(first), data); err != nil {
		t.Fatal(err)
	}
	search.ResetGraphCache()
	again, err := Ensure(ctx, c, repo, first)
	if err != nil || !again.Reused || len(again.Manifest.Graph.Code) != 0 {
		t.Fatalf("Ensure over an old-layout snapshot: %+v, %v; want it reused", again, err)
	}
	code, err := search.Code(ctx, search.Deps{Bucket: b}, repo, first, []string{"pkg/conf.py:old_only"})
	if err != nil || !strings.Contains(code["pkg/conf.py:old_only"], "legacy banner") {
		t.Errorf("code at an old-layout snapshot: %v, %v", code, err)
	}
}
