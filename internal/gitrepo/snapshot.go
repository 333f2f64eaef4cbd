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
	ahead *batch // ReadAhead's list, until it is read or dropped
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

// ReadAhead tells the snapshot which blobs ReadBlob will be asked for
// next, in order: the object reader then looks them up ahead of the calls
// (git cat-file answers a list of them while the caller works). A call
// for another blob drops what is left of the list and reads as before.
func (s *Snapshot) ReadAhead(hs []Hash) {
	s.dropAhead()
	if len(hs) > 0 {
		s.ahead = &batch{src: s.src, hs: hs}
	}
}

// dropAhead takes what the read-ahead list asked for and was not read.
func (s *Snapshot) dropAhead() {
	if s.ahead != nil {
		s.ahead.Close()
		s.ahead = nil
	}
}

// ReadBlob returns a blob's content; the slice is valid until the next call.
func (s *Snapshot) ReadBlob(h Hash) ([]byte, error) {
	if b := s.ahead; b != nil {
		if b.got < len(b.hs) && b.hs[b.got] == h {
			data, err := b.next(plumbing.BlobObject, s.buf)
			if err != nil {
				s.dropAhead() // the source is back in step for the next call
				return nil, err
			}
			s.buf = data
			return data, nil
		}
		s.dropAhead()
	}
	data, err := s.src.read(h, plumbing.BlobObject, s.buf)
	if err != nil {
		return nil, err
	}
	s.buf = data
	return data, nil
}

// Close releases the object reader.
func (s *Snapshot) Close() error {
	s.dropAhead()
	return s.src.Close()
}
