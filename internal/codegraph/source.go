package codegraph

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locus-dev/locus/internal/gitrepo"
)

// GitFiles lists the files of a commit for Build. The Read functions share the
// snapshot's object reader, which Build calls from one goroutine.
func GitFiles(snap *gitrepo.Snapshot) []File {
	var out []File
	for _, f := range snap.Files() {
		f := f
		out = append(out, File{Path: string(f.Path), Regular: f.IsRegular(), Read: func() ([]byte, error) {
			return snap.ReadBlob(f.Blob)
		}, snap: snap, blob: f.Blob})
	}
	return out
}

// readAhead tells the snapshot behind files (GitFiles') that they will be
// read in this order.
func readAhead(files []File) {
	if len(files) == 0 || files[0].snap == nil {
		return
	}
	hs := make([]gitrepo.Hash, 0, len(files))
	for _, f := range files {
		if f.snap != files[0].snap {
			return // not one snapshot's
		}
		hs = append(hs, f.blob)
	}
	files[0].snap.ReadAhead(hs)
}

// BuildCommit builds the graph of one commit of the repository at gitDir.
func BuildCommit(ctx context.Context, gitDir string, backend gitrepo.Backend, commit gitrepo.Hash, opts Options) (*Graph, error) {
	snap, err := gitrepo.OpenSnapshot(ctx, gitDir, backend, commit)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	return Build(ctx, GitFiles(snap), opts)
}

// DirFiles lists the files under root (a working tree) for Build. Symbolic
// links are reported as not regular and never followed.
func DirFiles(root string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		full := p
		out = append(out, File{Path: filepath.ToSlash(rel), Regular: d.Type().IsRegular(), Read: func() ([]byte, error) {
			return os.ReadFile(full)
		}})
		return nil
	})
	return out, err
}

// HeaderLanguageAt is the language a build of commit parses the .h files
// of the repository at gitDir as: "c" or "cpp" (see Build). The history
// scrape maps header changes to functions with it.
func HeaderLanguageAt(ctx context.Context, gitDir string, backend gitrepo.Backend, commit gitrepo.Hash) (string, error) {
	snap, err := gitrepo.OpenSnapshot(ctx, gitDir, backend, commit)
	if err != nil {
		return "", err
	}
	defer snap.Close()
	return HeaderLanguage(GitFiles(snap)), nil
}

// HeaderLanguage is the language a build of files (a whole tree) parses
// their .h files as, with the default exclusions: "c", "cpp", or "" when
// the graph parses neither.
func HeaderLanguage(files []File) string {
	if l := headerLanguage(files, excludeSet(DefaultExclude)); l != nil {
		return l.Name()
	}
	return ""
}
