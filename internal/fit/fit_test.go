package fit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/triplets"
)

func ranking(pairs ...any) []spider.Scored {
	var out []spider.Scored
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, spider.Scored{ID: pairs[i].(string), Score: pairs[i+1].(float64)})
	}
	return out
}

// Two repositories that want opposite weights: in a, memory finds the
// positive the code's BM25 ranks second and hotspots favour the wrong
// function; in b, the other way round.
func twoRepos() []Query {
	return []Query{
		{Repo: "a", ID: "a@1", Positives: []string{"p"}, Rankings: search.HybridRankings{
			Code: ranking("x", 1.0, "p", 0.9), Memory: ranking("p", 1.0), Hotspots: ranking("x", 1.0)}},
		{Repo: "b", ID: "b@1", Positives: []string{"p"}, Rankings: search.HybridRankings{
			Code: ranking("x", 1.0, "p", 0.9), Memory: ranking("x", 1.0), Hotspots: ranking("p", 1.0)}},
	}
}

func TestFit(t *testing.T) {
	qs := twoRepos()
	// Alone, each repository's best is its own signal.
	for _, tc := range []struct {
		q    Query
		want search.Weights
	}{{qs[0], search.Weights{Memory: 1}}, {qs[1], search.Weights{Hotspot: 1}}} {
		res, err := Fit([]Query{tc.q}, []float64{0, 1}, 1, search.Weights{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Best.Weights != tc.want || res.Best.Recall != 1 || res.Best.MRR != 1 {
			t.Errorf("%s alone: best %+v, want %+v at recall 1", tc.q.Repo, res.Best, tc.want)
		}
		if res.Given.Weights != (search.Weights{}) || res.Given.Recall != 0 || res.Given.MRR != 0.5 {
			t.Errorf("%s alone: given (BM25 only) %+v, want recall 0, MRR 0.5", tc.q.Repo, res.Given)
		}
		if len(res.Grid) != 4 || res.HeldOut != nil {
			t.Errorf("%s alone: grid %d points, held out %+v", tc.q.Repo, len(res.Grid), res.HeldOut)
		}
	}
	// Together they tie at recall 0.5 and MRR 0.75; the lighter weights,
	// then the first in the grid, win. Each held out gets the other's
	// weights, which fail it.
	res, err := Fit(qs, []float64{0, 1}, 1, search.Weights{Memory: 1, Hotspot: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Best.Weights != (search.Weights{Hotspot: 1}) || res.Best.Recall != 0.5 || res.Best.MRR != 0.75 {
		t.Errorf("best %+v", res.Best)
	}
	if res.Given.Recall != 0 || res.Queries != 2 || res.PerRepo["a"] != 1 || res.PerRepo["b"] != 1 {
		t.Errorf("result %+v", res)
	}
	if res.Code != (Point{MRR: 0.5}) || len(res.Repos) != 2 || res.Repos[0].Repo != "a" || res.Repos[0].Fitted.Recall != 0 ||
		res.Repos[1].Fitted.Recall != 1 || res.Repos[1].Code.Recall != 0 || res.Repos[1].Given.MRR != 0.5 {
		t.Errorf("BM25 alone %+v, by repository %+v", res.Code, res.Repos)
	}
	want := []HeldOut{
		{Repo: "a", Queries: 1, Fitted: Point{Weights: search.Weights{Hotspot: 1}, MRR: 0.5}, Own: Point{Weights: search.Weights{Memory: 1}, Recall: 1, Acc: 1, MRR: 1}},
		{Repo: "b", Queries: 1, Fitted: Point{Weights: search.Weights{Memory: 1}, MRR: 0.5}, Own: Point{Weights: search.Weights{Hotspot: 1}, Recall: 1, Acc: 1, MRR: 1}},
	}
	if !slices.Equal(res.HeldOut, want) {
		t.Errorf("held out\n%+v\nwant\n%+v", res.HeldOut, want)
	}
	if _, err := Fit(nil, nil, 0, search.Weights{}); err == nil {
		t.Error("no queries: no error")
	}
	bad := []Query{{Repo: "a", ID: "a@2", Rankings: qs[0].Rankings}}
	if _, err := Fit(bad, nil, 0, search.Weights{}); err == nil || !strings.Contains(err.Error(), "a@2") {
		t.Errorf("a query without positives: %v, want an error naming it", err)
	}
}

func TestSample(t *testing.T) {
	var recs []triplets.Record
	for i := range 10 {
		recs = append(recs, triplets.Record{QueryID: string(rune('a' + i)), Time: int64(10 - i)})
	}
	ids := func(rs []triplets.Record) string {
		var s string
		for _, r := range rs {
			s += r.QueryID
		}
		return s
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "jihgfedcba"}, {20, "jihgfedcba"}, {5, "jhfdb"}, {3, "jgd"}, {1, "j"}} {
		if got := ids(Sample(recs, tc.n)); got != tc.want {
			t.Errorf("Sample(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
	if ids(recs) != "abcdefghij" {
		t.Error("Sample reordered its input")
	}
}

func TestReportWrite(t *testing.T) {
	res, err := Fit(twoRepos(), []float64{0, 0.5, 1}, 1, search.Weights{Memory: 0.3, Hotspot: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := Report{Options: Options{Sample: 5}, Repos: []Stats{{Repo: "a", Records: 3, Sampled: 1, Ranked: 1}}, Result: res}.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("files %v", files)
	}
	md, err := os.ReadFile(filepath.Join(dir, "fit.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| **fitted** | 0.00 | 0.50 | 0.500 |", "| given (the defaults) | 0.30 | 0.30 |", "| a | 1 | 0.00 | 0.50 | 0.000 |", "The ten best of 9 settings"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("fit.md lacks %q:\n%s", want, md)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "fit-recall.png")); err != nil || fi.Size() < 1000 {
		t.Errorf("plot: %v", err)
	}
}
