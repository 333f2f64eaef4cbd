package llm

import "context"

// Limit returns a Selector that lets at most n Select calls of sel run at
// once (n < 1: 1); the others wait their turn or their context's end. One
// selection activity asks about several centers at once, so a worker's
// activity slots no longer bound its calls to the LLM servers: this does.
func Limit(sel Selector, n int) Selector {
	return &limited{sel: sel, slots: make(chan struct{}, max(n, 1))}
}

type limited struct {
	sel   Selector
	slots chan struct{}
}

// Select implements Selector.
func (l *limited) Select(ctx context.Context, issue string, center Candidate, candidates []Candidate) (Selection, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return Selection{Model: l.sel.Name()}, context.Cause(ctx)
	}
	defer func() { <-l.slots }()
	return l.sel.Select(ctx, issue, center, candidates)
}

// Name implements Selector.
func (l *limited) Name() string { return l.sel.Name() }

// URL is the wrapped selector's endpoint (see Endpoint).
func (l *limited) URL() string { return Endpoint(l.sel) }
