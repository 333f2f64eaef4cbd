// Package cputime reads the CPU time of the test process, which benchmarks
// report beside wall time: on a shared machine it says more.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time this process has used (user and system, every
// thread); 0 where the system does not say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
