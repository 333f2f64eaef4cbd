package gitrepo

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// ErrDiskFull marks a failure for want of disk space: retrying cannot help
// until someone frees space.
var ErrDiskFull = errors.New("no space left on device")

// diskFullTexts are how programs that report errors as text say the disk
// is full: strerror(ENOSPC) and strerror(EDQUOT) (git, the kernel) and
// SQLite's SQLITE_FULL.
var diskFullTexts = []string{"no space left on device", "disk quota exceeded", "database or disk is full"}

// IsDiskFull reports whether err comes from a full disk (or an exhausted
// quota): ENOSPC or EDQUOT anywhere in its chain, ErrDiskFull, or a message
// that says so (git's and SQLite's errors reach locus as text).
func IsDiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrDiskFull) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	return DiskFullText(err.Error())
}

// DiskFullText reports whether msg says that a disk is full.
func DiskFullText(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range diskFullTexts {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// diskFull is err, for want of space on the disk holding path, as an error
// that says so, names path and matches ErrDiskFull.
func diskFull(path string, err error) error {
	return fmt.Errorf("the disk holding %s is full: %w (%w)", path, err, ErrDiskFull)
}
