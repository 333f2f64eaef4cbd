package rank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/trainertest"
)

func scored(ids ...string) []spider.Scored {
	out := make([]spider.Scored, len(ids))
	for i, id := range ids {
		out[i] = spider.Scored{ID: id, Score: float64(len(ids) - i)}
	}
	return out
}

func row(t *testing.T, cands []Candidate, id string) map[string]float64 {
	t.Helper()
	for _, c := range cands {
		if c.ID == id {
			m := map[string]float64{}
			for i, f := range Features {
				m[f.Name] = c.X[i]
			}
			return m
		}
	}
	t.Fatalf("%s is not a candidate", id)
	return nil
}

func TestCollectFeatures(t *testing.T) {
	src := map[string]string{
		"pkg/session.py:Session.send":      "def send(self, request):\n    adapter = self.get_adapter(request.url)\n    return adapter.send(request)",
		"pkg/session.py:Session.close":     "def close(self):\n    pass",
		"pkg/adapters.py:HTTPAdapter.send": "def send(self, request, timeout=None):\n    conn = self.get_connection(request.url)",
		"tests/test_session.py:test_send":  "def test_send():\n    Session().send(None)",
		"pkg/utils.py:helper":              "def helper(): return 1",
	}
	in := Inputs{
		Query:    "Session.send ignores the timeout in pkg/adapters.py when a proxy is set",
		Code:     scored("pkg/session.py:Session.send", "pkg/adapters.py:HTTPAdapter.send", "tests/test_session.py:test_send"),
		Memory:   scored("pkg/utils.py:helper"),
		Hotspots: scored("pkg/session.py:Session.send"),
		Fused:    scored("pkg/session.py:Session.send", "pkg/adapters.py:HTTPAdapter.send"),
		Expansion: &spider.Expansion{Centers: []spider.Center{{ID: "pkg/session.py:Session.send", Rank: 1, InGraph: true,
			Candidates: []spider.Candidate{{ID: "pkg/session.py:Session.close", Hops: 2}}}}},
		History: map[string]memory.Changes{"pkg/session.py:Session.send": {Commits: 3, LastAgeDays: 12.5}},
		Source:  func(id string) string { return src[id] },
		Keep:    func(id string) bool { return !strings.HasPrefix(id, "tests/") },
	}
	cands, err := Collect(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cands {
		ids = append(ids, c.ID)
		if len(c.X) != len(Features) {
			t.Fatalf("%s has %d features, want %d", c.ID, len(c.X), len(Features))
		}
	}
	want := "pkg/session.py:Session.send pkg/adapters.py:HTTPAdapter.send pkg/utils.py:helper pkg/session.py:Session.close"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("candidates %s, want %s (tests left out, expansion last)", got, want)
	}
	send := row(t, cands, "pkg/session.py:Session.send")
	for name, want := range map[string]float64{
		"bm25": 1, "bm25_rank": 1, "memory_rank": NoRank, "hotspot": 1, "fused_rank": 1, "graph_hops": 0, "graph_center_rank": 1,
		"memory_commits": 3, "memory_age_days": 12.5, "name_exact": 1, "name_hits": 1, "class_hits": 1, "path_exact": 0,
		"lines": 3, "depth": 1, "test": 0, "file_rank": 1, "file_hits": 1,
	} {
		if send[name] != want {
			t.Errorf("Session.send %s = %v, want %v", name, send[name], want)
		}
	}
	adapter := row(t, cands, "pkg/adapters.py:HTTPAdapter.send")
	for name, want := range map[string]float64{
		"bm25": 2.0 / 3, "bm25_rank": 2, "path_exact": 1, "graph_hops": NoHops, "memory_age_days": NoAge, "dense_rank": NoRank,
	} {
		if math.Abs(adapter[name]-want) > 1e-12 {
			t.Errorf("HTTPAdapter.send %s = %v, want %v", name, adapter[name], want)
		}
	}
	if c := row(t, cands, "pkg/session.py:Session.close"); c["graph_hops"] != 2 || c["bm25_rank"] != NoRank || c["file_rank"] != 1 {
		t.Errorf("Session.close: graph_hops %v bm25_rank %v file_rank %v, want 2, NoRank, 1", c["graph_hops"], c["bm25_rank"], c["file_rank"])
	}

	in.Code = []spider.Scored{{ID: "pkg/session.py:Session.send", Score: math.Inf(1)}}
	if _, err := Collect(in, Options{}); err == nil || !strings.Contains(err.Error(), "feature bm25") {
		t.Errorf("an infinite BM25 score: err %v, want one naming the feature", err)
	}
}

func TestContainsIdent(t *testing.T) {
	for _, c := range []struct {
		text, name string
		want       bool
	}{
		{"call send() twice", "send", true},
		{"resend it", "send", false},
		{"send_all fails", "send", false},
		{"x.send", "send", true},
		{"send", "send", true},
	} {
		if got := containsIdent(c.text, c.name); got != c.want {
			t.Errorf("containsIdent(%q, %q) = %v", c.text, c.name, got)
		}
	}
}

// synthetic makes queries whose positive is the candidate with the best
// name match, which BM25 ranks anywhere: a model must learn name_exact.
func synthetic(n int, seed uint64) []Query {
	rng := rand.New(rand.NewPCG(seed, 1))
	var qs []Query
	for q := range n {
		var cands []Candidate
		pos := rng.IntN(20)
		for i := range 20 {
			x := make([]float64, numFeatures)
			x[fBM25Rank] = float64(rng.IntN(20) + 1)
			x[fBM25] = rng.Float64()
			x[fNameExact] = 0
			if i == pos {
				x[fNameExact] = 1
			}
			x[fLines] = float64(rng.IntN(100))
			cands = append(cands, Candidate{ID: fmt.Sprintf("f.py:q%d_%d", q, i), X: x})
		}
		qs = append(qs, Query{Repo: "a/b", ID: fmt.Sprint(q), Candidates: cands, Positive: map[string]bool{cands[pos].ID: true}, Gold: 1})
	}
	return qs
}

// requireTrainer finds the trainer (trainertest.Need).
func requireTrainer(t *testing.T) string {
	t.Helper()
	return trainertest.Need(t, func() (string, error) { return FindPython(context.Background()) })
}

func TestTrainRoundTrip(t *testing.T) {
	py := requireTrainer(t)
	dir := t.TempDir()
	m, err := Train(context.Background(), synthetic(60, 1), TrainConfig{Python: py, Dir: dir, Rounds: 20, Trained: Manifest{Repos: []string{"a/b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if m.File.Trained.Rows != 60*20 || m.File.Trained.Queries != 60 || len(m.File.Trained.DataSHA256) != 64 {
		t.Errorf("manifest %+v", m.File.Trained)
	}
	if m.File.Importance["name_exact"] <= 0 {
		t.Errorf("importance %v: name_exact, the only signal, has no gain", m.File.Importance)
	}
	// Held-out queries: the positive comes first.
	for _, q := range synthetic(20, 2) {
		r, err := m.Rank(q.Candidates)
		if err != nil {
			t.Fatal(err)
		}
		if !q.Positive[r[0].ID] {
			t.Fatalf("query %s: first %s is not the positive", q.ID, r[0].ID)
		}
	}
	// Bit for bit: the same table trains the same model.
	first, _ := os.ReadFile(filepath.Join(dir, "model.json"))
	dir2 := t.TempDir()
	if _, err := Train(context.Background(), synthetic(60, 1), TrainConfig{Python: py, Dir: dir2, Rounds: 20, Trained: Manifest{Repos: []string{"a/b"}}}); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(filepath.Join(dir2, "model.json")); string(first) != string(second) {
		t.Error("two trainings of one table wrote different models")
	}
}

func TestTrainWithoutPositives(t *testing.T) {
	qs := synthetic(3, 1)
	for i := range qs {
		qs[i].Positive = nil
	}
	if _, err := Train(context.Background(), qs, TrainConfig{Python: "python3"}); !errors.Is(err, ErrNoPositives) {
		t.Errorf("err %v, want ErrNoPositives", err)
	}
}

func TestBadModels(t *testing.T) {
	valid := File{Format: ModelFormat, FeatureVersion: FeatureVersion, Features: FeatureNames(),
		Trees: json.RawMessage(`{"name":"tree","version":"v2","num_class":1,"num_tree_per_iteration":1,"label_index":0,"max_feature_idx":0,"objective":"lambdarank","average_output":false,"feature_names":["f0"],"tree_info":[{"tree_index":0,"num_leaves":1,"num_cat":0,"shrinkage":1,"tree_structure":{"leaf_value":0.5,"leaf_count":0}}]}`)}
	enc := func(f File) []byte {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if m, err := ParseModel("ok.json", enc(valid)); err != nil {
		t.Fatalf("a valid model: %v", err)
	} else if s := m.Score(make([]float64, numFeatures)); s != 0.5 {
		t.Fatalf("a one-leaf model scores %v, want 0.5", s)
	}
	other := valid
	other.FeatureVersion = FeatureVersion + 1
	fewer := valid
	fewer.Features = FeatureNames()[:len(Features)-1]
	renamed := valid
	renamed.Features = append([]string{"bm25_old"}, FeatureNames()[1:]...)
	format := valid
	format.Format = "xgboost"
	noTrees := valid
	noTrees.Trees = nil
	badTrees := valid
	badTrees.Trees = json.RawMessage(`{"name":"tree"}`)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", enc(valid)[:len(enc(valid))/2], "truncated or not JSON"},
		{"garbage", []byte("\x00\x01binf"), "not a model file"},
		{"other feature version", enc(other), "feature version"},
		{"a feature fewer", enc(fewer), fmt.Sprintf("has %d features, this build %d", len(Features)-1, len(Features))},
		{"a feature renamed", enc(renamed), `column 0 ("bm25"`},
		{"other format", enc(format), "format"},
		{"no trees", enc(noTrees), "no trees"},
		{"broken trees", enc(badTrees), "trees:"},
	} {
		_, err := ParseModel("m-"+c.name+".json", c.data)
		if !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "m-"+c.name+".json") {
			t.Errorf("%s: err %v, want ErrBadModel naming the file and saying %q", c.name, err, c.want)
		}
	}
	if _, err := ReadModel(filepath.Join(t.TempDir(), "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("a missing model: %v", err)
	}
}
