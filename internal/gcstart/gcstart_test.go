package gcstart

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// The scenarios run in a child process: a fresh runtime, with GOGC as the
// test sets it, and no heap left by other tests.
const childEnv = "GCSTART_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "raise":
		os.Exit(childRaise())
	case "plain":
		os.Exit(childPlain())
	case "gogc":
		os.Exit(childGOGC())
	}
	os.Exit(3)
}

func runChild(t *testing.T, scenario string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOGC=") && !strings.HasPrefix(e, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, append(env, childEnv+"="+scenario)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", scenario, err, out)
	}
	return string(out)
}

// TestRaise: 40 MiB of garbage under a raised 64 MiB goal costs no
// collection; once half the goal is live, GOGC is 100 again.
func TestRaise(t *testing.T) {
	t.Log(runChild(t, "raise"))
}

// TestWithoutRaise: the same garbage without Raise is collected, which is
// what TestRaise's count of no collections rests on.
func TestWithoutRaise(t *testing.T) {
	t.Log(runChild(t, "plain"))
}

// TestRaiseLeavesGOGC: a GOGC the user set is kept.
func TestRaiseLeavesGOGC(t *testing.T) {
	t.Log(runChild(t, "gogc", "GOGC=50"))
}

var sink []byte

func garbage(mib int) {
	for range mib * 256 {
		sink = make([]byte, 4096)
	}
	sink = nil
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func goal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// percent reads GOGC's current percent (without setting it, which would
// race with Raise's cleanups).
func percent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return 1
}

func childRaise() int {
	if !Raise(64 << 20) {
		return fail("Raise(64 MiB) did nothing")
	}
	before := cycles()
	garbage(40)
	if n := cycles() - before; n != 0 {
		return fail("40 MiB of garbage under a 64 MiB goal: %d collections, want 0", n)
	}
	// A collection with 8 MiB live keeps the next goal near 64 MiB.
	var keep [][]byte
	for range 8 * 256 {
		keep = append(keep, make([]byte, 4096))
	}
	runtime.GC()
	// The cleanup that sets GOGC runs on its own goroutine, after the
	// collection: until then the goal is 8 MiB times 17.
	deadline := time.Now().Add(10 * time.Second)
	for g := goal(); g < 48<<20 || g > 80<<20; g = goal() {
		if time.Now().After(deadline) {
			return fail("with 8 MiB live the heap goal is %d MiB, want about 64", g>>20)
		}
		time.Sleep(time.Millisecond)
	}
	// Half the goal live: the collections that follow set GOGC back.
	for range 32 * 256 {
		keep = append(keep, make([]byte, 4096))
	}
	deadline = time.Now().Add(10 * time.Second)
	for percent() != 100 {
		if time.Now().After(deadline) {
			return fail("GOGC is %d with %d MiB live, want 100", percent(), len(keep)/256)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
	}
	runtime.KeepAlive(keep)
	fmt.Printf("no collection for 40 MiB of garbage; GOGC back to 100 after %d collections\n", cycles()-before)
	return 0
}

func childPlain() int {
	before := cycles()
	garbage(40)
	if n := cycles() - before; n == 0 {
		return fail("40 MiB of garbage at GOGC=100 was never collected")
	}
	return 0
}

func childGOGC() int {
	if Raise(64 << 20) {
		return fail("Raise changed GOGC although GOGC=50 was set")
	}
	if p := percent(); p != 50 {
		return fail("GOGC is %d, want 50", p)
	}
	return 0
}
