package commits

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/blob"
)

// FileIDs tracks the identity of files across renames: a path keeps the id it
// was first given, and a rename hands the old path's id to the new path.
type FileIDs struct {
	byPath map[string]string
}

// NewFileIDs returns an empty map.
func NewFileIDs() *FileIDs { return &FileIDs{byPath: make(map[string]string)} }

// Paths lists the paths in the map, sorted.
func (f *FileIDs) Paths() []string {
	paths := make([]string, 0, len(f.byPath))
	for p := range f.byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// Len is the number of paths known.
func (f *FileIDs) Len() int { return len(f.byPath) }

// Get returns the id of path, if known.
func (f *FileIDs) Get(path string) (string, bool) {
	id, ok := f.byPath[path]
	return id, ok
}

// newID is the id of a file first seen at path in commit.
func newID(commit, path string) string {
	h := sha1.Sum([]byte(commit + "\x00" + path))
	return hex.EncodeToString(h[:8])
}

// Touch returns the id of path, assigning one (first seen in commit) if needed.
func (f *FileIDs) Touch(commit, path string) string {
	if id, ok := f.byPath[path]; ok {
		return id
	}
	id := newID(commit, path)
	f.byPath[path] = id
	return id
}

// Rename moves the id of oldPath to newPath and returns it.
func (f *FileIDs) Rename(commit, oldPath, newPath string) string {
	id, ok := f.byPath[oldPath]
	if !ok {
		id = newID(commit, oldPath)
	}
	delete(f.byPath, oldPath)
	f.byPath[newPath] = id
	return id
}

// WriteTo serialises the map as gzip'd lines "<id> <quoted path>", sorted by path.
func (f *FileIDs) WriteTo(w io.Writer) (int64, error) {
	paths := make([]string, 0, len(f.byPath))
	for p := range f.byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriter(zw)
	for _, p := range paths {
		bw.WriteString(f.byPath[p])
		bw.WriteByte(' ')
		bw.WriteString(strconv.Quote(p))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return 0, zw.Close()
}

// ReadFileIDs parses what WriteTo wrote; name is used in errors.
func ReadFileIDs(r io.Reader, name string) (*FileIDs, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("file ids %s: %w", name, err)
	}
	f := NewFileIDs()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		id, q, ok := strings.Cut(sc.Text(), " ")
		if !ok || id == "" {
			return nil, fmt.Errorf("file ids %s: line %d: want \"<id> <quoted path>\"", name, n)
		}
		p, err := strconv.Unquote(q)
		if err != nil {
			return nil, fmt.Errorf("file ids %s: line %d: %w", name, n, err)
		}
		f.byPath[p] = id
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("file ids %s: %w", name, err)
	}
	return f, nil
}

// LoadFileIDs reads the map stored at key. A map that does not parse
// (garbage, truncated gzip) is reported as blob.ErrCorrupt, a missing one as
// blob.ErrNotFound; both name the key. The map is derived from git, so the
// caller re-scrapes rather than fails.
func LoadFileIDs(ctx context.Context, b *blob.Bucket, key string) (*FileIDs, error) {
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("file ids %s: %w", key, err)
	}
	f, err := ReadFileIDs(bytes.NewReader(data), key)
	if err != nil {
		return nil, fmt.Errorf("%w (%d bytes): %w", err, len(data), blob.ErrCorrupt)
	}
	return f, nil
}
