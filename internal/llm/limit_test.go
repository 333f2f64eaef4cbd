package llm

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type slowSelector struct {
	running, most atomic.Int32
}

func (s *slowSelector) Select(context.Context, string, Candidate, []Candidate) (Selection, error) {
	n := s.running.Add(1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	s.running.Add(-1)
	return Selection{Model: "slow", IDs: []string{}}, nil
}

func (s *slowSelector) Name() string { return "slow" }
func (s *slowSelector) URL() string  { return "http://llm.test/v1" }

func TestLimitBoundsConcurrentSelects(t *testing.T) {
	inner := &slowSelector{}
	sel := Limit(inner, 3)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := sel.Select(context.Background(), "issue", Candidate{ID: "a"}, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := inner.most.Load(); m > 3 {
		t.Errorf("%d selects at once, want at most 3", m)
	}
	if sel.Name() != "slow" || Endpoint(sel) != "http://llm.test/v1" {
		t.Errorf("name %q, endpoint %q: want the wrapped selector's", sel.Name(), Endpoint(sel))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	full := Limit(inner, 1)
	full.(*limited).slots <- struct{}{}
	if _, err := full.Select(ctx, "issue", Candidate{ID: "a"}, nil); err == nil {
		t.Error("a select waiting for a slot must end with its context")
	}
}

type slowReranker struct{ *slowSelector }

func (s slowReranker) Rerank(ctx context.Context, issue string, cands []Candidate) (Selection, error) {
	return s.Select(ctx, issue, Candidate{}, cands)
}

func TestLimitsShareSlots(t *testing.T) {
	inner := &slowSelector{}
	sel, rr := Limits(inner, slowReranker{inner}, 2)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, err = sel.Select(context.Background(), "issue", Candidate{ID: "a"}, nil)
			} else {
				_, err = rr.Rerank(context.Background(), "issue", nil)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := inner.most.Load(); m > 2 {
		t.Errorf("%d calls at once, want at most 2 over selector and reranker together", m)
	}
	if rr.Name() != "slow" {
		t.Errorf("name %q", rr.Name())
	}
	if s, r := Limits(nil, nil, 2); s != nil || r != nil {
		t.Errorf("nil in, %v %v out", s, r)
	}
}
