package fit

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/locus-dev/locus/internal/rank"
)

func row(fused float64) []float64 {
	x := make([]float64, len(rank.Features))
	x[fusedColumn] = fused
	return x
}

func TestFeaturesFileRoundTrip(t *testing.T) {
	qs := []rank.Query{{Repo: "a/b", ID: "a/b@1", Gold: 2, Positive: rank.Positives([]string{"f.py:g", "f.py:h"}),
		Candidates: []rank.Candidate{{ID: "f.py:g", X: row(1)}, {ID: "f.py:k", X: row(2)}}}}
	st := Stats{Repo: "a/b", Records: 3, Sampled: 1, Ranked: 1}
	path := filepath.Join(t.TempDir(), "a+b.jsonl.gz")
	if err := writeFeatures(path, "key1", qs, st); err != nil {
		t.Fatal(err)
	}
	got, gst, err := readFeatures(path, "key1")
	if err != nil || !reflect.DeepEqual(got, qs) || !reflect.DeepEqual(gst, st) {
		t.Fatalf("read back %+v %+v, %v", got, gst, err)
	}
	if _, _, err := readFeatures(path, "key2"); err == nil {
		t.Error("features of another key were used")
	}
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readFeatures(path, "key1"); err == nil {
		t.Error("a truncated features file was used")
	}
}

// A one-leaf model scores every candidate alike, so its order is by id;
// the fusion's by fused_rank.
func TestValidate(t *testing.T) {
	m, err := rank.ParseModel("flat", []byte(`{"format":"locus-rank-model/1","feature_version":`+itoa(rank.FeatureVersion)+`,"features":`+names()+`,
		"trees":{"name":"tree","version":"v2","num_class":1,"num_tree_per_iteration":1,"label_index":0,"max_feature_idx":0,"objective":"lambdarank","average_output":false,"feature_names":["f0"],"tree_info":[{"tree_index":0,"num_leaves":1,"num_cat":0,"shrinkage":1,"tree_structure":{"leaf_value":0,"leaf_count":0}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	qs := []rank.Query{
		{ID: "1", Positive: rank.Positives([]string{"b"}), Candidates: []rank.Candidate{{ID: "a", X: row(2)}, {ID: "b", X: row(1)}}},
		{ID: "2", Positive: rank.Positives([]string{"z", "a"}), Candidates: []rank.Candidate{{ID: "a", X: row(1)}, {ID: "c", X: row(2)}}},
	}
	v, err := validate("x/y", qs, m, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Learned (by id): q1 a,b → MRR 1/2, recall@1 0; q2 a,c → MRR 1, recall@1 1/2.
	// Fused: q1 b,a → 1, 1; q2 a,c → 1, 1/2.
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(v.Learned.MRR, 0.75) || !near(v.Learned.Recall, 0.25) || v.Learned.Acc != 0 ||
		!near(v.Fused.MRR, 1) || !near(v.Fused.Recall, 0.75) || !near(v.Fused.Acc, 0.5) || v.Instances != 2 {
		t.Errorf("validation %+v", v)
	}
	// Candidate recall: q1 1, q2 1/2; every candidate is within 100.
	if !near(v.CandidateRecall, 0.75) || !near(v.Recall100, 0.75) || v.Candidates != 2 {
		t.Errorf("candidate recall %v, Recall@100 %v, candidates %v; want 0.75, 0.75, 2", v.CandidateRecall, v.Recall100, v.Candidates)
	}
	// 101 candidates, the gold one last by id: among the candidates, not
	// in the first 100.
	long := rank.Query{ID: "3", Positive: rank.Positives([]string{"c100"})}
	for i := range 101 {
		long.Candidates = append(long.Candidates, rank.Candidate{ID: fmt.Sprintf("c%03d", i), X: row(float64(i))})
	}
	v, err = validate("x/y", []rank.Query{long}, m, nil, 20)
	if err != nil {
		t.Fatal(err)
	}
	if v.CandidateRecall != 1 || v.Recall100 != 0 || v.Candidates != 101 {
		t.Errorf("101 candidates: candidate recall %v, Recall@100 %v, candidates %v; want 1, 0, 101", v.CandidateRecall, v.Recall100, v.Candidates)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func names() string {
	data, _ := json.Marshal(rank.FeatureNames())
	return string(data)
}
