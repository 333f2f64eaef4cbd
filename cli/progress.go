package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/locus-dev/locus/schema"
)

// progressLine is one fleet progress answer with the rate and the estimate
// derived from the answers before it.
type progressLine struct {
	schema.FleetProgress
	// Rate is repositories finished (done or failed) per second since the
	// tracker started; 0 when none finished yet.
	Rate float64
	// ETA is the time the remaining repositories need at Rate; -1 when unknown.
	ETA time.Duration
	// Noun names what is counted; "" is repositories.
	Noun string
}

// noun is what the line counts.
func (l progressLine) noun() string {
	if l.Noun == "" {
		return "repositories"
	}
	return l.Noun
}

// finished is the repositories that are done or failed.
func (l progressLine) finished() int { return l.Done + l.Failed }

func (l progressLine) String() string {
	s := fmt.Sprintf("%d/%d %s done", l.finished(), l.Total, l.noun())
	if l.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", l.Failed)
	}
	s += fmt.Sprintf(", %d running, %d pending", l.Running, l.Pending)
	if r := l.rateText(); r != "" {
		s += ", " + r
	}
	if e := l.etaText(); e != "" {
		s += ", ETA " + e
	}
	return s
}

// rateText is the rate in the unit that keeps it readable.
func (l progressLine) rateText() string {
	switch {
	case l.Rate <= 0:
		return ""
	case l.Rate >= 1:
		return fmt.Sprintf("%.1f/s", l.Rate)
	case l.Rate*60 >= 1:
		return fmt.Sprintf("%.1f/min", l.Rate*60)
	default:
		return fmt.Sprintf("%.1f/h", l.Rate*3600)
	}
}

func (l progressLine) etaText() string {
	switch {
	case l.Total == 0, l.finished() >= l.Total: // nothing known yet, or nothing left
		return ""
	case l.ETA < 0:
		return "unknown"
	case l.ETA < time.Minute:
		return l.ETA.Round(time.Second).String()
	default:
		return l.ETA.Round(time.Minute).String()
	}
}

// progressTracker derives rate and ETA from successive progress answers.
// The rate counts only repositories finished since tracking began, so a
// resumed fleet's earlier work does not inflate it.
type progressTracker struct {
	start    time.Time
	baseline int
	begun    bool
}

func (t *progressTracker) update(now time.Time, p schema.FleetProgress) progressLine {
	if !t.begun {
		t.start, t.baseline, t.begun = now, p.Done+p.Failed, true
	}
	l := progressLine{FleetProgress: p, ETA: -1}
	n := p.Done + p.Failed - t.baseline
	if el := now.Sub(t.start).Seconds(); n > 0 && el > 0 {
		l.Rate = float64(n) / el
		left := max(p.Total-p.Done-p.Failed, 0)
		l.ETA = time.Duration(float64(left) / l.Rate * float64(time.Second))
	}
	return l
}

// progressSink shows progress lines; done says whether the fleet finished.
type progressSink interface {
	show(now time.Time, l progressLine)
	close(done bool)
}

// plainProgress writes a line when progress changed, at most once per
// interval, the same line again after quietFor intervals without change (a
// long repository is still running), and the last state when it closes: for
// logs and pipes.
type plainProgress struct {
	w         io.Writer
	every     time.Duration
	lastAt    time.Time
	printed   schema.FleetProgress
	pending   *progressLine
	anyPrints bool
}

// quietFor is how many intervals an unchanged state waits to be repeated.
const quietFor = 6

func (s *plainProgress) show(now time.Time, l progressLine) {
	if s.anyPrints && l.FleetProgress == s.printed && now.Sub(s.lastAt) < quietFor*s.every {
		s.pending = nil
		return
	}
	if s.anyPrints && now.Sub(s.lastAt) < s.every {
		s.pending = &l
		return
	}
	fmt.Fprintf(s.w, "progress: %s\n", l)
	s.lastAt, s.printed, s.pending, s.anyPrints = now, l.FleetProgress, nil, true
}

func (s *plainProgress) close(bool) {
	if s.pending != nil {
		fmt.Fprintf(s.w, "progress: %s\n", *s.pending)
	}
}

// barProgress draws a bar on a terminal.
type barProgress struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	mu   sync.Mutex
	last progressLine
}

func newBarProgress(w io.Writer, opts ...mpb.ContainerOption) *barProgress {
	return newNamedBarProgress(w, "", opts...)
}

// newNamedBarProgress is a bar counting noun ("" is repositories).
func newNamedBarProgress(w io.Writer, noun string, opts ...mpb.ContainerOption) *barProgress {
	opts = append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(200 * time.Millisecond)}, opts...)
	b := &barProgress{p: mpb.New(opts...)}
	b.bar = b.p.AddBar(0,
		mpb.PrependDecorators(decor.Name(progressLine{Noun: noun}.noun()+" "), decor.Any(func(decor.Statistics) string {
			b.mu.Lock()
			defer b.mu.Unlock()
			return fmt.Sprintf("%d/%d", b.last.finished(), b.last.Total)
		})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			b.mu.Lock()
			defer b.mu.Unlock()
			l := b.last
			s := fmt.Sprintf("%d running", l.Running)
			if l.Failed > 0 {
				s += fmt.Sprintf(", %d failed", l.Failed)
			}
			if r := l.rateText(); r != "" {
				s += ", " + r
			}
			if e := l.etaText(); e != "" {
				s += ", ETA " + e
			}
			return s
		})))
	return b
}

func (b *barProgress) show(_ time.Time, l progressLine) {
	b.mu.Lock()
	b.last = l
	b.mu.Unlock()
	b.bar.SetTotal(int64(l.Total), false)
	b.bar.SetCurrent(int64(l.finished()))
}

func (b *barProgress) close(done bool) {
	if done {
		b.bar.SetTotal(-1, true) // total = current: complete
	} else {
		b.bar.Abort(false)
	}
	b.p.Wait()
}

// isTerminal says whether w is a terminal (where a bar can redraw itself).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	// A terminal that reports no width (a bare pty) cannot show a bar: mpb
	// draws nothing there, so it gets the plain lines.
	width, _, err := term.GetSize(int(f.Fd()))
	return err == nil && width > 0
}

// watchProgress polls query every poll interval and shows the answers on w:
// a bar on a terminal, plain lines every plainEvery otherwise. The returned
// stop ends it (done: the fleet finished) once the last state is shown.
func watchProgress(ctx context.Context, w io.Writer, query func(context.Context) (schema.FleetProgress, error),
	poll, plainEvery time.Duration) (stop func(done bool)) {
	return watchProgressOf(ctx, w, "", query, poll, plainEvery)
}

// watchProgressOf is watchProgress counting noun ("" is repositories).
func watchProgressOf(ctx context.Context, w io.Writer, noun string, query func(context.Context) (schema.FleetProgress, error),
	poll, plainEvery time.Duration) (stop func(done bool)) {
	var sink progressSink
	if isTerminal(w) {
		sink = newNamedBarProgress(w, noun)
	} else {
		sink = &plainProgress{w: w, every: plainEvery}
	}
	quit := make(chan struct{})
	exited := make(chan struct{})
	var tr progressTracker // the goroutine's until it exits, then stop's
	go func() {
		defer close(exited)
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			p, err := query(ctx)
			if err != nil {
				continue // the fleet may not have started its first task yet
			}
			now := time.Now()
			l := tr.update(now, p)
			l.Noun = noun
			sink.show(now, l)
		}
	}()
	var once sync.Once
	return func(done bool) {
		once.Do(func() {
			close(quit)
			<-exited
			if done { // show the finished state, not the last poll's
				if p, err := query(ctx); err == nil {
					now := time.Now()
					l := tr.update(now, p)
					l.Noun = noun
					sink.show(now, l)
				}
			}
			sink.close(done)
		})
	}
}
