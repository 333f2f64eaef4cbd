package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

const day = 24 * 60 * 60 * 1000

// history is a small DAG, times in days:
//
//	a(1) ── b(3) ── base(5) ─────────── m(9, merge of base and f)
//	  └─ side(2) ── f(4, the fix, on a branch) ┘
//
// side and f are older than base but not its ancestors; m is newer.
func history() []Commit {
	return []Commit{
		{ID: "a", Time: 1 * day, Message: "add the cache store", Functions: []string{"cache.py:Cache.get", "cache.py:Cache.put"}},
		{ID: "b", Parents: []string{"a"}, Time: 3 * day, Message: "evict stale keys from the cache", Functions: []string{"cache.py:Cache.evict"}},
		{ID: "side", Parents: []string{"a"}, Time: 2 * day, Message: "start a branch for the expiry fix", Functions: []string{"cache.py:Cache.get"}},
		{ID: "base", Parents: []string{"b"}, Time: 5 * day, Message: "format the queue items", Functions: []string{"queue.py:fmt"}},
		{ID: "f", Parents: []string{"side"}, Time: 4 * day, Message: "fix expiry: expire entries by their timestamp", Functions: []string{"cache.py:Cache.expire"}},
		{ID: "m", Parents: []string{"base", "f"}, Time: 9 * day, Message: "merge the expiry fix: expire entries", Functions: []string{"cache.py:Cache.expire"}},
	}
}

func TestBeforeIsAncestorsStrictlyOlder(t *testing.T) {
	tb, err := New(history())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		base string
		want []string
	}{
		{"base", []string{"a", "b"}},                   // not side or f (another branch), not itself, not m
		{"m", []string{"a", "b", "base", "f", "side"}}, // every ancestor
		{"a", nil},
	} {
		allowed, err := tb.Before(tc.base)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, ok := range allowed {
			if ok {
				got = append(got, tb.Commits()[i].ID)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("before %s: %v, want %v", tc.base, got, tc.want)
		}
	}
	if _, err := tb.Before("nope"); !errors.Is(err, ErrUnknownBase) {
		t.Errorf("unknown base: %v", err)
	}
	// An ancestor whose clock is ahead of the base's is left out too.
	skewed := history()
	skewed[1].Time = 6 * day // b, after base
	tb2, err := New(skewed)
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ := tb2.Before("base")
	if allowed[slices.IndexFunc(tb2.Commits(), func(c Commit) bool { return c.ID == "b" })] {
		t.Error("an ancestor newer than the base informs it")
	}
}

func TestBack(t *testing.T) {
	tb, err := New(history())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		base  string
		gapMs int64
		want  string
	}{
		{"base", 0, "base"},
		{"base", 1 * day, "b"},  // 2 days older
		{"base", 3 * day, "a"},  // b is only 2 days older
		{"base", 10 * day, "a"}, // the history ends
		{"m", 4 * day, "base"},  // first parents only: never f
		{"m", 5 * day, "b"},     // 6 days older
		{"f", 2 * day, "side"},  // a branch walks its own first parents
		{"a", 1 * day, "a"},     // a root
	} {
		got, err := tb.Back(tc.base, tc.gapMs)
		if err != nil || got != tc.want {
			t.Errorf("Back(%s, %d days) = %s, %v; want %s", tc.base, tc.gapMs/day, got, err, tc.want)
		}
	}
	if _, err := tb.Back("nope", day); !errors.Is(err, ErrUnknownBase) {
		t.Errorf("unknown base: %v", err)
	}
	// A shallow history ends the walk at its boundary.
	shallow := history()[3:] // base (parent b missing), f, m
	ts, err := New(shallow)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ts.Back("base", 2*day); err != nil || got != "base" {
		t.Errorf("shallow: %s, %v", got, err)
	}
}

// No leakage: a query at base whose text is the fix's own message gets
// nothing from the fix (on a branch merged after base) or from the merge.
func TestEpisodicDoesNotLeakTheFix(t *testing.T) {
	tb, err := New(history())
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Episodic("base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Commits() != 2 {
		t.Errorf("memory at base searches %d commits, want 2 (a, b)", e.Commits())
	}
	for _, s := range e.Rank("fix expiry: expire entries by their timestamp", nil) {
		if s.ID == "cache.py:Cache.expire" {
			t.Fatalf("the fix's function was ranked from memory at base: %+v", s)
		}
	}
	// At the merge, the fix is history and votes.
	em, err := tb.Episodic("m", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := em.Rank("expire entries by timestamp", nil)
	if len(got) == 0 || got[0].ID != "cache.py:Cache.expire" {
		t.Errorf("memory at m: %+v, want Cache.expire first", got)
	}
}

// A vote shrinks with the commit's age and with the functions it touched;
// functions that no longer exist get none.
func TestEpisodicWeights(t *testing.T) {
	var many []string
	for i := range 100 {
		many = append(many, "big.py:f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	commits := []Commit{
		{ID: "old", Time: 0, Message: "parse the config file", Functions: []string{"cfg.py:old_parse"}},
		{ID: "refactor", Parents: []string{"old"}, Time: 1000 * day, Message: "parse the config file", Functions: append(many, "cfg.py:wide")},
		{ID: "new", Parents: []string{"refactor"}, Time: 1000 * day, Message: "parse the config file", Functions: []string{"cfg.py:new_parse", "cfg.py:gone"}},
		{ID: "head", Parents: []string{"new"}, Time: 1001 * day, Message: "release", Functions: []string{"setup.py:version"}},
	}
	tb, err := New(commits)
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Episodic("head", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := e.Rank("parse config", func(id string) bool { return id != "cfg.py:gone" })
	pos := map[string]int{}
	for i, s := range got {
		pos[s.ID] = i + 1
	}
	if pos["cfg.py:gone"] != 0 {
		t.Error("a function that does not exist at the base was ranked")
	}
	if !(pos["cfg.py:new_parse"] == 1 && pos["cfg.py:wide"] > 1 && pos["cfg.py:old_parse"] > pos["cfg.py:new_parse"]) {
		t.Errorf("ranks %v: want new_parse first, the wide refactor's and the old commit's functions below", pos)
	}
}

func TestStoreRoundTripAndDamage(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	tb, err := New(history())
	if err != nil {
		t.Fatal(err)
	}
	key := schema.RepoName("acme/cache").MemoryKey("m")
	if key != "repos/acme/cache/memory/m.parquet" {
		t.Errorf("key %q", key)
	}
	info, err := Write(ctx, b, key, tb)
	if err != nil {
		t.Fatal(err)
	}
	if info.Commits != 6 || info.Bytes <= 0 || len(info.SHA256) != 64 {
		t.Errorf("info %+v", info)
	}
	back, err := Read(ctx, b, info)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(back.Commits(), tb.Commits(), func(a, b Commit) bool {
		return a.ID == b.ID && a.Time == b.Time && a.Message == b.Message && slices.Equal(a.Parents, b.Parents) && slices.Equal(a.Functions, b.Functions)
	}) {
		t.Errorf("read back %+v, want %+v", back.Commits(), tb.Commits())
	}
	data, _ := b.ReadAll(ctx, key)
	if err := b.WriteAll(ctx, key, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(ctx, b, info); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), key) {
		t.Errorf("truncated table: %v, want blob.ErrCorrupt naming %s", err, key)
	}
	if _, err := Read(ctx, b, schema.MemoryInfo{Key: "repos/x/memory/none.parquet"}); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("missing table: %v", err)
	}
}

func TestFromRowsGroupsCommits(t *testing.T) {
	f := NewFromRows(map[string][]string{"m": {"p1", "p2"}})
	f.Add(&schema.CommitFile{CommitID: "m", ParentID: "p1", CommitTime: 5, Message: "merge", Path: "a.py", ChangedFunctions: []string{"a.py:f"}})
	f.Add(&schema.CommitFile{CommitID: "m", ParentID: "p1", CommitTime: 5, Message: "merge", Path: "b.py", ChangedFunctions: []string{"b.py:g", "a.py:f"}})
	f.Add(&schema.CommitFile{CommitID: "c", ParentID: "p0", CommitTime: 3, Message: "one", Path: "c.py"})
	got := f.Commits()
	if len(got) != 2 || got[0].ID != "m" || !slices.Equal(got[0].Parents, []string{"p1", "p2"}) || !slices.Equal(got[0].Functions, []string{"a.py:f", "b.py:g"}) ||
		got[1].ID != "c" || !slices.Equal(got[1].Parents, []string{"p0"}) || len(got[1].Functions) != 0 {
		t.Errorf("commits %+v", got)
	}
	if _, err := New([]Commit{{ID: "x"}, {ID: "x"}}); err == nil {
		t.Error("a duplicate commit must be an error")
	}
}

// A history with no messages (or only merges that change nothing) builds
// and ranks nothing, without an error.
func TestEpisodicEmptyHistory(t *testing.T) {
	tb, err := New([]Commit{
		{ID: "a", Time: 1},
		{ID: "b", Parents: []string{"a"}, Time: 2, Message: "Merge branch 'x'"},
		{ID: "c", Parents: []string{"b", "a"}, Time: 3, Message: ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Episodic("c", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Commits() != 0 || e.Rank("merge branch", nil) != nil {
		t.Errorf("memory of a history without changed functions: %d commits, ranking %v", e.Commits(), e.Rank("merge branch", nil))
	}
}

// Hotspots: a function changed more often and more recently scores higher;
// what only later commits changed scores nothing.
func TestHotspots(t *testing.T) {
	tb, err := New([]Commit{
		{ID: "a", Time: 0, Message: "one", Functions: []string{"x.py:old"}},
		{ID: "b", Parents: []string{"a"}, Time: 700 * day, Message: "two", Functions: []string{"x.py:hot"}},
		{ID: "c", Parents: []string{"b"}, Time: 710 * day, Message: "three", Functions: []string{"x.py:hot", "x.py:old"}},
		{ID: "base", Parents: []string{"c"}, Time: 720 * day, Message: "four", Functions: []string{"x.py:base_only"}},
		{ID: "later", Parents: []string{"base"}, Time: 730 * day, Message: "five", Functions: []string{"x.py:later"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Episodic("base", Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Hotspots()
	if !(h["x.py:hot"] > h["x.py:old"] && h["x.py:old"] > 0) || h["x.py:later"] != 0 || h["x.py:base_only"] != 0 {
		t.Errorf("hotspots %v: want hot above old, nothing from the base or later", h)
	}
}

// TestLargeHistory: a 100,000-commit monorepo history (a linear chain with
// a merge every 50 commits, three functions per commit out of 20,000) builds,
// stores, reads back and answers at the head and in the middle, within a
// bounded heap. Run with -v to see the figures.
func TestLargeHistory(t *testing.T) {
	const n = 100_000
	words := strings.Fields("cache queue parser lexer socket timeout retry buffer index merge schema table commit graph token")
	cs := make([]Commit, n)
	for i := range cs {
		c := Commit{ID: fmt.Sprintf("%040x", i+1), Time: int64(i+1) * 60_000,
			Message: fmt.Sprintf("%s %s: handle %s in module %d", words[i%len(words)], words[(i/7)%len(words)], words[(i/13)%len(words)], i%97)}
		if i > 0 {
			c.Parents = []string{cs[i-1].ID}
			if i%50 == 0 && i >= 100 {
				c.Parents = append(c.Parents, cs[i-100].ID)
				c.Message = "Merge branch 'topic'"
			}
		}
		for k := range 3 {
			c.Functions = append(c.Functions, fmt.Sprintf("pkg%d/file%d.go:f%d", (i*7+k)%200, (i+k)%100, (i*31+k)%20_000))
		}
		cs[i] = c
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	tb, err := New(cs)
	if err != nil {
		t.Fatal(err)
	}
	b := blobtest.Bucket(t)
	info, err := Write(context.Background(), b, schema.RepoName("acme/mono").MemoryKey(cs[n-1].ID), tb)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(context.Background(), b, info)
	if err != nil || back.Len() != n {
		t.Fatalf("read back: %v, %d commits", err, back.Len())
	}
	for _, base := range []string{cs[n-1].ID, cs[n/2].ID} {
		e, err := back.Episodic(base, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Rank("socket timeout retry", nil); len(r) == 0 {
			t.Errorf("at %s: no ranking from %d commits", base, e.Commits())
		}
		if len(e.Hotspots()) == 0 {
			t.Errorf("at %s: no hotspots", base)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("100k commits: %s, stored %d bytes, heap grew %d MiB", time.Since(start).Round(time.Millisecond), info.Bytes, grown>>20)
	if grown > 512<<20 {
		t.Errorf("heap grew %d MiB for 100k commits, want at most 512", grown>>20)
	}
	runtime.KeepAlive(cs)
	runtime.KeepAlive(back)
}
