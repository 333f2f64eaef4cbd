package rank

import (
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/spider"
)

// TestFeaturesByKind checks the distances by edge kind, the names' BM25 and
// the stack-frame features on a hand-made graph: the fused ranking's one
// hit is pkg/a.py:A.run.
func TestFeaturesByKind(t *testing.T) {
	fns := []string{"pkg/a.py:A.run", "pkg/a.py:A.stop", "pkg/a.py:helper", "pkg/b.py:B.run", "pkg/b.py:callee",
		"pkg/c.py:far", "lib/d.py:D.parse", "lib/e.py:imported"}
	nodes := []spider.Node{{ID: "pkg", Type: "directory"}, {ID: "lib", Type: "directory"}}
	for _, f := range []string{"pkg/a.py", "pkg/b.py", "pkg/c.py", "lib/d.py", "lib/e.py"} {
		nodes = append(nodes, spider.Node{ID: f, Type: "file"})
	}
	for _, c := range []string{"pkg/a.py:A", "pkg/b.py:B", "lib/d.py:D"} {
		nodes = append(nodes, spider.Node{ID: c, Type: "class"})
	}
	for _, f := range fns {
		nodes = append(nodes, spider.Node{ID: f, Type: spider.TypeFunction})
	}
	edges := []spider.Edge{
		{Src: "pkg/a.py:A.run", Dst: "pkg/b.py:callee", Type: "invokes"},
		{Src: "pkg/b.py:callee", Dst: "pkg/c.py:far", Type: "invokes"},
		{Src: "pkg/b.py:B", Dst: "pkg/a.py:A", Type: "inherits"}, // B inherits A
		{Src: "pkg/a.py", Dst: "lib/e.py", Type: "imports"},
		{Src: "lib/d.py", Dst: "lib/e.py", Type: "imports"},
		{Src: "pkg/a.py", Dst: "pkg/c.py:far", Type: "imports"}, // an imported function
	}
	g, err := spider.NewGraphKinds(nodes, edges, spider.DefaultEdgeCosts, []string{"invokes", "inherits", "imports"})
	if err != nil {
		t.Fatal(err)
	}
	var code []spider.Scored
	for i, f := range fns {
		code = append(code, spider.Scored{ID: f, Score: float64(len(fns) - i)})
	}
	in := Inputs{
		Query: "crash when parsing:\nTraceback (most recent call last):\n  File \"/x/lib/d.py\", line 3, in parse\nValueError",
		Code:  code, Fused: code[:1], Graph: g,
		CoChange: func(id string) []string {
			return map[string][]string{"pkg/a.py:A.run": {"lib/d.py:D.parse"}, "lib/d.py:D.parse": {"pkg/c.py:far"}}[id]
		},
	}
	cands, err := Collect(in, Options{Hits: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id                                          string
		contains, invokes, inherits, imports, cochg float64
		stackFile, stackFunc, stackDepth            float64
	}{
		{"pkg/a.py:A.run", 0, 0, 0, 0, 0, 0, 0, NoHops},
		{"pkg/a.py:A.stop", 2, NoHops, 0, 0, NoHops, 0, 0, NoHops},
		{"pkg/a.py:helper", 3, NoHops, NoHops, 0, NoHops, 0, 0, NoHops},
		{"pkg/b.py:B.run", 6, NoHops, 1, NoHops, NoHops, 0, 0, NoHops},
		{"pkg/b.py:callee", 5, 1, NoHops, NoHops, NoHops, 0, 0, NoHops},
		{"pkg/c.py:far", 5, 2, NoHops, 1, 2, 0, 0, NoHops},
		{"lib/d.py:D.parse", 8, NoHops, NoHops, 2, 1, 1, 1, 1},
		{"lib/e.py:imported", 7, NoHops, NoHops, 1, NoHops, 0, 0, NoHops},
	} {
		r := row(t, cands, c.id)
		for name, want := range map[string]float64{"graph_contains": c.contains, "graph_invokes": c.invokes, "graph_inherits": c.inherits,
			"graph_imports": c.imports, "graph_cochange": c.cochg, "stack_file": c.stackFile, "stack_func": c.stackFunc,
			"stack_depth": c.stackDepth, "stack_frames": 1} {
			if r[name] != want {
				t.Errorf("%s %s = %v, want %v", c.id, name, r[name], want)
			}
		}
	}
	// D.parse shares parse, lib and d with the query; far shares nothing
	// (file extensions are not part of the names' documents).
	parse := row(t, cands, "lib/d.py:D.parse")
	if parse["name_bm25"] != 1 || parse["name_bm25_rank"] != 1 {
		t.Errorf("D.parse name_bm25 %v rank %v, want 1 and 1", parse["name_bm25"], parse["name_bm25_rank"])
	}
	if r := row(t, cands, "pkg/c.py:far"); r["name_bm25"] != 0 || r["name_bm25_rank"] != NoRank {
		t.Errorf("far name_bm25 %v rank %v, want 0 and NoRank", r["name_bm25"], r["name_bm25_rank"])
	}

	// A graph that does not keep the kinds apart is an error.
	plain, err := spider.NewGraphCosts(nodes, edges, spider.DefaultEdgeCosts)
	if err != nil {
		t.Fatal(err)
	}
	in.Graph = plain
	if _, err := Collect(in, Options{Hits: 1}); err == nil || !strings.Contains(err.Error(), "invokes edges are not recorded") {
		t.Errorf("a graph without kinds: err %v, want one naming the kind", err)
	}

	// Without a graph and memory, every kind is NoHops but the contains
	// tree, which ids give.
	in.Graph, in.CoChange = nil, nil
	cands, err = Collect(in, Options{Hits: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, cands, "pkg/b.py:callee"); r["graph_invokes"] != NoHops || r["graph_cochange"] != NoHops || r["graph_contains"] != 5 {
		t.Errorf("callee without a graph: %v", r)
	}
}

func TestTreeHops(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a.py:f", "a.py:f", 0},
		{"a.py:C.m", "a.py:C.n", 2},
		{"a.py:f", "a.py:g", 2},
		{"a.py:C.m", "a.py:g", 3},
		{"d/a.py:f", "d/b.py:g", 4},
		{"x/a.py:f", "y/b.py:g", 6},
	} {
		if got := treeHops(c.a, c.b); got != c.want {
			t.Errorf("treeHops(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if got := strings.Join(enclosing("a.py:A.B.m"), " "); got != "a.py:A a.py:A.B" {
		t.Errorf("enclosing = %s", got)
	}
}
