package search

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/graphstore"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/internal/vectors/milvus"
	"github.com/locus-dev/locus/internal/vectors/milvus/milvustest"
	"github.com/locus-dev/locus/schema"
)

// publishGraph builds the pyproj fixture with edit applied to its files'
// contents (by path; nil content drops the file), writes it at commit and
// publishes it.
func publishGraph(t *testing.T, b *blob.Bucket, repo schema.RepoName, commit string, edit map[string][]byte) schema.GraphInfo {
	t.Helper()
	ctx := context.Background()
	files, err := codegraph.DirFiles(filepath.Join("..", "codegraph", "testdata", "graph", "pyproj"))
	if err != nil {
		t.Fatal(err)
	}
	var out []codegraph.File
	for _, f := range files {
		if data, ok := edit[f.Path]; ok {
			if data == nil {
				continue
			}
			f.Read = func() ([]byte, error) { return data, nil }
		}
		out = append(out, f)
	}
	g, err := codegraph.Build(ctx, out, codegraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := graphstore.Write(ctx, b, repo, commit, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info}); err != nil {
		t.Fatal(err)
	}
	return info
}

// publishSearch records an index run in the manifest, as PublishManifest does.
func publishSearch(t *testing.T, b *blob.Bucket, repo schema.RepoName, info schema.GraphInfo, res *IndexResult) {
	t.Helper()
	ctx := context.Background()
	size, sum, err := sparse.Digest(ctx, b, res.SparseKey)
	if err != nil {
		t.Fatal(err)
	}
	si := &schema.SearchInfo{Commit: info.Commit, Model: res.Model, Functions: res.Functions, SparseKey: res.SparseKey,
		SparseBytes: size, SparseSHA256: sum, SparseDocsKey: res.SparseDocsKey}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: repo}, Graph: &info, Search: si}); err != nil {
		t.Fatal(err)
	}
}

// TestReindexTouchesOnlyTheChange re-indexes after one function changed,
// one vanished and one appeared: only those are upserted or deleted, in the
// local index and in Milvus (counted by the in-process server), BM25
// tokenizes only them, and the result equals a full index of the new graph.
func TestReindexTouchesOnlyTheChange(t *testing.T) {
	const (
		c1 = "1111111111111111111111111111111111111111"
		c2 = "2222222222222222222222222222222222222222"
	)
	edit := map[string][]byte{"app/util/strings.py": []byte(`import re


def slugify(text):
    def clean(part):
        return re.sub(r"[^a-z0-9_]+", "-", part)

    return clean(text.lower()).strip("-_")


def shout(text):
    return slugify(text).upper()
`)}
	repo := schema.RepoName("acme/pyproj")
	for _, store := range []string{"local", "milvus"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			var srv *milvustest.Server
			colls := 0
			open := func(b *blob.Bucket) Deps {
				d := Deps{Bucket: b}
				if store == "milvus" {
					colls++
					if srv == nil {
						srv = milvustest.New(t)
					}
					ix, err := milvus.Open(ctx, milvus.Options{Address: srv.Addr(), Model: "lexical-hash-512", Dim: 512, Collection: fmt.Sprintf("reindex_%d", colls)})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { ix.Close() })
					d.Vectors = ix
				}
				d.defaults()
				return d
			}
			b := blobtest.Bucket(t)
			d := open(b)
			info1 := publishGraph(t, b, repo, c1, nil)
			first, err := IndexRepo(ctx, d, repo, info1)
			if err != nil {
				t.Fatal(err)
			}
			if first.Upserted != first.Functions || first.SparseReused != 0 || first.Deleted != 0 {
				t.Fatalf("first index: %+v", first)
			}
			publishSearch(t, b, repo, info1, first)
			upserts := 0
			if srv != nil {
				upserts = srv.Calls("Upsert")
			}

			info2 := publishGraph(t, b, repo, c2, edit)
			re, err := IndexRepo(ctx, d, repo, info2)
			if err != nil {
				t.Fatal(err)
			}
			// slugify and its nested clean changed, shout is new, unused is gone.
			if re.Upserted != 3 || re.Deleted != 1 || re.SparseReused != re.Functions-3 || re.Functions != first.Functions {
				t.Fatalf("re-index: %+v, want 3 upserted, 1 deleted, all but 3 BM25 documents reused (first %+v)", re, first)
			}
			if srv != nil {
				if n := srv.Calls("Upsert") - upserts; n != 1 {
					t.Errorf("%d upsert calls to Milvus, want 1", n)
				}
			}
			publishSearch(t, b, repo, info2, re)

			// A full index of the same graph in a fresh store.
			fb := blobtest.Bucket(t)
			fd := open(fb)
			finfo := publishGraph(t, fb, repo, c2, edit)
			full, err := IndexRepo(ctx, fd, repo, finfo)
			if err != nil {
				t.Fatal(err)
			}
			if full.SparseReused != 0 || full.Upserted != full.Functions {
				t.Fatalf("full index: %+v", full)
			}
			incBytes, _ := b.ReadAll(ctx, re.SparseKey)
			fullBytes, _ := fb.ReadAll(ctx, full.SparseKey)
			if len(incBytes) == 0 || !bytes.Equal(incBytes, fullBytes) {
				t.Errorf("BM25 after the re-index (%d bytes) differs from a full index (%d bytes)", len(incBytes), len(fullBytes))
			}
			ids, err := d.Vectors.IDs(ctx, string(repo))
			if err != nil {
				t.Fatal(err)
			}
			fids, err := fd.Vectors.IDs(ctx, string(repo))
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != full.Functions || !maps.Equal(ids, fids) {
				t.Errorf("stored vectors after the re-index %v, after a full index %v", ids, fids)
			}
			q, _ := d.Embedder.Embed(ctx, []string{"shout the slug in upper case"})
			h1, _ := d.Vectors.Search(ctx, string(repo), q[0], 5)
			h2, _ := fd.Vectors.Search(ctx, string(repo), q[0], 5)
			if len(h1) == 0 || !slices.Equal(h1, h2) {
				t.Errorf("nearest vectors after the re-index %v, after a full index %v", h1, h2)
			}

			// Nothing changed: nothing written but the BM25 file, all reused.
			// The vector store holds every function as it is, so none needs
			// a vector: with the embedding cache gone, nothing is planned,
			// looked up or embedded again.
			objs, err := b.List(ctx, repo.Prefix()+"embeddings/")
			if err != nil || len(objs) == 0 {
				t.Fatalf("embedding cache: %v %v", objs, err)
			}
			for _, o := range objs {
				if err := b.Delete(ctx, o.Key); err != nil {
					t.Fatal(err)
				}
			}
			if keys, err := PlanEmbed(ctx, d, repo, info2, 0); err != nil || len(keys) != 0 {
				t.Fatalf("unchanged re-index planned batches %v (%v), want none", keys, err)
			}
			again, err := IndexRepo(ctx, d, repo, info2)
			if err != nil || again.Upserted != 0 || again.Deleted != 0 || again.SparseReused != again.Functions || again.Embedded != 0 {
				t.Fatalf("unchanged re-index: %+v %v", again, err)
			}

			// Damaged doc hashes: a warning and a full BM25 build, the same index.
			if err := b.WriteAll(ctx, re.SparseDocsKey, []byte("garbage")); err != nil {
				t.Fatal(err)
			}
			rebuilt, err := IndexRepo(ctx, d, repo, info2)
			if err != nil || rebuilt.SparseReused != 0 {
				t.Fatalf("with damaged doc hashes: %+v %v, want every document tokenized", rebuilt, err)
			}
			if got, _ := b.ReadAll(ctx, rebuilt.SparseKey); !bytes.Equal(got, fullBytes) {
				t.Error("BM25 rebuilt over damaged doc hashes differs from a full index")
			}
		})
	}
}

var _ vectors.Index = (*milvus.Index)(nil)
