package crossenc

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/spider"
)

// BenchmarkRerank50 is the second stage's cost per query on one core: a
// model of the shipped shape (locus rank train-neural's defaults, 128
// tokens a pair as docs/ranking.md's model) scoring 50 candidates of about
// 1 KiB of code each. The weights do not matter for the time: the model
// is trained briefly on synthetic data.
func BenchmarkRerank50(b *testing.B) {
	py, err := FindPython(context.Background())
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	data := syntheticFile(b, 40)
	if _, err := Train(context.Background(), TrainConfig{Python: py, Data: data, Out: dir, MaxTokens: 128, MaxQueryTokens: 32,
		Epochs: 1, Threads: 1, Valid: 8}); err != nil {
		b.Fatal(err)
	}
	s, err := Open(dir, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ranking []spider.Scored
	code := map[string]string{}
	for i := range 50 {
		id := fmt.Sprintf("pkg/mod%d.py:Handler.process_request_%d", i, i)
		ranking = append(ranking, spider.Scored{ID: id, Score: float64(100 - i)})
		code[id] = fmt.Sprintf("def process_request_%d(self, request, timeout=None):\n", i) +
			strings.Repeat("    value = self.session.getHeaderValue(request.headers, 'X-Request-Id')\n", 14)
	}
	query := "Request handler drops the X-Request-Id header when the session times out; process_request should keep it and retry once. " +
		"Seen with a proxy in front of the server since the last release."
	ctx := context.Background()
	b.Run("rerank", func(b *testing.B) {
		for range b.N {
			if _, err := s.Rerank(ctx, query, ranking, func(id string) string { return code[id] }, 50); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Of which: tokenizing the 50 pairs.
	docs := make([]string, len(ranking))
	for i, c := range ranking {
		docs[i] = Document(c.ID, code[c.ID])
	}
	b.Run("tokenize", func(b *testing.B) {
		for range b.N {
			if _, err := encode(s.s.Tokenizer(), s.m, query, docs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
