package workers

import (
	"strconv"
	"testing"
)

// The run ids a worker remembers are bounded, and the recent ones are
// still recognised.
func TestRecentSet(t *testing.T) {
	var s recentSet
	for i := range 3 * recentRuns {
		if s.add(strconv.Itoa(i)) {
			t.Fatalf("id %d reported as seen before it was added", i)
		}
		if !s.add(strconv.Itoa(i)) {
			t.Fatalf("id %d not recognised right after it was added", i)
		}
	}
	if len(s.ids) != recentRuns || len(s.order) != recentRuns {
		t.Errorf("%d ids kept (ring %d), want %d", len(s.ids), len(s.order), recentRuns)
	}
	if !s.add(strconv.Itoa(3*recentRuns - 1)) {
		t.Error("the newest id is forgotten")
	}
	if s.add("0") {
		t.Error("the oldest id is still kept")
	}
}
