package triplets

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Export formats.
const (
	FormatJSONL     = "jsonl"     // one Record per line
	FormatSweRank   = "swerank"   // one line per positive
	FormatCornStack = "cornstack" // one line per positive, codes only
	FormatBEIR      = "beir"      // queries.jsonl, corpus.jsonl, qrels/test.tsv
)

// Formats lists the export formats.
var Formats = []string{FormatJSONL, FormatSweRank, FormatCornStack, FormatBEIR}

// SweRankLine is one line of the swerank format: a query, one positive and
// the record's negatives.
type SweRankLine struct {
	Query          string    `json:"query"`
	PositiveID     string    `json:"positive_id"`
	PositiveCode   string    `json:"positive_code"`
	PositiveScore  float64   `json:"positive_score"`
	PositiveRank   int       `json:"positive_rank"`
	NegativeIDs    []string  `json:"negative_ids"`
	NegativeCodes  []string  `json:"negative_codes"`
	NegativeScores []float64 `json:"negative_scores"`
	NegativeRanks  []int     `json:"negative_ranks"`
	// NegativeSources says where each negative came from: bm25, dense or
	// graph (scores and ranks are that source's).
	NegativeSources []string `json:"negative_sources"`
	Repo            string   `json:"repo"`
	BaseCommit      string   `json:"base_commit"`
	InstanceID      string   `json:"instance_id"`
}

// CornStackLine is one line of the cornstack format.
type CornStackLine struct {
	Query          string    `json:"query"`
	Document       string    `json:"document"`
	Negatives      []string  `json:"negatives"`
	NegativeScores []float64 `json:"negative_scores"`
	DocumentScore  float64   `json:"document_score"`
	DocumentRank   int       `json:"document_rank"`
}

// BEIRQuery, BEIRDoc are lines of queries.jsonl and corpus.jsonl.
type (
	BEIRQuery struct {
		ID   string `json:"_id"`
		Text string `json:"text"`
	}
	BEIRDoc struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
)

// Export writes records in format under dir (records.jsonl,
// swerank.jsonl, cornstack.jsonl, or the BEIR files) and returns the files
// written.
func Export(dir, format string, recs []Record) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export %s: %w", format, err)
	}
	switch format {
	case FormatJSONL:
		return writeLines(filepath.Join(dir, "records.jsonl"), func(emit func(any) error) error {
			for _, r := range recs {
				if err := emit(r); err != nil {
					return err
				}
			}
			return nil
		})
	case FormatSweRank:
		return writeLines(filepath.Join(dir, "swerank.jsonl"), func(emit func(any) error) error {
			for _, r := range recs {
				for i, p := range r.Positives {
					l := SweRankLine{Query: r.Query, PositiveID: p.ID, PositiveCode: p.Code, PositiveScore: at(r.PositiveScores, i),
						PositiveRank: at(r.PositiveRanks, i), Repo: r.Repo, BaseCommit: r.Parent, InstanceID: r.QueryID,
						NegativeIDs: []string{}, NegativeCodes: []string{}, NegativeScores: []float64{}, NegativeRanks: []int{}, NegativeSources: []string{}}
					for _, n := range r.Negatives {
						l.NegativeIDs = append(l.NegativeIDs, n.ID)
						l.NegativeCodes = append(l.NegativeCodes, n.Code)
						l.NegativeScores = append(l.NegativeScores, n.Score)
						l.NegativeRanks = append(l.NegativeRanks, n.Rank)
						l.NegativeSources = append(l.NegativeSources, n.Source)
					}
					if err := emit(l); err != nil {
						return err
					}
				}
			}
			return nil
		})
	case FormatCornStack:
		return writeLines(filepath.Join(dir, "cornstack.jsonl"), func(emit func(any) error) error {
			for _, r := range recs {
				for i, p := range r.Positives {
					l := CornStackLine{Query: r.Query, Document: p.Code, DocumentScore: at(r.PositiveScores, i), DocumentRank: at(r.PositiveRanks, i),
						Negatives: []string{}, NegativeScores: []float64{}}
					for _, n := range r.Negatives {
						l.Negatives = append(l.Negatives, n.Code)
						l.NegativeScores = append(l.NegativeScores, n.Score)
					}
					if err := emit(l); err != nil {
						return err
					}
				}
			}
			return nil
		})
	case FormatBEIR:
		return exportBEIR(dir, recs)
	}
	return nil, fmt.Errorf("export: format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// DocKey names a document in a BEIR corpus: its id and code hash, so the
// same function at two commits with different code are two documents.
func DocKey(d Doc) string { return d.ID + "@" + d.Hash[:min(16, len(d.Hash))] }

func exportBEIR(dir string, recs []Record) ([]string, error) {
	seen := map[string]bool{}
	files, err := writeLines(filepath.Join(dir, "corpus.jsonl"), func(emit func(any) error) error {
		doc := func(d Doc) error {
			k := DocKey(d)
			if seen[k] {
				return nil
			}
			seen[k] = true
			return emit(BEIRDoc{ID: k, Title: d.ID, Text: d.Code})
		}
		for _, r := range recs {
			for _, p := range r.Positives {
				if err := doc(p); err != nil {
					return err
				}
			}
			for _, n := range r.Negatives {
				if err := doc(n.Doc); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	q, err := writeLines(filepath.Join(dir, "queries.jsonl"), func(emit func(any) error) error {
		for _, r := range recs {
			if err := emit(BEIRQuery{ID: r.QueryID, Text: r.Query}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	files = append(files, q...)
	qrels := filepath.Join(dir, "qrels", "test.tsv")
	if err := os.MkdirAll(filepath.Dir(qrels), 0o755); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("query-id\tcorpus-id\tscore\n")
	for _, r := range recs {
		for _, p := range r.Positives {
			fmt.Fprintf(&b, "%s\t%s\t1\n", r.QueryID, DocKey(p))
		}
	}
	if err := os.WriteFile(qrels, []byte(b.String()), 0o644); err != nil {
		return nil, fmt.Errorf("export beir: %w", err)
	}
	return append(files, qrels), nil
}

// writeLines writes one JSON value per line to path.
func writeLines(path string, fill func(emit func(any) error) error) ([]string, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	err = fill(func(v any) error { return enc.Encode(v) })
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", path, err)
	}
	return []string{path}, nil
}

func at[T any](s []T, i int) T {
	var zero T
	if i < len(s) {
		return s[i]
	}
	return zero
}
