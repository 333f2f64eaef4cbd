package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locus-dev/locus/internal/rank/crossenc"
	"github.com/locus-dev/locus/internal/search"
)

// runRankTrainNeural trains the cross-encoder second stage on a triplets
// run's swerank.jsonl.
func runRankTrainNeural(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("rank train-neural", &g)
	out := fs.String("out", "", "directory for the model (manifest.json, model.onnx, vocab.txt); required")
	repos := fs.String("repos", "", "train only on these repositories (owner/name, comma-separated)")
	reposFile := fs.String("repos-file", "", "train only on the repositories listed in this file (the first field of each line; # comments), e.g. a training fleet's list")
	exclude := fs.String("exclude", "", "leave these repositories out (owner/name, comma-separated), e.g. a benchmark's")
	var c crossenc.TrainConfig
	fs.IntVar(&c.MaxQueries, "max-queries", 0, "train on at most this many lines, sampled (0: all)")
	fs.IntVar(&c.Negatives, "negatives", 7, "hard negatives per query")
	fs.IntVar(&c.Valid, "valid", 0, "lines held out to measure the model (0: 5% of the sample, at most 500)")
	fs.IntVar(&c.VocabSize, "vocab", 8192, "vocabulary size (built from the training texts)")
	fs.IntVar(&c.Hidden, "hidden", 128, "transformer width")
	fs.IntVar(&c.Layers, "layers", 2, "transformer layers")
	fs.IntVar(&c.Heads, "heads", 4, "attention heads")
	fs.IntVar(&c.MaxTokens, "max-tokens", 256, "tokens per (query, function) pair")
	fs.IntVar(&c.MaxQueryTokens, "max-query-tokens", 64, "tokens of the query within a pair")
	fs.IntVar(&c.Epochs, "epochs", 1, "passes over the training lines")
	fs.IntVar(&c.BatchQueries, "batch", 8, "queries per training step")
	fs.IntVar(&c.Threads, "threads", 2, "PyTorch threads")
	fs.Float64Var(&c.LR, "lr", 5e-4, "peak learning rate (AdamW, linear warm-up and decay)")
	fs.Int64Var(&c.Seed, "seed", 1, "seed of the sample, the negatives and the initial weights")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus rank train-neural --out DIR [flags] SWERANK.jsonl\n\n"+
			"Trains the neural second stage (--cross-encoder of localize, backlog and eval): a small transformer\n"+
			"cross-encoder trained from scratch with PyTorch on a triplets run's swerank.jsonl (query, positive,\n"+
			"hard negatives), exported to ONNX. Needs Python 3 with PyTorch and ONNX (Debian: python3-torch,\n"+
			"python3-onnx) and ONNX Runtime (tools/install-onnxruntime.sh).\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs, intRange("max-queries", c.MaxQueries, 0, -1), intRange("negatives", c.Negatives, 1, 1000), intRange("valid", c.Valid, 0, -1),
		intRange("vocab", c.VocabSize, 256, 1<<20), intRange("hidden", c.Hidden, 8, 4096), intRange("layers", c.Layers, 1, 48), intRange("heads", c.Heads, 1, 64),
		intRange("max-tokens", c.MaxTokens, 16, 4096), intRange("max-query-tokens", c.MaxQueryTokens, 3, c.MaxTokens-2), intRange("epochs", c.Epochs, 1, 1000),
		intRange("batch", c.BatchQueries, 1, 4096), intRange("threads", c.Threads, 1, 256)); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 1 {
		fs.Usage()
		return exitError{code: 2, msg: "rank train-neural needs --out DIR and one swerank.jsonl"}
	}
	g.logger()
	c.Repos, c.Exclude = splitList(*repos), splitList(*exclude)
	if *reposFile != "" {
		list, err := readRepoList(*reposFile)
		if err != nil {
			return err
		}
		c.Repos = append(c.Repos, list...)
	}
	c.Data, c.Out, c.Progress = fs.Arg(0), *out, stderr
	// The command as it rebuilds the model: its settings, no paths of this
	// machine.
	cmd := fmt.Sprintf("locus rank train-neural --max-queries %d --negatives %d --vocab %d --hidden %d --layers %d --heads %d --max-tokens %d --max-query-tokens %d --epochs %d --batch %d --threads %d --lr %g --seed %d",
		c.MaxQueries, c.Negatives, c.VocabSize, c.Hidden, c.Layers, c.Heads, c.MaxTokens, c.MaxQueryTokens, c.Epochs, c.BatchQueries, c.Threads, c.LR, c.Seed)
	if *reposFile != "" {
		cmd += " --repos-file " + filepath.Base(*reposFile)
	}
	if *repos != "" {
		cmd += " --repos " + *repos
	}
	if *exclude != "" {
		cmd += " --exclude " + *exclude
	}
	c.Command = cmd + " --out DIR " + filepath.Base(c.Data)
	m, err := crossenc.Train(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d training and %d held-out queries from %d repositories: %s\n", m.Trained.Queries, m.Trained.Valid, len(m.Trained.Repos), *out)
	fmt.Fprintf(stdout, "held out: MRR of the positive among its candidates %v (untrained %v), first %v (untrained %v)\n",
		m.Result["valid_mrr"], m.Result["valid_mrr_before"], m.Result["valid_top1"], m.Result["valid_top1_before"])
	return nil
}

// crossEncoderFlag defines --cross-encoder.
func crossEncoderFlag(fs interface {
	String(name, value, usage string) *string
}) *string {
	return fs.String("cross-encoder", "", "second stage (hybrid and learned): a cross-encoder model directory (locus rank train-neural) that reorders the first 50 functions, fused with the first stage's order; default none (measured in docs/ranking.md)")
}

// checkCrossEncoder makes *dir absolute (workers may run elsewhere in the
// tree) and checks that the methods have a second stage and the model
// loads.
func checkCrossEncoder(methods []string, dir *string) error {
	if *dir == "" {
		return nil
	}
	for _, m := range methods {
		if m != search.MethodHybrid && m != search.MethodLearned {
			return fmt.Errorf("--cross-encoder is for --method %s or %s, not %s", search.MethodHybrid, search.MethodLearned, m)
		}
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	*dir = abs
	if _, err := search.LoadCrossEncoder(abs); err != nil {
		return fmt.Errorf("--cross-encoder: %w", err)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// readRepoList reads the repositories of a list file: the first field of
// each line that is not blank or a # comment.
func readRepoList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, strings.Fields(l)[0])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no repository listed", path)
	}
	return out, nil
}
