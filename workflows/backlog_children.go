package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/locus-dev/locus/schema"
)

// The child path: how backlogs ranked before batches (GetVersion
// "backlog-batches" at DefaultVersion), one Localize child per issue. New
// runs never take it; a run started before batches, still in flight on a
// user's embedded server after an upgrade, resumes on it by replay
// (histories backlog-children-*.json).

// startChild puts an issue in flight on the child path, first building its
// snapshot when its base commit is not the indexed head.
func (b *backlogWorkflow) startChild(pos int, is schema.BacklogIssue) {
	if msg := baseCommitError(is); msg != "" {
		// Keep: child-path runs started before snapshots recorded the
		// per-issue error, and may still be in flight (see above).
		if workflow.GetVersion(b.ctx, "backlog-snapshots", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			b.record(pos, issueError(is, msg))
			return
		}
		if is.HostQueue == "" {
			b.record(pos, issueError(is, noHostError(is)))
			return
		}
		f := b.snapshotOf(is)
		b.running++
		b.sel.AddFuture(f, func(f workflow.Future) {
			b.running--
			var si schema.SnapshotInfo
			if err := f.Get(b.ctx, &si); err != nil {
				b.record(pos, issueError(is, errorText(err)))
				return
			}
			b.launchChild(pos, is, si.Commit)
		})
		return
	}
	b.launchChild(pos, is, "")
}

// launchChild starts the issue's Localize child against snapshot ("" for
// the indexed head).
func (b *backlogWorkflow) launchChild(pos int, is schema.BacklogIssue, snapshot string) {
	exhausted := b.budgetSpent()
	if exhausted {
		b.in.BudgetExhausted++
	}
	cctx := workflow.WithWorkflowID(b.childCtx, BacklogChildID(b.run, is.ID))
	fut := workflow.ExecuteChildWorkflow(cctx, Localize, LocalizeInput{Repo: is.Repo, Issue: is.Text, Params: b.in.Params,
		Commit: strings.ToLower(is.BaseCommit), Snapshot: snapshot, LLMRetry: b.in.LLMRetry, NoSelector: exhausted, MaxIssueTokens: b.o.MaxIssueTokens})
	b.running++
	b.sel.AddFuture(fut, func(f workflow.Future) {
		b.running--
		var lr LocalizeResult
		if err := f.Get(b.ctx, &lr); err != nil {
			r := issueError(is, errorText(err))
			r.BudgetExhausted = exhausted
			b.record(pos, r)
			return
		}
		b.record(pos, issueResult(is, lr, exhausted))
	})
}
