//go:build unix

package workers

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this pid exists on this host;
// when that cannot be told it says yes, so that nothing is released wrongly.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
