// Package fileblob stores blob objects as files under one root directory.
package fileblob

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locus-dev/locus/internal/blob/driver"
)

// TempDir is the directory under the root that holds objects still being
// written. Keys inside it are rejected and List never shows it.
const TempDir = ".locus-tmp"

// staleTempAge is how old a temp file must be before Open treats it as left by
// a crashed writer when it cannot tell whose it is (another host's, or a name
// it does not know); far longer than any single write. Temp files of this
// host whose process is gone go at once.
const staleTempAge = 24 * time.Hour

// tempOwner is the "<host>.<pid>" prefix of this process's temp file names,
// which lets Open tell a writer that was killed (kill -9, a crash) from one
// still running.
var tempOwner = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s.%d", sanitizeHost(host), os.Getpid())
}()

// TempFileName is the name a writer of this host with process id pid gives
// a temp file (rnd is its random part): what Open's sweep recognises, for
// tests that leave one behind as a killed writer would.
func TempFileName(pid int, rnd string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s.%d.%s.tmp", sanitizeHost(host), pid, rnd)
}

// sanitizeHost keeps a host name to [A-Za-z0-9-], at most 64 bytes.
func sanitizeHost(h string) string {
	var b strings.Builder
	for _, r := range h {
		if b.Len() == 64 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "host"
	}
	return b.String()
}

// Options configures a file bucket.
type Options struct {
	// NoSync skips fsync of each object and its directory on commit, trading
	// crash durability for speed (scratch data, tests). Default false: an
	// object survives power loss once Writer.Close returns.
	NoSync bool
}

// Bucket is a driver.Bucket over a directory. All access goes through an
// os.Root, so neither keys nor symlinks can reach outside the directory.
type Bucket struct {
	root *os.Root
	opts Options
}

var _ driver.Bucket = (*Bucket)(nil)

// Open opens (creating it if needed) the directory dir as a bucket and
// removes temp files that crashed writers left: those of processes of this
// host that no longer run, and any older than a day.
func Open(dir string, opts Options) (*Bucket, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fileblob: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("fileblob: %w", err)
	}
	if err := root.Mkdir(TempDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		root.Close()
		return nil, fmt.Errorf("fileblob %s: %w", dir, err)
	}
	b := &Bucket{root: root, opts: opts}
	b.removeStaleTemps()
	return b, nil
}

func (b *Bucket) removeStaleTemps() {
	entries, err := fs.ReadDir(b.root.FS(), TempDir)
	if err != nil {
		return
	}
	host, _ := os.Hostname()
	host = sanitizeHost(host)
	for _, e := range entries {
		if staleTemp(e, host) {
			_ = b.root.Remove(TempDir + "/" + e.Name())
		}
	}
}

// staleTemp reports whether the temp file e ("<host>.<pid>.<random>.tmp")
// belongs to no live writer.
func staleTemp(e fs.DirEntry, host string) bool {
	if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTempAge {
		return true
	}
	name, ok := strings.CutSuffix(e.Name(), ".tmp")
	if !ok {
		return false
	}
	parts := strings.Split(name, ".")
	if len(parts) != 3 || parts[0] != host {
		return false // another host's (a shared filesystem), or not ours
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return !processAlive(pid)
}

// Close releases the directory handle.
func (b *Bucket) Close() error { return b.root.Close() }

func checkReserved(key string) error {
	if key == TempDir || strings.HasPrefix(key, TempDir+"/") {
		return fmt.Errorf("%w %q: %s/ is reserved by the file driver", driver.ErrInvalidKey, key, TempDir)
	}
	return nil
}

// mapErr turns "no such object" into driver.ErrNotFound; ENOTDIR means a
// parent segment is an object, so the key itself cannot exist either.
func mapErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return driver.ErrNotFound
	}
	return err
}

func attrsOf(fi fs.FileInfo) driver.Attrs {
	return driver.Attrs{
		Size:    fi.Size(),
		ModTime: fi.ModTime(),
		// Writers set a nanosecond publish time (see finish), so mtime and
		// size change with every replacement.
		ETag: fmt.Sprintf("%x-%x", fi.ModTime().UnixNano(), fi.Size()),
	}
}

// NewWriter writes into a temp file that Commit renames into place.
func (b *Bucket) NewWriter(ctx context.Context, key string) (driver.Writer, error) {
	if err := checkReserved(key); err != nil {
		return nil, err
	}
	tmp := TempDir + "/" + tempOwner + "." + rand.Text() + ".tmp"
	f, err := b.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create temp file: %w", err)
	}
	w := &writer{b: b, key: key, tmp: tmp, f: f}
	// Removes the temp file even if the caller never gets to Close or Abort.
	w.stop = context.AfterFunc(ctx, func() { _ = w.Abort() })
	return w, nil
}

type writer struct {
	b        *Bucket
	key, tmp string
	stop     func() bool

	mu sync.Mutex // guards f against the context's AfterFunc
	f  *os.File   // nil once committed or aborted
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, errors.New("writer closed or aborted")
	}
	return w.f.Write(p)
}

func (w *writer) Commit() error {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.f
	if f == nil {
		return errors.New("writer closed or aborted")
	}
	w.f = nil
	err := w.finish(f)
	if err != nil {
		_ = w.b.root.Remove(w.tmp)
	}
	return err
}

func (w *writer) finish(f *os.File) error {
	// Filesystems stamp mtime from a coarse clock (ext4: a few ms), so two
	// quick same-size writes could share an ETag; a fine-grained publish
	// time makes every replacement distinct.
	now := time.Now()
	if err := w.b.root.Chtimes(w.tmp, now, now); err != nil {
		f.Close()
		return fmt.Errorf("set modification time: %w", err)
	}
	if !w.b.opts.NoSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("sync temp file: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	dir := path.Dir(w.key)
	for attempt := 0; ; attempt++ {
		if dir != "." {
			if err := w.b.root.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("create parent directory: %w", err)
			}
		}
		err := w.b.root.Rename(w.tmp, w.key)
		if err == nil {
			break
		}
		// A concurrent Delete may prune the parent directory between MkdirAll
		// and Rename; recreating it is enough.
		if !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return fmt.Errorf("publish: %w", err)
		}
	}
	if w.b.opts.NoSync {
		return nil
	}
	// The rename is only durable once the directory entry is on disk.
	d, err := w.b.root.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

func (w *writer) Abort() error {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	w.f.Close()
	w.f = nil
	if err := w.b.root.Remove(w.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove temp file: %w", err)
	}
	return nil
}

// NewRangeReader keeps the file open, so a concurrent replace (a rename)
// cannot change what this reader returns.
func (b *Bucket) NewRangeReader(ctx context.Context, key string, offset, length int64) (driver.Reader, error) {
	if err := checkReserved(key); err != nil {
		return nil, err
	}
	f, err := b.root.Open(key)
	if err != nil {
		return nil, mapErr(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, driver.ErrNotFound
	}
	n := max(fi.Size()-offset, 0)
	if length >= 0 {
		n = min(n, length)
	}
	if offset > 0 && n > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &reader{Reader: io.LimitReader(f, n), f: f, attrs: attrsOf(fi)}, nil
}

type reader struct {
	io.Reader
	f     *os.File
	attrs driver.Attrs
}

func (r *reader) Close() error        { return r.f.Close() }
func (r *reader) Attrs() driver.Attrs { return r.attrs }

// Attributes stats the file; directories are not objects.
func (b *Bucket) Attributes(ctx context.Context, key string) (driver.Attrs, error) {
	if err := checkReserved(key); err != nil {
		return driver.Attrs{}, err
	}
	fi, err := b.root.Stat(key)
	if err != nil {
		return driver.Attrs{}, mapErr(err)
	}
	if !fi.Mode().IsRegular() {
		return driver.Attrs{}, driver.ErrNotFound
	}
	return attrsOf(fi), nil
}

// List walks only the directories that can hold keys with the prefix.
// Symlinks to files inside the root are listed; symlinked directories are not
// descended into.
func (b *Bucket) List(ctx context.Context, prefix string) ([]driver.ObjectInfo, error) {
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	var out []driver.ObjectInfo
	err := fs.WalkDir(b.root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// Vanished under a concurrent Delete, or the prefix's parent is absent.
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p == "." {
				return nil
			}
			if p == TempDir || !(strings.HasPrefix(p+"/", prefix) || strings.HasPrefix(prefix, p+"/")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(p, prefix) || driver.ValidateKey(p) != nil {
			return nil
		}
		var fi fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			fi, err = b.root.Stat(p)
		} else {
			fi, err = d.Info()
		}
		if err != nil || !fi.Mode().IsRegular() {
			return nil // gone meanwhile, a dangling or escaping link, or not a file
		}
		out = append(out, driver.ObjectInfo{Key: p, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListDirs reads the one directory that prefix names. A subdirectory counts
// only if it holds an object somewhere below it (hasObject), as on S3, so
// empty directories left by a crash or a concurrent Delete are not reported;
// the temp directory, symlinked directories and names no key could address
// never are.
func (b *Bucket) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	dir := strings.TrimSuffix(prefix, "/")
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(b.root.FS(), dir)
	if err != nil {
		if gone(err) {
			return nil, nil // no such directory, or prefix names an object
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		p := prefix + e.Name()
		if !e.IsDir() || p == TempDir || driver.ValidateKey(p) != nil {
			continue
		}
		ok, err := b.hasObject(ctx, p)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p+"/")
		}
	}
	return out, nil
}

// gone reports an error meaning that a path is not (or no longer) a directory.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// hasObject reports whether List would show any object under dir. It stops at
// the first one, checking a directory's own files before its subdirectories,
// so for a directory of objects it costs one open and one short read.
func (b *Bucket) hasObject(ctx context.Context, dir string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	f, err := b.root.Open(dir)
	if err != nil {
		if gone(err) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	var subdirs []string
	for {
		entries, err := f.ReadDir(64)
		for _, e := range entries {
			p := dir + "/" + e.Name()
			if driver.ValidateKey(p) != nil {
				continue
			}
			switch t := e.Type(); {
			case t.IsDir():
				subdirs = append(subdirs, p)
			case t.IsRegular():
				return true, nil
			case t&fs.ModeSymlink != 0:
				// List shows links to files inside the root, and only those.
				if fi, err := b.root.Stat(p); err == nil && fi.Mode().IsRegular() {
					return true, nil
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if gone(err) {
				return false, nil
			}
			return false, err
		}
	}
	for _, sub := range subdirs {
		if ok, err := b.hasObject(ctx, sub); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// Delete removes the file, then any parent directories it leaves empty.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := checkReserved(key); err != nil {
		return err
	}
	fi, err := b.root.Lstat(key)
	if err != nil {
		return mapErr(err)
	}
	if fi.IsDir() {
		return driver.ErrNotFound
	}
	if err := b.root.Remove(key); err != nil {
		return mapErr(err)
	}
	// Remove fails on a non-empty directory, which is where pruning stops.
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if b.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}
