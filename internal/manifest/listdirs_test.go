package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/blob/s3blob"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/s3server"
	"github.com/locus-dev/locus/schema"
)

// listAllRecursive is ListAll as it was before it listed directories: every
// object under repos/, filtered down to the manifests. It is the reference
// for TestListAllMatchesRecursiveListing and the "before" of BenchmarkList.
func listAllRecursive(ctx context.Context, b *blob.Bucket) ([]schema.Manifest, []RepoError, error) {
	objs, err := b.List(ctx, "repos/")
	if err != nil {
		return nil, nil, fmt.Errorf("list manifests: %w", err)
	}
	var out []schema.Manifest
	var bad []RepoError
	for _, o := range objs {
		if !strings.HasSuffix(o.Key, "/manifest.json") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(o.Key, "repos/"), "/manifest.json")
		repo, err := schema.ParseRepoName(name)
		if err != nil || repo.ManifestKey() != o.Key {
			continue
		}
		m, err := Read(ctx, b, repo)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, err
			}
			bad = append(bad, RepoError{Repo: repo, Key: o.Key, Err: err})
			continue
		}
		if m != nil {
			out = append(out, *m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Repo < out[j].Repo })
	sort.Slice(bad, func(i, j int) bool { return bad[i].Repo < bad[j].Repo })
	return out, bad, nil
}

func writeManifest(tb testing.TB, b *blob.Bucket, repo schema.RepoName) {
	tb.Helper()
	data, err := json.Marshal(schema.Manifest{Version: schema.ManifestVersion, Repo: repo, URL: "/src/" + string(repo)})
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.WriteAll(context.Background(), repo.ManifestKey(), data); err != nil {
		tb.Fatal(err)
	}
}

// fillStore writes owners×perOwner repositories "oNNN/rNNN" with a manifest
// and objects-1 other objects each (commit parts, a graph, a sparse index),
// plus solo owner-less ones, 16 writes at a time.
func fillStore(tb testing.TB, b *blob.Bucket, owners, perOwner, solo, objects int) {
	tb.Helper()
	var keys []string
	var repos []schema.RepoName
	for o := range owners {
		for r := range perOwner {
			repos = append(repos, schema.RepoName(fmt.Sprintf("o%03d/r%03d", o, r)))
		}
	}
	for s := range solo {
		repos = append(repos, schema.RepoName(fmt.Sprintf("solo%03d", s)))
	}
	for _, repo := range repos {
		for i := range objects - 1 {
			switch i % 4 {
			case 0, 1:
				keys = append(keys, fmt.Sprintf("%scommits/part-%05d.parquet", repo.Prefix(), i))
			case 2:
				keys = append(keys, fmt.Sprintf("%sgraph/c%05d/nodes.parquet", repo.Prefix(), i))
			default:
				keys = append(keys, fmt.Sprintf("%ssparse/s%05d.bin", repo.Prefix(), i))
			}
		}
	}
	work := make(chan string)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for k := range work {
				if err := b.WriteAll(context.Background(), k, []byte("x")); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		tb.Fatal(err)
	default:
	}
	for _, repo := range repos {
		writeManifest(tb, b, repo)
	}
}

func repoNames(ms []schema.Manifest) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Repo))
	}
	return out
}

func errRepos(bad []RepoError) []string {
	var out []string
	for _, e := range bad {
		out = append(out, string(e.Repo)+" "+e.Key+" "+e.Error())
	}
	return out
}

// TestListAllMatchesRecursiveListing: listing directories finds exactly what
// the old recursive listing found, on a store holding more repositories than
// ListAll has requests in flight, owner-less names, names that are not ours,
// directories without a manifest and damaged manifests.
func TestListAllMatchesRecursiveListing(t *testing.T) {
	ctx := t.Context()
	b := blobtest.Bucket(t)
	fillStore(t, b, 7, 6, 5, 9)
	for k, v := range map[string]string{
		"repos/o001/r002/manifest.json":        "{ damaged",
		"repos/solo003/manifest.json":          `{"version": 99}`,
		"repos/o002/manifest.json":             `{"version": 1, "repo": "o002"}`, // an owner that is a name too
		"repos/o003/r000/graph/manifest.json":  "not a repository's",
		"repos/Upper/x/manifest.json":          "{}", // ParseRepoName lowers it: not a key we write
		"repos/.hidden/manifest.json":          "{}",
		"repos/a/b/c/manifest.json":            "{}", // too deep
		"repos/nomanifest/x/commits/p.parquet": "x",
		"repos/manifest.json":                  "{}",
		"repos-not/a/manifest.json":            "{}",
	} {
		if err := b.WriteAll(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	want, wantBad, err := listAllRecursive(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	got, gotBad, err := ListAll(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 7*6+5-2+1 { // two damaged, o002 added
		t.Fatalf("reference listed %d repositories: %q", len(want), repoNames(want))
	}
	if !slices.Equal(repoNames(got), repoNames(want)) {
		t.Errorf("ListAll = %q\nwant %q", repoNames(got), repoNames(want))
	}
	if !slices.Equal(errRepos(gotBad), errRepos(wantBad)) || len(gotBad) != 2 {
		t.Errorf("ListAll errors = %q\nwant %q", errRepos(gotBad), errRepos(wantBad))
	}
}

func TestListAllEmptyStore(t *testing.T) {
	ms, bad, err := ListAll(t.Context(), blobtest.Bucket(t))
	if err != nil || len(ms) != 0 || len(bad) != 0 {
		t.Errorf("ListAll on an empty store = %d, %d, %v", len(ms), len(bad), err)
	}
}

// TestListAllCancelled: a cancelled listing is an error, not a RepoError per
// repository.
func TestListAllCancelled(t *testing.T) {
	b := blobtest.Bucket(t)
	fillStore(t, b, 3, 3, 0, 2)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ms, bad, err := ListAll(ctx, b)
	if !errors.Is(err, context.Canceled) || len(ms) != 0 || len(bad) != 0 {
		t.Errorf("ListAll with a cancelled context = %d manifests, %d errors, %v; want context.Canceled", len(ms), len(bad), err)
	}
}

func TestForEachStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var mu sync.Mutex
	var calls int
	err := forEach(t.Context(), 10_000, func(ctx context.Context, i int) error {
		mu.Lock()
		calls++
		mu.Unlock()
		if i == 3 {
			return boom
		}
		// The others wait for the error, which index 3 can only return if
		// calls run concurrently.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("not cancelled")
		}
	})
	if !errors.Is(err, boom) {
		t.Errorf("forEach = %v, want boom", err)
	}
	if calls > listConcurrency {
		t.Errorf("forEach made %d calls, want at most the %d in flight when index 3 failed", calls, listConcurrency)
	}
	seen := make([]bool, 100)
	if err := forEach(t.Context(), len(seen), func(_ context.Context, i int) error { seen[i] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(seen, false) {
		t.Error("forEach skipped an index")
	}
}

// BenchmarkList compares ListAll with the recursive listing it replaced on
// 200 repositories (20 owners × 10) of 200 objects each, on a file store and,
// where versitygw is installed, on S3.
//
//	go test -bench BenchmarkList -run XXX ./internal/manifest
func BenchmarkList(b *testing.B) {
	const owners, perOwner, objects = 20, 10, 200
	run := func(b *testing.B, bucket *blob.Bucket) {
		fillStore(b, bucket, owners, perOwner, 0, objects)
		for _, c := range []struct {
			name string
			list func(context.Context, *blob.Bucket) ([]schema.Manifest, []RepoError, error)
		}{{"recursive", listAllRecursive}, {"dirs", ListAll}} {
			b.Run(c.name, func(b *testing.B) {
				for b.Loop() {
					ms, bad, err := c.list(b.Context(), bucket)
					if err != nil || len(bad) != 0 || len(ms) != owners*perOwner {
						b.Fatalf("%d manifests, %d errors, %v", len(ms), len(bad), err)
					}
				}
			})
		}
	}
	b.Run("file", func(b *testing.B) {
		bucket, err := blob.OpenFile(b.TempDir(), fileblob.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		defer bucket.Close()
		run(b, bucket)
	})
	b.Run("s3", func(b *testing.B) {
		srv := s3server.Start(b)
		bucket, err := blob.OpenS3(b.Context(), s3blob.Options{
			Bucket: srv.NewBucket(b), Endpoint: srv.Endpoint, Region: s3server.Region, PathStyle: true,
			AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey,
		})
		if err != nil {
			b.Fatal(err)
		}
		defer bucket.Close()
		run(b, bucket)
	})
}
