package gitrepo

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// TreeFile is one file of a commit's tree.
type TreeFile struct {
	Path []byte
	Blob Hash
	Mode uint32
}

// IsRegular reports whether the entry is a regular (possibly executable) file,
// not a symlink or a submodule.
func (f TreeFile) IsRegular() bool { return f.Mode&0o170000 == 0o100000 }

// Snapshot reads the files of one commit. Not safe for concurrent use.
type Snapshot struct {
	src   objectSource
	files []TreeFile
	buf   []byte
}

// OpenSnapshot lists the tree of commit in gitDir.
func OpenSnapshot(ctx context.Context, gitDir string, backend Backend, commit Hash) (*Snapshot, error) {
	src, err := openSource(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{src: src}
	data, err := src.read(commit, plumbing.CommitObject, nil)
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("commit %s: %w", commit, err)
	}
	c, err := parseCommit(commit, data)
	if err != nil {
		src.Close()
		return nil, err
	}
	tr := newTreeReader(src)
	changes, err := tr.diffTrees(ZeroHash, c.Tree, nil, nil)
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("commit %s: %w", commit, err)
	}
	for _, ch := range changes {
		s.files = append(s.files, TreeFile{Path: ch.newPath, Blob: ch.newHash, Mode: ch.newMode})
	}
	return s, nil
}

// Files lists every entry of the tree (files, symlinks, submodules) in path order.
func (s *Snapshot) Files() []TreeFile { return s.files }

// ReadBlob returns a blob's content; the slice is valid until the next call.
func (s *Snapshot) ReadBlob(h Hash) ([]byte, error) {
	data, err := s.src.read(h, plumbing.BlobObject, s.buf)
	if err != nil {
		return nil, err
	}
	s.buf = data
	return data, nil
}

// Close releases the object reader.
func (s *Snapshot) Close() error { return s.src.Close() }
