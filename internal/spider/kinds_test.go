package spider

import (
	"reflect"
	"testing"
)

func TestKindHops(t *testing.T) {
	nodes := []Node{{ID: "a.py", Type: "file"}, {ID: "a.py:f", Type: TypeFunction}, {ID: "a.py:g", Type: TypeFunction},
		{ID: "b.py", Type: "file"}, {ID: "b.py:h", Type: TypeFunction}}
	edges := []Edge{
		{Src: "a.py", Dst: "a.py:f", Type: EdgeContains}, {Src: "a.py", Dst: "a.py:g", Type: EdgeContains},
		{Src: "b.py", Dst: "b.py:h", Type: EdgeContains},
		{Src: "a.py:f", Dst: "b.py:h", Type: "invokes"}, {Src: "b.py:h", Dst: "a.py:g", Type: "invokes"},
		{Src: "a.py:f", Dst: "gone.py:x", Type: "invokes"}, // unknown: skipped, not an error
		{Src: "a.py", Dst: "b.py", Type: "imports"},
	}
	g, err := NewGraphKinds(nodes, edges, DefaultEdgeCosts, []string{"invokes", "imports"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind  string
		from  []string
		depth int
		want  map[string]int
	}{
		{"invokes", []string{"a.py:f"}, 1, map[string]int{"a.py:f": 0, "b.py:h": 1}},
		{"invokes", []string{"a.py:f"}, 2, map[string]int{"a.py:f": 0, "b.py:h": 1, "a.py:g": 2}},
		{"invokes", []string{"b.py:h", "nope"}, 1, map[string]int{"b.py:h": 0, "a.py:f": 1, "a.py:g": 1}},
		{"imports", []string{"b.py"}, 3, map[string]int{"b.py": 0, "a.py": 1}},
	} {
		got, err := g.KindHops(c.from, c.kind, c.depth)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s from %v depth %d: %v, want %v", c.kind, c.from, c.depth, got, c.want)
		}
	}
	if _, err := g.KindHops([]string{"a.py"}, "inherits", 2); err == nil {
		t.Error("a kind not recorded: no error")
	}
	// Imports are recorded, not walked: the expansion does not follow them.
	exp, err := Expand(g, []Scored{{ID: "a.py:f", Score: 2}, {ID: "b.py:h", Score: 1}}, Params{K: 2, N: 2, C: 1, Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(exp.Centers[0].Candidates); n != 0 {
		t.Errorf("expansion reached %v along recorded edges", exp.Centers[0].Candidates)
	}
}
