package search

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/llm"
	"github.com/locus-dev/locus/internal/llm/llmtest"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
)

var (
	cacheCenter = llm.Candidate{ID: "svc/api.py:Handler.get", Code: "def get(self, req):\n    return self.store.load(req.key)\n"}
	cacheCands  = []llm.Candidate{
		{ID: "svc/store.py:Store.load", Code: "def load(self, key):\n    return self.db[key]\n"},
		{ID: "svc/store.py:Store.save", Code: "def save(self, key, body):\n    self.db[key] = body\n"},
	}
	cacheIssue = "GET returns 500 when the key is missing: Store.load raises KeyError"
)

// cachedSelector is the selector workers build: an OpenAI-compatible chat
// against srv behind the store-backed decision cache.
func cachedSelector(t *testing.T, srv *llmtest.Server, b *blob.Bucket) *llm.LLMSelector {
	t.Helper()
	chat, err := llm.Open("openai+http://" + strings.TrimPrefix(srv.URL, "http://") + "?model=fake")
	if err != nil {
		t.Fatal(err)
	}
	return &llm.LLMSelector{Chat: llm.WithCache(chat, &LLMCache{Bucket: b}), TokenBudget: 4000}
}

// cachedTexts lists the answers stored in the decision cache.
func cachedTexts(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	ctx := context.Background()
	objs, err := b.List(ctx, "llmcache/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		data, err := b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		var r llm.Response
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", o.Key, err)
		}
		out = append(out, r.Text)
	}
	return out
}

// TestLLMCacheStoresOnlyValidDecisions: an answer that is not the JSON asked
// for must not be cached, or every later run replays it without asking the
// (by then healthy) server and fails.
func TestLLMCacheStoresOnlyValidDecisions(t *testing.T) {
	want := []string{"svc/store.py:Store.load"}
	for _, tc := range []struct {
		name  string
		first []llmtest.Step // the first run's answers: first prompt, then the repair
		// firstOK: the first run succeeds (the repair was usable)
		firstOK    bool
		cachedOK   int // valid entries in the cache after the first run
		secondReqs int // requests the second run sends to the healthy server
	}{
		{name: "garbage twice", first: []llmtest.Step{llmtest.Garbage(), llmtest.Garbage()}, secondReqs: 1},
		{name: "wrong JSON twice", first: []llmtest.Step{llmtest.Reply(`{"answer": 42}`), llmtest.Reply(`[1, 2]`)}, secondReqs: 1},
		// The repaired answer is cached under the repair prompt; the first
		// prompt's garbage is not, so the second run asks again.
		{name: "garbage then repaired", first: []llmtest.Step{llmtest.Garbage(), llmtest.IDs(want...)}, firstOK: true, cachedOK: 1, secondReqs: 1},
		{name: "valid", first: []llmtest.Step{llmtest.IDs(want...)}, firstOK: true, cachedOK: 1, secondReqs: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			b := blobtest.Bucket(t)
			srv := llmtest.NewServer(t)
			sel := cachedSelector(t, srv, b)
			srv.Enqueue(tc.first...)
			_, err := sel.Select(ctx, cacheIssue, cacheCenter, cacheCands)
			if tc.firstOK != (err == nil) {
				t.Fatalf("first run: err %v, want success %v", err, tc.firstOK)
			}
			if !tc.firstOK && !errors.Is(err, llm.ErrInvalidOutput) {
				t.Fatalf("first run: %v, want an invalid-output error", err)
			}
			stored := cachedTexts(t, b)
			if len(stored) != tc.cachedOK {
				t.Fatalf("cache holds %q after the first run, want %d valid entries", stored, tc.cachedOK)
			}
			for _, s := range stored {
				if _, err := llm.ParseSelection(s, nil); err != nil {
					t.Errorf("cached an unusable answer %q: %v", s, err)
				}
			}

			// The server is healthy now.
			srv.SetHandler(func(llmtest.Request) llmtest.Step { return llmtest.IDs(want...) })
			before := srv.Total()
			got, err := sel.Select(ctx, cacheIssue, cacheCenter, cacheCands)
			if err != nil {
				t.Fatalf("second run against a healthy server: %v", err)
			}
			if n := srv.Total() - before; n != tc.secondReqs {
				t.Errorf("second run sent %d requests, want %d", n, tc.secondReqs)
			}
			if !reflect.DeepEqual(got.IDs, want) {
				t.Errorf("second run selected %v, want %v", got.IDs, want)
			}
			// Third run: everything it needs is cached now.
			before = srv.Total()
			if _, err := sel.Select(ctx, cacheIssue, cacheCenter, cacheCands); err != nil || srv.Total() != before {
				t.Errorf("third run: %d requests (%v), want 0: the valid decision must be cached", srv.Total()-before, err)
			}
		})
	}
}

// TestLLMCacheIgnoresPoisonedEntry: a store written by an older locus may
// already hold an unusable answer under the prompt's key; it is not trusted
// but asked again and replaced.
func TestLLMCacheIgnoresPoisonedEntry(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	srv := llmtest.NewServer(t)
	sel := cachedSelector(t, srv, b)
	cache := &LLMCache{Bucket: b}
	req := llm.SelectPrompt(cacheIssue, cacheCenter, cacheCands, 4000)
	key := llm.CacheKey("fake", req)
	poison := llm.Response{Text: "I looked at the candidates and the second one seems relevant, probably.", Model: "fake"}
	if err := cache.Put(ctx, key, poison); err != nil {
		t.Fatal(err)
	}
	srv.SetHandler(func(llmtest.Request) llmtest.Step { return llmtest.IDs("svc/store.py:Store.save") })
	got, err := sel.Select(ctx, cacheIssue, cacheCenter, cacheCands)
	if err != nil {
		t.Fatalf("select over a poisoned cache entry: %v", err)
	}
	if srv.Total() != 1 || got.CachedCalls != 0 || !reflect.DeepEqual(got.IDs, []string{"svc/store.py:Store.save"}) {
		t.Errorf("requests %d, selection %+v: the poisoned entry must be ignored and the server asked", srv.Total(), got)
	}
	r, ok, err := cache.Get(ctx, key)
	if err != nil || !ok {
		t.Fatalf("entry after the run: ok %v err %v", ok, err)
	}
	if _, err := llm.ParseSelection(r.Text, nil); err != nil {
		t.Errorf("entry still unusable after the run: %q (%v)", r.Text, err)
	}
	if r.Text == poison.Text {
		t.Error("the poisoned entry was not replaced")
	}
}
