package crossenc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/trainertest"
)

// requireTrainer finds Python with torch and onnx and the ONNX Runtime
// library (trainertest.Need).
func requireTrainer(t *testing.T) string {
	t.Helper()
	return trainertest.Need(t, func() (string, error) {
		py, err := FindPython(context.Background())
		if err == nil {
			err = onnx.Available("")
		}
		return py, err
	})
}

// words the synthetic functions are named from.
var words = []string{"parse", "config", "token", "render", "cache", "socket", "header", "cookie", "stream", "buffer",
	"session", "router", "schema", "lexer", "logger", "timer", "thread", "queue", "retry", "proxy"}

// synthetic writes a swerank.jsonl whose queries name the positive's two
// words among filler, and whose negatives are other functions: a
// cross-encoder learns it only by matching query words to the code.
func synthetic(t *testing.T, n int) string { return syntheticFile(t, n) }

func syntheticFile(t testing.TB, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	fn := func(a, b string) (string, string) {
		name := a + strings.ToUpper(b[:1]) + b[1:]
		return "pkg/" + a + ".py:" + name, fmt.Sprintf("def %s(x):\n    return %s_%s(x)\n", name, a, b)
	}
	path := filepath.Join(t.TempDir(), "swerank.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i := range n {
		a, b := words[rng.IntN(len(words))], words[rng.IntN(len(words))]
		l := line{Query: fmt.Sprintf("the %s %s is wrong when called twice", a, b), Repo: "acme/widgets", InstanceID: fmt.Sprint(i)}
		l.PositiveID, l.PositiveCode = fn(a, b)
		for len(l.NegativeIDs) < 3 {
			c, d := words[rng.IntN(len(words))], words[rng.IntN(len(words))]
			if c == a || c == b || d == a || d == b {
				continue
			}
			id, code := fn(c, d)
			l.NegativeIDs, l.NegativeCodes = append(l.NegativeIDs, id), append(l.NegativeCodes, code)
		}
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func tinyConfig(py, data, out string) TrainConfig {
	return TrainConfig{Python: py, Data: data, Out: out, Hidden: 64, Layers: 2, Heads: 4, MaxTokens: 48, MaxQueryTokens: 16,
		Epochs: 40, BatchQueries: 8, LR: 3e-3, Threads: 1, Valid: 10, VocabSize: 512}
}

// TestTrainThenRank trains a tiny cross-encoder and ranks through ONNX
// Runtime from Go: the positive must come first for most training queries
// (an untrained model puts it first about one time in four).
func TestTrainThenRank(t *testing.T) {
	py := requireTrainer(t)
	data := synthetic(t, 80)
	dir := t.TempDir()
	m, err := Train(context.Background(), tinyConfig(py, data, dir))
	if err != nil {
		t.Fatal(err)
	}
	if m.Trained.Queries != 70 || m.Trained.Valid != 10 || len(m.Trained.Repos) != 1 || m.ModelSHA256 == "" {
		t.Errorf("manifest trained %+v, model %q: want 70 training and 10 held-out queries of one repository", m.Trained, m.ModelSHA256)
	}
	s, err := Open(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lines, _, _, _, err := readLines(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	ctx := context.Background()
	for _, l := range lines {
		// The first stage puts the positive last; the cross-encoder must
		// lift it.
		var ranking []spider.Scored
		code := map[string]string{l.PositiveID: l.PositiveCode}
		for i, id := range l.NegativeIDs {
			ranking = append(ranking, spider.Scored{ID: id, Score: float64(10 - i)})
			code[id] = l.NegativeCodes[i]
		}
		ranking = append(ranking, spider.Scored{ID: l.PositiveID, Score: 1})
		docs := []string{Document(l.PositiveID, l.PositiveCode)}
		for i, id := range l.NegativeIDs {
			docs = append(docs, Document(id, l.NegativeCodes[i]))
		}
		scores, err := s.Score(ctx, l.Query, docs)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Rerank(ctx, l.Query, ranking, func(id string) string { return code[id] }, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(ranking) {
			t.Fatalf("rerank gave %d items of %d", len(out), len(ranking))
		}
		if slices.Max(scores[1:]) < scores[0] {
			first++
		}
	}
	t.Logf("the positive first in %d of %d training queries", first, len(lines))
	if first < len(lines)*8/10 {
		t.Errorf("the positive outscores its negatives in %d of %d training queries: want at least 80%%", first, len(lines))
	}
}

func TestRerankFusesRanks(t *testing.T) {
	ranking := []spider.Scored{{ID: "a", Score: 9}, {ID: "b", Score: 8}, {ID: "c", Score: 7}, {ID: "d", Score: 6}}
	ce := map[string]float32{"a": 0, "b": 1, "c": 5}
	got := fuse(ranking, 3, func(i int) float32 { return ce[ranking[i].ID] })
	// a: ranks 1 and 3, b: 2 and 2, c: 3 and 1: a's and c's 1/61+1/63
	// beat b's 2/62 and tie, and a came first; d follows, unscored.
	var ids []string
	for i, s := range got {
		ids = append(ids, s.ID)
		if i > 0 && s.Score >= got[i-1].Score {
			t.Errorf("scores %v: want them falling", got)
		}
	}
	if strings.Join(ids, "") != "acbd" {
		t.Errorf("order %v: want a c b d", ids)
	}
}

func TestOpenRefusesBadModels(t *testing.T) {
	py := requireTrainer(t)
	dir := t.TempDir()
	if _, err := Train(context.Background(), tinyConfig(py, synthetic(t, 30), dir)); err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(filepath.Join(dir, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	// Training again into dir with a trainer that fails leaves the model
	// there whole.
	before, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	vocab, _ := os.ReadFile(filepath.Join(dir, VocabFile))
	c := tinyConfig("/bin/false", synthetic(t, 20), dir)
	c.VocabSize = 40
	if _, err := Train(context.Background(), c); err == nil {
		t.Fatal("a failing trainer: no error")
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); string(after) != string(before) {
		t.Error("a failed training changed the manifest")
	}
	if s, err := Open(dir, 1); err != nil {
		t.Errorf("the model after a failed training: %v", err)
	} else {
		s.Close()
	}
	if v, _ := os.ReadFile(filepath.Join(dir, VocabFile)); string(v) != string(vocab) {
		t.Error("a failed training replaced vocab.txt")
	}
	copyDir := func(t *testing.T, edit func(d string)) string {
		d := t.TempDir()
		for _, f := range []string{ManifestFile, ModelFile, VocabFile} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		edit(d)
		return d
	}
	for _, tc := range []struct {
		name string
		edit func(d string)
		want string // in the error, after the directory
	}{
		{"no model", func(d string) { os.Remove(filepath.Join(d, ModelFile)) }, ModelFile},
		{"truncated model", func(d string) { os.WriteFile(filepath.Join(d, ModelFile), model[:len(model)/3], 0o644) }, ModelFile},
		{"no vocab", func(d string) { os.Remove(filepath.Join(d, VocabFile)) }, VocabFile},
		{"no manifest", func(d string) { os.Remove(filepath.Join(d, ManifestFile)) }, ManifestFile},
		{"other format", func(d string) {
			os.WriteFile(filepath.Join(d, ManifestFile), []byte(`{"format":"locus-cross-encoder/0"}`), 0o644)
		}, "format"},
		{"other vocabulary", func(d string) {
			os.WriteFile(filepath.Join(d, VocabFile), []byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n"), 0o644)
		}, "not the vocabulary the model was trained with"},
		{"model replaced", func(d string) {
			other := copyDir(t, func(string) {})
			b, _ := os.ReadFile(filepath.Join(other, ManifestFile))
			var m Manifest
			json.Unmarshal(b, &m)
			m.ModelSHA256 = strings.Repeat("0", 64)
			b, _ = json.Marshal(m)
			os.WriteFile(filepath.Join(d, ManifestFile), b, 0o644)
		}, "replaced or damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyDir(t, tc.edit)
			s, err := Open(d, 1)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), d) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want it to name %s and %q", err, d, tc.want)
			}
		})
	}
}

func TestTrainRefusesBadData(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"query\":\"x\"}\n"), 0o644)
	for _, tc := range []struct {
		data string
		want string
		is   error
	}{
		{filepath.Join(dir, "missing.jsonl"), "missing.jsonl", os.ErrNotExist},
		{empty, "0 lines read", ErrNoData},
		{bad, "line 1", nil},
	} {
		_, err := Train(context.Background(), TrainConfig{Data: tc.data, Out: t.TempDir(), Python: "/nonexistent/python"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v: want %q", tc.data, err, tc.want)
		}
	}
}

func TestSplitWordsAndVocab(t *testing.T) {
	if got := splitWords("getHTTPServer2go(x_y)"); got != "get HTTP Server 2 go(x_y)" {
		t.Errorf("splitWords: %q", got)
	}
	c := vocabCounter{}
	c.add(splitWords("getUserName(x); get_user_name getUserName"))
	v := c.build(1000)
	has := map[string]bool{}
	for _, tok := range v {
		has[tok] = true
	}
	for _, want := range []string{"[PAD]", "[SEP]", "get", "user", "name", "_", "##z"} {
		if !has[want] {
			t.Errorf("vocabulary lacks %q", want)
		}
	}
	if v[0] != "[PAD]" {
		t.Errorf("first token %q: train.py pads with id 0", v[0])
	}
}
