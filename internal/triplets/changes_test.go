package triplets

import (
	"testing"

	"github.com/locus-dev/locus/schema"
)

func TestCommitsGroupsRows(t *testing.T) {
	var cs Commits
	for _, r := range []schema.CommitFile{
		{CommitID: "b", ParentID: "a", CommitTime: 20, Message: "second", Path: "new.py", PreviousPath: "old.py", ChangedFunctions: []string{"new.py:f"}},
		{CommitID: "a", CommitTime: 10, Message: "first", Path: "old.py", PreviousPath: "", ChangedFunctions: []string{"old.py:f"}},
		{CommitID: "b", ParentID: "a", CommitTime: 20, Message: "second", Path: "x.py", PreviousPath: "x.py", IsBinary: true},
		{CommitID: "m", ParentID: "b", NumParents: 2, CommitTime: 30, Message: "merge", Path: ""},
	} {
		cs.Add(&r)
	}
	l := cs.List()
	if len(l) != 3 || l[0].Commit != "a" || l[1].Commit != "b" || l[2].Commit != "m" {
		t.Fatalf("order %+v", l)
	}
	b := l[1]
	if b.Parent != "a" || len(b.Files) != 2 || b.PreviousPaths["new.py"] != "old.py" || len(b.PreviousPaths) != 1 || !b.Files[1].IsBinary {
		t.Errorf("b = %+v", b)
	}
	if !l[2].IsMerge || len(l[2].Files) != 0 {
		t.Errorf("m = %+v", l[2])
	}
}
