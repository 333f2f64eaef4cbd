package search

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/embed/onnx"
	"github.com/locus-dev/locus/internal/rank/crossenc"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/trainertest"
)

// TestCrossEncoderSecondStage: with Params.CrossEncoder the hybrid
// method's ranking is the first stage's reordered by crossenc.Rerank; a
// method without a second stage, or a model that is not there, is an
// error.
func TestCrossEncoderSecondStage(t *testing.T) {
	py := trainertest.Need(t, func() (string, error) {
		py, err := crossenc.FindPython(context.Background())
		if err == nil {
			err = onnx.Available("")
		}
		return py, err
	})
	ctx := context.Background()
	b, repo, info := indexFixture(t)
	d := Deps{Bucket: b}
	if _, err := IndexRepo(ctx, d, repo, info); err != nil {
		t.Fatal(err)
	}
	all, err := Retrieve(ctx, d, repo, "app main util models strings slugify run save", Params{Method: MethodSR, Params: spider.Params{K: 50}, IncludeTests: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all.TopK {
		ids = append(ids, s.ID)
	}
	code, err := Code(ctx, d, repo, info.Commit, ids)
	if err != nil || len(ids) < 4 {
		t.Fatalf("%d functions, code: %v", len(ids), err)
	}
	// A tiny model trained on the fixture's own functions: what it learns
	// does not matter, only that the query path applies it.
	data := filepath.Join(t.TempDir(), "swerank.jsonl")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for i, id := range ids {
		_, name := codegraph.SplitID(id)
		l := map[string]any{"query": "change " + name + " please", "positive_id": id, "positive_code": code[id], "repo": string(repo), "instance_id": id}
		var negIDs, negCodes []string
		for k := 1; k <= 3; k++ {
			n := ids[(i+k)%len(ids)]
			negIDs, negCodes = append(negIDs, n), append(negCodes, code[n])
		}
		l["negative_ids"], l["negative_codes"] = negIDs, negCodes
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	dir := t.TempDir()
	if _, err := crossenc.Train(ctx, crossenc.TrainConfig{Python: py, Data: data, Out: dir, Hidden: 16, Layers: 1, Heads: 2,
		MaxTokens: 64, MaxQueryTokens: 16, Epochs: 2, Threads: 1, VocabSize: 256}); err != nil {
		t.Fatal(err)
	}
	issue := "slugify does not clean the text: strip the dashes from the slug"
	p := Params{Method: MethodHybrid, Params: spider.Params{K: 50, C: 1}}
	first, err := Retrieve(ctx, d, repo, issue, p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadCrossEncoder(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Rerank(ctx, issue, first.TopK, func(id string) string { return code[id] }, 0)
	if err != nil {
		t.Fatal(err)
	}
	idsOf := func(ss []spider.Scored) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	if slices.Equal(idsOf(want), idsOf(first.TopK)) {
		t.Fatalf("the model keeps the first stage's order %v: this test cannot tell whether the second stage ran", idsOf(want))
	}
	p.CrossEncoder = dir
	second, err := Retrieve(ctx, d, repo, issue, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(idsOf(second.TopK), idsOf(want)) {
		t.Errorf("with the cross-encoder %v, want the first stage %v reordered: %v", idsOf(second.TopK), idsOf(first.TopK), idsOf(want))
	}

	p.Method = MethodSpISR
	if _, err := Retrieve(ctx, d, repo, issue, p); !errors.Is(err, ErrBadQuery) {
		t.Errorf("spisr with a cross-encoder: %v, want %v", err, ErrBadQuery)
	}
	p.Method, p.CrossEncoder = MethodHybrid, filepath.Join(dir, "absent")
	if _, err := Retrieve(ctx, d, repo, issue, p); err == nil || !strings.Contains(err.Error(), p.CrossEncoder) {
		t.Errorf("a missing model: %v, want an error naming %s", err, p.CrossEncoder)
	}
}
