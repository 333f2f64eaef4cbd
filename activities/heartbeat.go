package activities

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
)

// How the long activities keep their attempts alive, sized for a worker
// that is alive but starved of CPU (two cores beside a dozen busy
// processes) or whose Temporal server answers slowly:
//
//   - Heartbeat records a heartbeat every HeartbeatInterval from its own
//     goroutine, so a work loop that stalls (a long tree-sitter parse, a
//     long git command, a starved scheduler) does not stall the heartbeat.
//   - The SDK sends at most one heartbeat per HeartbeatThrottle (a worker
//     option) and gives each send that long to reach the server, retries
//     included; a send that fails in that time cancels the attempt
//     ("context deadline exceeded"). Left to the SDK, the throttle is 80%
//     of the heartbeat timeout, which leaves the last send a fifth of the
//     timeout to arrive.
//   - The server times an attempt out after HeartbeatTimeout without a
//     heartbeat: two throttles after a send, so one send may take a whole
//     throttle and still land in time.
//
// An attempt whose worker died is retried at once when a worker of its
// host starts again (workers' dead-worker release), and after
// HeartbeatTimeout otherwise.
const (
	HeartbeatInterval = 3 * time.Second
	HeartbeatThrottle = 10 * time.Second
	HeartbeatTimeout  = 3 * HeartbeatThrottle
)

// Heartbeat heartbeats the activity of ctx until stop is called: every
// HeartbeatInterval (an attempt shorter than that sends none), with progress() as the details when
// progress is set (it is called from another goroutine: read the work's
// progress through atomics). Details that a retried attempt resumes from
// (activity.GetHeartbeatDetails) are the last progress() recorded. Outside
// an activity it does nothing.
func Heartbeat(ctx context.Context, progress func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	beat := func() {
		if progress != nil {
			activity.RecordHeartbeat(ctx, progress())
		} else {
			activity.RecordHeartbeat(ctx)
		}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	// stop does not wait for a send under way: the attempt's result is
	// not held up by a slow server.
	return func() { close(done) }
}

// lastLine keeps the last line of git's sideband progress ("Receiving
// objects: 42% ...") for the heartbeat to carry.
type lastLine struct{ v atomic.Pointer[string] }

func (l *lastLine) Write(b []byte) (int, error) {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if s != "" {
		l.v.Store(&s)
	}
	return len(b), nil
}

func (l *lastLine) load() any {
	if p := l.v.Load(); p != nil {
		return *p
	}
	return ""
}

// heartbeatFrom heartbeats the activity of ctx (Heartbeat) with details
// that start as from, the details this attempt resumed from: an attempt
// whose worker dies (kill -9, a lost host) is then timed out after
// HeartbeatTimeout instead of its start-to-close timeout, and the next one
// still resumes from from. set records new details at once and makes them
// the ones later beats repeat. Outside an activity, both do nothing.
func heartbeatFrom[T any](ctx context.Context, from T) (set func(T), stop func()) {
	var details atomic.Pointer[T]
	details.Store(&from)
	stop = Heartbeat(ctx, func() any { return *details.Load() })
	return func(v T) {
		details.Store(&v)
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, v)
		}
	}, stop
}
