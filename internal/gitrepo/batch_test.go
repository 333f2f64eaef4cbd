package gitrepo

import (
	"context"
	"errors"
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
