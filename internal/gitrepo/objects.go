package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Hash is a binary SHA-1 object id.
type Hash = plumbing.Hash

// ZeroHash is the all-zero id, used for "no object".
var ZeroHash Hash

// ErrCorruptObject is wrapped by errors about objects that cannot be parsed.
var ErrCorruptObject = errors.New("corrupt git object")

// objectSource reads raw objects of one repository. Implementations are not safe
// for concurrent use; open one per goroutine.
type objectSource interface {
	// read returns the object's raw content (without git's "type size\0" header).
	// buf may be reused for the result.
	read(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error)
	// request asks for objects whose contents next returns, in order; a
	// source may fetch them all in one round trip. Every requested object
	// must be taken with next before any other call.
	request(hs []Hash) error
	next(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error)
	Close() error
}

// maxRequest bounds the objects asked for at once: cat-file's requests
// (46 bytes each) must fit in its input pipe while it blocks writing the
// answers, or both processes would wait on each other.
const maxRequest = 256

// batch reads objects hs in order through a source's request/next, with
// at most maxRequest asked for and not yet read: once half of those are
// read, it asks for more, so that the source finds the next objects while
// the caller works on these. Close takes what was asked for and not read,
// so the source stays in step after an early return.
type batch struct {
	src       objectSource
	hs        []Hash
	sent, got int
}

func (b *batch) next(want plumbing.ObjectType, buf []byte) ([]byte, error) {
	if b.sent-b.got <= maxRequest/2 && b.sent < len(b.hs) {
		n := min(maxRequest-(b.sent-b.got), len(b.hs)-b.sent)
		if err := b.src.request(b.hs[b.sent : b.sent+n]); err != nil {
			return nil, err
		}
		b.sent += n
	}
	h := b.hs[b.got]
	b.got++
	return b.src.next(h, want, buf)
}

func (b *batch) Close() {
	var buf []byte
	for b.got < b.sent {
		buf, _ = b.src.next(b.hs[b.got], plumbing.AnyObject, buf)
		b.got++
	}
}

// Backend selects how objects are read.
type Backend string

const (
	// BackendAuto uses git cat-file when a git binary is installed, go-git otherwise.
	BackendAuto Backend = ""
	// BackendGoGit reads packfiles in process with go-git.
	BackendGoGit Backend = "go-git"
	// BackendCatFile streams objects from `git cat-file --batch`.
	BackendCatFile Backend = "cat-file"
)

// gitBinary is the git executable found on PATH, or "".
var gitBinary = sync.OnceValue(func() string {
	p, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	return p
})

// openSource opens an object source on the git directory dir.
func openSource(ctx context.Context, dir string, b Backend) (objectSource, error) {
	if err := checkGitDir(dir); err != nil {
		return nil, err
	}
	switch b {
	case BackendAuto:
		if gitBinary() != "" {
			return openCatFile(ctx, dir)
		}
		return openGoGit(dir)
	case BackendGoGit:
		return openGoGit(dir)
	case BackendCatFile:
		return openCatFile(ctx, dir)
	}
	return nil, fmt.Errorf("unknown object backend %q", b)
}

// goGitSource reads objects through go-git's filesystem storage.
type goGitSource struct {
	st *filesystem.Storage
}

func openGoGit(dir string) (*goGitSource, error) {
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(96*cache.MiByte), filesystem.Options{KeepDescriptors: true})
	// Fail early on a directory that is not a repository.
	if _, err := git.Open(st, nil); err != nil {
		st.Close()
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &goGitSource{st: st}, nil
}

func (s *goGitSource) read(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error) {
	o, err := s.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	if want != plumbing.AnyObject && o.Type() != want {
		return nil, fmt.Errorf("object %s: is a %s, want %s: %w", h, o.Type(), want, ErrCorruptObject)
	}
	r, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	defer r.Close()
	n := int(o.Size())
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("object %s: %w: %v", h, ErrCorruptObject, err)
	}
	return buf, nil
}

func (s *goGitSource) request([]Hash) error { return nil }

func (s *goGitSource) next(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error) {
	return s.read(h, want, buf)
}

func (s *goGitSource) Close() error { return s.st.Close() }

// catFileSource streams objects from one long-lived `git cat-file` process:
// `--batch-command --buffer` where git has it (2.36 and later), which
// answers a whole request list at its "flush" in one stream, else `--batch`,
// which answers object by object.
type catFileSource struct {
	cmd     *exec.Cmd
	in      *bufio.Writer
	inC     io.Closer
	out     *bufio.Reader
	stderr  *bytes.Buffer
	command bool   // --batch-command --buffer
	view    string // objectView's directory, removed on Close; "" when none
}

// catFileCommands reports whether the installed git has `cat-file
// --batch-command` (git 2.36).
var catFileCommands = sync.OnceValue(func() bool {
	out, err := exec.Command(gitBinary(), "version").Output()
	if err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(strings.TrimSpace(string(out)), "git version "), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 2 || major == 2 && minor >= 36
})

func openCatFile(ctx context.Context, dir string) (*catFileSource, error) {
	bin := gitBinary()
	if bin == "" {
		return nil, errors.New("cat-file backend: git is not installed")
	}
	args := []string{"--git-dir", dir, "-c", "core.deltaBaseCacheLimit=256m", "cat-file", "--batch"}
	command := catFileCommands()
	if command {
		args[len(args)-1] = "--batch-command"
		args = append(args, "--buffer")
	}
	// GIT_NO_LAZY_FETCH (git 2.44) keeps a partial clone's cat-file from
	// fetching the objects it lacks from the promisor remote; older git
	// has no such switch, and dies when that fetch fails.
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_NO_LAZY_FETCH=1"}
	view := ""
	if partial, err := isPartialClone(dir); err != nil {
		return nil, err
	} else if partial {
		if view, err = objectView(dir); err != nil {
			return nil, err
		}
		args = args[2:]
		env = append(env, "GIT_DIR="+view, "GIT_OBJECT_DIRECTORY="+filepath.Join(dir, "objects"))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cmd.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		if view != "" {
			os.RemoveAll(view)
		}
		return nil, fmt.Errorf("start git cat-file in %s: %w", dir, err)
	}
	return &catFileSource{cmd: cmd, in: bufio.NewWriterSize(in, 16<<10), inC: in, out: bufio.NewReaderSize(out, 1<<20),
		stderr: stderr, command: command, view: view}, nil
}

// isPartialClone reports whether the git directory dir has a promisor
// remote (a clone or fetch made with --filter): objects it lacks are then
// expected, and git would fetch them on a read.
func isPartialClone(dir string) (bool, error) {
	if packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.promisor")); len(packs) > 0 {
		return true, nil
	}
	f, err := os.Open(filepath.Join(dir, "config"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read config of %s: %w", dir, err)
	}
	defer f.Close()
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(f).Decode(cfg); err != nil {
		return false, fmt.Errorf("read config of %s: %w", dir, err)
	}
	if cfg.Section("extensions").Option("partialclone") != "" {
		return true, nil
	}
	for _, r := range cfg.Section("remote").Subsections {
		if strings.EqualFold(r.Option("promisor"), "true") {
			return true, nil
		}
	}
	return false, nil
}

// objectView makes a git directory that reads dir's objects (through
// GIT_OBJECT_DIRECTORY) with none of its configuration: without a
// promisor remote, cat-file answers "missing" for an object the partial
// clone lacks instead of fetching it (or dying when the fetch fails), and
// a scrape never reaches the network. Remove it when done.
func objectView(dir string) (string, error) {
	view, err := os.MkdirTemp("", "locus-objects-")
	if err != nil {
		return "", fmt.Errorf("object view of %s: %w", dir, err)
	}
	for _, f := range []struct{ name, text string }{
		{"HEAD", "ref: refs/heads/main\n"},
		{"config", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"},
	} {
		if err := os.WriteFile(filepath.Join(view, f.name), []byte(f.text), 0o644); err != nil {
			os.RemoveAll(view)
			return "", fmt.Errorf("object view of %s: %w", dir, err)
		}
	}
	if err := os.Mkdir(filepath.Join(view, "refs"), 0o755); err != nil {
		os.RemoveAll(view)
		return "", fmt.Errorf("object view of %s: %w", dir, err)
	}
	return view, nil
}

func (s *catFileSource) read(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error) {
	if err := s.request([]Hash{h}); err != nil {
		return nil, err
	}
	return s.next(h, want, buf)
}

func (s *catFileSource) request(hs []Hash) error {
	var line [50]byte
	for _, h := range hs {
		l := line[:0]
		if s.command {
			l = append(l, "contents "...)
		}
		l = hex.AppendEncode(l, h[:])
		if _, err := s.in.Write(append(l, '\n')); err != nil {
			return s.fail(h, err)
		}
	}
	if s.command {
		if _, err := s.in.WriteString("flush\n"); err != nil {
			return s.fail(hs[0], err)
		}
	}
	if err := s.in.Flush(); err != nil {
		return s.fail(hs[0], err)
	}
	return nil
}

func (s *catFileSource) next(h Hash, want plumbing.ObjectType, buf []byte) ([]byte, error) {
	line, err := s.out.ReadSlice('\n')
	if err != nil {
		return nil, s.fail(h, err)
	}
	// "<sha> <type> <size>\n" or "<sha> missing\n"
	f := strings.Fields(string(line))
	if len(f) == 2 && f[1] == "missing" {
		return nil, fmt.Errorf("object %s: %w", h, plumbing.ErrObjectNotFound)
	}
	if len(f) != 3 || f[0] != h.String() {
		return nil, fmt.Errorf("object %s: unexpected cat-file header %q: %w", h, line, ErrCorruptObject)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("object %s: bad size %q: %w", h, f[2], ErrCorruptObject)
	}
	if cap(buf) < n+1 {
		buf = make([]byte, n+1)
	}
	buf = buf[:n+1]
	if _, err := io.ReadFull(s.out, buf); err != nil {
		return nil, s.fail(h, err)
	}
	typ, _ := plumbing.ParseObjectType(f[1])
	if want != plumbing.AnyObject && typ != want {
		return nil, fmt.Errorf("object %s: is a %s, want %s: %w", h, f[1], want, ErrCorruptObject)
	}
	return buf[:n], nil
}

func (s *catFileSource) fail(h Hash, err error) error {
	if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
		return fmt.Errorf("object %s: git cat-file: %s: %w", h, msg, ErrCorruptObject)
	}
	return fmt.Errorf("object %s: git cat-file: %w", h, err)
}

func (s *catFileSource) Close() error {
	s.inC.Close()
	err := s.cmd.Wait()
	if s.view != "" {
		os.RemoveAll(s.view)
	}
	if err != nil && strings.TrimSpace(s.stderr.String()) != "" {
		return fmt.Errorf("git cat-file: %s", strings.TrimSpace(s.stderr.String()))
	}
	return nil
}

// Signature is an author or committer line.
type Signature struct {
	Name  []byte
	Email []byte
	// When is seconds since the epoch (UTC).
	When int64
}

// rawCommit is the parsed form of a commit object.
type rawCommit struct {
	ID        Hash
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	// Encoding is the commit's "encoding" header (e.g. "ISO-8859-1"): the
	// character set of Message and the signatures; empty means UTF-8.
	Encoding []byte
	Message  []byte
}

func parseCommit(id Hash, data []byte) (*rawCommit, error) {
	c := &rawCommit{ID: id}
	rest := data
	sawTree := false
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, fmt.Errorf("commit %s: header without newline: %w", id, ErrCorruptObject)
		}
		line := rest[:i]
		rest = rest[i+1:]
		if len(line) == 0 {
			c.Message = rest
			break
		}
		if line[0] == ' ' { // continuation of a multi-line header (gpgsig, mergetag)
			continue
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			h, ok := parseHex(val)
			if !ok {
				return nil, fmt.Errorf("commit %s: bad tree %q: %w", id, val, ErrCorruptObject)
			}
			c.Tree, sawTree = h, true
		case "parent":
			h, ok := parseHex(val)
			if !ok {
				return nil, fmt.Errorf("commit %s: bad parent %q: %w", id, val, ErrCorruptObject)
			}
			c.Parents = append(c.Parents, h)
		case "author":
			c.Author = parseSignature(val)
		case "committer":
			c.Committer = parseSignature(val)
		case "encoding":
			c.Encoding = val
		}
	}
	if !sawTree {
		return nil, fmt.Errorf("commit %s: no tree: %w", id, ErrCorruptObject)
	}
	return c, nil
}

func parseHex(b []byte) (Hash, bool) {
	var h Hash
	if len(b) != 40 {
		return h, false
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return h, false
	}
	return h, true
}

// parseSignature parses "Name <email> 1234567890 +0100" leniently: broken
// signatures in old repositories keep whatever could be read.
func parseSignature(b []byte) Signature {
	var s Signature
	lt := bytes.IndexByte(b, '<')
	gt := bytes.LastIndexByte(b, '>')
	if lt < 0 || gt < lt {
		s.Name = bytes.TrimSpace(b)
		return s
	}
	s.Name = bytes.TrimSpace(b[:lt])
	s.Email = b[lt+1 : gt]
	f := bytes.Fields(b[gt+1:])
	if len(f) >= 1 {
		if t, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
			s.When = t
		}
	}
	return s
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	Name []byte
	Mode uint32
	Hash Hash
}

const (
	modeTree    = 0o040000
	modeGitlink = 0o160000
)

func (e treeEntry) isTree() bool { return e.Mode&0o170000 == modeTree }

func parseTree(id Hash, data []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("tree %s: entry without mode: %w", id, ErrCorruptObject)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s: bad mode %q: %w", id, data[:sp], ErrCorruptObject)
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+20 {
			return nil, fmt.Errorf("tree %s: truncated entry: %w", id, ErrCorruptObject)
		}
		e := treeEntry{Name: data[:nul], Mode: uint32(mode)}
		copy(e.Hash[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

func isNotFound(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound)
}

// IsMissingObject reports whether err is about an object the repository
// does not have: one a partial clone filtered out, or one absent from an
// incomplete mirror.
func IsMissingObject(err error) bool { return isNotFound(err) }

// checkGitDir fails with a clear error when dir is not a git directory (bare
// repository or .git), before any backend tries to read it.
func checkGitDir(dir string) error {
	for _, p := range []string{"HEAD", "objects"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return fmt.Errorf("%s is not a git directory (no %s): %w", dir, p, ErrPermanent)
		}
	}
	return nil
}

// GitDir returns the git directory of a working copy (its .git), or dir
// itself if it is a bare repository (has objects/).
func GitDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", dir, err)
	}
	if st, err := os.Stat(filepath.Join(abs, ".git")); err == nil && st.IsDir() {
		return filepath.Join(abs, ".git"), nil
	}
	if _, err := os.Stat(filepath.Join(abs, "objects")); err != nil {
		return "", fmt.Errorf("%s is not a git repository", dir)
	}
	return abs, nil
}

// ParseHash parses a 40-digit hex commit id.
func ParseHash(s string) (Hash, bool) { return parseHex([]byte(s)) }
