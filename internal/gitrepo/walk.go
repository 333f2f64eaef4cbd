package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ListCommits returns every commit reachable from head and not reachable from
// any of exclude, parents before children (ties keep the order of the parent
// list, so the result is deterministic). Shallow boundaries (parents that are
// absent from the object store) end the walk quietly.
func ListCommits(ctx context.Context, gitDir string, backend Backend, head Hash, exclude []Hash) ([]Hash, error) {
	w, err := newWalker(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	defer w.src.Close()
	seen := make(map[Hash]bool)
	for _, x := range exclude {
		if x == ZeroHash {
			continue
		}
		if err := w.reach(ctx, x, seen, nil); err != nil {
			return nil, fmt.Errorf("walk excluded history from %s: %w", x, err)
		}
	}
	var order []Hash
	if err := w.reach(ctx, head, seen, &order); err != nil {
		return nil, fmt.Errorf("walk history from %s: %w", head, err)
	}
	return order, nil
}

// Parents returns the parents of every commit reachable from head (all of
// them, in order; none for a root or a shallow boundary).
func Parents(ctx context.Context, gitDir string, backend Backend, head Hash) (map[Hash][]Hash, error) {
	w, err := newWalker(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	defer w.src.Close()
	if err := w.reach(ctx, head, make(map[Hash]bool), nil); err != nil {
		return nil, fmt.Errorf("walk history from %s: %w", head, err)
	}
	return w.parents, nil
}

// newWalker opens the object store of gitDir for a walk; the caller
// closes w.src.
func newWalker(ctx context.Context, gitDir string, backend Backend) (*walker, error) {
	src, err := openSource(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	shallow, err := readShallow(gitDir)
	if err != nil {
		src.Close()
		return nil, err
	}
	return &walker{src: src, parents: make(map[Hash][]Hash), shallow: shallow}, nil
}

type walker struct {
	src     objectSource
	buf     []byte
	parents map[Hash][]Hash
	shallow map[Hash]bool
}

func (w *walker) parentsOf(h Hash) ([]Hash, error) {
	if p, ok := w.parents[h]; ok {
		return p, nil
	}
	data, err := w.src.read(h, plumbing.CommitObject, w.buf)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	w.buf = data
	c, err := parseCommit(h, data)
	if err != nil {
		return nil, err
	}
	var ps []Hash
	if !w.shallow[h] {
		ps = append(ps, c.Parents...)
	}
	w.parents[h] = ps
	return ps, nil
}

// reach marks everything reachable from start in seen; when order is non-nil it
// appends newly reached commits in post-order (parents first). Iterative, so
// histories of any length fit on the stack.
func (w *walker) reach(ctx context.Context, start Hash, seen map[Hash]bool, order *[]Hash) error {
	if seen[start] {
		return nil
	}
	type frame struct {
		h       Hash
		parents []Hash
		next    int
	}
	seen[start] = true
	ps, err := w.parentsOf(start)
	if err != nil {
		return err
	}
	stack := []frame{{h: start, parents: ps}}
	for n := 0; len(stack) > 0; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		top := &stack[len(stack)-1]
		if top.next < len(top.parents) {
			p := top.parents[top.next]
			top.next++
			if seen[p] {
				continue
			}
			seen[p] = true
			pps, err := w.parentsOf(p)
			if err != nil {
				return err
			}
			stack = append(stack, frame{h: p, parents: pps})
			continue
		}
		if order != nil {
			*order = append(*order, top.h)
		}
		stack = stack[:len(stack)-1]
	}
	return nil
}

// readShallow returns the commits recorded as shallow boundaries in gitDir.
func readShallow(gitDir string) (map[Hash]bool, error) {
	data, err := os.ReadFile(filepath.Join(gitDir, "shallow"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read shallow file of %s: %w", gitDir, err)
	}
	out := make(map[Hash]bool)
	for _, line := range strings.Fields(string(data)) {
		h, ok := parseHex([]byte(line))
		if !ok {
			return nil, fmt.Errorf("shallow file of %s: bad line %q: %w", gitDir, line, ErrCorruptObject)
		}
		out[h] = true
	}
	return out, nil
}
