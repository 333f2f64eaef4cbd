package llm

import "context"

// Limit returns a Selector that lets at most n Select calls of sel run at
// once (n < 1: 1); the others wait their turn or their context's end. One
// selection activity asks about several centers at once, so a worker's
// activity slots no longer bound its calls to the LLM servers: this does.
func Limit(sel Selector, n int) Selector {
	s, _ := Limits(sel, nil, n)
	return s
}

// Limits is Limit over a selector and a reranker that share the same n
// slots (a nil one stays nil), so that together they never make more than
// n calls at once.
func Limits(sel Selector, rr Reranker, n int) (Selector, Reranker) {
	slots := make(chan struct{}, max(n, 1))
	var ls Selector
	var lr Reranker
	if sel != nil {
		ls = &limited{sel: sel, slots: slots}
	}
	if rr != nil {
		lr = &limitedReranker{rr: rr, slots: slots}
	}
	return ls, lr
}

type limited struct {
	sel   Selector
	slots chan struct{}
}

// take waits for a slot; the caller must call the returned release.
func take(ctx context.Context, slots chan struct{}) (release func(), err error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Select implements Selector.
func (l *limited) Select(ctx context.Context, issue string, center Candidate, candidates []Candidate) (Selection, error) {
	release, err := take(ctx, l.slots)
	if err != nil {
		return Selection{Model: l.sel.Name()}, err
	}
	defer release()
	return l.sel.Select(ctx, issue, center, candidates)
}

// Name implements Selector.
func (l *limited) Name() string { return l.sel.Name() }

// URL is the wrapped selector's endpoint (see Endpoint).
func (l *limited) URL() string { return Endpoint(l.sel) }

type limitedReranker struct {
	rr    Reranker
	slots chan struct{}
}

// Rerank implements Reranker.
func (l *limitedReranker) Rerank(ctx context.Context, issue string, candidates []Candidate) (Selection, error) {
	release, err := take(ctx, l.slots)
	if err != nil {
		return Selection{Model: l.rr.Name()}, err
	}
	defer release()
	return l.rr.Rerank(ctx, issue, candidates)
}

// Name implements Reranker.
func (l *limitedReranker) Name() string { return l.rr.Name() }

// URL is the wrapped reranker's endpoint (see Endpoint).
func (l *limitedReranker) URL() string { return Endpoint(l.rr) }
