package memory

import (
	"context"
	"reflect"
	"testing"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

// renameHistory moves old.py to mid.py (c2) and on to new.py (c4); after
// that a new file is created at old.py (c5). Times in days:
//
//	c1(1) ── c2(2, old→mid) ── c3(3) ── c4(4, mid→new) ── c5(5, a new old.py) ── c6(6) ── c7(7)
func renameHistory(t *testing.T) *Table {
	t.Helper()
	rows := NewFromRows(nil)
	add := func(id, parent string, time int64, msg, prev, path string, fns ...string) {
		rows.Add(&schema.CommitFile{CommitID: id, ParentID: parent, CommitTime: time * day, Message: msg, PreviousPath: prev, Path: path, ChangedFunctions: fns})
	}
	add("c1", "", 1, "parse the config header", "", "old.py", "old.py:parse")
	add("c2", "c1", 2, "move the parser", "old.py", "mid.py", "mid.py:parse")
	add("c3", "c2", 3, "parse comments in the config", "mid.py", "mid.py", "mid.py:parse")
	add("c4", "c3", 4, "move the parser again", "mid.py", "new.py")
	add("c5", "c4", 5, "a writer for settings", "", "old.py", "old.py:write")
	add("c6", "c5", 6, "tidy", "", "z.py", "z.py:z")
	add("c7", "c6", 7, "tidy more", "", "z.py", "z.py:z")
	tb, err := New(rows.Commits())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rows.Renames()); got != 2 {
		t.Fatalf("%d renames from the rows, want 2 (an unchanged path is no rename): %+v", got, rows.Renames())
	}
	return tb.WithRenames(rows.Renames())
}

func TestRenamesFollowFilesToTheBase(t *testing.T) {
	tb := renameHistory(t)
	rank := func(base string, exists map[string]bool) map[string]bool {
		e, err := tb.Episodic(base, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, s := range e.Rank("parse the config", func(id string) bool { return exists[id] }) {
			got[s.ID] = true
		}
		return got
	}
	// At c6 the parser lives in new.py: c1's and c3's votes follow it there,
	// and old.py's new writer is not mistaken for the parser.
	if got, want := rank("c6", map[string]bool{"new.py:parse": true, "old.py:write": true, "old.py:parse": true}), map[string]bool{"new.py:parse": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("at c6: %v, want %v", got, want)
	}
	// At c3 the second move has not happened: the parser is in mid.py.
	if got, want := rank("c3", map[string]bool{"mid.py:parse": true, "new.py:parse": true}), map[string]bool{"mid.py:parse": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("at c3: %v, want %v (a rename after the base must not apply)", got, want)
	}
	e, err := tb.Episodic("c7", Options{})
	if err != nil {
		t.Fatal(err)
	}
	hot := e.Hotspots()
	if hot["new.py:parse"] == 0 || hot["old.py:parse"] != 0 || hot["mid.py:parse"] != 0 || hot["old.py:write"] == 0 {
		t.Errorf("hotspots %v: the parser's edits must count under new.py", hot)
	}
}

func TestRenamesSurviveTheStore(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	tb := renameHistory(t)
	info, err := Write(ctx, b, schema.RepoName("acme/r").MemoryKey("c7"), tb)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(ctx, b, info)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Renames(), tb.Renames()) {
		t.Errorf("renames %v, want %v", back.Renames(), tb.Renames())
	}
	// A table written before renames were kept reads with none.
	plain, err := New(tb.Commits())
	if err != nil {
		t.Fatal(err)
	}
	info, err = Write(ctx, b, schema.RepoName("acme/r").MemoryKey("plain"), plain)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := Read(ctx, b, info); err != nil || len(back.Renames()) != 0 {
		t.Errorf("plain table: %v renames, %v", back.Renames(), err)
	}
}

func TestRenameCyclesEnd(t *testing.T) {
	m := moves{"a.py": {{time: 2, to: "b.py"}, {time: 4, to: "b.py"}}, "b.py": {{time: 3, to: "a.py"}}}
	if got := m.resolve("a.py:f", 1); got != "b.py:f" {
		t.Errorf("resolve = %q, want b.py:f (a→b at 2, b→a at 3, a→b at 4)", got)
	}
	loop := moves{"a.py": {{time: 1, to: "a.py"}}}
	if got := loop.resolve("a.py:f", 0); got != "a.py:f" {
		t.Errorf("a self-move: %q", got)
	}
}

// Co-change neighbours follow a moved file like votes do.
func TestCoChangedFollowsRenames(t *testing.T) {
	rows := NewFromRows(nil)
	add := func(id, parent string, time int64, prev, path string, fns ...string) {
		rows.Add(&schema.CommitFile{CommitID: id, ParentID: parent, CommitTime: time * day, Message: "m", PreviousPath: prev, Path: path, ChangedFunctions: fns})
	}
	add("a", "", 1, "", "x.py", "x.py:f")
	add("a", "", 1, "", "y.py", "y.py:g")
	add("b", "a", 2, "x.py", "z.py")
	add("c", "b", 3, "", "w.py", "w.py:h")
	tb, err := New(rows.Commits())
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.WithRenames(rows.Renames()).Episodic("c", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.CoChanged("z.py:f", CoChangeOptions{}); len(got) != 1 || got[0].ID != "y.py:g" {
		t.Errorf("neighbours of z.py:f: %+v, want y.py:g", got)
	}
	if got := e.CoChanged("y.py:g", CoChangeOptions{}); len(got) != 1 || got[0].ID != "z.py:f" {
		t.Errorf("neighbours of y.py:g: %+v, want z.py:f", got)
	}
	if got := e.CoChanged("x.py:f", CoChangeOptions{}); len(got) != 0 {
		t.Errorf("the old path has neighbours: %+v", got)
	}
}
