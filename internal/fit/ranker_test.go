package fit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

func row(fused float64) []float64 {
	x := make([]float64, len(rank.Features))
	x[fusedColumn] = fused
	return x
}

func TestFeaturesTableRoundTrip(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	qs := []labelledQuery{
		{Query: rank.Query{Repo: "a/b", ID: "a/b@1", Gold: 2, Positive: rank.Positives([]string{"f.py:g", "f.py:h"}),
			Candidates: []rank.Candidate{{ID: "f.py:g", X: row(1)}, {ID: "f.py:k", X: row(2)}}}},
		// No candidates: still a query, counted as unlabelled.
		{Query: rank.Query{Repo: "a/b", ID: "a/b@2", Gold: 1, Positive: rank.Positives([]string{"f.py:z"})}},
		{Query: rank.Query{Repo: "a/b", ID: "a__b-1", Gold: 1, Positive: rank.Positives([]string{"f.py:k"}),
			Candidates: []rank.Candidate{{ID: "f.py:k", X: row(1)}}}, Instance: true},
	}
	st := Stats{Repo: "a/b", Records: 3, Sampled: 2, Ranked: 2}
	key := schema.RankFeaturesKey("a/b", "key1")
	ref, err := writeFeatures(ctx, b, key, "key1", qs, st)
	if err != nil {
		t.Fatal(err)
	}
	got, gst, gref, err := readFeatures(ctx, b, ref, "key1")
	if err != nil || !reflect.DeepEqual(got, qs) || !reflect.DeepEqual(gst, st) || gref != ref {
		t.Fatalf("read back %+v %+v %+v, %v", got, gst, gref, err)
	}
	train, inst, rf := summarize(got, gst)
	if len(train) != 1 || len(inst) != 1 || rf.Unlabelled != 1 || rf.Instances != 1 || rf.CandidateRecall != 0.25 || rf.InstanceRecall != 1 {
		t.Errorf("summary %+v, %d training queries, %d instances", rf, len(train), len(inst))
	}
	if _, _, _, err := readFeatures(ctx, b, objio.Ref{Key: key}, "key2"); !errors.Is(err, ErrFeatures) {
		t.Errorf("features of another key: %v", err)
	}
	data, _ := b.ReadAll(ctx, key)
	if err := b.WriteAll(ctx, key, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readFeatures(ctx, b, ref, "key1"); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), key) {
		t.Errorf("a truncated table: %v", err)
	}
	if _, _, _, err := readFeatures(ctx, b, objio.Ref{Key: key}, "key1"); !errors.Is(err, blob.ErrCorrupt) {
		t.Errorf("a truncated table, its size unknown: %v", err)
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
