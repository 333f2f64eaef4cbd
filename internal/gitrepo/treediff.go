package gitrepo

import (
	"bytes"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// change is one file-level difference between two trees.
type change struct {
	status           string // added, modified, deleted, renamed
	oldPath, newPath []byte
	oldHash, newHash Hash
	oldMode, newMode uint32
}

func (c *change) path() []byte {
	if c.newPath != nil {
		return c.newPath
	}
	return c.oldPath
}

// treeReader reads and parses trees, keeping the trees of the last commit
// (the next commit usually shares most of them).
type treeReader struct {
	src  objectSource
	buf  []byte
	prev map[Hash][]treeEntry
	cur  map[Hash][]treeEntry
}

func newTreeReader(src objectSource) *treeReader {
	return &treeReader{src: src, prev: map[Hash][]treeEntry{}, cur: map[Hash][]treeEntry{}}
}

// rotate starts a new commit: trees read for the previous one stay available once more.
func (t *treeReader) rotate() {
	t.prev, t.cur = t.cur, t.prev
	clear(t.cur)
}

func (t *treeReader) tree(h Hash) ([]treeEntry, error) {
	if h == ZeroHash {
		return nil, nil
	}
	if e, ok := t.cur[h]; ok {
		return e, nil
	}
	if e, ok := t.prev[h]; ok {
		t.cur[h] = e
		return e, nil
	}
	data, err := t.src.read(h, plumbing.TreeObject, t.buf)
	if err != nil {
		return nil, err
	}
	return t.parse(h, data)
}

func (t *treeReader) parse(h Hash, data []byte) ([]treeEntry, error) {
	t.buf = data
	// parseTree keeps slices of data; copy so the buffer can be reused.
	e, err := parseTree(h, bytes.Clone(data))
	if err != nil {
		return nil, err
	}
	t.cur[h] = e
	return e, nil
}

// fetch reads the trees of hs not yet known in one batch.
func (t *treeReader) fetch(hs []Hash) error {
	var want []Hash
	for _, h := range hs {
		if h == ZeroHash {
			continue
		}
		if _, ok := t.cur[h]; ok {
			continue
		}
		if e, ok := t.prev[h]; ok {
			t.cur[h] = e
			continue
		}
		t.cur[h] = nil // asked once
		want = append(want, h)
	}
	b := &batch{src: t.src, hs: want}
	defer b.Close()
	for _, h := range want {
		data, err := b.next(plumbing.TreeObject, t.buf)
		if err != nil {
			return err
		}
		if _, err := t.parse(h, data); err != nil {
			return err
		}
	}
	return nil
}

// entryKey orders entries the way git sorts trees: a tree "a" sorts as "a/".
func entryKey(e treeEntry) string {
	if e.isTree() {
		return string(e.Name) + "/"
	}
	return string(e.Name)
}

// diffTrees appends the file changes between trees a and b (ZeroHash = empty),
// in path order (git's tree order, as a depth-first walk gives it: a tree
// "a" sorts as "a/"). The trees are walked level by level, each level's
// trees read in one batch.
func (t *treeReader) diffTrees(a, b Hash, prefix []byte, out []change) ([]change, error) {
	type pair struct {
		a, b   Hash
		prefix []byte
	}
	first := len(out)
	level := []pair{{a, b, prefix}}
	var hs []Hash
	for len(level) > 0 {
		hs = hs[:0]
		for _, p := range level {
			if p.a != p.b {
				hs = append(hs, p.a, p.b)
			}
		}
		if err := t.fetch(hs); err != nil {
			return nil, err
		}
		var next []pair
		for _, p := range level {
			if p.a == p.b {
				continue
			}
			ea, err := t.tree(p.a)
			if err != nil {
				return nil, err
			}
			eb, err := t.tree(p.b)
			if err != nil {
				return nil, err
			}
			i, j := 0, 0
			for i < len(ea) || j < len(eb) {
				var cmp int
				switch {
				case i == len(ea):
					cmp = 1
				case j == len(eb):
					cmp = -1
				default:
					cmp = compareKeys(ea[i], eb[j])
				}
				switch {
				case cmp < 0:
					e := ea[i]
					i++
					if path := joinPath(p.prefix, e.Name); e.isTree() {
						next = append(next, pair{e.Hash, ZeroHash, path})
					} else {
						out = append(out, change{status: "deleted", oldPath: path, oldHash: e.Hash, oldMode: e.Mode})
					}
				case cmp > 0:
					e := eb[j]
					j++
					if path := joinPath(p.prefix, e.Name); e.isTree() {
						next = append(next, pair{ZeroHash, e.Hash, path})
					} else {
						out = append(out, change{status: "added", newPath: path, newHash: e.Hash, newMode: e.Mode})
					}
				default:
					x, y := ea[i], eb[j]
					i++
					j++
					if x.Hash == y.Hash && x.Mode == y.Mode {
						continue
					}
					path := joinPath(p.prefix, x.Name)
					if x.isTree() {
						next = append(next, pair{x.Hash, y.Hash, path})
					} else {
						out = append(out, change{status: "modified", oldPath: path, newPath: path,
							oldHash: x.Hash, newHash: y.Hash, oldMode: x.Mode, newMode: y.Mode})
					}
				}
			}
		}
		level = next
	}
	// A depth-first walk's order is the order of the full paths' bytes,
	// since a tree's entries sort with "/" after the tree's name.
	found := out[first:]
	sort.Slice(found, func(i, j int) bool { return bytes.Compare(found[i].path(), found[j].path()) < 0 })
	return out, nil
}

func compareKeys(a, b treeEntry) int {
	if !a.isTree() && !b.isTree() {
		return bytes.Compare(a.Name, b.Name)
	}
	return compareStrings(entryKey(a), entryKey(b))
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func joinPath(prefix, name []byte) []byte {
	if len(prefix) == 0 {
		return bytes.Clone(name)
	}
	p := make([]byte, 0, len(prefix)+1+len(name))
	p = append(p, prefix...)
	p = append(p, '/')
	return append(p, name...)
}
