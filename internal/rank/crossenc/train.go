package crossenc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locus-dev/locus/internal/embed/onnx"
	"github.com/locus-dev/locus/internal/rank"
)

//go:embed train.py
var trainScript []byte

// TrainConfig configures Train; zero fields take the defaults written next
// to them.
type TrainConfig struct {
	// Data is a triplets run's swerank.jsonl (locus triplets): one line per
	// (query, positive) with the query's hard negatives.
	Data string
	// Out receives the model directory's files (manifest.json, model.onnx,
	// vocab.txt).
	Out string
	// Repos, when set, keeps only these repositories' lines
	// (case-insensitive); Exclude leaves these out.
	Repos, Exclude []string
	// MaxQueries samples at most this many lines (seeded); default all.
	MaxQueries int
	// Negatives per query, sampled from its hard negatives; default 7.
	Negatives int
	// Valid lines are held out to measure the model; default 5% of the
	// sample, at most 500.
	Valid int
	// VocabSize bounds the vocabulary built from the sample; default 8192.
	VocabSize int
	// The transformer: Hidden 128, Layers 2, Heads 4, FF 4×Hidden;
	// MaxTokens 256 per pair, MaxQueryTokens 64 of them.
	Hidden, Layers, Heads, FF, MaxTokens, MaxQueryTokens int
	// Epochs 1, BatchQueries 8 (queries per step), LR 5e-4, Threads 2.
	Epochs, BatchQueries, Threads int
	LR                            float64
	// Seed of the sample, the negatives and the weights; default 1.
	Seed int64
	// Python is the interpreter with torch and onnx; default: $LOCUS_PYTHON,
	// else the first of python3 and /usr/bin/python3 that imports them.
	Python string
	// Command is written into the manifest: how to train the model again.
	Command string
	// Progress receives the trainer's progress lines; default none.
	Progress io.Writer
}

func (c *TrainConfig) defaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.Negatives, 7)
	def(&c.VocabSize, 8192)
	def(&c.Hidden, 128)
	def(&c.Layers, 2)
	def(&c.Heads, 4)
	def(&c.FF, 4*c.Hidden)
	def(&c.MaxTokens, 256)
	def(&c.MaxQueryTokens, 64)
	def(&c.Epochs, 1)
	def(&c.BatchQueries, 8)
	def(&c.Threads, 2)
	if c.LR <= 0 {
		c.LR = 5e-4
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// line is the part of a swerank.jsonl line training reads
// (triplets.SweRankLine).
type line struct {
	Query         string   `json:"query"`
	PositiveID    string   `json:"positive_id"`
	PositiveCode  string   `json:"positive_code"`
	NegativeIDs   []string `json:"negative_ids"`
	NegativeCodes []string `json:"negative_codes"`
	Repo          string   `json:"repo"`
	InstanceID    string   `json:"instance_id"`
}

// ErrNoData: the triplets file has no line to train on (after the
// repository filters), or no line with a negative.
var ErrNoData = errors.New("no training line")

// FindPython returns an interpreter that imports torch and onnx (see
// TrainConfig.Python).
func FindPython(ctx context.Context) (string, error) {
	return rank.FindPythonWith(ctx, "torch, onnx", "torch.__version__",
		"training the cross-encoder needs Python 3 with PyTorch and ONNX (Debian: apt-get install python3-torch python3-onnx; or set LOCUS_PYTHON)")
}

// readLines reads the triplets file's lines that pass the repository
// filters, with counts of what was read and left out.
func readLines(path string, repos, exclude []string) (kept []line, read, noNegs int, sum string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, "", fmt.Errorf("cross-encoder training data: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(f, h))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	in := func(list []string, repo string) bool {
		return slices.ContainsFunc(list, func(r string) bool { return strings.EqualFold(r, repo) })
	}
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		read++
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, 0, 0, "", fmt.Errorf("cross-encoder training data %s: line %d: %w", path, read, err)
		}
		if l.Query == "" || l.PositiveID == "" || l.Repo == "" || len(l.NegativeIDs) != len(l.NegativeCodes) {
			return nil, 0, 0, "", fmt.Errorf("cross-encoder training data %s: line %d: want query, positive_id, repo and as many negative_codes as negative_ids (a swerank.jsonl of locus triplets)", path, read)
		}
		if len(repos) > 0 && !in(repos, l.Repo) || in(exclude, l.Repo) {
			continue
		}
		if len(l.NegativeIDs) == 0 {
			noNegs++
			continue
		}
		kept = append(kept, l)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, 0, "", fmt.Errorf("cross-encoder training data %s: %w", path, err)
	}
	return kept, read, noNegs, hex.EncodeToString(h.Sum(nil)), nil
}

// Train trains a cross-encoder on c.Data and writes it to c.Out; the model
// is checked to score, through ONNX Runtime, the held-out pairs as the
// trainer did. It is trained in a directory beside c.Out and its files
// moved in only then, the manifest last: a model already in c.Out stays
// whole when training fails, and one half replaced is refused by Open (its
// manifest's digest is the old model's).
func Train(ctx context.Context, c TrainConfig) (*Manifest, error) {
	c.defaults()
	if c.Out == "" || c.Data == "" {
		return nil, errors.New("cross-encoder training: want the triplets file and an output directory")
	}
	if c.MaxQueryTokens+2 > c.MaxTokens || c.MaxQueryTokens < 3 || c.Hidden%c.Heads != 0 {
		return nil, fmt.Errorf("cross-encoder training: max tokens %d, query tokens %d, hidden %d, heads %d: want the query part at least 3 and 2 less than the pair, hidden a multiple of heads",
			c.MaxTokens, c.MaxQueryTokens, c.Hidden, c.Heads)
	}
	lines, read, noNegs, sum, err := readLines(c.Data, c.Repos, c.Exclude)
	if err != nil {
		return nil, err
	}
	if len(lines) < 2 {
		return nil, fmt.Errorf("cross-encoder training data %s: %d lines read, %d with the chosen repositories and negatives: %w", c.Data, read, len(lines), ErrNoData)
	}
	py := c.Python
	if py == "" {
		if py, err = FindPython(ctx); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 0x6c6f637573))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	if c.MaxQueries > 0 && len(lines) > c.MaxQueries {
		lines = lines[:c.MaxQueries]
	}
	// Held out by query: the lines of one query (one per positive) stay
	// on one side.
	nValid := c.Valid
	if nValid <= 0 {
		nValid = min(500, max(1, len(lines)/20))
	}
	key := func(l line) string { return l.Repo + "\x00" + l.InstanceID + "\x00" + l.Query }
	per := map[string]int{}
	for _, l := range lines {
		per[key(l)]++
	}
	held, nHeld := map[string]bool{}, 0
	for _, l := range lines {
		if nHeld >= nValid {
			break
		}
		if k := key(l); !held[k] {
			held[k] = true
			nHeld += per[k]
		}
	}
	var train, valid []line
	for _, l := range lines {
		if held[key(l)] {
			valid = append(valid, l)
		} else {
			train = append(train, l)
		}
	}
	if len(train) == 0 || len(valid) == 0 {
		return nil, fmt.Errorf("cross-encoder training data %s: %d lines: too few to train on and hold out some: %w", c.Data, len(lines), ErrNoData)
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(filepath.Dir(filepath.Clean(c.Out)), ".crossenc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	counts := vocabCounter{}
	for _, l := range train {
		counts.add(splitWords(l.Query))
		counts.add(splitWords(Document(l.PositiveID, l.PositiveCode)))
		for i, id := range l.NegativeIDs {
			counts.add(splitWords(Document(id, l.NegativeCodes[i])))
		}
	}
	vocab := counts.build(c.VocabSize)
	if err := writeVocab(filepath.Join(stage, VocabFile), vocab); err != nil {
		return nil, fmt.Errorf("cross-encoder: %w", err)
	}
	tok, err := onnx.LoadTokenizer(stage)
	if err != nil {
		return nil, fmt.Errorf("cross-encoder: %w", err)
	}
	m := Manifest{Format: Format, MaxTokens: c.MaxTokens, MaxQueryTokens: c.MaxQueryTokens}
	work, err := os.MkdirTemp("", "locus-crossenc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	trainPath, validPath := filepath.Join(work, "train.jsonl"), filepath.Join(work, "valid.jsonl")
	slog.Info("cross-encoder: tokenizing pairs", "train", len(train), "valid", len(valid), "vocabulary", len(vocab))
	if _, err := writeGroups(trainPath, train, tok, m, c.Negatives, rng); err != nil {
		return nil, err
	}
	validGroups, err := writeGroups(validPath, valid, tok, m, c.Negatives, rng)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"vocab_size": len(vocab), "hidden": c.Hidden, "layers": c.Layers, "heads": c.Heads, "ff": c.FF,
		"max_tokens": c.MaxTokens, "max_query_tokens": c.MaxQueryTokens, "dropout": 0.1, "lr": c.LR, "epochs": c.Epochs,
		"batch_queries": c.BatchQueries, "threads": c.Threads, "seed": c.Seed, "negatives": c.Negatives, "loss": "listwise softmax"}
	pj, err := json.MarshalIndent(params, "", " ")
	if err != nil {
		return nil, err
	}
	paramsPath, script := filepath.Join(work, "params.json"), filepath.Join(work, "train.py")
	slog.Info("cross-encoder: training", "python", py)
	if err := rank.RunPython(ctx, py, map[string][]byte{paramsPath: pj, script: trainScript}, c.Progress, script, trainPath, validPath, paramsPath, stage); err != nil {
		return nil, fmt.Errorf("cross-encoder training: %w", err)
	}
	var res struct {
		Check struct {
			Scores [][]float64 `json:"scores"`
		} `json:"check"`
	}
	resPath := filepath.Join(stage, "train.json")
	rb, err := os.ReadFile(resPath)
	if err != nil {
		return nil, fmt.Errorf("cross-encoder training: the trainer's report: %w", err)
	}
	if err := json.Unmarshal(rb, &res); err != nil {
		return nil, fmt.Errorf("cross-encoder training: the trainer's report %s: %w", resPath, err)
	}
	if err := json.Unmarshal(rb, &m.Result); err != nil {
		return nil, err
	}
	delete(m.Result, "check")
	os.Remove(resPath)
	mb, err := os.ReadFile(filepath.Join(stage, ModelFile))
	if err != nil {
		return nil, fmt.Errorf("cross-encoder training: %w", err)
	}
	ms := sha256.Sum256(mb)
	m.ModelSHA256 = hex.EncodeToString(ms[:])
	vb, err := os.ReadFile(filepath.Join(stage, VocabFile))
	if err != nil {
		return nil, fmt.Errorf("cross-encoder training: %w", err)
	}
	vs := sha256.Sum256(vb)
	m.VocabSHA256 = hex.EncodeToString(vs[:])
	m.Params = params
	ts := sha256.Sum256(trainScript)
	repos := map[string]bool{}
	for _, l := range lines {
		repos[strings.ToLower(l.Repo)] = true
	}
	m.Trained = Trained{Data: filepath.Base(c.Data), DataSHA256: sum, Repos: slices.Sorted(maps.Keys(repos)), Excluded: c.Exclude,
		Queries: len(train), Valid: len(valid), Negatives: c.Negatives, VocabSize: len(vocab), Command: c.Command, Seed: c.Seed,
		Python: py, TrainerSHA: hex.EncodeToString(ts[:]), LinesRead: read, LinesNoNegs: noNegs}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, ManifestFile), append(mj, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := checkScores(ctx, stage, validGroups, res.Check.Scores); err != nil {
		return nil, err
	}
	for _, f := range []string{ModelFile, VocabFile, ManifestFile} {
		if err := os.Rename(filepath.Join(stage, f), filepath.Join(c.Out, f)); err != nil {
			return nil, fmt.Errorf("cross-encoder: %w", err)
		}
	}
	return &m, nil
}

// checkScores opens the written model through ONNX Runtime and compares
// its scores of the first held-out groups with the trainer's.
func checkScores(ctx context.Context, dir string, valid [][]onnx.Encoded, want [][]float64) error {
	s, err := Open(dir, 0)
	if err != nil {
		return fmt.Errorf("cross-encoder training: the written model: %w", err)
	}
	defer s.Close()
	if len(want) == 0 || len(want) > len(valid) {
		return fmt.Errorf("cross-encoder training: the trainer checked %d groups of %d held out", len(want), len(valid))
	}
	worst := 0.0
	for i, g := range valid[:len(want)] {
		got, err := s.s.ScoreEncoded(ctx, g)
		if err != nil {
			return fmt.Errorf("cross-encoder training: the written model: %w", err)
		}
		if len(got) != len(want[i]) {
			return fmt.Errorf("cross-encoder training: group %d: %d pairs scored, the trainer scored %d", i, len(got), len(want[i]))
		}
		for j := range got {
			worst = max(worst, math.Abs(float64(got[j])-want[i][j])/max(1, math.Abs(want[i][j])))
		}
	}
	if worst > 1e-3 {
		return fmt.Errorf("cross-encoder training: ONNX Runtime scores held-out pairs up to %.3g away from the trainer: the export does not match: %w", worst, ErrBadModel)
	}
	return nil
}

// writeGroups encodes each line as its positive and up to negatives of its
// negatives (sampled by rng) paired with its query, and writes them one
// line each, {"ids": [...], "types": [...]}, for train.py.
func writeGroups(path string, lines []line, tok *onnx.Tokenizer, m Manifest, negatives int, rng *rand.Rand) ([][]onnx.Encoded, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var groups [][]onnx.Encoded
	for _, l := range lines {
		negs := make([]int, len(l.NegativeIDs))
		for i := range negs {
			negs[i] = i
		}
		rng.Shuffle(len(negs), func(i, j int) { negs[i], negs[j] = negs[j], negs[i] })
		negs = negs[:min(negatives, len(negs))]
		docs := []string{Document(l.PositiveID, l.PositiveCode)}
		for _, i := range negs {
			docs = append(docs, Document(l.NegativeIDs[i], l.NegativeCodes[i]))
		}
		g, err := encode(tok, m, l.Query, docs)
		if err != nil {
			return nil, fmt.Errorf("cross-encoder: %w", err)
		}
		rec := struct {
			IDs   [][]int64 `json:"ids"`
			Types [][]int64 `json:"types"`
		}{}
		for _, e := range g {
			rec.IDs, rec.Types = append(rec.IDs, e.IDs), append(rec.Types, e.Types)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		w.Write(append(b, '\n'))
		groups = append(groups, g)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return groups, f.Close()
}
