package commitrun

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/internal/testutil/trainertest"
)

func col(name string) int { return slices.Index(FileTable.Names, name) }

// Each candidate is once, hybrid's first, with each ranking's normalised
// score and rank (absent: 0 and 1000) and the path's matches.
func TestFileCandidates(t *testing.T) {
	r := Rankings{
		Files:  []spider.Scored{{ID: "src/net/socket.c", Score: 4}, {ID: "src/mem/alloc.c", Score: 2}},
		MaxP:   []spider.Scored{{ID: "src/mem/alloc.c", Score: 3}},
		Paths:  []spider.Scored{{ID: "tests/socket_test.c", Score: 1}},
		Hybrid: []spider.Scored{{ID: "src/net/socket.c", Score: 1.5}, {ID: "src/mem/alloc.c", Score: 1.2}},
	}
	cands := FileCandidates("socket timeout in socket.c", r)
	var ids []string
	for _, c := range cands {
		ids = append(ids, c.ID)
		if len(c.X) != len(FileTable.Names) {
			t.Fatalf("%s: %d features, want %d", c.ID, len(c.X), len(FileTable.Names))
		}
	}
	if want := []string{"src/net/socket.c", "src/mem/alloc.c", "tests/socket_test.c"}; !slices.Equal(ids, want) {
		t.Fatalf("candidates %v, want %v", ids, want)
	}
	for _, tc := range []struct {
		id, feature string
		want        float64
	}{
		{"src/net/socket.c", "files", 1}, {"src/net/socket.c", "files_rank", 1}, {"src/net/socket.c", "maxp", 0},
		{"src/net/socket.c", "maxp_rank", absent}, {"src/net/socket.c", "base_named", 1}, {"src/net/socket.c", "path_hits", 1},
		{"src/mem/alloc.c", "files", 0.5}, {"src/mem/alloc.c", "files_rank", 2}, {"src/mem/alloc.c", "maxp", 1},
		{"src/mem/alloc.c", "hybrid", 0.8}, {"src/mem/alloc.c", "base_named", 0}, {"src/mem/alloc.c", "depth", 2},
		{"tests/socket_test.c", "test", 1}, {"tests/socket_test.c", "hybrid_rank", absent}, {"tests/socket_test.c", "paths_rank", 1},
		{"src/net/socket.c", "query_tokens", 2},
	} {
		i := slices.IndexFunc(cands, func(c rank.Candidate) bool { return c.ID == tc.id })
		if got := cands[i].X[col(tc.feature)]; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s %s = %v, want %v", tc.id, tc.feature, got, tc.want)
		}
	}
}

// A model of the function table is refused as a file ranker, naming both
// tables.
func TestLoadModelOfAnotherTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "rank", "models", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "functions.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadModel(p); !errors.Is(err, rank.ErrBadModel) || !strings.Contains(err.Error(), `"functions" feature table, want "files"`) {
		t.Errorf("a function model as a file ranker: %v", err)
	}
}

// Trained on a small history's commits (gold: the files each changed),
// the learned order puts the file a query's commit changed first, and the
// run reports it beside the other methods.
func TestLearnedFilesTrainedOnCommits(t *testing.T) {
	ctx := context.Background()
	py := trainertest.Need(t, func() (string, error) { return rank.FindPython(ctx) })
	r := gitfixture.New(t)
	r.Write(map[string]string{"net/socket.c": "int socket_timeout;\n", "mem/alloc.c": "int alloc_pool;\n", "fs/file.c": "int file_open;\n"})
	r.Commit("initial layout")
	var qs []dataset.CommitQuery
	date := func(c string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(r.Git("show", "-s", "--format=%ct", c)), 10, 64)
		return n
	}
	for i := range 6 {
		for _, f := range []struct{ path, msg string }{
			{"net/socket.c", "socket timeout handling"},
			{"mem/alloc.c", "allocator pool leak"},
			{"fs/file.c", "file open error"},
		} {
			r.Write(map[string]string{f.path: strings.Repeat("int x;\n", i+2)})
			c := r.Commit(f.msg + " " + strconv.Itoa(i))
			qs = append(qs, dataset.CommitQuery{QueryID: c, Repo: "acme/sys", CommitID: c, CommitDate: date(c), Query: f.msg})
		}
	}
	b := blobtest.Bucket(t)
	res, skips, err := RunWith(ctx, b, filepath.Join(r.Dir, ".git"), "acme/sys", qs, RunOptions{Candidates: true, GoldFromCommit: true})
	if err != nil || len(skips) != 0 || len(res) != len(qs) {
		t.Fatalf("run: %d results, %v, %v", len(res), skips, err)
	}
	var train []rank.Query
	for _, x := range res {
		if len(x.Gold) != 1 {
			t.Fatalf("%s: gold %v, want the one file its commit changed", x.Query, x.Gold)
		}
		train = append(train, rank.Query{ID: x.Query, Candidates: x.Candidates, Positive: rank.Positives(x.Gold), Gold: 1})
	}
	dir := t.TempDir()
	m, err := rank.Train(ctx, train, rank.TrainConfig{Python: py, Dir: dir, Rounds: 10, Table: &FileTable,
		Params: map[string]any{"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "min_child_weight": 0, "seed": 1, "nthread": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if m.File.Table != "files" {
		t.Errorf("model table %q", m.File.Table)
	}
	loaded, err := LoadModel(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, _, err = RunWith(ctx, b, filepath.Join(r.Dir, ".git"), "acme/sys", qs[len(qs)-3:], RunOptions{Model: loaded, GoldFromCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if len(x.Learned) == 0 || !slices.Contains(x.Gold, x.Learned[0]) {
			t.Errorf("%s: learned %v, gold %v", x.Query, x.Learned, x.Gold)
		}
	}
}

// The shipped file ranker loads and says what it was trained on.
func TestShippedFileRanker(t *testing.T) {
	m, err := LoadModel("")
	if err != nil {
		t.Fatal(err)
	}
	if m.File.Trained.Queries == 0 || len(m.File.Trained.Repos) == 0 || !strings.HasPrefix(m.File.Trained.Command, "locus rank train-files") {
		t.Errorf("manifest %+v", m.File.Trained)
	}
	if s := m.Score(make([]float64, len(FileTable.Names))); math.IsNaN(s) {
		t.Error("the shipped file ranker scores NaN")
	}
}
