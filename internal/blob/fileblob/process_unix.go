//go:build unix

package fileblob

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id runs on this host
// (signal 0 checks without signalling; EPERM means it runs as another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
