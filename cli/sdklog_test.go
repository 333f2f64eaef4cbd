package cli

import (
	"bytes"
	"context"
	"errors"
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
		{"worker: a canceled context is no warning", slog.LevelInfo, false,
			[]string{"level=WARN msg=\"RecordActivityHeartbeat with error\" Namespace=default Error=\"context deadline exceeded\""},
			[]string{"Error=\"context canceled\"", "Error=\"rpc error: code = Canceled desc = context canceled\""}},
		{"index: nor is it an error", slog.LevelInfo, true,
			[]string{"level=ERROR msg=other"}, []string{"context canceled"}},
		{"at debug it shows at debug", slog.LevelDebug, false,
			[]string{"level=DEBUG msg=\"RecordActivityHeartbeat with error\" Namespace=default Error=\"context canceled\"",
				"level=WARN msg=\"RecordActivityHeartbeat with error\" Namespace=default Error=\"context deadline exceeded\""},
			[]string{"msg=started", "level=WARN msg=\"RecordActivityHeartbeat with error\" Namespace=default Error=\"context canceled\""}},
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
			l.Log(ctx, slog.LevelWarn, "RecordActivityHeartbeat with error", "Error", context.Canceled)
			l.Log(ctx, slog.LevelWarn, "RecordActivityHeartbeat with error", "Error", context.DeadlineExceeded)
			l.Log(ctx, slog.LevelError, "Failed to poll for task.", "Error", errors.New("rpc error: code = Canceled desc = context canceled"))
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
