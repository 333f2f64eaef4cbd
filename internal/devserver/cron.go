package devserver

import (
	"fmt"

	schedulepb "go.temporal.io/api/schedule/v1"
	"go.temporal.io/server/service/worker/scheduler"
)

// CheckCron checks a schedule's cron expression the way a Temporal server
// does when the schedule is created (5 to 7 fields, ranges, names,
// @hourly and the like), so that a bad one is refused before any server is
// started or asked.
func CheckCron(expr string) error {
	b := scheduler.NewSpecBuilder(func() int { return 1000 }, func() int { return 1000 })
	if _, err := b.NewCompiledSpec(&schedulepb.ScheduleSpec{CronString: []string{expr}}); err != nil {
		return fmt.Errorf("cron expression %q: %w", expr, err)
	}
	return nil
}
