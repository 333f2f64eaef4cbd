package rank

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
)

// randomModel is a model of the trained model's shape (trees of the given
// depth over every feature) with random splits and leaves.
func randomModel(t testing.TB, trees, depth int) *Model {
	rng := rand.New(rand.NewPCG(3, 4))
	var node func(d int) map[string]any
	node = func(d int) map[string]any {
		if d == depth {
			return map[string]any{"leaf_value": rng.Float64() - 0.5, "leaf_count": 0}
		}
		return map[string]any{"split_feature": rng.IntN(numFeatures), "split_gain": 0, "threshold": rng.Float64() * 50,
			"decision_type": "<=", "default_left": true, "missing_type": "NaN", "internal_value": 0, "internal_count": 0,
			"left_child": node(d + 1), "right_child": node(d + 1)}
	}
	var info []map[string]any
	for i := range trees {
		info = append(info, map[string]any{"tree_index": i, "num_leaves": 1 << depth, "num_cat": 0, "shrinkage": 1, "tree_structure": node(0)})
	}
	names := make([]string, numFeatures)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
	}
	dump, err := json.Marshal(map[string]any{"name": "tree", "version": "v2", "num_class": 1, "num_tree_per_iteration": 1, "label_index": 0,
		"max_feature_idx": numFeatures - 1, "objective": "lambdarank", "average_output": false, "feature_names": names, "tree_info": info})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(File{Format: ModelFormat, FeatureVersion: FeatureVersion, Features: FeatureNames(), Trees: dump})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseModel("random", data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// queryOf is a query of n candidates: BM25 hits with code, memory and
// hotspot rankings over a part of them, and an expansion.
func queryOf(n int) Inputs {
	rng := rand.New(rand.NewPCG(5, 6))
	src := map[string]string{}
	var code, mem, hot []spider.Scored
	hist := map[string]memory.Changes{}
	for i := range n {
		id := fmt.Sprintf("pkg/mod%d/file%d.py:Class%d.method_%d", i%7, i%31, i%11, i)
		src[id] = strings.Repeat(fmt.Sprintf("    value_%d = self.lookup(key_%d, default=None)\n", i, i%13), 12)
		code = append(code, spider.Scored{ID: id, Score: float64(n - i)})
		if i%3 == 0 {
			mem = append(mem, spider.Scored{ID: id, Score: rng.Float64()})
			hist[id] = memory.Changes{Commits: rng.IntN(20), LastAgeDays: rng.Float64() * 900}
		}
		if i%5 == 0 {
			hot = append(hot, spider.Scored{ID: id, Score: rng.Float64()})
		}
	}
	spider.Sort(mem)
	spider.Sort(hot)
	exp := &spider.Expansion{}
	for c := range 5 {
		ctr := spider.Center{ID: code[c].ID, Rank: c + 1, InGraph: true}
		for j := 20 + c*10; j < 30+c*10; j++ {
			ctr.Candidates = append(ctr.Candidates, spider.Candidate{ID: code[j].ID, Hops: 1 + j%4})
		}
		exp.Centers = append(exp.Centers, ctr)
	}
	// A graph holding the candidates, with calls between neighbours,
	// inheritance between classes and imports between files; co-change
	// pairs every third function with the next two.
	var nodes []spider.Node
	var edges []spider.Edge
	seen := map[string]bool{}
	node := func(id, typ string) {
		if !seen[id] {
			seen[id] = true
			nodes = append(nodes, spider.Node{ID: id, Type: typ})
		}
	}
	for i, c := range code {
		file, _, _ := strings.Cut(c.ID, ":")
		class := c.ID[:strings.LastIndexByte(c.ID, '.')]
		node(file, "file")
		node(class, "class")
		node(c.ID, spider.TypeFunction)
		edges = append(edges, spider.Edge{Src: file, Dst: class, Type: "contains"}, spider.Edge{Src: class, Dst: c.ID, Type: "contains"})
		if i > 0 {
			prevFile, _, _ := strings.Cut(code[i-1].ID, ":")
			edges = append(edges, spider.Edge{Src: code[i-1].ID, Dst: c.ID, Type: "invokes"},
				spider.Edge{Src: prevFile, Dst: file, Type: "imports"},
				spider.Edge{Src: code[i-1].ID[:strings.LastIndexByte(code[i-1].ID, '.')], Dst: class, Type: "inherits"})
		}
	}
	g, err := spider.NewGraphKinds(nodes, edges, spider.EdgeCosts{"contains": 1, "invokes": 3, "inherits": 3}, []string{"invokes", "inherits", "imports"})
	if err != nil {
		panic(err)
	}
	co := map[string][]string{}
	for i := 0; i+2 < len(code); i += 3 {
		co[code[i].ID] = []string{code[i+1].ID, code[i+2].ID}
	}
	return Inputs{Query: "Session.lookup returns None for a missing key_3 instead of raising KeyError in pkg/mod1/file4.py\n" +
		"Traceback (most recent call last):\n  File \"pkg/mod1/file4.py\", line 3, in method_4\nKeyError: 'key_3'",
		Code: code, Memory: mem, Hotspots: hot, Fused: code, Expansion: exp, History: hist, Graph: g,
		CoChange: func(id string) []string { return co[id] },
		Source:   func(id string) string { return src[id] }}
}

// BenchmarkCollectAndRank is the learned method's cost per query beyond the
// hybrid method's: features and scores of 300 candidates with a model of
// the default's shape (200 trees of depth 6).
func BenchmarkCollectAndRank(b *testing.B) {
	m := randomModel(b, 200, 6)
	in := queryOf(300)
	o := Options{Code: 300, Fused: 300}
	b.ResetTimer()
	for b.Loop() {
		cands, err := Collect(in, o)
		if err != nil {
			b.Fatal(err)
		}
		if len(cands) != 300 {
			b.Fatalf("%d candidates", len(cands))
		}
		if _, err := m.Rank(cands); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRankLatency reports the p50 of BenchmarkCollectAndRank's work (the
// figure docs/benchmarks.md quotes); it checks only that it runs.
func TestRankLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("latency figure: not in -short")
	}
	m := randomModel(t, 200, 6)
	in := queryOf(300)
	var ds []time.Duration
	for range 30 {
		start := time.Now()
		cands, err := Collect(in, Options{Code: 300, Fused: 300})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Rank(cands); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	t.Logf("300 candidates, 200 trees of depth 6: p50 %v, max %v", ds[len(ds)/2], ds[len(ds)-1])
}
