package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
)

// cacheKeyVersion changes when the key's inputs or encoding change, so old
// entries are not misread.
const cacheKeyVersion = "locus-llm-v1"

// CacheKey is the hex SHA-256 of (model, request): the same prompt to the
// same model gets the same key, so a replayed or re-run activity can reuse a
// decision instead of paying for it again.
func CacheKey(model string, req Request) string {
	b, err := json.Marshal(struct {
		V     string  `json:"v"`
		Model string  `json:"model"`
		Req   Request `json:"req"`
	}{cacheKeyVersion, model, req})
	if err != nil {
		// Request holds only strings and numbers; Marshal cannot fail on
		// it, but a key must never collide, so fail loudly if it does.
		panic(fmt.Sprintf("llm: cache key: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Cache stores responses by CacheKey. Get reports ok=false for a missing
// key; errors are for a store that could not answer. A blob-backed Cache
// stores the Response as JSON under a key derived from CacheKey.
type Cache interface {
	Get(ctx context.Context, key string) (resp Response, ok bool, err error)
	Put(ctx context.Context, key string, resp Response) error
}

// WithCache returns a Chat that answers from cache when it can and stores
// every successful response it fetches that the request's Check accepts.
// Cached responses come back with Cached set; a stored response the Check
// rejects (written before checks existed, or by another version) is treated
// as missing, fetched again and replaced. Errors are never cached. A failing cache read fails the call
// with a retryable *Error (calling the model instead could bill an answer we
// already have); a failing write is logged and the response returned, since
// it is paid for and the caller's own result records it.
func WithCache(chat Chat, cache Cache) Chat { return &cachedChat{chat: chat, cache: cache} }

type cachedChat struct {
	chat  Chat
	cache Cache
}

func (c *cachedChat) Name() string { return c.chat.Name() }

// URL is the wrapped chat's endpoint (see Endpoint).
func (c *cachedChat) URL() string { return Endpoint(c.chat) }

func (c *cachedChat) Complete(ctx context.Context, req Request) (Response, error) {
	key := CacheKey(c.chat.Name(), req)
	resp, ok, err := c.cache.Get(ctx, key)
	if err != nil {
		return Response{}, &Error{Provider: "cache", Model: c.chat.Name(), Retryable: true, Msg: "read " + key, Err: err}
	}
	if ok && req.Check != nil {
		if cerr := req.Check(resp); cerr != nil {
			slog.DebugContext(ctx, "llm cache: ignoring a stored answer that fails its check", "model", c.chat.Name(), "key", key, "err", cerr)
			ok = false
		}
	}
	if ok {
		resp.Cached = true
		return resp, nil
	}
	resp, err = c.chat.Complete(ctx, req)
	if err != nil {
		return resp, err
	}
	if req.Check != nil {
		if cerr := req.Check(resp); cerr != nil {
			// Not the answer asked for: the caller repairs or fails, and the
			// next run must ask again rather than replay this one.
			return resp, nil
		}
	}
	resp.Owner = OwnerOf(ctx)
	if err := c.cache.Put(ctx, key, resp); err != nil {
		slog.WarnContext(ctx, "llm cache write failed; response not cached", "model", c.chat.Name(), "key", key, "err", err)
	}
	return resp, nil
}

// MemoryCache is an in-process Cache, for tests and single runs.
type MemoryCache struct {
	mu sync.Mutex
	m  map[string]Response
}

// Get implements Cache.
func (m *MemoryCache) Get(_ context.Context, key string) (Response, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.m[key]
	return r, ok, nil
}

// Put implements Cache.
func (m *MemoryCache) Put(_ context.Context, key string, resp Response) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]Response{}
	}
	resp.Cached = false
	m.m[key] = resp
	return nil
}

// Len is the number of stored responses.
func (m *MemoryCache) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
