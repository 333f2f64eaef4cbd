package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/locus-dev/locus/schema"
)

func TestProgressRateAndETA(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		first schema.FleetProgress
		after time.Duration
		then  schema.FleetProgress
		rate  float64
		eta   time.Duration
		text  string
	}{
		{"steady", schema.FleetProgress{Total: 10, Pending: 10}, time.Minute,
			schema.FleetProgress{Total: 10, Done: 2, Failed: 1, Running: 2, Pending: 5}, 3.0 / 60, 140 * time.Second,
			"3/10 repositories done (1 failed), 2 running, 5 pending, 3.0/min, ETA 2m0s"},
		{"resumed fleet counts only new work", schema.FleetProgress{Total: 100, Done: 90, Running: 10}, 10 * time.Second,
			schema.FleetProgress{Total: 100, Done: 95, Running: 5}, 0.5, 10 * time.Second,
			"95/100 repositories done, 5 running, 0 pending, 30.0/min, ETA 10s"},
		{"nothing finished yet", schema.FleetProgress{Total: 4, Running: 4}, time.Minute,
			schema.FleetProgress{Total: 4, Running: 4}, 0, -1,
			"0/4 repositories done, 4 running, 0 pending, ETA unknown"},
		{"fast", schema.FleetProgress{Total: 1000}, 10 * time.Second,
			schema.FleetProgress{Total: 1000, Done: 500, Pending: 500}, 50, 10 * time.Second,
			"500/1000 repositories done, 0 running, 500 pending, 50.0/s, ETA 10s"},
		{"slow", schema.FleetProgress{Total: 3}, 2 * time.Hour,
			schema.FleetProgress{Total: 3, Done: 1, Running: 2}, 1.0 / 7200, 4 * time.Hour,
			"1/3 repositories done, 2 running, 0 pending, 0.5/h, ETA 4h0m0s"},
		{"finished", schema.FleetProgress{Total: 2}, time.Minute,
			schema.FleetProgress{Total: 2, Done: 2}, 2.0 / 60, 0,
			"2/2 repositories done, 0 running, 0 pending, 2.0/min"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr progressTracker
			tr.update(t0, tc.first)
			l := tr.update(t0.Add(tc.after), tc.then)
			if diff := l.Rate - tc.rate; diff > 1e-9 || diff < -1e-9 || l.ETA != tc.eta {
				t.Errorf("rate %g ETA %s, want %g and %s", l.Rate, l.ETA, tc.rate, tc.eta)
			}
			if l.String() != tc.text {
				t.Errorf("line %q, want %q", l.String(), tc.text)
			}
		})
	}
}

func TestPlainProgressLines(t *testing.T) {
	var buf bytes.Buffer
	s := &plainProgress{w: &buf, every: 10 * time.Second}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	line := func(done int) progressLine {
		return progressLine{FleetProgress: schema.FleetProgress{Total: 5, Done: done, Pending: 5 - done}, ETA: -1}
	}
	s.show(t0, line(0))                     // first: printed
	s.show(t0.Add(time.Second), line(1))    // changed, too soon: held
	s.show(t0.Add(2*time.Second), line(2))  // changed, too soon: held (replaces 1)
	s.show(t0.Add(11*time.Second), line(2)) // held state is due: printed
	s.show(t0.Add(30*time.Second), line(2)) // unchanged, not quiet for long: nothing
	s.show(t0.Add(72*time.Second), line(2)) // unchanged for 6 intervals: repeated
	s.show(t0.Add(73*time.Second), line(4)) // changed, too soon: held until close
	s.close(true)
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"0/5", "2/5", "2/5", "4/5"}
	if len(got) != len(want) {
		t.Fatalf("lines:\n%s\nwant %d lines", buf.String(), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], "progress: "+w+" repositories done") {
			t.Errorf("line %d = %q, want %s", i, got[i], w)
		}
	}
}

// Without a terminal, watchProgress writes plain lines from the query's
// answers and stops cleanly; query errors (the fleet not started yet) are
// skipped.
func TestWatchProgressPlain(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	calls := 0
	answers := make(chan struct{})
	query := func(context.Context) (schema.FleetProgress, error) {
		calls++
		switch calls {
		case 1:
			return schema.FleetProgress{}, errors.New("no such workflow yet")
		case 2:
			return schema.FleetProgress{Total: 2, Running: 2}, nil
		case 3:
			return schema.FleetProgress{Total: 2, Done: 1, Running: 1}, nil
		}
		if calls == 4 {
			close(answers)
		}
		return schema.FleetProgress{Total: 2, Done: 2}, nil
	}
	stop := watchProgress(context.Background(), w, query, time.Millisecond, 0)
	<-answers
	stop(true)
	stop(true) // idempotent
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{"progress: 0/2 repositories done, 2 running", "progress: 1/2 repositories done", "progress: 2/2 repositories done"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("plain output has terminal escapes:\n%q", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The bar renders into any writer; a finished fleet shows its total.
func TestBarProgressRenders(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	b := newBarProgress(w, mpb.WithAutoRefresh()) // the writer is no terminal
	var tr progressTracker
	t0 := time.Now()
	b.show(t0, tr.update(t0, schema.FleetProgress{Total: 3, Running: 3}))
	b.show(t0.Add(time.Minute), tr.update(t0.Add(time.Minute), schema.FleetProgress{Total: 3, Done: 3}))
	b.close(true)
	mu.Lock()
	defer mu.Unlock()
	if out := buf.String(); !strings.Contains(out, "repositories 3/3") || !strings.Contains(out, "3.0/min") {
		t.Fatalf("bar output lacks the final state:\n%q", out)
	}
}

// The fleet can finish between two polls: stop(true) asks once more, so the
// last thing shown is the finished state, not the last poll's.
func TestWatchProgressShowsFinalState(t *testing.T) {
	var buf bytes.Buffer
	query := func(context.Context) (schema.FleetProgress, error) {
		return schema.FleetProgress{Total: 3, Done: 2, Failed: 1}, nil
	}
	stop := watchProgress(context.Background(), &buf, query, time.Hour, 0)
	stop(true)
	if out := buf.String(); !strings.Contains(out, "progress: 3/3 repositories done (1 failed)") || strings.Contains(out, "ETA") {
		t.Errorf("output %q: want the finished state, without an ETA", out)
	}
}

func TestETAUnknownBeforeFirstAnswer(t *testing.T) {
	if got := (progressLine{}).String(); strings.Contains(got, "ETA") {
		t.Errorf("zero progress %q must not claim an ETA", got)
	}
}
