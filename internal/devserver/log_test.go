package devserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.temporal.io/server/common/log/tag"
)

// TestServerLoggerCanceled: an error that is a canceled context is logged at
// debug, never as a warning or an error; other errors keep their level.
func TestServerLoggerCanceled(t *testing.T) {
	for _, tc := range []struct {
		name          string
		level         slog.Level
		want, wantNot []string
	}{
		{"info", slog.LevelInfo,
			[]string{`level=ERROR msg="poll failed" component=temporal error="disk full"`},
			[]string{"context canceled"}},
		{"debug", slog.LevelDebug,
			[]string{`level=DEBUG msg="poll failed" component=temporal error="rpc error: code = Canceled desc = context canceled"`,
				`level=DEBUG msg="task failed" component=temporal error="context canceled"`,
				`level=ERROR msg="poll failed" component=temporal error="disk full"`},
			[]string{"level=ERROR msg=\"task failed\"", "level=WARN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			st := &logState{}
			st.min.Set(tc.level)
			l := newServerLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})), st)
			l.Error("poll failed", tag.Error(errors.New("rpc error: code = Canceled desc = context canceled")))
			l.Warn("task failed", tag.Error(context.Canceled))
			l.Error("poll failed", tag.Error(errors.New("disk full")))
			out := buf.String()
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("log lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.wantNot {
				if strings.Contains(out, s) {
					t.Errorf("log has %q:\n%s", s, out)
				}
			}
		})
	}
}

// TestServerLoggerBenign: warnings that say nothing is wrong here (the Web
// UI's history page size) are logged at debug; other warnings stay.
func TestServerLoggerBenign(t *testing.T) {
	var buf bytes.Buffer
	st := &logState{}
	st.min.Set(slog.LevelDebug)
	l := newServerLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), st)
	l.Warn("GetHistory page size is larger than threshold", tag.WorkflowID("fleet-1"))
	l.Warn("shard is slow", tag.WorkflowID("fleet-1"))
	// The server's own services before its frontend is up, on a busy machine.
	l.Error("service failures", tag.Error(errors.New("Frontend is not healthy yet")))
	l.Warn("error creating sdk client", tag.Error(errors.New("failed reaching server: Frontend is not healthy yet")))
	out := buf.String()
	for _, s := range []string{`level=DEBUG msg="GetHistory page size is larger than threshold"`, `level=WARN msg="shard is slow"`,
		`level=DEBUG msg="service failures"`, `level=DEBUG msg="error creating sdk client"`} {
		if !strings.Contains(out, s) {
			t.Errorf("log lacks %q:\n%s", s, out)
		}
	}
}
