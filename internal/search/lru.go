package search

import (
	"context"
	"sync"
)

// onceLRU keeps the last size values loaded by key. Concurrent gets of one
// key wait for a single load; a failed load is not kept (the next get loads
// again). Used for what queries read whole and often: decoded graphs and
// snapshot vectors.
type onceLRU[K comparable, V any] struct {
	size int

	mu      sync.Mutex
	entries []*onceEntry[K, V] // most recently used first
	loads   int                // loads started, for tests
	off     bool               // every get loads anew (benchmarks measure both)
}

type onceEntry[K comparable, V any] struct {
	key   K
	ready chan struct{} // closed when v or err is set
	v     V
	err   error
}

func (c *onceLRU[K, V]) get(ctx context.Context, key K, load func() (V, error)) (V, error) {
	c.mu.Lock()
	if c.off {
		c.loads++
		c.mu.Unlock()
		return load()
	}
	for i, e := range c.entries {
		if e.key == key {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
			if e.err != nil {
				return c.get(ctx, key, load) // the loader failed and removed it: load again
			}
			return e.v, nil
		}
	}
	e := &onceEntry[K, V]{key: key, ready: make(chan struct{})}
	c.entries = append([]*onceEntry[K, V]{e}, c.entries...)
	if len(c.entries) > c.size {
		c.entries = c.entries[:c.size]
	}
	c.loads++
	c.mu.Unlock()

	e.v, e.err = load()
	if e.err != nil {
		c.mu.Lock()
		for i, x := range c.entries {
			if x == e {
				c.entries = append(c.entries[:i], c.entries[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
	}
	close(e.ready)
	return e.v, e.err
}

// ready returns the values whose key match accepts and whose load has
// finished without error, most recently used first, without waiting for
// any load.
func (c *onceLRU[K, V]) ready(match func(K) bool) []V {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []V
	for _, e := range c.entries {
		if !match(e.key) {
			continue
		}
		select {
		case <-e.ready:
			if e.err == nil {
				out = append(out, e.v)
			}
		default:
		}
	}
	return out
}

func (c *onceLRU[K, V]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	c.loads = 0
}
