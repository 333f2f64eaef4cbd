package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// TestBatchStaysInStep: objects asked for in one batch come back in order, a
// missing one is named without losing the others, and a batch given up
// early leaves the source answering the next read correctly, in both of
// cat-file's modes and with go-git.
func TestBatchStaysInStep(t *testing.T) {
	r := gitfixture.New(t)
	r.Write(map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n", "c.txt": "charlie\n"})
	r.Commit("three files")
	gitDir := filepath.Join(r.Dir, ".git")
	hash := func(path string) Hash {
		h, ok := ParseHash(strings.TrimSpace(r.Git("rev-parse", "HEAD:"+path)))
		if !ok {
			t.Fatalf("rev-parse %s", path)
		}
		return h
	}
	a, b, c := hash("a.txt"), hash("b.txt"), hash("c.txt")
	missing, _ := ParseHash("0123456789abcdef0123456789abcdef01234567")
	for _, mode := range []struct {
		name     string
		backend  Backend
		commands bool
	}{{"cat-file --batch-command", BackendCatFile, true}, {"cat-file --batch", BackendCatFile, false}, {"go-git", BackendGoGit, false}} {
		t.Run(mode.name, func(t *testing.T) {
			saved := catFileCommands
			catFileCommands = func() bool { return mode.commands }
			defer func() { catFileCommands = saved }()
			src, err := openSource(context.Background(), gitDir, mode.backend)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if cf, ok := src.(*catFileSource); ok && cf.command != mode.commands {
				t.Fatalf("cat-file in command mode %v, want %v", cf.command, mode.commands)
			}
			bt := &batch{src: src, hs: []Hash{a, missing, b, c}}
			got, err := bt.next(plumbing.BlobObject, nil)
			if err != nil || string(got) != "alpha\n" {
				t.Fatalf("first: %q, %v", got, err)
			}
			if _, err := bt.next(plumbing.BlobObject, nil); !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Fatalf("missing object: %v", err)
			}
			if got, err := bt.next(plumbing.BlobObject, nil); err != nil || string(got) != "bravo\n" {
				t.Fatalf("after the missing one: %q, %v", got, err)
			}
			bt.Close() // c was asked for and not taken
			if got, err := src.read(a, plumbing.BlobObject, nil); err != nil || string(got) != "alpha\n" {
				t.Fatalf("read after an abandoned batch: %q, %v", got, err)
			}
			// More objects than one request holds.
			many := make([]Hash, 3*maxRequest+5)
			for i := range many {
				many[i] = []Hash{a, b, c}[i%3]
			}
			bt = &batch{src: src, hs: many}
			for i := range many {
				got, err := bt.next(plumbing.BlobObject, nil)
				if want := []string{"alpha\n", "bravo\n", "charlie\n"}[i%3]; err != nil || string(got) != want {
					t.Fatalf("object %d: %q, %v", i, got, err)
				}
			}
			bt.Close()
		})
	}
}

// TestSnapshotReadAhead: blobs read in the order ReadAhead was told come
// back right; a read out of that order, a missing blob on the list and
// Close with reads still asked for leave the snapshot answering correctly.
func TestSnapshotReadAhead(t *testing.T) {
	r := gitfixture.New(t)
	files := map[string]string{}
	for i := range 2*maxRequest + 3 {
		files[fmt.Sprintf("f%04d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	r.Write(files)
	r.Commit("many files")
	gitDir := filepath.Join(r.Dir, ".git")
	head, ok := ParseHash(strings.TrimSpace(r.Git("rev-parse", "HEAD")))
	if !ok {
		t.Fatal("rev-parse HEAD")
	}
	missing, _ := ParseHash("0123456789abcdef0123456789abcdef01234567")
	for _, backend := range []Backend{BackendCatFile, BackendGoGit} {
		t.Run(string(backend), func(t *testing.T) {
			snap, err := OpenSnapshot(context.Background(), gitDir, backend, head)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			tf := snap.Files()
			if len(tf) != len(files) {
				t.Fatalf("%d files, want %d", len(tf), len(files))
			}
			want := func(i int) string { return files[string(tf[i].Path)] }
			plan := make([]Hash, len(tf))
			for i, f := range tf {
				plan[i] = f.Blob
			}
			snap.ReadAhead(plan)
			for i := range tf {
				if got, err := snap.ReadBlob(tf[i].Blob); err != nil || string(got) != want(i) {
					t.Fatalf("file %d in order: %q, %v", i, got, err)
				}
			}
			// Out of order halfway: the rest of the list is dropped.
			snap.ReadAhead(plan)
			for _, i := range []int{0, 1, 7, 2, maxRequest + 1, len(tf) - 1} {
				if got, err := snap.ReadBlob(tf[i].Blob); err != nil || string(got) != want(i) {
					t.Fatalf("file %d out of order: %q, %v", i, got, err)
				}
			}
			// A missing blob on the list is named; the next reads are right.
			snap.ReadAhead([]Hash{tf[0].Blob, missing, tf[1].Blob, tf[2].Blob})
			if got, err := snap.ReadBlob(tf[0].Blob); err != nil || string(got) != want(0) {
				t.Fatalf("before the missing blob: %q, %v", got, err)
			}
			if _, err := snap.ReadBlob(missing); !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Fatalf("missing blob: %v", err)
			}
			if got, err := snap.ReadBlob(tf[2].Blob); err != nil || string(got) != want(2) {
				t.Fatalf("after the missing blob: %q, %v", got, err)
			}
			// Asked for and never read: a new list starts in step.
			snap.ReadAhead(plan)
			if _, err := snap.ReadBlob(tf[0].Blob); err != nil {
				t.Fatal(err)
			}
			snap.ReadAhead(plan[3:])
			if got, err := snap.ReadBlob(tf[3].Blob); err != nil || string(got) != want(3) {
				t.Fatalf("after a list left unread: %q, %v", got, err)
			}
		})
	}
}
