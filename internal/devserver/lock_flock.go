//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package devserver

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes a non-blocking flock. flock locks belong to the open file, not
// the process, so a second Start in the same process is refused too.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

func unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
