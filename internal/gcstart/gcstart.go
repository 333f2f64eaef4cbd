// Package gcstart lets a fresh process's heap grow to a size before the
// garbage collector paces it by GOGC.
//
// Go's first heap goal is 4 MiB, and each goal after a collection is the
// live heap times 1+GOGC/100. A command that builds up tens of MiB of live
// data (a code graph, a commit table) therefore collects again and again
// while its heap is small, each time marking everything built so far: a
// cost that a long-running worker, whose heap is already large, does not
// pay. The Go compiler avoids it the same way (its starting-heap
// adjustment): GOGC is raised until the live heap reaches a part of the
// goal, then set back.
package gcstart

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// firstGoal is the runtime's heap goal before its first collection at
// GOGC=100; it scales with GOGC.
const firstGoal = 4 << 20

// defaultPercent is GOGC's default, set back once the heap is grown.
const defaultPercent = 100

// Raise lets the heap grow to about goal bytes before the first
// collection, and keeps later goals near goal until a collection finds
// half of it live; from then on GOGC is 100. It does nothing, and returns
// false, when the GOGC environment variable is set (the user's setting
// wins) or goal is not above the first goal.
func Raise(goal uint64) bool {
	if goal <= firstGoal || os.Getenv("GOGC") != "" {
		return false
	}
	// The percent at which the first goal is goal; it is also the most
	// later goals may use, since the runtime's least goal scales with it.
	most := int(defaultPercent * goal / firstGoal)
	debug.SetGCPercent(most)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var adjust func()
	adjust = func() {
		metrics.Read(live)
		if live[0].Value.Kind() != metrics.KindUint64 {
			debug.SetGCPercent(defaultPercent)
			return
		}
		l := max(live[0].Value.Uint64(), 1)
		if 2*l >= goal {
			debug.SetGCPercent(defaultPercent)
			return
		}
		// The next goal is l × (1 + percent/100): goal.
		debug.SetGCPercent(min(most, max(defaultPercent, int(defaultPercent*goal/l)-defaultPercent)))
		afterNextGC(adjust)
	}
	afterNextGC(adjust)
	return true
}

// afterNextGC runs f once the next collection has found an object
// unreachable: the object is made here and dropped at once. It is 16
// bytes, the least the runtime does not pack with other small objects
// (whose cleanups may never run).
func afterNextGC(f func()) {
	runtime.AddCleanup(new([16]byte), func(struct{}) { f() }, struct{}{})
}
