//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package devserver

import "os"

// tryLock has no flock to use on this platform; the data dir is not protected
// against a second process, and SQLite's own locking is the only guard.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }
