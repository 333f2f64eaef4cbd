package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/locus-dev/locus/activities"
	"github.com/locus-dev/locus/internal/fit"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workers"
	"github.com/locus-dev/locus/workflows"
)

const rankUsage = "usage: locus rank train [flags] DIR         train the learned ranker on a triplets output (locus rank train -h)\n" +
	"       locus rank train-files [flags] DIR   train the learned file ranker of commit-history search (locus rank train-files -h)\n" +
	"       locus rank train-neural --out DIR SWERANK.jsonl   train the cross-encoder second stage (locus rank train-neural -h)\n"

func runRank(ctx context.Context, args []string) error {
	switch {
	case len(args) > 0 && args[0] == "train":
		return runRankTrain(ctx, args[1:])
	case len(args) > 0 && args[0] == "train-files":
		return runRankTrainFiles(ctx, args[1:])
	case len(args) > 0 && args[0] == "train-neural":
		return runRankTrainNeural(ctx, args[1:])
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprint(stdout, rankUsage)
		return nil
	}
	fmt.Fprint(stderr, rankUsage)
	return exitError{code: 2, msg: "rank needs a subcommand: train or train-files"}
}

// runRankTrain trains a fleet's learned ranker on the records of triplets
// runs, as a TrainRanker workflow.
func runRankTrain(ctx context.Context, args []string) error {
	g := Globals{reportsFailures: true}
	fs := newFlags("rank train", &g)
	fleet := fs.String("fleet", jobs.DefaultFleet, "name of the model in the store: localize, backlog and eval take it as --model fleet:NAME")
	out := fs.String("out", "", "directory to also write the model, the leave-one-out models and the report into (default DIR/rank)")
	sample := fs.Int("sample", fit.DefaultSample, "commit queries featurised per repository, spread evenly over its history (benchmark instances: all)")
	minWords := fs.Int("min-words", 4, "leave out commit queries of fewer words (a bare subject says too little to learn from)")
	memoryGap := fs.Duration("memory-gap", fit.DefaultMemoryGap, "take each commit query's memory this much before its parent commit (an issue's query takes it at its base)")
	jobsN := fs.Int("jobs", workflows.DefaultRankWindow, "repositories featurised at once")
	rounds := fs.Int("rounds", 200, "boosting rounds")
	leaveOut := fs.String("leave-out", "", "repositories (comma-separated) to also train a model without, for leave-one-repository-out validation: OUT/loo/OWNER+NAME.json")
	workerFlags(fs, &g)
	noWorker := fs.Bool("no-worker", false, "do not run a worker in this process (workers run elsewhere)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus rank train [flags] DIR [DIR...]\n\n"+
			"Trains the learned ranker (LambdaMART, XGBoost) on the records of the triplets runs the DIRs came from\n"+
			"(a repository mined by several takes the last one's records), as a Temporal workflow: each sampled query is\n"+
			"ranked at its parent commit the way the learned method ranks an issue, on the host with the repository's\n"+
			"clone, and its candidates' features (docs/ranking.md) are stored as Parquet; benchmark instances (--instances\n"+
			"of the triplets run) are featurised for validation, never trained on. The model, the leave-one-out models\n"+
			"and a report (feature importances, validation) are stored as fleet NAME. Running the same command again\n"+
			"resumes the run. Needs Python 3 with XGBoost on the workers.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs, intRange("sample", *sample, 1, -1), intRange("jobs", *jobsN, 1, workflows.MaxWindow), intRange("min-words", *minWords, 0, -1),
		intRange("rounds", *rounds, 1, 100000), fleetName(*fleet)); err != nil {
		return err
	}
	if !*noWorker {
		if err := check(fs, g.checkWorkerFlags()); err != nil {
			return err
		}
	}
	var loo []schema.RepoName
	for _, r := range strings.Split(*leaveOut, ",") {
		if r = strings.TrimSpace(r); r != "" {
			loo = append(loo, schema.RepoName(r))
		}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitError{code: 2, msg: "rank train needs a triplets output directory"}
	}
	if *out == "" {
		*out = filepath.Join(fs.Arg(0), "rank")
	}
	if err := checkOutDir(*out); err != nil {
		return err
	}
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	records, err := collectTripletsRuns(ctx, b, fs.Args(), "rank train")
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return fmt.Errorf("rank train: the triplets runs of %s hold no records: nothing to train on", strings.Join(fs.Args(), ", "))
	}
	c, closeAll, err := g.connectWorking(ctx, g.logger(), b, !*noWorker, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	opts := fit.Options{Sample: *sample, MinWords: *minWords, MemoryGap: *memoryGap}
	st, err := jobs.StartRankTraining(ctx, c, b, jobs.RankTraining{Fleet: *fleet, Records: records, Options: opts, LeaveOut: loo, Window: *jobsN,
		// The command as it rebuilds the model: its settings, no paths of
		// this machine.
		Train: rank.TrainConfig{Rounds: *rounds, Trained: rank.Manifest{Command: fmt.Sprintf(
			"locus rank train --sample %d --min-words %d --memory-gap %s --rounds %d%s", *sample, *minWords, *memoryGap, *rounds,
			strings.Repeat(" TRIPLETS-DIR", fs.NArg()))}}})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rank train %s: %d records, fleet %s\n", st.ID, len(records), *fleet)
	g.printWorkflowLink(st.ID)
	var res fit.RankerResult
	err = g.untilDiskFull(ctx, func(ctx context.Context) error {
		return watchRankTraining(ctx, c, st, &res)
	})
	if ctx.Err() != nil {
		return exitError{code: 130, msg: fmt.Sprintf("interrupted; rank train %s keeps its state in %s — run the same command again to continue", st.ID, g.dataDir)}
	}
	if full := diskFullFailure("rank train "+st.ID, err); full != nil {
		return full
	}
	if err != nil {
		return fmt.Errorf("rank train %s: %w", st.ID, err)
	}
	files, err := fit.DownloadModels(ctx, b, res, *out)
	if err != nil {
		return err
	}
	res.Markdown(stdout)
	fmt.Fprintf(stdout, "\nstored as fleet %s (--model fleet:%s); written:\n", res.Fleet, res.Fleet)
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// runRankTrainFiles trains the learned file ranker of commit-history
// search (locus eval on commits-dev) on the commits of triplets runs.
func runRankTrainFiles(ctx context.Context, args []string) error {
	var g Globals
	fs := newFlags("rank train-files", &g)
	out := fs.String("out", "", "model file to write (default DIR/rank/files.json)")
	sample := fs.Int("sample", 40, "commit queries ranked per repository, spread evenly over its history")
	minWords := fs.Int("min-words", 4, "leave out commit queries of fewer words")
	jobsN := fs.Int("jobs", 2, "repositories ranked at once")
	rounds := fs.Int("rounds", 200, "boosting rounds")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus rank train-files [flags] DIR [DIR...]\n\n"+
			"Trains the learned file ranker of commit-history search (the learned method of locus eval on a commits\n"+
			"benchmark) on the commits of the triplets runs the DIRs came from: each sampled commit's message is ranked\n"+
			"at its first parent the way a commits-dev query is (memory of strictly older commits only), its gold files are\n"+
			"the files it changed, and LambdaMART (XGBoost) learns to order the hybrid ranking's candidates from the five\n"+
			"rankings it fuses. Needs the repositories' clones in --data-dir and Python 3 with XGBoost.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs, intRange("sample", *sample, 1, -1), intRange("jobs", *jobsN, 1, 64), intRange("min-words", *minWords, 0, -1),
		intRange("rounds", *rounds, 1, 100000)); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitError{code: 2, msg: "rank train-files needs a triplets output directory"}
	}
	if *out == "" {
		*out = filepath.Join(fs.Arg(0), "rank", "files.json")
	}
	if err := checkOutDir(filepath.Dir(*out)); err != nil {
		return err
	}
	g.logger()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	records, err := collectTripletsRuns(ctx, b, fs.Args(), "rank train-files")
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return fmt.Errorf("rank train-files: the triplets runs of %s hold no records: nothing to train on", strings.Join(fs.Args(), ", "))
	}
	var done, total atomic.Int64
	stopProgress := watchProgressOf(ctx, stderr, "repositories", func(context.Context) (schema.FleetProgress, error) {
		t, d := int(total.Load()), int(done.Load())
		return schema.FleetProgress{Total: t, Done: d, Pending: max(t-d, 0)}, nil
	}, time.Second, 10*time.Second)
	m, stats, err := fit.TrainFiles(ctx, fit.FilesTraining{Bucket: b,
		GitDir:  func(r schema.RepoName) (string, error) { return activities.ClonePath(workers.CloneDir(g.dataDir), r) },
		Records: records, Sample: *sample, MinWords: *minWords, Jobs: *jobsN,
		Train: rank.TrainConfig{Rounds: *rounds, Trained: rank.Manifest{Command: fmt.Sprintf("locus rank train-files --sample %d --min-words %d --rounds %d%s",
			*sample, *minWords, *rounds, strings.Repeat(" TRIPLETS-DIR", fs.NArg()))}},
		Progress: func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) }})
	stopProgress(err == nil)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, m.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d queries (%d rows) from %d repositories: %s\n", m.File.Trained.Queries, m.File.Trained.Rows, len(stats), *out)
	fmt.Fprintf(stdout, "%-32s %7s %6s %7s %6s %6s\n", "REPO", "RECORDS", "SHORT", "SAMPLED", "RANKED", "FAILED")
	for _, s := range stats {
		fmt.Fprintf(stdout, "%-32s %7d %6d %7d %6d %6d\n", s.Repo, s.Records, s.Short, s.Sampled, s.Ranked, s.Failed)
	}
	return nil
}

// watchRankTraining shows a TrainRanker run's progress, queries while it
// featurises and models while it trains, until it ends with res.
func watchRankTraining(ctx context.Context, c client.Client, st jobs.Started, res *fit.RankerResult) error {
	done := make(chan error, 1)
	go func() { done <- st.Run.Get(ctx, res) }()
	for _, phase := range []string{workflows.RankPhaseFeatures, workflows.RankPhaseModels} {
		noun := "queries"
		if phase == workflows.RankPhaseModels {
			noun = "models"
		}
		next := make(chan struct{})
		var once sync.Once
		stop := watchProgressOf(ctx, stderr, noun, func(ctx context.Context) (schema.FleetProgress, error) {
			p, fp, err := jobs.RankProgress(ctx, c, st.ID)
			if err == nil && p.Phase != phase {
				once.Do(func() { close(next) })
				return fp, errOtherPhase // not this bar's count
			}
			return fp, err
		}, time.Second, 10*time.Second)
		select {
		case err := <-done:
			stop(err == nil)
			return err
		case <-next:
			stop(true)
		}
	}
	return <-done
}

var errOtherPhase = errors.New("another phase")

// fleetName checks a --fleet value.
func fleetName(v string) error {
	if v == "" || schema.SafeKeySegment(v) != v {
		return fmt.Errorf("--fleet %q: want letters, digits, '-', '_' or '.'", v)
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
	return fs.String("model", "", "ranking model of the learned method (default: the one shipped with locus, if any): fleet:NAME (the model locus rank train --fleet NAME stored), fleet:NAME/loo (the one trained without the queried repository), a model file (locus rank train writes OUT/model.json), or a directory of OWNER+NAME.json files, one per repository (leave-one-repository-out validation)")
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
	if _, ok, err := search.FleetModelKey(*model, "owner/name"); ok {
		return err // read from the store by the query, which names it when it is not there
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
