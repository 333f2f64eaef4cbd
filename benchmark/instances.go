package benchmark

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/dataset"
	"github.com/locus-dev/locus/internal/fileclass"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/triplets"
)

// HistoryOptions selects function-level instances (swe-dev.jsonl's format)
// from a repository's own history, for measuring `locus eval` on a
// repository that has no instance file: each instance is one first-parent
// commit (a merged pull request, in most histories), its base commit is
// that commit's first parent, its problem statement the cleaned message,
// and its patch the commit's change to non-test source files.
type HistoryOptions struct {
	GitDir string
	Head   gitrepo.Hash
	// Repo is the instances' repository, "owner/name".
	Repo string
	// N is how many instances to select, their commits spread evenly over
	// the first-parent history between Since and Until; default 130.
	N int
	// Since and Until bound the commits' committer times; zero: no bound.
	Since, Until time.Time
	// MaxFiles skips commits changing more non-test source files than
	// this (a sweeping refactor is no issue); default 5.
	MaxFiles int
	// MinWords skips commits whose cleaned message has fewer words;
	// default 3.
	MinWords int
}

// HistoryStats says what HistoryInstances looked at and why it passed
// over commits.
type HistoryStats struct {
	FirstParent int            `json:"first_parent_commits"` // in [Since, Until]
	Looked      int            `json:"commits_looked_at"`
	Skipped     map[string]int `json:"skipped"` // reason → commits
}

// Why HistoryInstances passes over a commit.
const (
	skipFewWords  = "message says too little"
	skipNoEdit    = "edits no existing non-test source file"
	skipManyFiles = "changes too many source files"
	skipTruncated = "a source file's diff is truncated or missing"
)

// scanPerSlot bounds how many commits after a slot's first one are looked
// at for a usable one.
const scanPerSlot = 16

// mergeSubject is the subject a forge or git gives a merge ("Merge pull
// request #12 from a/b", "Merge branch 'x' into y"): it names the branch,
// not the change, and is dropped from the problem statement.
var mergeSubject = regexp.MustCompile(`(?i)^merge (?:pull request|branch|remote-tracking branch)\b.*$`)

// HistoryInstances selects o.N commits spread evenly over the first-parent
// history and returns them as instances, oldest first. A slot whose commit
// is unusable takes the next usable one before the following slot; fewer
// than N usable commits is not an error (HistoryStats says why), none is.
func HistoryInstances(ctx context.Context, o HistoryOptions) ([]dataset.SWEInstance, HistoryStats, error) {
	o.N = cmp.Or(o.N, 130)
	o.MaxFiles = cmp.Or(o.MaxFiles, 5)
	o.MinWords = cmp.Or(o.MinWords, 3)
	st := HistoryStats{Skipped: map[string]int{}}
	owner, name, err := dataset.SplitRepo(o.Repo)
	if err != nil {
		return nil, st, err
	}
	chain, err := firstParents(ctx, o.GitDir, o.Head)
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", o.GitDir, err)
	}
	times, err := gitrepo.CommitTimes(ctx, o.GitDir, gitrepo.BackendAuto, chain)
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", o.GitDir, err)
	}
	var in []gitrepo.Hash
	for i, h := range chain {
		t := time.UnixMilli(times[i])
		if (o.Since.IsZero() || !t.Before(o.Since)) && (o.Until.IsZero() || t.Before(o.Until)) {
			in = append(in, h)
		}
	}
	st.FirstParent = len(in)
	var out []dataset.SWEInstance
	for slot := range o.N {
		lo, hi := slot*len(in)/o.N, (slot+1)*len(in)/o.N
		hi = min(hi, lo+scanPerSlot)
		if lo >= hi {
			continue
		}
		var found *dataset.SWEInstance
		err := gitrepo.DiffCommits(ctx, o.GitDir, in[lo:hi], gitrepo.DiffOptions{Workers: 1}, func(cd *gitrepo.CommitDiff) error {
			if found != nil {
				return nil
			}
			st.Looked++
			inst, why := historyInstance(cd, o)
			if why != "" {
				st.Skipped[why]++
				return nil
			}
			inst.InstanceID = fmt.Sprintf("%s__%s-%s", owner, name, cd.ID.String()[:12])
			inst.Repo = o.Repo
			found = &inst
			return nil
		})
		if err != nil {
			return nil, st, fmt.Errorf("%s: diff commits: %w", o.GitDir, err)
		}
		if found != nil {
			out = append(out, *found)
		}
	}
	if len(out) == 0 {
		return nil, st, fmt.Errorf("%s: none of the %d first-parent commits looked at edits an existing non-test source file with a message that says what (skipped: %v)",
			o.GitDir, st.Looked, st.Skipped)
	}
	return out, st, nil
}

// firstParents is the first-parent chain ending at head, oldest first.
func firstParents(ctx context.Context, gitDir string, head gitrepo.Hash) ([]gitrepo.Hash, error) {
	parents, err := gitrepo.Parents(ctx, gitDir, gitrepo.BackendAuto, head, nil)
	if err != nil {
		return nil, err
	}
	var chain []gitrepo.Hash
	for h := head; ; {
		chain = append(chain, h)
		ps := parents[h]
		if len(ps) == 0 {
			break
		}
		h = ps[0]
	}
	slices.Reverse(chain)
	return chain, nil
}

// historyInstance is cd as an instance (without its id and repository),
// or why it is none.
func historyInstance(cd *gitrepo.CommitDiff, o HistoryOptions) (dataset.SWEInstance, string) {
	if len(cd.Parents) == 0 {
		return dataset.SWEInstance{}, skipNoEdit
	}
	var lines []string
	for _, l := range strings.Split(string(cd.Message), "\n") {
		if !mergeSubject.MatchString(strings.TrimSpace(l)) {
			lines = append(lines, l)
		}
	}
	statement := triplets.CleanMessage(strings.Join(lines, "\n"))
	if len(strings.FieldsFunc(statement, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })) < o.MinWords {
		return dataset.SWEInstance{}, skipFewWords
	}
	var patch strings.Builder
	langs := map[string]int{}
	files, edits := 0, 0
	for _, f := range cd.Files {
		p := string(f.Path())
		lang, ok := codegraph.DetectLanguage(p)
		if !ok || fileclass.IsTest(p) || fileclass.IsVendor(p) || fileclass.GeneratedName(p) {
			continue
		}
		if f.Truncated || f.Missing || f.Binary {
			return dataset.SWEInstance{}, skipTruncated
		}
		files++
		if f.OldPath == nil || f.NewPath == nil || f.Deletions == 0 {
			continue // an added or deleted file, or lines only added: no function of the base's is edited
		}
		edits++
		langs[lang]++
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", f.OldPath, f.NewPath, f.OldPath, f.NewPath)
		patch.Write(f.Diff)
		if len(f.Diff) > 0 && f.Diff[len(f.Diff)-1] != '\n' {
			patch.WriteByte('\n')
		}
	}
	switch {
	case edits == 0:
		return dataset.SWEInstance{}, skipNoEdit
	case files > o.MaxFiles:
		return dataset.SWEInstance{}, skipManyFiles
	}
	lang := ""
	for l, n := range langs {
		if n > langs[lang] || n == langs[lang] && l < lang {
			lang = l
		}
	}
	return dataset.SWEInstance{
		Language:         lang,
		BaseCommit:       cd.Parents[0].String(),
		ProblemStatement: statement,
		Patch:            patch.String(),
		Source:           "history",
	}, ""
}
