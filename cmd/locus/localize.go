package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/schema"
)

func runLocalize(ctx context.Context, args []string) error {
	var g globals
	fs := newFlags("localize", &g)
	repoFlag := fs.String("repo", "", "indexed repository (owner/name, as locus status shows it)")
	issueFile := fs.String("issue-file", "", "read the issue text from this file ('-' for standard input)")
	method := fs.String("method", search.MethodSpIDER, "sr, der, spisr or spider")
	k := fs.Int("k", 20, "functions to return (budget K)")
	n := fs.Int("n", 500, "pool N the neighbours must come from")
	c := fs.Int("c", 5, "centers C expanded along the graph")
	depth := fs.Int("depth", 4, "BFS depth d from each center")
	llmURL := fs.String("llm", "", "neighbour selector: openai://…?model=…, anthropic://…?model=…; empty: the deterministic heuristic (no LLM)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: locus localize --repo R [flags] (--issue-file F | \"issue text\")\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	g.logger()
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
	repo, err := schema.ParseRepoName(*repoFlag)
	if err != nil {
		return err
	}
	sel, err := llm.OpenSelector(*llmURL, 0)
	if err != nil {
		return err
	}
	b, err := g.openStore(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	res, err := search.Localize(ctx, search.Deps{Bucket: b, Selector: sel}, repo, issue,
		search.Params{Method: *method, Params: spider.Params{K: *k, N: *n, C: *c, Depth: *depth}})
	if err != nil {
		return err
	}
	if g.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "%s at %s, method %s", res.Repo, short(res.Commit), res.Method)
	if res.Embedder != "" {
		fmt.Fprintf(stdout, ", embedder %s", res.Embedder)
	}
	if res.Selector != "" {
		fmt.Fprintf(stdout, ", selector %s", res.Selector)
	}
	fmt.Fprintf(stdout, "\n")
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tFUNCTION\tSCORE\tWHY")
	for i, it := range res.Items {
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%s\n", i+1, it.ID, it.Score, it.Why())
	}
	tw.Flush()
	fmt.Fprintf(stdout, "LLM calls %d, tokens %d+%d, latency %s\n", res.LLMCalls, res.PromptTokens, res.CompletionTokens, res.Latency.Round(1e6))
	return nil
}
