package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
)

const rankUsage = "usage: locus rank train [flags] DIR   train the learned ranker on a triplets output (locus rank train -h)\n" +
	"       locus rank train-neural --out DIR SWERANK.jsonl   train the cross-encoder second stage (locus rank train-neural -h)\n"

func runRank(ctx context.Context, args []string) error {
	switch {
	case len(args) > 0 && args[0] == "train":
		return runRankTrain(ctx, args[1:])
	case len(args) > 0 && args[0] == "train-neural":
		return runRankTrainNeural(ctx, args[1:])
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprint(stdout, rankUsage)
		return nil
	}
	fmt.Fprint(stderr, rankUsage)
	return exitError{code: 2, msg: "rank needs a subcommand: train"}
}

// runRankTrain trains the learned ranker on the records of a triplets run.
func runRankTrain(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("rank train", &g)
	out := fs.String("out", "", "directory for the features, the model, the leave-one-out models and train.json (default DIR/rank)")
	sample := fs.Int("sample", fit.DefaultSample, "commit queries featurised per repository, spread evenly over its history (benchmark instances: all)")
	minWords := fs.Int("min-words", 4, "leave out commit queries of fewer words (a bare subject says too little to learn from)")
	memoryGap := fs.Duration("memory-gap", fit.DefaultMemoryGap, "take each commit query's memory this much before its parent commit (an issue's query takes it at its base)")
	jobs := fs.Int("jobs", 2, "repositories featurised at once")
	rounds := fs.Int("rounds", 200, "boosting rounds")
	leaveOut := fs.String("leave-out", "", "repositories (comma-separated) to also train a model without, for leave-one-repository-out validation: OUT/loo/OWNER+NAME.json")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus rank train [flags] DIR [DIR...]\n\n"+
			"Trains the learned ranker (LambdaMART, XGBoost) on the records of the triplets runs the DIRs came from\n"+
			"(a repository mined by several takes the last one's records; --out defaults to the first DIR's rank/):\n"+
			"each sampled query is ranked at its parent commit the way the learned method ranks an issue, and its\n"+
			"candidates' features (docs/ranking.md) are the training rows; benchmark instances (--instances of the\n"+
			"triplets run) are featurised for validation, never trained on. Needs Python 3 with XGBoost.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs, intRange("sample", *sample, 1, -1), intRange("jobs", *jobs, 1, 64), intRange("min-words", *minWords, 0, -1), intRange("rounds", *rounds, 1, 100000)); err != nil {
		return err
	}
	var loo []string
	for _, r := range strings.Split(*leaveOut, ",") {
		if r = strings.TrimSpace(r); r != "" {
			loo = append(loo, r)
		}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitError{code: 2, msg: "rank train needs a triplets output directory"}
	}
	dir := fs.Arg(0)
	g.logger()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	records, err := collectTripletsRuns(ctx, b, fs.Args(), "rank train")
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(dir, "rank")
	}
	var done, total atomic.Int64
	stopProgress := watchProgressOf(ctx, stderr, "queries", func(context.Context) (schema.FleetProgress, error) {
		t, d := int(total.Load()), int(done.Load())
		return schema.FleetProgress{Total: t, Done: d, Pending: max(t-d, 0)}, nil
	}, time.Second, 10*time.Second)
	res, err := fit.TrainRanker(ctx, fit.RankerConfig{
		Bucket:  b,
		GitDir:  func(r schema.RepoName) (string, error) { return activities.ClonePath(workers.CloneDir(g.dataDir), r) },
		Records: records,
		Options: fit.Options{Sample: *sample, MinWords: *minWords, MemoryGap: *memoryGap},
		Jobs:    *jobs, Out: *out, LeaveOut: loo,
		// The command as it rebuilds the model: its settings, no paths of
		// this machine.
		Train: rank.TrainConfig{Rounds: *rounds, Trained: rank.Manifest{Command: fmt.Sprintf(
			"locus rank train --sample %d --min-words %d --memory-gap %s --rounds %d%s", *sample, *minWords, *memoryGap, *rounds,
			strings.Repeat(" TRIPLETS-DIR", fs.NArg()))}},
		Progress: func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) },
	})
	stopProgress(err == nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d training queries from %d repositories: %s\n", res.Queries, len(res.Repos), res.Model)
	fmt.Fprintf(stdout, "%-32s %7s %6s %7s %6s %10s %9s %9s\n", "REPO", "RECORDS", "SHORT", "SAMPLED", "UNLAB", "CANDIDATES", "CAND-REC", "INST-REC")
	for _, r := range res.Repos {
		fmt.Fprintf(stdout, "%-32s %7d %6d %7d %6d %10.0f %9.3f %9.3f\n", r.Repo, r.Records, r.Short, r.Sampled, r.Unlabelled, r.Candidates, r.CandidateRecall, r.InstanceRecall)
	}
	type kv struct {
		k string
		v float64
	}
	var imp []kv
	for k, v := range res.Importance {
		imp = append(imp, kv{k, v})
	}
	sort.Slice(imp, func(i, j int) bool { return imp[i].v > imp[j].v })
	for i, e := range imp[:min(len(imp), 10)] {
		fmt.Fprintf(stdout, "importance %2d %-18s %.1f\n", i+1, e.k, e.v)
	}
	if len(res.Validation) > 0 {
		fmt.Fprintf(stdout, "leave one repository out, its instances (training's features), Recall@20 / Acc@20 / MRR:\n")
		fmt.Fprintf(stdout, "%-28s %5s  %-17s  %-17s  %-17s\n", "REPO", "N", "LEARNED (TREES)", "LINEAR PAIRWISE", "FUSION (HYBRID'S)")
		var n int
		var sum [3]fit.Scores
		add := func(a *fit.Scores, b fit.Scores, w float64) {
			a.Recall, a.Acc, a.MRR = a.Recall+w*b.Recall, a.Acc+w*b.Acc, a.MRR+w*b.MRR
		}
		line := func(name string, n int, s [3]fit.Scores) {
			fmt.Fprintf(stdout, "%-28s %5d", name, n)
			for _, x := range s {
				fmt.Fprintf(stdout, "  %.3f %.3f %.3f", x.Recall, x.Acc, x.MRR)
			}
			fmt.Fprintln(stdout)
		}
		for _, v := range res.Validation {
			s := [3]fit.Scores{v.Learned, v.Linear, v.Fused}
			line(v.Repo, v.Instances, s)
			n += v.Instances
			for i := range s {
				add(&sum[i], s[i], float64(v.Instances))
			}
		}
		if n > 0 {
			for i := range sum {
				add(&sum[i], sum[i], 1/float64(n)-1)
			}
			line("all", n, sum)
		}
	}
	for r, p := range res.LeaveOut {
		fmt.Fprintf(stdout, "without %s: %s\n", r, p)
	}
	return nil
}

// methodFlags defines --method and --model of the commands that rank
// (localize, backlog).
func methodFlags(fs *flag.FlagSet) (method, model *string) {
	return fs.String("method", search.MethodHybrid, "hybrid (BM25 fused with repository memory, + graph; the best measured), sr, der, spisr, spider, or learned (a trained model: --model)"),
		modelFlag(fs)
}

// modelFlag defines --model.
func modelFlag(fs *flag.FlagSet) *string {
	return fs.String("model", "", "ranking model of the learned method (default: the one shipped with locus, if any): a model file (locus rank train writes OUT/model.json), or a directory of OWNER+NAME.json files, one per repository (leave-one-repository-out validation)")
}

// checkModel makes *model absolute (workers may run elsewhere in the tree)
// and checks that the learned method has one that loads.
func checkModel(method string, model *string) error {
	if method != search.MethodLearned {
		if *model != "" {
			return fmt.Errorf("--model is for --method %s", search.MethodLearned)
		}
		return nil
	}
	if *model == "" {
		_, err := search.LoadModel("") // the shipped default
		return err
	}
	abs, err := filepath.Abs(*model)
	if err != nil {
		return err
	}
	*model = abs
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	if !st.IsDir() {
		_, err = search.LoadModel(abs)
	}
	return err
}
