// Package blevepeer is bleve's BM25 as the peer of locus's own in the
// search benchmark; only cmd/locus-dev imports it, so the locus binary
// does not carry bleve.
package blevepeer

import (
	"fmt"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/locus-dev/locus/benchmark"
)

// analyzer splits on whitespace only: documents and queries arrive
// tokenised by locus's code-aware tokenizer.
const analyzer = "ws"

// Peer is a scorch index with bleve's bm25 scoring model.
type Peer struct {
	ix bleve.Index
}

var _ benchmark.Peer = (*Peer)(nil)

// Name is "bleve".
func (*Peer) Name() string { return "bleve" }

// Index builds the index under dir, which must not exist yet.
func (p *Peer) Index(dir string, docs map[string]string) error {
	if p.ix != nil {
		return fmt.Errorf("bleve: index %s: already indexed", dir)
	}
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer(analyzer, map[string]any{"type": custom.Name, "tokenizer": whitespace.Name}); err != nil {
		return fmt.Errorf("bleve: analyzer: %w", err)
	}
	m.DefaultAnalyzer = analyzer
	m.ScoringModel = "bm25"
	ix, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return fmt.Errorf("bleve: create index %s: %w", dir, err)
	}
	batch := ix.NewBatch()
	for id, text := range docs {
		if err := batch.Index(id, map[string]string{"text": text}); err != nil {
			ix.Close()
			return fmt.Errorf("bleve: index %s: %w", id, err)
		}
		if batch.Size() >= 1000 {
			if err := ix.Batch(batch); err != nil {
				ix.Close()
				return fmt.Errorf("bleve: batch: %w", err)
			}
			batch = ix.NewBatch()
		}
	}
	if err := ix.Batch(batch); err != nil {
		ix.Close()
		return fmt.Errorf("bleve: batch: %w", err)
	}
	p.ix = ix
	return nil
}

// Search runs a match query for the tokens on the text field.
func (p *Peer) Search(tokens []string, k int) ([]benchmark.Hit, error) {
	if p.ix == nil {
		return nil, fmt.Errorf("bleve: search before Index")
	}
	mq := bleve.NewMatchQuery(strings.Join(tokens, " "))
	mq.SetField("text")
	mq.Analyzer = analyzer
	res, err := p.ix.Search(bleve.NewSearchRequestOptions(mq, k, 0, false))
	if err != nil {
		return nil, fmt.Errorf("bleve: search %q: %w", strings.Join(tokens, " "), err)
	}
	hits := make([]benchmark.Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = benchmark.Hit{ID: h.ID, Score: h.Score}
	}
	return hits, nil
}

// Close closes the index.
func (p *Peer) Close() error {
	if p.ix == nil {
		return nil
	}
	return p.ix.Close()
}
