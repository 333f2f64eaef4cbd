package activities

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/commits"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// TestIndexRescrapesDamagedHistory: damaged commit parts or a damaged
// file-id map are re-scraped by the next index, which says so
// (ReplaceReason "damaged", not a rewritten history), and leave a store that
// reads back whole.
func TestIndexRescrapesDamagedHistory(t *testing.T) {
	gz := func(s string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(s))
		zw.Close()
		return buf.Bytes()
	}
	for _, tc := range []struct {
		name   string
		target func(*schema.Manifest) string
		f      func([]byte) []byte
	}{
		{"part truncated", firstPart, func(d []byte) []byte { return d[:len(d)/2] }},
		{"file ids garbage", fileIDs, func([]byte) []byte { return []byte("not gzip at all") }},
		{"file ids truncated gzip", fileIDs, func(d []byte) []byte { return d[:len(d)-6] }},
		{"file ids empty", fileIDs, func([]byte) []byte { return nil }},
		{"file ids bad line", fileIDs, func([]byte) []byte { return gz("0123abcd \"unterminated\n") }},
		{"file ids no id", fileIDs, func([]byte) []byte { return gz(" \"w.txt\"\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := repoAt(t, t.TempDir()+"/acme/widgets", 3, "w")
			b := blobtest.Bucket(t)
			ix := newIndexer(t, b)
			spec := "acme/widgets=" + r.Dir
			if _, _, err := ix.index(spec); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			m, err := manifestOf(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			key := tc.target(m)
			damage(t, b, key, tc.f)
			// A new commit: the re-scrape must also pick it up.
			r.Write(map[string]string{"v.txt": "v\n"})
			r.Commit("v commit")

			_, scraped, err := ix.index(spec)
			if err != nil {
				t.Fatalf("index after damaging %s: %v", key, err)
			}
			if !scraped.Replace || scraped.ReplaceReason != schema.ReplaceDamaged || scraped.NewCommits != 4 {
				t.Errorf("scrape after damaging %s: replace=%v reason=%q new=%d, want the whole history (4 commits) re-scraped for %q",
					key, scraped.Replace, scraped.ReplaceReason, scraped.NewCommits, schema.ReplaceDamaged)
			}
			m2, err := manifestOf(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if err := commits.ReadAll(ctx, b, m2, func(*schema.CommitFile) error { return nil }); err != nil {
				t.Errorf("commits after the re-scrape: %v", err)
			}
			ids, err := commits.LoadFileIDs(ctx, b, m2.FileIDs)
			if err != nil {
				t.Fatalf("file ids after the re-scrape: %v", err)
			}
			if _, ok := ids.Get("v.txt"); !ok || ids.Len() != 2 || m2.Commits != 4 {
				t.Errorf("after the re-scrape: %d paths in the file-id map, %d commits; want w.txt and v.txt, 4 commits", ids.Len(), m2.Commits)
			}
			// Nothing left to repair: the next run is incremental again.
			if _, scraped, err := ix.index(spec); err != nil || scraped.Replace || scraped.NewCommits != 0 {
				t.Errorf("third index: %+v, %v; want nothing new and nothing replaced", scraped, err)
			}
		})
	}
}

func firstPart(m *schema.Manifest) string { return m.Parts[0].Key }
func fileIDs(m *schema.Manifest) string   { return m.FileIDs }

// TestLoadFileIDsDamaged: a map that does not parse is blob.ErrCorrupt and
// a missing one blob.ErrNotFound, each naming the key.
func TestLoadFileIDsDamaged(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	good := commits.NewFileIDs()
	good.Touch("c1", "a.go")
	var buf bytes.Buffer
	if _, err := good.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	whole := buf.Bytes()
	for _, tc := range []struct {
		name string
		data []byte // nil: not written
		want error
	}{
		{"garbage", []byte("garbage"), blob.ErrCorrupt},
		{"truncated", whole[:len(whole)-4], blob.ErrCorrupt},
		{"empty", []byte{}, blob.ErrCorrupt},
		{"missing", nil, blob.ErrNotFound},
		{"whole", whole, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "repos/acme/widgets/commits/ids-" + tc.name + ".gz"
			if tc.data != nil {
				if err := b.WriteAll(ctx, key, tc.data); err != nil {
					t.Fatal(err)
				}
			}
			ids, err := commits.LoadFileIDs(ctx, b, key)
			if tc.want == nil {
				if err != nil || ids.Len() != 1 {
					t.Fatalf("LoadFileIDs(%s) = %v paths, %v; want 1 path", key, ids, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), key) {
				t.Errorf("LoadFileIDs(%s) error = %v, want %v naming the key", key, err, tc.want)
			}
		})
	}
}
