package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// levelFilter drops records below a threshold that can be raised at run time,
// so the server's routine shutdown warnings can be silenced while it stops.
type levelFilter struct {
	next slog.Handler
	min  *slog.LevelVar
}

func (h levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min.Level() && h.next.Enabled(ctx, l)
}

func (h levelFilter) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h levelFilter) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFilter{next: h.next.WithAttrs(as), min: h.min}
}

func (h levelFilter) WithGroup(name string) slog.Handler {
	return levelFilter{next: h.next.WithGroup(name), min: h.min}
}

// logState is shared by a server's loggers and changed by its lifecycle.
type logState struct {
	min      slog.LevelVar
	starting atomic.Bool
	stopping atomic.Bool
}

// fatalError carries a Fatal logged while the server is being built or
// started up to Start, which recovers it and returns it.
type fatalError struct{ msg string }

func (e fatalError) Error() string { return "temporal: " + e.msg }

// serverLogger adapts slog to Temporal's logger interface.
//
// Fatal: in Temporal's own binary it exits. Here the process is locus, so
// once the server runs it is only logged as an error, as the Temporal CLI
// and temporaltest do. During start it panics instead, and Start turns that
// into an error: the server logs a failed listen (a port taken between
// choosing and binding it) as Fatal, and carrying on would crash the process
// on a nil listener a moment later.
type serverLogger struct {
	l  *slog.Logger
	st *logState
}

var (
	_ log.Logger      = serverLogger{}
	_ log.WithLogger  = serverLogger{}
	_ log.SLogWrapper = serverLogger{}
)

// benign are messages the server logs at warn or error level that say
// nothing is wrong in this setup; they are demoted to debug.
var benign = []string{
	// We leave the HTTP API off on purpose (one port fewer); locus does not
	// use Nexus.
	"HTTP API port has not been set",
	// A race in the server's metrics interceptor (trailer set after the
	// response went out); only internal metrics are affected.
	"unable to add metrics baggage to gRPC trailer",
	// The Web UI asks for history pages of 1,000 events; the frontend cuts
	// them to its maximum (256) and serves the rest on the next pages.
	"GetHistory page size is larger than threshold",
}

func newServerLogger(base *slog.Logger, st *logState) serverLogger {
	return serverLogger{
		l:  slog.New(levelFilter{next: base.Handler(), min: &st.min}).With("component", "temporal"),
		st: st,
	}
}

func (s serverLogger) Debug(msg string, tags ...tag.Tag)  { s.log(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)   { s.log(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)   { s.log(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }

func (s serverLogger) Fatal(msg string, tags ...tag.Tag) {
	s.log(slog.LevelError, msg, tags)
	if s.st.starting.Load() {
		panic(fatalError{msg: describe(msg, tags)})
	}
}

// SLog lets server components that log through slog share the same filter.
func (s serverLogger) SLog() *slog.Logger { return s.l }

func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{l: s.l.With(attrs(tags)...), st: s.st}
}

func (s serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if level >= slog.LevelWarn {
		for _, b := range benign {
			if strings.HasPrefix(msg, b) {
				level = slog.LevelDebug
				break
			}
		}
		// A call its caller gave up on (a poll ended by a stopping worker,
		// a client that exited) fails with "context canceled": the end is
		// the caller's to report, not a fault of the server.
		if canceled(tags) || errorSays(tags, frontendNotReady) {
			level = slog.LevelDebug
		}
	}
	if !s.l.Enabled(ctx, level) {
		return
	}
	// While stopping, every in-flight call between the services fails with
	// "context canceled", and some are logged as errors.
	if s.st.stopping.Load() && canceled(tags) {
		return
	}
	s.l.Log(ctx, level, msg, attrs(tags)...)
}

// frontendNotReady is what the server's own services (its system worker,
// GetSystemInfo) log while the frontend is still starting on a busy
// machine; they retry, and Start waits for the frontend itself.
const frontendNotReady = "Frontend is not healthy yet"

// errorSays reports whether the error tag's text holds s.
func errorSays(tags []tag.Tag, s string) bool {
	for _, t := range tags {
		if t.Key() == "error" && strings.Contains(fmt.Sprint(t.Value()), s) {
			return true
		}
	}
	return false
}

func canceled(tags []tag.Tag) bool { return errorSays(tags, "context canceled") }

func attrs(tags []tag.Tag) []any {
	out := make([]any, len(tags))
	for i, t := range tags {
		out[i] = slog.Any(t.Key(), t.Value())
	}
	return out
}

func describe(msg string, tags []tag.Tag) string {
	var b strings.Builder
	b.WriteString(msg)
	for _, t := range tags {
		fmt.Fprintf(&b, " %s=%v", t.Key(), t.Value())
	}
	return b.String()
}
