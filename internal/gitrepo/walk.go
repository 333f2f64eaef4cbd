package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ListCommits returns every commit reachable from head and not reachable from
// any of exclude, parents before children (ties keep the order of the parent
// list, so the result is deterministic). Shallow boundaries (parents that are
// absent from the object store) end the walk quietly. With git as the
// backend, `git rev-list` finds the commits, stopping at the excluded history
// instead of reading all of it; the order is the walker's all the same.
func ListCommits(ctx context.Context, gitDir string, backend Backend, head Hash, exclude []Hash) ([]Hash, error) {
	if ps, ok, err := revListParents(ctx, gitDir, backend, head, exclude); ok {
		if err != nil {
			return nil, err
		}
		return postOrder(ctx, head, ps)
	}
	w, err := newWalker(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	defer w.src.Close()
	return w.since(ctx, head, exclude)
}

// since walks the commits reachable from head and not from exclude, in
// ListCommits' order.
func (w *walker) since(ctx context.Context, head Hash, exclude []Hash) ([]Hash, error) {
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

// Parents returns the parents of every commit reachable from head and not
// from any of exclude (all of them, in order; none for a root or a shallow
// boundary).
func Parents(ctx context.Context, gitDir string, backend Backend, head Hash, exclude []Hash) (map[Hash][]Hash, error) {
	if ps, ok, err := revListParents(ctx, gitDir, backend, head, exclude); ok {
		return ps, err
	}
	w, err := newWalker(ctx, gitDir, backend)
	if err != nil {
		return nil, err
	}
	defer w.src.Close()
	order, err := w.since(ctx, head, exclude)
	if err != nil {
		return nil, err
	}
	ps := make(map[Hash][]Hash, len(order))
	for _, h := range order {
		ps[h] = w.parents[h]
	}
	return ps, nil
}

// revListParents has git list the commits reachable from head and not from
// exclude, with their parents (`git rev-list --parents`): git stops at the
// excluded history instead of reading all of it, as the walker must. ok is
// false where git is not the object backend (go-git: the walker reads the
// commits instead).
func revListParents(ctx context.Context, gitDir string, backend Backend, head Hash, exclude []Hash) (ps map[Hash][]Hash, ok bool, err error) {
	bin := gitBinary()
	if backend == BackendGoGit || bin == "" {
		return nil, false, nil
	}
	if err := checkGitDir(gitDir); err != nil {
		return nil, true, err
	}
	args := []string{"--git-dir", gitDir, "rev-list", "--parents", head.String()}
	var not []string
	for _, x := range exclude {
		if x != ZeroHash {
			not = append(not, x.String())
		}
	}
	if len(not) > 0 {
		args = append(append(args, "--not"), not...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		return nil, true, fmt.Errorf("walk history from %s: git rev-list: %w: %s", head, err, strings.TrimSpace(stderr.String()))
	}
	ps = make(map[Hash][]Hash, bytes.Count(out, []byte{'\n'}))
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var hs []Hash
		for _, f := range fields {
			h, ok := parseHex(f)
			if !ok {
				return nil, true, fmt.Errorf("walk history from %s: git rev-list printed %q", head, line)
			}
			hs = append(hs, h)
		}
		var parents []Hash
		if len(hs) > 1 {
			parents = hs[1:]
		}
		ps[hs[0]] = parents
	}
	return ps, true, nil
}

// postOrder lists the commits of ps reachable from head through ps, parents
// first, in the walker's order (reach): depth first, each commit's parents in
// their order. Commits not in ps are excluded history.
func postOrder(ctx context.Context, head Hash, ps map[Hash][]Hash) ([]Hash, error) {
	if _, ok := ps[head]; !ok {
		return nil, nil
	}
	type frame struct {
		h    Hash
		next int
	}
	order := make([]Hash, 0, len(ps))
	seen := map[Hash]bool{head: true}
	stack := []frame{{h: head}}
	for n := 0; len(stack) > 0; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		top := &stack[len(stack)-1]
		if parents := ps[top.h]; top.next < len(parents) {
			p := parents[top.next]
			top.next++
			if _, ok := ps[p]; !ok || seen[p] {
				continue
			}
			seen[p] = true
			stack = append(stack, frame{h: p})
			continue
		}
		order = append(order, top.h)
		stack = stack[:len(stack)-1]
	}
	return order, nil
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
