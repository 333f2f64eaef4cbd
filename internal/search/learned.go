package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

// LearnedCoChangeCost is the hop cost of memory's co-change edges in the
// learned method's expansion: the model weighs what they are worth
// (rank.Features graph_hops), so they are always walked.
const LearnedCoChangeCost = 2

// LearnedInputs assembles the learned ranker's inputs from what the hybrid
// method computes for issue: its rankings h, the fusion of them with w, the
// fusion's expansion along sg (with memory ep's co-change edges; ep nil: no
// memory) and memory's history. code gives a function's code; keep says
// which functions may be candidates. The query path (RetrieveAt) and
// training (internal/fit) both call it, so a model is trained on the
// features it ranks by.
func LearnedInputs(issue string, h HybridRankings, w Weights, ep *memory.Episodic, sg *spider.Graph, code func(string) string, keep func(string) bool, p spider.Params) (rank.Inputs, error) {
	// Every ranking without what keep leaves out, so that a rank means the
	// same at query time (where the index holds tests) as in training
	// (where it does not).
	kept := func(r []spider.Scored) []spider.Scored {
		if keep == nil {
			return r
		}
		var out []spider.Scored
		for _, s := range r {
			if keep(s.ID) {
				out = append(out, s)
			}
		}
		return out
	}
	in := rank.Inputs{Query: issue, Code: kept(h.Code), Memory: kept(h.Memory), Hotspots: kept(h.Hotspots), Dense: kept(h.Dense),
		Fused: kept(h.Fuse(w)), Source: code, Keep: keep}
	co, err := coChangeOverlay(ep, Params{CoChangeCost: LearnedCoChangeCost})
	if err != nil {
		return rank.Inputs{}, err
	}
	if ep != nil {
		in.History = ep.History()
		in.CoChange = co.Neighbours
	}
	if sg != nil && len(in.Fused) > 0 {
		in.Graph = sg
		exp, err := spider.ExpandWith(sg, in.Fused, p, co)
		if err != nil {
			return rank.Inputs{}, fmt.Errorf("learned ranking: %w", err)
		}
		in.Expansion = &exp
	}
	return in, nil
}

// keepFunction is LearnedInputs' keep for a query: functions of the graph,
// tests only when asked.
func keepFunction(sg *spider.Graph, includeTests bool) func(string) bool {
	return func(id string) bool {
		return sg.IsFunction(id) && (includeTests || !codegraph.IsTestID(id))
	}
}

// ModelFor is the model file that ranks repo's queries: model itself, or
// when model is a directory (one model per repository, as
// leave-one-repository-out validation trains them) its OWNER+NAME.json.
func ModelFor(model string, repo schema.RepoName) string {
	if st, err := os.Stat(model); err == nil && st.IsDir() {
		return filepath.Join(model, repo.FileName()+".json")
	}
	return model
}

// models holds the ranking models a process has read, by what they were
// read from and its version (a file's path, size and modification time; a
// stored object's key and ETag), so that a model replaced in place is read
// again.
var models = struct {
	sync.Mutex
	m map[string]*rank.Model
}{m: map[string]*rank.Model{}}

// cachedModel is the model cached under id, or load's, cached.
func cachedModel(id string, load func() (*rank.Model, error)) (*rank.Model, error) {
	models.Lock()
	m := models.m[id]
	models.Unlock()
	if m != nil {
		return m, nil
	}
	m, err := load()
	if err != nil {
		return nil, err
	}
	models.Lock()
	defer models.Unlock()
	if len(models.m) >= 8 {
		clear(models.m)
	}
	models.m[id] = m
	return m, nil
}

// ErrNoModel: the learned method was asked for without a model, and the
// build ships none.
var ErrNoModel = fmt.Errorf("the learned method needs a ranking model (--model FILE; train one with locus rank train; this build ships no default): %w", ErrBadQuery)

// LoadModel reads the ranking model at path once per process (see
// rank.ReadModel for what is refused); "" is the shipped default
// (rank.Default), when the build has one.
func LoadModel(path string) (*rank.Model, error) {
	if path == "" {
		m, err := rank.Default()
		if errors.Is(err, rank.ErrNoDefault) {
			return nil, ErrNoModel
		}
		return m, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ranking model %s: %w", path, err)
	}
	return cachedModel(fmt.Sprintf("file %s %d %d", path, st.Size(), st.ModTime().UnixNano()), func() (*rank.Model, error) {
		return rank.ReadModel(path)
	})
}

// learnedRanking is m's ranking of the candidates LearnedInputs gathers.
func learnedRanking(m *rank.Model, issue string, h HybridRankings, w Weights, ep *memory.Episodic, lg *loadedGraph, p Params) ([]spider.Scored, error) {
	in, err := LearnedInputs(issue, h, w, ep, lg.sg, func(id string) string { return lg.code[id] }, keepFunction(lg.sg, p.IncludeTests), spider.Params{}.WithDefaults())
	if err != nil {
		return nil, err
	}
	cands, err := rank.Collect(in, rank.Options{})
	if err != nil {
		return nil, err
	}
	return m.Rank(cands)
}
