// Package testctx gives a test a context bounded by go test -timeout, not by
// a guess of how long the work takes: a busy machine takes minutes where an
// idle one takes seconds, and a time limit is a bug in a test unless timing
// is what it checks.
package testctx

import (
	"context"
	"time"
)

// Margin is how long before the test binary's deadline New's context ends,
// so that a stuck test fails saying what it waited for instead of being
// killed without a word.
const Margin = 30 * time.Second

// T is what New needs of a *testing.T.
type T interface {
	Context() context.Context
	Deadline() (time.Time, bool)
	Cleanup(func())
}

// New is t's context, ended when t ends or Margin before the test binary's
// deadline (go test -timeout), whichever comes first.
func New(t T) context.Context {
	d, ok := t.Deadline()
	if !ok {
		return t.Context()
	}
	ctx, cancel := context.WithDeadline(t.Context(), d.Add(-Margin))
	t.Cleanup(cancel)
	return ctx
}
