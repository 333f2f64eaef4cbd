package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/schema"
)

// LLMCache keeps LLM answers in the object store by prompt hash, so a replayed
// or re-run query never pays for the same call twice, on any worker.
type LLMCache struct {
	Bucket *blob.Bucket
}

// Get implements llm.Cache.
func (c *LLMCache) Get(ctx context.Context, k string) (llm.Response, bool, error) {
	data, err := c.Bucket.ReadAll(ctx, schema.LLMCacheKey(k))
	if errors.Is(err, blob.ErrNotFound) {
		return llm.Response{}, false, nil
	}
	if err != nil {
		return llm.Response{}, false, err
	}
	var r llm.Response
	if err := json.Unmarshal(data, &r); err != nil {
		// A damaged entry is a miss, not a failure: the call is simply made again.
		return llm.Response{}, false, nil
	}
	return r, true, nil
}

// Put implements llm.Cache.
func (c *LLMCache) Put(ctx context.Context, k string, r llm.Response) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("llm cache: %w", err)
	}
	return c.Bucket.WriteAll(ctx, schema.LLMCacheKey(k), data)
}
