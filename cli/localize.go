package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/jobs"
	"github.com/locus-dev/locus/schema"
	"github.com/locus-dev/locus/workflows"
)

// localizeIssueID names the one issue of a localize backlog.
const localizeIssueID = "issue"

func runLocalize(ctx context.Context, args []string) error {
	g := Globals{reportsFailures: true}
	fs := newFlags("localize", &g)
	repoFlag := fs.String("repo", "", "indexed repository: owner/name as locus status shows it, or the path, '.' or URL it was indexed from")
	ref := fs.String("ref", "", "commit id (7+ digits) to rank the code of; default the indexed head (another commit gets a snapshot built once, then cached)")
	issueFile := fs.String("issue-file", "", "read the issue text from this file ('-' for standard input)")
	method, model := methodFlags(fs)
	crossEnc := crossEncoderFlag(fs)
	k := fs.Int("k", 20, "functions to return (budget K)")
	n := fs.Int("n", 500, "pool N the neighbours must come from")
	c := fs.Int("c", 5, "centers C expanded along the graph")
	depth := fs.Int("depth", 4, "BFS depth d from each center")
	includeTests := fs.Bool("include-tests", false, "rank test functions too (by default tests are left out: path and naming conventions, see docs/codegraph.md)")
	workerFlags(fs, &g)
	noWorker := fs.Bool("no-worker", false, "do not run a worker in this process (workers run elsewhere)")
	maxIssueTokens := fs.Int("max-issue-tokens", 0, "selector token limit (prompt + completion); once spent, the remaining centers are not asked; 0: no limit")
	rerank := fs.Int("rerank", 0, "an LLM (--llm) reorders the first N functions of the result, listwise; 0: no rerank")
	maxIssue := fs.Int("max-issue-bytes", search.DefaultMaxIssueBytes, "issue text beyond this many bytes is cut, with a warning (at most 1 MiB)")
	strict := fs.Bool("strict", false, "exit with status 3 when the neighbour selector (LLM) was unavailable for any center, or the rerank failed")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus localize --repo R [flags] (--issue-file F | \"issue text\")\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := check(fs,
		oneOf("method", *method, search.AllMethods...),
		intRange("k", *k, 1, workflows.MaxPartFunctions),
		atLeastK(*n, *k),
		intRange("c", *c, 1, -1),
		intRange("depth", *depth, 1, -1),
		intRange("max-issue-tokens", *maxIssueTokens, 0, -1),
		checkRef(*ref),
		checkModel(*method, model),
		checkCrossEncoder([]string{*method}, crossEnc),
		g.checkRerank(*rerank, *noWorker),
	); err != nil {
		return err
	}
	if !*noWorker {
		if err := check(fs, g.checkWorkerFlags()); err != nil {
			return err
		}
	}
	issue := strings.Join(fs.Args(), " ")
	if *issueFile != "" {
		var data []byte
		var err error
		if *issueFile == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(*issueFile)
		}
		if err != nil {
			return err
		}
		issue = string(data)
	}
	if strings.TrimSpace(issue) == "" || *repoFlag == "" {
		fs.Usage()
		return exitError{code: 2, msg: "localize needs --repo and an issue"}
	}
	issue, issueName, trimErr := trimIssue(*issueFile, issue, *maxIssue)
	if trimErr != nil {
		return trimErr
	}
	log := g.logger()
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	repo, err := resolveRepo(ctx, b, *repoFlag)
	if err != nil {
		return err
	}
	cl, closeAll, err := g.connectWorking(ctx, log, b, !*noWorker, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	// A backlog of one: the same workflow path as every other ranking.
	params := search.Params{Method: *method, Params: spider.Params{K: *k, N: *n, C: *c, Depth: *depth}, IncludeTests: *includeTests, Rerank: *rerank, Model: *model, CrossEncoder: *crossEnc}
	st, err := jobs.StartBacklog(ctx, cl, b, jobs.Backlog{Prefix: "localize", Rerun: true, Params: params, Backends: g.backends(),
		Options: workflows.BacklogOptions{MaxIssueTokens: *maxIssueTokens, Details: true},
		Issues:  []schema.BacklogIssue{{ID: localizeIssueID, Repo: repo, BaseCommit: *ref, Text: issue, Source: issueName}}})
	if err != nil {
		return fmt.Errorf("start localize of issue %s: %w", issueName, err)
	}
	g.printWorkflowLink(st.ID)
	var res workflows.BacklogResult
	err = g.untilDiskFull(ctx, func(ctx context.Context) (err error) {
		res, err = jobs.Wait(ctx, st)
		return err
	})
	if full := diskFullFailure("localize "+string(repo), err); full != nil {
		return full
	}
	if err != nil {
		return localizeError(repo, err)
	}
	out, err := jobs.IssueResult(ctx, cl, b, res, localizeIssueID)
	if err != nil {
		return localizeError(repo, err)
	}
	if err := printLocalize(stdout, stderr, out, g.json); err != nil {
		return err
	}
	if *strict {
		return strictResult(out)
	}
	return nil
}

// localizeError prefixes err with "localize REPO" unless its message (an
// issue's error, as the ranking wrote it) already starts so: said once.
func localizeError(repo schema.RepoName, err error) error {
	prefix := "localize " + string(repo)
	if strings.HasPrefix(err.Error(), prefix+":") || strings.HasPrefix(err.Error(), prefix+"@") {
		return err
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
