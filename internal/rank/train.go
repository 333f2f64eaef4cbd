package rank

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed train.py
var trainScript []byte

// Query is one training or validation query: its candidates with their
// features and which of them are positives.
type Query struct {
	Repo       string
	ID         string
	Candidates []Candidate
	Positive   map[string]bool
	// Gold is how many positives the query has, candidates or not (the
	// denominator of recall).
	Gold int
}

// Labelled reports whether any candidate is a positive: a query without one
// teaches a ranker nothing.
func (q Query) Labelled() bool {
	for _, c := range q.Candidates {
		if q.Positive[c.ID] {
			return true
		}
	}
	return false
}

// TrainConfig configures Train; zero fields take the defaults written next
// to them.
type TrainConfig struct {
	// Python is the interpreter with xgboost; default: $LOCUS_PYTHON, else
	// the first of python3 and /usr/bin/python3 that imports xgboost.
	Python string
	// Dir receives the table, the parameters and the model; default a
	// temporary directory, removed afterwards.
	Dir string
	// Rounds of boosting; default 200.
	Rounds int
	// Params are XGBoost's; default DefaultParams.
	Params map[string]any
	// Trained is written into the model's manifest (repositories and the
	// command; Train fills in rows, queries and the data's digest).
	Trained Manifest
	// Table is the candidates' feature table; nil: Functions().
	Table *Table `json:",omitempty"`
}

// DefaultParams are the trainer's parameters: LambdaMART optimising NDCG at
// 20, shallow trees, a fixed seed and thread count so that one table gives
// one model bit for bit.
func DefaultParams() map[string]any {
	return map[string]any{
		"objective": "rank:ndcg", "eval_metric": "ndcg@20", "eta": 0.05, "max_depth": 6,
		"min_child_weight": 5, "subsample": 0.8, "colsample_bytree": 0.8, "lambda": 1.0,
		"tree_method": "hist", "seed": 7, "nthread": 2,
	}
}

// ErrNoTrainer: no Python with XGBoost to train with.
var ErrNoTrainer = errors.New("no trainer")

// ErrNoPositives: the training data has no query with a positive candidate.
var ErrNoPositives = errors.New("no training query has a positive among its candidates")

// FindPython returns an interpreter that imports xgboost (see
// TrainConfig.Python).
func FindPython(ctx context.Context) (string, error) {
	return FindPythonWith(ctx, "xgboost, numpy", "xgboost.__version__",
		"training the ranker needs Python 3 with XGBoost and NumPy (Debian: apt-get install python3-xgboost; or set LOCUS_PYTHON)")
}

// FindPythonWith returns $LOCUS_PYTHON, else the first of python3 and
// /usr/bin/python3, when it imports modules (comma-separated) and prints
// version; else an error (ErrNoTrainer) that starts with need and says
// what each interpreter answered.
func FindPythonWith(ctx context.Context, modules, version, need string) (string, error) {
	cands := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("LOCUS_PYTHON"); p != "" {
		cands = []string{p}
	}
	var tried []string
	for _, p := range cands {
		out, err := exec.CommandContext(ctx, p, "-c", "import "+modules+"; print("+version+")").CombinedOutput()
		if err == nil {
			return p, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %s", p, firstLine(string(out), err)))
	}
	return "", fmt.Errorf("%s: %s: %w", need, strings.Join(tried, "; "), ErrNoTrainer)
}

func firstLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// Train fits a model on the labelled queries of qs (others are left out and
// counted by the caller with Labelled) and checks that this build scores
// the table as the trainer did.
func Train(ctx context.Context, qs []Query, c TrainConfig) (*Model, error) {
	var use []Query
	for _, q := range qs {
		if q.Labelled() {
			use = append(use, q)
		}
	}
	if len(use) == 0 {
		return nil, fmt.Errorf("train: %d queries: %w", len(qs), ErrNoPositives)
	}
	py := c.Python
	if py == "" {
		var err error
		if py, err = FindPython(ctx); err != nil {
			return nil, err
		}
	}
	dir := c.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "locus-rank-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	t := Functions()
	if c.Table != nil {
		t = *c.Table
	}
	table := filepath.Join(dir, "train.tsv")
	first, err := writeTable(table, t.Names, use)
	if err != nil {
		return nil, err
	}
	params := c.Params
	if params == nil {
		params = DefaultParams()
	}
	rounds := c.Rounds
	if rounds <= 0 {
		rounds = 200
	}
	pj, err := json.MarshalIndent(map[string]any{
		"features": t.Names, "feature_version": t.Version, "table": t.Name, "xgboost": params, "rounds": rounds, "trained": c.Trained,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	paramsPath, script := filepath.Join(dir, "params.json"), filepath.Join(dir, "train.py")
	modelPath, predPath := filepath.Join(dir, "model.json"), filepath.Join(dir, "predictions.txt")
	if err := RunPython(ctx, py, map[string][]byte{paramsPath: pj, script: trainScript}, nil, script, table, paramsPath, modelPath, predPath); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	data, err := os.ReadFile(modelPath)
	if err != nil {
		return nil, fmt.Errorf("train: the trainer's model: %w", err)
	}
	m, err := ParseTableModel(t, modelPath, data)
	if err != nil {
		return nil, fmt.Errorf("train: the trainer's model: %w", err)
	}
	if err := m.check(predPath, first); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return m, nil
}

// RunPython writes files (path → contents), then runs py with args (the
// script first); what the script writes to standard error also goes to
// progress when that is set. A failure is an error naming py, with the end
// of the script's standard error.
func RunPython(ctx context.Context, py string, files map[string][]byte, progress io.Writer, args ...string) error {
	for p, data := range files {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, py, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", py, err, strings.TrimSpace(tail(stderr.String(), 2000)))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// writeTable writes qs as the trainer's table and returns its first rows
// (as many as the trainer predicts back).
func writeTable(path string, names []string, qs []Query) ([][]float64, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("qid\tlabel\t" + strings.Join(names, "\t") + "\n")
	var first [][]float64
	buf := make([]byte, 0, 32)
	for qi, q := range qs {
		for _, c := range q.Candidates {
			label := 0
			if q.Positive[c.ID] {
				label = 1
			}
			w.WriteString(strconv.Itoa(qi) + "\t" + strconv.Itoa(label))
			for _, v := range c.X {
				w.WriteByte('\t')
				w.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
			}
			w.WriteByte('\n')
			if len(first) < 2000 {
				first = append(first, c.X)
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, err
	}
	return first, f.Close()
}

// check compares the trainer's margins of rows with this build's scores.
func (m *Model) check(predPath string, rows [][]float64) error {
	data, err := os.ReadFile(predPath)
	if err != nil {
		return err
	}
	lines := strings.Fields(string(data))
	if len(lines) != len(rows) {
		return fmt.Errorf("the trainer predicted %d rows, want %d", len(lines), len(rows))
	}
	worst := 0.0
	for i, l := range lines {
		want, err := strconv.ParseFloat(l, 64)
		if err != nil {
			return fmt.Errorf("the trainer's prediction %d: %w", i, err)
		}
		worst = max(worst, math.Abs(m.Score(rows[i])-want))
	}
	// The trainer sums in float32, this build in float64.
	if worst > 1e-3 {
		return fmt.Errorf("the model scores the training rows up to %.3g away from the trainer: the trees did not convert: %w", worst, ErrBadModel)
	}
	return nil
}

// Positives of ids as a set.
func Positives(ids []string) map[string]bool {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}
