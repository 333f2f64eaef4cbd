package devserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrDataDirLocked is returned (wrapped) by Start when another process holds
// the data dir.
var ErrDataDirLocked = errors.New("data dir is in use by another locus process")

// lockInfo is written into the lock file by its holder so that a process
// refused the lock can say who holds it and where that server listens.
type lockInfo struct {
	PID     int    `json:"pid"`
	Address string `json:"address,omitempty"`
}

// dirLock is an exclusive advisory lock on a file; the OS drops it when the
// holding process dies, so a kill -9 never leaves a stale lock behind.
type dirLock struct {
	f *os.File
}

func acquireLock(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !held {
		_ = f.Close()
		return nil, lockedError(path)
	}
	l := &dirLock{f: f}
	if err := l.write(lockInfo{PID: os.Getpid()}); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

func lockedError(path string) error {
	holder := "another locus process"
	var info lockInfo
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &info) == nil && info.PID > 0 {
		holder = fmt.Sprintf("another locus process (pid %d)", info.PID)
	}
	hint := "use a different data dir, or connect to a running Temporal server with --temporal ADDR"
	if info.Address != "" {
		hint = fmt.Sprintf("connect to its Temporal server with --temporal %s, or use a different data dir", info.Address)
	}
	return fmt.Errorf("%w: %s holds %s; %s", ErrDataDirLocked, holder, path, hint)
}

func (l *dirLock) write(info lockInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	return nil
}

func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	// Empty the file first so a reader never sees a dead holder's details.
	_ = l.f.Truncate(0)
	_ = unlock(l.f)
	_ = l.f.Close()
	l.f = nil
}

// Running returns the frontend address of the embedded server that another
// process (or this one) runs over dataDir, or "" when none runs: the holder
// of the data dir's lock records its address there once it serves, and the
// OS drops the lock when the holder exits, even by kill -9, so a stale
// address is never returned. Where there is no flock (see lock_other.go)
// it always returns "".
func Running(dataDir string) (string, error) {
	path := filepath.Join(dataDir, LockFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("devserver: read %s: %w", path, err)
	}
	var info lockInfo
	if len(b) == 0 || json.Unmarshal(b, &info) != nil || info.Address == "" {
		return "", nil // not started yet, stopped, or being written
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("devserver: open %s: %w", path, err)
	}
	defer f.Close()
	free, err := tryLock(f)
	if err != nil {
		return "", fmt.Errorf("devserver: lock %s: %w", path, err)
	}
	if free { // its holder is gone
		_ = unlock(f)
		return "", nil
	}
	return info.Address, nil
}
