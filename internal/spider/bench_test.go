package spider

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// synthRepo generates a repository-shaped contains tree: root → top dirs →
// subdirs → files (up to maxFiles per subdir, a few directly in top dirs) →
// classes → methods, top-level functions and some nested functions, plus
// non-contains edges that Expand must ignore. It returns the function ids too.
func synthRepo(rng *rand.Rand, top, sub, maxFiles int) (nodes []Node, edges []Edge, funcs []string) {
	add := func(parent, id, typ string) {
		nodes = append(nodes, Node{ID: id, Type: typ})
		if parent != "" {
			edges = append(edges, Edge{Src: parent, Dst: id, Type: EdgeContains})
		}
		if typ == TypeFunction {
			funcs = append(funcs, id)
		}
	}
	file := func(dir, name string) {
		path := dir + "/" + name + ".py"
		add(dir, path, "file")
		for c := range rng.IntN(4) {
			cls := fmt.Sprintf("%s:C%d", path, c)
			add(path, cls, "class")
			for m := range 1 + rng.IntN(10) {
				add(cls, fmt.Sprintf("%s.m%d", cls, m), TypeFunction)
			}
		}
		for fn := range rng.IntN(7) {
			id := fmt.Sprintf("%s:f%d", path, fn)
			add(path, id, TypeFunction)
			if rng.IntN(10) == 0 {
				add(id, id+".inner", TypeFunction)
			}
		}
	}
	add("", "/", "directory")
	for d := range top {
		dir := fmt.Sprintf("d%d", d)
		add("/", dir, "directory")
		for i := range rng.IntN(3) {
			file(dir, fmt.Sprintf("top%d", i))
		}
		for s := range sub {
			subdir := fmt.Sprintf("%s/s%d", dir, s)
			add(dir, subdir, "directory")
			for i := range 1 + rng.IntN(maxFiles) {
				file(subdir, fmt.Sprintf("f%d", i))
			}
		}
	}
	for range len(funcs) / 4 {
		a, b := funcs[rng.IntN(len(funcs))], funcs[rng.IntN(len(funcs))]
		edges = append(edges, Edge{Src: a, Dst: b, Type: "invokes"})
	}
	return nodes, edges, funcs
}

type benchRepo struct {
	g       *Graph
	nodes   int
	queries [][]Scored // scores of every function, one set per query
	pools   [][]Scored // each query's top N
}

var benchCache *benchRepo

// benchSetup builds a ~100k-node repository and 64 queries whose scores
// cluster around a few files, as real relevance does, so centers have
// neighbours in the pool.
func benchSetup(b *testing.B) *benchRepo {
	if benchCache != nil {
		return benchCache
	}
	rng := rand.New(rand.NewPCG(42, 42))
	nodes, edges, funcs := synthRepo(rng, 30, 8, 59)
	g, err := NewGraph(nodes, edges)
	if err != nil {
		b.Fatal(err)
	}
	br := &benchRepo{g: g, nodes: len(nodes)}
	for range 64 {
		hot := map[string]bool{}
		for range 40 {
			id := funcs[rng.IntN(len(funcs))]
			hot[id[:lastColon(id)]] = true // its file
		}
		sc := make([]Scored, len(funcs))
		for i, id := range funcs {
			s := rng.Float64()
			if hot[id[:lastColon(id)]] {
				s += 1
			}
			sc[i] = Scored{ID: id, Score: s}
		}
		br.queries = append(br.queries, sc)
		br.pools = append(br.pools, TopK(sc, DefaultN))
	}
	benchCache = br
	return br
}

func lastColon(id string) int {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == ':' {
			return i
		}
	}
	return len(id)
}

// BenchmarkExpand is steps 1–3 on a ranked pool: the graph part of SpIDER.
func BenchmarkExpand(b *testing.B) {
	br := benchSetup(b)
	p := Params{K: 20, N: 500, C: 5, Depth: 4}
	b.ReportAllocs()
	b.ResetTimer()
	cands := 0
	for i := 0; b.Loop(); i++ {
		exp, err := Expand(br.g, br.pools[i%len(br.pools)], p)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range exp.Centers {
			cands += len(c.Candidates)
		}
	}
	b.ReportMetric(float64(cands)/float64(b.N), "candidates/op")
	b.ReportMetric(float64(br.nodes), "nodes")
}

// BenchmarkSpIDER is a whole query without LLM and embedding calls: top N of
// every function's score, Expand, a selection of each center's two nearest
// candidates, and Assemble; it reports p50 and p99 latency.
func BenchmarkSpIDER(b *testing.B) {
	br := benchSetup(b)
	p := Params{K: 20, N: 500, C: 5, Depth: 4}
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		pool := TopK(br.queries[i%len(br.queries)], p.N)
		exp, err := Expand(br.g, pool, p)
		if err != nil {
			b.Fatal(err)
		}
		selected := map[string]Selection{}
		for _, c := range exp.Centers {
			s := Selection{Selector: "bench"}
			for _, x := range c.Candidates[:min(2, len(c.Candidates))] {
				s.IDs = append(s.IDs, x.ID)
			}
			selected[c.ID] = s
		}
		a, err := exp.Assemble(selected)
		if err != nil || len(a.Items) != p.K {
			b.Fatalf("assemble: %d items, %v", len(a.Items), err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}
