package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/sparse"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// runBenchSearch measures retrieval on one repository: indexing time with the
// local embedder, BM25 latency against bleve's BM25 on the same tokens, and
// SpIDER's expansion and assembly latency (no LLM, no embedding calls).
func runBenchSearch(ctx context.Context, args []string) error {
	var g globals
	fs := newFlags("bench search", &g)
	repo := fs.String("repo", "", "git directory or working copy (read in place)")
	nq := fs.Int("queries", 1000, "queries: the repository's latest commit subjects")
	if err := parse(fs, args); err != nil {
		return err
	}
	g.logger()
	gitDir, head, err := benchTarget("bench search", *repo, "")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "locus-bench-search-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b, err := blob.OpenFile(filepath.Join(tmp, "store"), fileblob.Options{})
	if err != nil {
		return err
	}
	defer b.Close()

	t0 := time.Now()
	gr, err := codegraph.BuildCommit(ctx, gitDir, "", head, codegraph.Options{})
	if err != nil {
		return err
	}
	graphSecs := time.Since(t0).Seconds()
	name := schema.RepoName("bench/" + strings.TrimSuffix(filepath.Base(strings.TrimSuffix(gitDir, "/.git")), ".git"))
	info, err := codegraph.Write(ctx, b, name, head.String(), gr)
	if err != nil {
		return err
	}
	t1 := time.Now()
	ires, err := search.IndexRepo(ctx, search.Deps{Bucket: b}, name, info)
	if err != nil {
		return err
	}
	indexSecs := time.Since(t1).Seconds()
	si := &schema.SearchInfo{Commit: head.String(), Model: ires.Model, Functions: ires.Functions, SparseKey: ires.SparseKey}
	if _, err := manifest.Publish(ctx, b, manifest.Update{Repo: schema.RepoSpec{Name: name}, Graph: &info, Search: si}); err != nil {
		return err
	}

	queries, err := commitSubjects(gitDir, *nq)
	if err != nil {
		return err
	}
	ix, err := sparse.Load(ctx, b, ires.SparseKey)
	if err != nil {
		return err
	}
	// bleve over the same documents, tokenised by our tokenizer, BM25 scoring.
	docs := map[string]string{}
	classes := map[string]bool{}
	for _, n := range gr.Nodes {
		if n.Type == codegraph.TypeClass {
			classes[n.ID] = true
		}
	}
	for _, n := range gr.Nodes {
		if n.Type == codegraph.TypeFunction {
			docs[n.ID] = strings.Join(sparse.Tokenize(search.Document(n, classes)), " ")
		}
	}
	bl, blBuild, err := buildBleve(filepath.Join(tmp, "bleve"), docs)
	if err != nil {
		return err
	}
	defer bl.Close()
	var ours, theirs, expand []time.Duration
	same10, overlap, sameUpToTies, maxRel := 0, 0.0, 0, 0.0
	sg, err := spiderGraphOf(gr)
	if err != nil {
		return err
	}
	for _, q := range queries {
		s := time.Now()
		hits := ix.Search(q, 500)
		ours = append(ours, time.Since(s))
		s = time.Now()
		req := bleve.NewSearchRequestOptions(matchQuery(q), 10, 0, false)
		bres, err := bl.Search(req)
		if err != nil {
			return err
		}
		theirs = append(theirs, time.Since(s))
		top := map[string]bool{}
		for i := 0; i < len(hits) && i < 10; i++ {
			top[hits[i].DocID] = true
		}
		common := 0
		for _, h := range bres.Hits {
			if top[h.ID] {
				common++
			}
		}
		if len(bres.Hits) > 0 {
			overlap += float64(common) / float64(len(bres.Hits))
			ids := make([]string, len(bres.Hits))
			for i, h := range bres.Hits {
				ids[i] = h.ID
			}
			if sc, err := ix.Score(q, ids); err == nil {
				for i, h := range bres.Hits {
					if d := math.Abs(sc[i]-h.Score) / math.Max(h.Score, 1e-9); d > maxRel {
						maxRel = d
					}
				}
				// Same top 10 up to ties: bleve's 10th score is our 10th score.
				if len(hits) >= len(bres.Hits) && math.Abs(hits[len(bres.Hits)-1].Score-bres.Hits[len(bres.Hits)-1].Score) <= 1e-6*math.Max(1, hits[len(bres.Hits)-1].Score) {
					sameUpToTies++
				}
			}
		}
		if common == len(bres.Hits) && len(top) == len(bres.Hits) {
			same10++
		}
		ranking := make([]spider.Scored, len(hits))
		for i, h := range hits {
			ranking[i] = spider.Scored{ID: h.DocID, Score: h.Score}
		}
		s = time.Now()
		exp, err := spider.Expand(sg, ranking, spider.Params{})
		if err == nil {
			_, err = exp.Assemble(nil)
		}
		if err != nil {
			return err
		}
		expand = append(expand, time.Since(s))
	}
	out := map[string]any{
		"repository": gitDir, "commit": head.String(), "functions": ires.Functions, "graph_seconds": graphSecs,
		"index_seconds": indexSecs, "embedder": ires.Model, "queries": len(queries),
		"bm25_p50_ms": pct(ours, 50), "bm25_p99_ms": pct(ours, 99), "bleve_p50_ms": pct(theirs, 50), "bleve_p99_ms": pct(theirs, 99),
		"bleve_index_seconds": blBuild, "same_top10": same10, "same_top10_up_to_ties": sameUpToTies, "max_score_rel_diff": maxRel, "mean_top10_overlap": overlap / float64(max(len(queries), 1)),
		"spider_p50_ms": pct(expand, 50), "spider_p99_ms": pct(expand, 99),
	}
	if g.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, k := range []string{"repository", "commit", "functions", "graph_seconds", "index_seconds", "embedder", "queries",
		"bm25_p50_ms", "bm25_p99_ms", "bleve_p50_ms", "bleve_p99_ms", "bleve_index_seconds", "same_top10", "same_top10_up_to_ties", "max_score_rel_diff", "mean_top10_overlap",
		"spider_p50_ms", "spider_p99_ms"} {
		fmt.Fprintf(tw, "%s\t%v\n", k, out[k])
	}
	return tw.Flush()
}

func buildBleve(dir string, docs map[string]string) (bleve.Index, float64, error) {
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer("ws", map[string]any{"type": custom.Name, "tokenizer": whitespace.Name}); err != nil {
		return nil, 0, err
	}
	m.DefaultAnalyzer = "ws"
	m.ScoringModel = "bm25"
	start := time.Now()
	ix, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, 0, err
	}
	batch := ix.NewBatch()
	for id, text := range docs {
		if err := batch.Index(id, map[string]string{"text": text}); err != nil {
			return nil, 0, err
		}
		if batch.Size() >= 1000 {
			if err := ix.Batch(batch); err != nil {
				return nil, 0, err
			}
			batch = ix.NewBatch()
		}
	}
	if err := ix.Batch(batch); err != nil {
		return nil, 0, err
	}
	return ix, time.Since(start).Seconds(), nil
}

func matchQuery(q string) *query.MatchQuery {
	mq := bleve.NewMatchQuery(strings.Join(sparse.Tokenize(q), " "))
	mq.SetField("text")
	mq.Analyzer = "ws"
	return mq
}

func commitSubjects(gitDir string, n int) ([]string, error) {
	out, err := exec.Command("git", "--git-dir", gitDir, "log", "--no-merges", "--format=%s", "-n", fmt.Sprint(n)).Output()
	if err != nil {
		return nil, fmt.Errorf("git log for queries: %w", err)
	}
	var qs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.TrimSpace(l) != "" {
			qs = append(qs, l)
		}
	}
	return qs, nil
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s) - 1) * p / 100
	return float64(s[i].Microseconds()) / 1000
}

func spiderGraphOf(g *codegraph.Graph) (*spider.Graph, error) {
	nodes := make([]spider.Node, len(g.Nodes))
	for i, n := range g.Nodes {
		nodes[i] = spider.Node{ID: n.ID, Type: n.Type}
	}
	var edges []spider.Edge
	for _, e := range g.Edges {
		if e.Type == codegraph.EdgeContains {
			edges = append(edges, spider.Edge{Src: e.Src, Dst: e.Dst, Type: e.Type})
		}
	}
	return spider.NewGraph(nodes, edges)
}
