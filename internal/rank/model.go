package rank

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/dmitryikh/leaves"

	"github.com/locus-dev/locus/internal/spider"
)

// ModelFormat names the model file's layout.
const ModelFormat = "locus-rank-model/1"

// ErrBadModel marks a model file that cannot rank: unreadable, truncated,
// of another format or feature version, or with other features.
var ErrBadModel = errors.New("bad ranking model")

// File is a model file: what the trees read, how they were trained, and
// the trees in LightGBM's JSON dump layout, which leaves reads (XGBoost
// 1.x's own files it does not; train.py converts, exactly: see its doc).
type File struct {
	Format string `json:"format"`
	// Table names the feature table ("" the learned method's, Functions).
	Table          string   `json:"table,omitempty"`
	FeatureVersion int      `json:"feature_version"`
	Features       []string `json:"features"`
	// Trainer says what trained the trees (library, version, objective,
	// parameters).
	Trainer map[string]any `json:"trainer"`
	// Trained is the manifest of the training data: the repositories, the
	// queries and rows, the data's SHA-256 and the command that rebuilds
	// the model.
	Trained Manifest `json:"trained"`
	// Importance is each feature's total gain in the trees.
	Importance map[string]float64 `json:"importance,omitempty"`
	Trees      json.RawMessage    `json:"trees"`
}

// Manifest says what a model was trained on.
type Manifest struct {
	Repos   []string `json:"repos"`
	Queries int      `json:"queries"`
	Rows    int      `json:"rows"`
	// DataSHA256 is the SHA-256 of the training table as the trainer read it.
	DataSHA256 string `json:"data_sha256"`
	Command    string `json:"command,omitempty"`
}

// Model ranks candidates by a trained ensemble.
type Model struct {
	Name  string // where it was read from
	File  File
	ens   *leaves.Ensemble
	width int    // features per row
	data  []byte // the model file
}

// Bytes is the model file the model was read from.
func (m *Model) Bytes() []byte { return m.data }

// ReadModel reads the model file at path (see ParseModel).
func ReadModel(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ranking model %s: %w", path, err)
	}
	return ParseModel(path, data)
}

// Table is a feature table: what the columns of a model's rows are.
type Table struct {
	// Name is recorded in the model file ("" for Functions, whose files
	// predate tables).
	Name    string
	Version int
	Names   []string
	// Retrain is the command that trains a model of the table again.
	Retrain string
}

// Functions is the learned method's table of function features
// (Features, FeatureVersion).
func Functions() Table {
	return Table{Version: FeatureVersion, Names: FeatureNames(), Retrain: "locus rank train"}
}

// ParseModel decodes a model file of the learned method's table named
// name (see ParseTableModel).
func ParseModel(name string, data []byte) (*Model, error) {
	return ParseTableModel(Functions(), name, data)
}

// ParseTableModel decodes a model file of table t named name. It is
// refused, with an error naming it and wrapping ErrBadModel, when it is
// not whole JSON of ModelFormat, when it is of another table, when its
// feature version or feature names are not this build's (a model trained
// without a feature the query path now computes would read the wrong
// columns), or when its trees do not load.
func ParseTableModel(t Table, name string, data []byte) (*Model, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("ranking model %s: %s: %w", name, fmt.Sprintf(format, a...), ErrBadModel)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, bad("not a model file (truncated or not JSON: %v)", err)
	}
	if f.Format != ModelFormat {
		return nil, bad("format %q, want %q", f.Format, ModelFormat)
	}
	if f.Table != t.Name {
		return nil, bad("a model of the %q feature table, want %q", cmp.Or(f.Table, "functions"), cmp.Or(t.Name, "functions"))
	}
	if f.FeatureVersion != t.Version {
		return nil, bad("trained on feature version %d, this build computes version %d (train it again: %s)", f.FeatureVersion, t.Version, t.Retrain)
	}
	want := t.Names
	if !slices.Equal(f.Features, want) {
		for i, n := range want {
			if i >= len(f.Features) || f.Features[i] != n {
				return nil, bad("its features differ from this build's at column %d (%q; the model has %d features, this build %d)", i, n, len(f.Features), len(want))
			}
		}
		return nil, bad("it has %d features, this build %d", len(f.Features), len(want))
	}
	if len(f.Trees) == 0 {
		return nil, bad("no trees")
	}
	ens, err := leaves.LGEnsembleFromJSON(bytes.NewReader(f.Trees), false)
	if err != nil {
		return nil, bad("trees: %v", err)
	}
	if ens.NFeatures() > len(want) {
		return nil, bad("trees read %d features, the table has %d", ens.NFeatures(), len(want))
	}
	return &Model{Name: name, File: f, ens: ens, width: len(want), data: data}, nil
}

// Score is the model's score of one feature row. Features are rounded to
// float32 first, as XGBoost reads them, so that a tree's threshold splits a
// value the way it did in training.
func (m *Model) Score(x []float64) float64 {
	row := make([]float64, len(x))
	for i, v := range x {
		row[i] = float64(float32(v))
	}
	return m.ens.PredictSingle(row, 0)
}

// Rank orders cands by the model's score, best first, ties by id.
func (m *Model) Rank(cands []Candidate) ([]spider.Scored, error) {
	out := make([]spider.Scored, len(cands))
	for i, c := range cands {
		if len(c.X) != m.width {
			return nil, fmt.Errorf("rank %s: %d features, want %d", c.ID, len(c.X), m.width)
		}
		s := m.Score(c.X)
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("ranking model %s scored %s %v: %w", m.Name, c.ID, s, ErrBadModel)
		}
		out[i] = spider.Scored{ID: c.ID, Score: s}
	}
	spider.Sort(out)
	return out, nil
}
