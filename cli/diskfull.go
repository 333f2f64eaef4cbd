package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// diskWatch notes the first warning or error the embedded Temporal server
// logs that says its disk is full. Such a server cannot record a workflow's
// progress, so a command waiting on one would wait forever: it ends with
// err instead.
type diskWatch struct {
	dir  string // the server's data directory
	once sync.Once
	full chan struct{}
	text string // what the server said, set before full closes
}

func newDiskWatch(dir string) *diskWatch {
	return &diskWatch{dir: dir, full: make(chan struct{})}
}

// handler passes records to next, watching them.
func (w *diskWatch) handler(next slog.Handler) slog.Handler {
	return diskWatchHandler{next: next, w: w}
}

// Full is closed once the server said its disk is full; never for a nil
// watch (no embedded server).
func (w *diskWatch) Full() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.full
}

// fired reports whether the server said its disk is full.
func (w *diskWatch) fired() bool {
	select {
	case <-w.Full():
		return true
	default:
		return false
	}
}

func (w *diskWatch) note(text string) {
	w.once.Do(func() {
		w.text = text
		close(w.full)
	})
}

// err says that the server's disk is full.
func (w *diskWatch) err() error {
	return exitError{code: 1, msg: fmt.Sprintf("the disk holding %s is full: the embedded Temporal server cannot record progress (%s); free space, then run the same command again to continue",
		w.dir, w.text)}
}

type diskWatchHandler struct {
	next slog.Handler
	w    *diskWatch
}

func (h diskWatchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h diskWatchHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		said := ""
		if gitrepo.DiskFullText(r.Message) {
			said = r.Message
		}
		r.Attrs(func(a slog.Attr) bool {
			if v := a.Value.String(); said == "" && gitrepo.DiskFullText(v) {
				said = v
			}
			return said == ""
		})
		if said != "" {
			h.w.note(said)
		}
	}
	return h.next.Handle(ctx, r)
}

func (h diskWatchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return diskWatchHandler{next: h.next.WithAttrs(as), w: h.w}
}

func (h diskWatchHandler) WithGroup(name string) slog.Handler {
	return diskWatchHandler{next: h.next.WithGroup(name), w: h.w}
}

// untilDiskFull runs wait (a workflow's Get) until it returns or the
// embedded server says its disk is full, which ends it with that error.
// Any error wait returns once the server's disk is full is that error too:
// it is the cause.
func (g *Globals) untilDiskFull(ctx context.Context, wait func(context.Context) error) error {
	if g.disk == nil {
		return wait(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- wait(ctx) }()
	select {
	case err := <-done:
		return g.orDiskFull(err)
	case <-g.disk.Full():
		cancel()
		<-done
		return g.disk.err()
	}
}

// orDiskFull is err, or, when the embedded server has said its disk is
// full, the error that says so.
func (g *Globals) orDiskFull(err error) error {
	if err != nil && g.disk != nil && g.disk.fired() {
		return g.disk.err()
	}
	return err
}

// diskFullFailure is a workflow's failure for want of disk space (an
// activity's ErrTypeDiskFull) as the error the command ends with; nil for
// other failures.
func diskFullFailure(what string, err error) error {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeDiskFull {
		return nil
	}
	return exitError{code: 1, msg: fmt.Sprintf("%s: the disk is full: %s; free space, then run the same command again (what was indexed before is unchanged)", what, app.Message())}
}
