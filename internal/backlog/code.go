package backlog

import (
	"context"
	"fmt"
	"strings"
)

// Code a ranked function keeps (Ranked.Code): its first CodeLines lines,
// at most maxCodeBytes.
const (
	CodeLines    = 4
	maxCodeBytes = 400
)

// Function is a function as the graph of a commit has it.
type Function struct {
	Line int
	Code string
}

// Lookup returns the functions of ids that the graph of repo at commit has.
type Lookup func(ctx context.Context, repo, commit string, ids []string) (map[string]Function, error)

// AddCode fills the Line and Code of the ranked functions of rs, one
// lookup per repository and commit. A graph that cannot be read leaves its
// functions without them; the errors say which (nil when none).
func AddCode(ctx context.Context, rs []Result, lookup Lookup) []error {
	type at struct{ repo, commit string }
	ids := map[at][]string{}
	var order []at
	for _, r := range rs {
		if r.Commit == "" || len(r.Items) == 0 {
			continue
		}
		k := at{r.Repo, r.Commit}
		if _, ok := ids[k]; !ok {
			order = append(order, k)
		}
		for _, it := range r.Items {
			ids[k] = append(ids[k], it.FunctionID)
		}
	}
	var errs []error
	found := map[at]map[string]Function{}
	for _, k := range order {
		fs, err := lookup(ctx, k.repo, k.commit, ids[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("code of %s@%s: %w", k.repo, k.commit, err))
			continue
		}
		found[k] = fs
	}
	for i := range rs {
		fs := found[at{rs[i].Repo, rs[i].Commit}]
		for j := range rs[i].Items {
			if f, ok := fs[rs[i].Items[j].FunctionID]; ok {
				rs[i].Items[j].Line, rs[i].Items[j].Code = f.Line, CodeHead(f.Code)
			}
		}
	}
	return errs
}

// CodeHead is the first CodeLines lines of code, at most maxCodeBytes
// (cut at a rune boundary), without trailing blank space.
func CodeHead(code string) string {
	lines := strings.SplitAfterN(code, "\n", CodeLines+1)
	head := strings.Join(lines[:min(len(lines), CodeLines)], "")
	return strings.TrimRight(cutUTF8(strings.ToValidUTF8(head, "\uFFFD"), maxCodeBytes), " \t\r\n")
}
