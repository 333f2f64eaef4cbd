package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestSDKLogHandler(t *testing.T) {
	for _, tc := range []struct {
		name            string
		level           slog.Level
		reportsFailures bool
		want, wantNot   []string
	}{
		{"worker keeps activity errors", slog.LevelInfo, false,
			[]string{"level=ERROR msg=\"Activity error.\"", "level=WARN msg=w"}, []string{"msg=started"}},
		{"index demotes them", slog.LevelInfo, true,
			[]string{"level=WARN msg=w", "level=ERROR msg=other"}, []string{"Activity error.", "msg=started"}},
		{"index at debug shows them at debug", slog.LevelDebug, true,
			[]string{"level=DEBUG msg=\"Activity error.\"", "level=WARN msg=w"}, []string{"msg=started"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			base := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})
			l := slog.New(sdkLogHandler(base, tc.reportsFailures)).With("Namespace", "default")
			ctx := context.Background()
			l.Log(ctx, slog.LevelInfo, "started")
			l.Log(ctx, slog.LevelError, "Activity error.", "Error", "sync a/b: boom")
			l.Log(ctx, slog.LevelWarn, "w")
			l.Log(ctx, slog.LevelError, "other")
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
