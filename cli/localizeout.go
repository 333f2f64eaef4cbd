package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/termtext"
	"github.com/locus-dev/locus/workflows"
)

// printLocalize writes a Localize result as JSON or as a table. Centers
// whose selector was unavailable are marked in the table; the one warning
// that explains them goes to warn (stderr), so it is seen even when stdout
// is piped or is JSON.
func printLocalize(out, warn io.Writer, res workflows.LocalizeResult, asJSON bool) error {
	if res.Warning != "" {
		fmt.Fprintln(warn, "locus: warning:", termtext.Lines(res.Warning))
	}
	if asJSON {
		return writeJSON(out, res)
	}
	// Text: everything a repository or a server controls is escaped
	// (termtext), so a file name cannot drive the terminal or break the
	// table; --json above stays exact.
	esc := termtext.Escape
	r := &res.Result
	fmt.Fprintf(out, "%s at %s, method %s", esc(string(r.Repo)), esc(short(r.Commit)), esc(r.Method))
	if r.Embedder != "" {
		fmt.Fprintf(out, ", embedder %s", esc(r.Embedder))
	}
	if r.Selector != "" {
		fmt.Fprintf(out, ", selector %s", esc(r.Selector))
	}
	if rr := r.Rerank; rr != nil {
		switch {
		case rr.Skipped != "":
			fmt.Fprintf(out, ", no rerank (%s)", esc(rr.Skipped))
		case rr.Error != "":
			fmt.Fprintf(out, ", rerank failed")
		default:
			fmt.Fprintf(out, ", first %d reranked by %s", rr.N, esc(rr.Model))
		}
	}
	fmt.Fprintf(out, "\n")
	down := map[string]bool{}
	for _, u := range res.SelectorUnavailable {
		down[u.Center] = true
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tFUNCTION\tSCORE\tWHY")
	for i, it := range r.Items {
		why := it.Why()
		if it.Reason == spider.ReasonCenter && down[it.ID] {
			why += " (selector unavailable: no neighbours selected)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%s\n", i+1, esc(it.ID), it.Score, esc(why))
	}
	tw.Flush()
	fmt.Fprintf(out, "LLM calls %d (%d from cache), tokens %d+%d, latency %s\n", r.LLMCalls, res.CachedCalls, r.PromptTokens, r.CompletionTokens, r.Latency.Round(1e6))
	return nil
}

// strictResult is the error `localize --strict` exits with when any
// center's selector was unavailable, or the rerank failed; nil otherwise.
func strictResult(res workflows.LocalizeResult) error {
	if n := len(res.SelectorUnavailable); n > 0 {
		return exitError{code: 3, msg: fmt.Sprintf("--strict: the selector was unavailable for %d of the centers", n)}
	}
	if res.Rerank != nil && res.Rerank.Error != "" {
		return exitError{code: 3, msg: "--strict: the LLM rerank failed: " + res.Rerank.Error}
	}
	return nil
}

// trimIssue names the issue (its file, standard input or the command line)
// and cuts its text to limit bytes, warning on stderr when it does, so that
// a huge issue never fails deep inside Temporal with "Blob data size
// exceeds limit".
func trimIssue(file, text string, limit int) (trimmed, name string, err error) {
	switch file {
	case "":
		name = "(command line)"
	case "-":
		name = "(standard input)"
	default:
		name = file
	}
	trimmed, warning, err := search.TrimIssue(name, text, limit)
	if err != nil {
		return "", name, exitError{code: 2, msg: err.Error()}
	}
	if warning != "" {
		fmt.Fprintln(stderr, "locus: warning:", warning)
	}
	return trimmed, name, nil
}
