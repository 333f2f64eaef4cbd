package gitrepo

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// DiffOptions control how commits are diffed.
type DiffOptions struct {
	// Backend reads objects; default BackendAuto (git cat-file when git is installed).
	Backend Backend
	// MaxDiffBytes caps the unified diff kept per file; default 256 KiB.
	MaxDiffBytes int
	// MaxBlobBytes: for blobs larger than this no diff is stored (it is
	// flagged as truncated) and no changed functions are mapped; additions and
	// deletions are still counted exactly; default 32 MiB.
	MaxBlobBytes int
	// KeepBlobBytes bounds the copies kept of the new versions read, for
	// the next commit that changes the file to read as its old version
	// without asking git again; default 48 MiB.
	KeepBlobBytes int
	// Context is the number of context lines in hunks; default 3.
	Context int
	// RenameLimit: inexact rename detection runs only when the files deleted
	// times the files added (after exact and same-name renames) is at most
	// RenameLimit²; default 1000 (git's diff.renameLimit).
	RenameLimit int
	// Workers diffing commits in parallel; default 2 × GOMAXPROCS: a
	// worker waits for git's object reads and for file versions another
	// worker is mapping, and twice the cores keeps them busy
	// (docs/benchmarks.md).
	Workers int
	// Functions, if set, names the functions a file change touches (filled
	// into FileDiff.ChangedFunctions). It is called from several goroutines.
	Functions func(*LineChanges) []string
	// Expect, if set with Functions, is called once for each commit, in
	// the order of the commits whichever goroutine diffs them, with the
	// file versions its changes hold (both sides, submodules left out),
	// before any of the commit's Functions calls. Those calls get its claim
	// as LineChanges.Claim; release is called once they are done. It lets
	// Functions wait for a version that an earlier commit is finding
	// instead of finding it again, as two goroutines diffing neighbouring
	// commits otherwise would.
	Expect func(versions []Version) (claim any, release func())
}

// Version is one version of a file: its path and content id.
type Version struct {
	Path string
	Blob Hash
}

// LineChanges describes one text file change line by line, for mapping
// changes onto functions.
type LineChanges struct {
	OldPath, NewPath string // "" for the side that does not exist
	OldBlob, NewBlob Hash   // content ids, for caching per version
	Old, New         []byte
	// OldLines and NewLines are Old and New cut after each newline (a
	// last line without one too), as the differ read them; valid only
	// during the call.
	OldLines, NewLines [][]byte
	Deleted            []int // 1-based old lines removed or replaced
	Added              []int // 1-based new lines added or replacing
	// InsertedAfter are old positions k where lines were inserted between old
	// line k and k+1 without replacing anything.
	InsertedAfter []int
	// Claim is what DiffOptions.Expect returned for the commit; nil
	// without Expect.
	Claim any
}

func (o *DiffOptions) defaults() {
	if o.MaxDiffBytes <= 0 {
		o.MaxDiffBytes = 256 << 10
	}
	if o.MaxBlobBytes <= 0 {
		o.MaxBlobBytes = 32 << 20
	}
	if o.Context <= 0 {
		o.Context = 3
	}
	if o.RenameLimit <= 0 {
		o.RenameLimit = 1000
	}
	if o.Workers <= 0 {
		o.Workers = 2 * runtime.GOMAXPROCS(0)
	}
}

// CommitDiff is one commit and its file changes against its first parent.
type CommitDiff struct {
	ID        Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	// Encoding is the commit's "encoding" header; empty means UTF-8.
	Encoding []byte
	Message  []byte
	Files    []FileDiff // sorted by path
}

// FileDiff is the change of one file in one commit.
type FileDiff struct {
	Status           string // added, modified, deleted, renamed
	OldPath, NewPath []byte // OldPath nil when added, NewPath nil when deleted
	OldBlob, NewBlob Hash
	OldMode, NewMode uint32
	Additions        int
	Deletions        int
	Binary           bool
	Diff             []byte // unified hunks, no header; nil for binary files
	Truncated        bool   // Diff was cut at MaxDiffBytes, or the blob was too large to diff
	// Missing: a side's blob is not in the repository (a partial clone
	// filtered it out, or the mirror lacks it). Additions and Deletions
	// are then -1 (unknown), except for a change that keeps the content
	// (a pure rename or mode change: 0 and 0); Binary is false, there is no
	// Diff and no ChangedFunctions.
	Missing bool
	// ChangedFunctions are ids ("path:Qualified.name") of the functions the
	// change touches in the old and new versions, when DiffOptions.Functions is set.
	ChangedFunctions []string
}

// Path is the file's path after the change (before it, for a deletion).
func (f *FileDiff) Path() []byte {
	if f.NewPath != nil {
		return f.NewPath
	}
	return f.OldPath
}

// DiffCommits diffs commits (in the given order) with opts.Workers goroutines and
// calls emit for each, in order, from one goroutine. It stops at the first error.
func DiffCommits(ctx context.Context, gitDir string, commits []Hash, opts DiffOptions, emit func(*CommitDiff) error) error {
	opts.defaults()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type result struct {
		cd  *CommitDiff
		err error
	}
	type job struct {
		h Hash
		// prev is the commit listed before h: its first parent, in a
		// linear history, read in the same round trip as h.
		prev Hash
		ch   chan result
		turn expectTurn
	}
	jobs := make(chan job)
	queue := make(chan chan result, 16*opts.Workers)
	var wg sync.WaitGroup
	var openErr error
	kept := newBlobCache(opts.KeepBlobBytes)
	for w := 0; w < opts.Workers; w++ {
		src, err := openSource(ctx, gitDir, opts.Backend)
		if err != nil {
			openErr = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer src.Close()
			cd := newCommitDiffer(src, opts)
			cd.kept = kept
			for j := range jobs {
				d, err := cd.diffCommit(ctx, j.h, j.prev, j.turn)
				j.ch <- result{d, err}
			}
		}()
	}
	if openErr != nil {
		cancel()
		close(jobs)
		wg.Wait()
		return openErr
	}
	go func() {
		defer close(queue)
		// Each commit's Expect waits for the one before it.
		after := make(chan struct{})
		close(after)
		for i, h := range commits {
			var prev Hash
			if i > 0 {
				prev = commits[i-1]
			}
			var turn expectTurn
			if opts.Expect != nil && opts.Functions != nil {
				turn = expectTurn{after: after, done: make(chan struct{})}
				after = turn.done
			}
			ch := make(chan result, 1)
			select {
			case queue <- ch:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{h, prev, ch, turn}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
	for ch := range queue {
		var r result
		select {
		case r = <-ch:
		case <-ctx.Done():
			r.err = ctx.Err()
		}
		if r.err == nil {
			r.err = emit(r.cd)
		}
		if r.err != nil {
			err = r.err
			cancel()
			break
		}
	}
	cancel()
	for range queue { // let the producer finish
	}
	close(jobs)
	wg.Wait()
	return err
}

// commitDiffer diffs single commits; one per goroutine.
type commitDiffer struct {
	seen map[string]int // changes by path so far
	// kept holds the new versions recently read, shared by the
	// goroutines; held are the old versions of the commit being diffed
	// found there (not read from src).
	kept  *blobCache
	held  map[Hash][]byte
	src   objectSource
	opts  DiffOptions
	trees *treeReader
	d     differ
	bufA  []byte
	bufB  []byte
	cbuf  []byte
}

func newCommitDiffer(src objectSource, opts DiffOptions) *commitDiffer {
	return &commitDiffer{src: src, opts: opts, trees: newTreeReader(src)}
}

func (c *commitDiffer) commit(h Hash) (*rawCommit, error) {
	data, err := c.src.read(h, plumbing.CommitObject, c.cbuf)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	c.cbuf = data
	return c.parseCommit(h, data)
}

func (c *commitDiffer) parseCommit(h Hash, data []byte) (*rawCommit, error) {
	rc, err := parseCommit(h, data)
	if err != nil {
		return nil, err
	}
	// parseCommit aliases data; detach what we keep from the reused buffer.
	rc.Message = append([]byte(nil), rc.Message...)
	rc.Encoding = append([]byte(nil), rc.Encoding...)
	rc.Author.Name, rc.Author.Email = append([]byte(nil), rc.Author.Name...), append([]byte(nil), rc.Author.Email...)
	rc.Committer.Name, rc.Committer.Email = append([]byte(nil), rc.Committer.Name...), append([]byte(nil), rc.Committer.Email...)
	return rc, nil
}

// expectTurn orders the commits' Expect calls: a commit's call waits for
// after and closes done (also when it fails first); zero without Expect.
type expectTurn struct {
	after <-chan struct{}
	done  chan struct{}
}

// expect calls opts.Expect with the versions changes hold once the commit
// before has.
func (c *commitDiffer) expect(ctx context.Context, turn expectTurn, changes []change) (claim any, release func(), err error) {
	select {
	case <-turn.after:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	vs := make([]Version, 0, 2*len(changes))
	for _, ch := range changes {
		if ch.oldHash == ch.newHash || ch.oldMode&0o170000 == modeGitlink || ch.newMode&0o170000 == modeGitlink {
			continue // diffFile maps no functions for these
		}
		if ch.oldHash != ZeroHash {
			vs = append(vs, Version{string(ch.oldPath), ch.oldHash})
		}
		if ch.newHash != ZeroHash {
			vs = append(vs, Version{string(ch.newPath), ch.newHash})
		}
	}
	claim, release = c.opts.Expect(vs)
	return claim, release, nil
}

// diffCommit diffs commit h against its first parent; guess, when not zero,
// is read with h in case it is that parent. turn orders its Expect call.
func (c *commitDiffer) diffCommit(ctx context.Context, h, guess Hash, turn expectTurn) (*CommitDiff, error) {
	turned := turn.done == nil
	defer func() {
		if !turned { // failed before its turn: the next commit's goes on
			close(turn.done)
		}
	}()
	rc, guessed, err := c.commits(h, guess)
	if err != nil {
		return nil, err
	}
	parentTree := ZeroHash
	if len(rc.Parents) > 0 && guessed != nil && rc.Parents[0] == guess {
		parentTree = guessed.Tree
	} else if len(rc.Parents) > 0 {
		pc, err := c.commit(rc.Parents[0])
		if err != nil {
			if !isNotFound(err) {
				return nil, err
			}
			// Shallow boundary: the parent is not here, diff against nothing.
		} else {
			parentTree = pc.Tree
		}
	}
	c.trees.rotate()
	changes, err := c.trees.diffTrees(parentTree, rc.Tree, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	changes, err = detectRenames(changes, c.opts.RenameLimit, func(b Hash) ([]byte, error) {
		data, err := c.src.read(b, plumbing.BlobObject, nil)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", h, err)
		}
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(changes, func(i, j int) bool { return string(changes[i].path()) < string(changes[j].path()) })
	var claim any // the commit's DiffOptions.Expect claim, for its Functions calls
	if !turned {
		var release func()
		var err error
		claim, release, err = c.expect(ctx, turn, changes)
		close(turn.done)
		turned = true
		if err != nil {
			return nil, err
		}
		if release != nil {
			defer release()
		}
	}
	cd := &CommitDiff{ID: h, Parents: rc.Parents, Author: rc.Author, Committer: rc.Committer, Encoding: rc.Encoding, Message: rc.Message}
	cd.Files = make([]FileDiff, len(changes)) // in path order, filled in the order diffed
	// Files are diffed, and their blobs read in one batch, most often
	// changed first (by the commits this goroutine diffed): the next
	// commits are likely to wait for their versions (DiffOptions.Expect).
	order := make([]int, len(changes))
	for i := range order {
		order[i] = i
	}
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	for _, ch := range changes {
		c.seen[string(ch.path())]++
	}
	sort.SliceStable(order, func(a, b int) bool {
		return c.seen[string(changes[order[a]].path())] > c.seen[string(changes[order[b]].path())]
	})
	var hs []Hash
	if c.held == nil {
		c.held = map[Hash][]byte{}
	}
	clear(c.held)
	for _, i := range order {
		ch := changes[i]
		if ch.oldHash == ch.newHash {
			// A pure rename or mode change: git still reads the content
			// to call it binary or not.
			if storedBlob(ch.newHash, ch.newMode) {
				hs = append(hs, ch.newHash)
			}
			continue
		}
		if storedBlob(ch.oldHash, ch.oldMode) {
			if _, ok := c.held[ch.oldHash]; !ok {
				if data, ok := c.kept.get(ch.oldHash); ok {
					c.held[ch.oldHash] = data
				} else {
					hs = append(hs, ch.oldHash)
				}
			}
		}
		if storedBlob(ch.newHash, ch.newMode) {
			hs = append(hs, ch.newHash)
		}
	}
	blobs := &batch{src: c.src, hs: hs}
	defer blobs.Close()
	for _, i := range order {
		fd, err := c.diffFile(&changes[i], blobs, claim)
		if err != nil {
			return nil, fmt.Errorf("commit %s: file %q: %w", h, changes[i].path(), err)
		}
		cd.Files[i] = fd
	}
	return cd, nil
}

// commits reads commit h and, in the same batch, commit guess (nil when
// zero or not found).
func (c *commitDiffer) commits(h, guess Hash) (rc, g *rawCommit, err error) {
	if guess == ZeroHash {
		rc, err = c.commit(h)
		return rc, nil, err
	}
	b := &batch{src: c.src, hs: []Hash{h, guess}}
	defer b.Close()
	data, err := b.next(plumbing.CommitObject, c.cbuf)
	if err != nil {
		return nil, nil, fmt.Errorf("commit %s: %w", h, err)
	}
	c.cbuf = data
	if rc, err = c.parseCommit(h, data); err != nil {
		return nil, nil, err
	}
	if data, err := b.next(plumbing.CommitObject, c.cbuf); err == nil {
		c.cbuf = data
		g, _ = parseCommit(guess, data) // only its tree is used
	}
	return rc, g, nil
}

// blobCache keeps copies of the blobs put in it, the oldest dropped first
// beyond max bytes: the new version of a file one commit reads is the old
// version the next commit to change it reads, and git need not inflate it
// again. Safe for concurrent use; what get returns must not be changed.
type blobCache struct {
	mu    sync.Mutex
	m     map[Hash][]byte
	order []Hash
	bytes int
	max   int
}

func newBlobCache(max int) *blobCache {
	if max <= 0 {
		max = 48 << 20
	}
	return &blobCache{m: map[Hash][]byte{}, max: max}
}

func (c *blobCache) get(h Hash) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.m[h]
	return data, ok
}

// put keeps a copy of data, unless it is larger than a quarter of max.
func (c *blobCache) put(h Hash, data []byte) {
	if len(data) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[h]; ok {
		return
	}
	c.m[h] = append([]byte(nil), data...)
	c.order = append(c.order, h)
	c.bytes += len(data)
	for c.bytes > c.max {
		c.bytes -= len(c.m[c.order[0]])
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// storedBlob reports whether a side of a change (h, mode) has content to read
// from the object store: it exists and is not a submodule.
func storedBlob(h Hash, mode uint32) bool { return h != ZeroHash && mode&0o170000 != modeGitlink }

// blob is a side's content, read from blobs where storedBlob says so.
// held: an old version, which the batch holds only when c.held does not.
func (c *commitDiffer) blob(h Hash, mode uint32, blobs *batch, buf *[]byte, held bool) ([]byte, bool, error) {
	if h == ZeroHash {
		return nil, false, nil
	}
	if !storedBlob(h, mode) {
		// A submodule: git shows its commit id as the content.
		return []byte("Subproject commit " + h.String() + "\n"), false, nil
	}
	if data, ok := c.held[h]; ok && held {
		return data, len(data) > c.opts.MaxBlobBytes, nil
	}
	data, err := blobs.next(plumbing.BlobObject, *buf)
	if err != nil {
		return nil, false, err
	}
	*buf = data
	return data, len(data) > c.opts.MaxBlobBytes, nil
}

// diffFile diffs one change; claim goes to its Functions call.
func (c *commitDiffer) diffFile(ch *change, blobs *batch, claim any) (FileDiff, error) {
	fd := FileDiff{Status: ch.status, OldPath: ch.oldPath, NewPath: ch.newPath,
		OldBlob: ch.oldHash, NewBlob: ch.newHash, OldMode: ch.oldMode, NewMode: ch.newMode}
	if ch.oldHash == ch.newHash {
		// A mode change or pure rename: nothing added or deleted, but
		// numstat shows a binary file as binary all the same.
		b, _, err := c.blob(ch.newHash, ch.newMode, blobs, &c.bufB, false)
		if isNotFound(err) {
			fd.Missing = true
			return fd, nil
		}
		fd.Binary = err == nil && isBinary(b)
		return fd, err
	}
	// Both sides are read before either error is looked at: the batch
	// holds them in order.
	a, bigA, errA := c.blob(ch.oldHash, ch.oldMode, blobs, &c.bufA, true)
	b, bigB, errB := c.blob(ch.newHash, ch.newMode, blobs, &c.bufB, false)
	for _, err := range []error{errA, errB} {
		if err != nil && !isNotFound(err) {
			return fd, err
		}
	}
	if errA != nil || errB != nil {
		fd.Missing, fd.Additions, fd.Deletions = true, -1, -1
		return fd, nil
	}
	if !bigB && storedBlob(ch.newHash, ch.newMode) {
		c.kept.put(ch.newHash, b)
	}
	if isBinary(a) || isBinary(b) {
		fd.Binary = true
		return fd, nil
	}
	if bigA || bigB {
		// Too big to keep a diff of, but the counts are cheap and must be
		// right: a whole file added or deleted is its line count, otherwise
		// the line marks without the hunks.
		fd.Truncated = true
		switch {
		case len(a) == 0:
			fd.Additions = countLines(b)
		case len(b) == 0:
			fd.Deletions = countLines(a)
		default:
			fd.Additions, fd.Deletions = c.d.count(a, b)
		}
		return fd, nil
	}
	r := c.d.diff(a, b, c.opts.Context, c.opts.MaxDiffBytes, nil)
	fd.Additions, fd.Deletions, fd.Diff, fd.Truncated = r.Additions, r.Deletions, r.Unified, r.Truncated
	if c.opts.Functions != nil && ch.oldMode&0o170000 != modeGitlink && ch.newMode&0o170000 != modeGitlink {
		lc := c.d.lineChanges()
		lc.OldPath, lc.NewPath, lc.Old, lc.New = string(ch.oldPath), string(ch.newPath), a, b
		lc.OldLines, lc.NewLines = c.d.linesA, c.d.linesB
		lc.OldBlob, lc.NewBlob = ch.oldHash, ch.newHash
		lc.Claim = claim
		fd.ChangedFunctions = c.opts.Functions(&lc)
	}
	return fd, nil
}
